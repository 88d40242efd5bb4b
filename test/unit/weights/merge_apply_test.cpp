// apply_merge_ops and TargetMerge (src/weights/merge_apply.cpp) against a reference written here
// from the cookbook's apply_merge_op, element by element in double precision: the delta of every
// op kind (2-D, row slice, one expert, 3-D into fused interleaved / concatenated-on-either-axis /
// plain / transposed targets, shared E = 1 sides), the same bits whatever the row split or thread
// count, the shape checks; and the vectorised kernels (merge_kernels.cpp) against the library's
// scalar conversions.
#include "weights/merge_apply.hpp"
#include "support/expect_error.hpp"
#include "weights/merge_kernels.hpp"

#include <tinker/safetensors.hpp>

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

namespace tinker::weights::detail {
namespace merge_apply_test {

using test::expect_tinker_error;
namespace st = tinker::safetensors;

std::int64_t count_of(const std::vector<std::int64_t>& shape) {
  std::int64_t count = 1;
  for (const auto dim : shape) count *= dim;
  return count;
}

std::shared_ptr<const FloatTensor> random_tensor(std::vector<std::int64_t> shape, std::mt19937& random) {
  auto tensor = std::make_shared<FloatTensor>();
  tensor->shape = std::move(shape);
  std::uniform_real_distribution<float> uniform(-1.0F, 1.0F);
  tensor->values.resize(static_cast<std::size_t>(count_of(tensor->shape)));
  for (auto& value : tensor->values) value = uniform(random);
  return tensor;
}

std::vector<float> random_values(std::int64_t count, std::mt19937& random) {
  std::uniform_real_distribution<float> uniform(-4.0F, 4.0F);
  std::vector<float> values(static_cast<std::size_t>(count));
  for (auto& value : values) value = uniform(random);
  return values;
}

MergeOp make_op(std::shared_ptr<const FloatTensor> a, std::shared_ptr<const FloatTensor> b, float scale) {
  MergeOp op;
  op.target = "target.weight";
  op.adapter_name = "adapter.weight";
  op.a = std::move(a);
  op.b = std::move(b);
  op.scale = scale;
  return op;
}

// factor[e][x][y] of a 2-D ([x, y], shared) or 3-D factor, e wrapping to 0 when it has one expert.
double factor_at(const FloatTensor& factor, std::int64_t e, std::int64_t x, std::int64_t y) {
  const auto& shape = factor.shape;
  const std::int64_t rows = shape[shape.size() - 2];
  const std::int64_t cols = shape.back();
  const std::int64_t block = shape.size() == 3 && shape[0] > 1 ? e : 0;
  return factor.values[static_cast<std::size_t>((block * rows + x) * cols + y)];
}

// The cookbook's apply_merge_op, literally: delta = (scale B) A per expert (bmm(A^T, B^T) for 3-D
// ops, [E, in, out]), added where the op says. Doubles throughout.
void reference_apply(std::vector<double>& target, const std::vector<std::int64_t>& shape, const MergeOp& op) {
  const auto& a = *op.a;
  const auto& b = *op.b;
  const std::int64_t rank = a.shape[a.shape.size() - 2];
  const std::int64_t in = a.shape.back();
  const std::int64_t out = b.shape[b.shape.size() - 2];
  const auto delta = [&](std::int64_t e, std::int64_t o, std::int64_t i) {  // (scale B A)[e][o][i]
    double sum = 0;
    for (std::int64_t k = 0; k < rank; ++k) {
      sum += static_cast<double>(static_cast<float>(op.scale * factor_at(b, e, o, k))) * factor_at(a, e, k, i);
    }
    return sum;
  };
  if (!op.expert_3d) {
    const std::int64_t e = std::max(op.expert, 0);
    const std::int64_t first = std::max<std::int64_t>(op.slice_start, 0);
    for (std::int64_t o = 0; o < out; ++o) {
      for (std::int64_t i = 0; i < in; ++i)
        target[static_cast<std::size_t>((first + o) * shape[1] + i)] += delta(e, o, i);
    }
    return;
  }
  const std::int64_t experts = shape[0], t1 = shape[1], t2 = shape[2];
  const auto at = [&](std::int64_t e, std::int64_t x, std::int64_t y) -> double& {
    return target[static_cast<std::size_t>((e * t1 + x) * t2 + y)];
  };
  for (std::int64_t e = 0; e < experts; ++e) {
    for (std::int64_t i = 0; i < in; ++i) {
      for (std::int64_t o = 0; o < out; ++o) {
        const double d = delta(e, o, i);  // delta3d[e][i][o]
        if (op.fused_proj_idx >= 0) {
          const bool axis2 = in == t1 && t2 == 2 * out;
          if (op.interleaved) {
            at(e, i, 2 * o + op.fused_proj_idx) += d;
          } else if (axis2) {
            at(e, i, op.fused_proj_idx * out + o) += d;
          } else {
            at(e, op.fused_proj_idx * out + o, i) += d;
          }
        } else if (t1 == in && t2 == out) {
          at(e, i, o) += d;
        } else {
          at(e, o, i) += d;
        }
      }
    }
  }
}

// Runs `ops` on a random target of `shape` through apply_merge_ops and the reference; the f32
// result must match the double one to float rounding.
void expect_matches_reference(const std::vector<std::int64_t>& shape, const std::vector<MergeOp>& ops,
                              std::mt19937& random, unsigned threads = 1) {
  const std::vector<float> base = random_values(count_of(shape), random);
  std::vector<double> expected(base.begin(), base.end());
  for (const auto& op : ops) reference_apply(expected, shape, op);
  std::vector<float> target = base;
  apply_merge_ops(target, shape, ops, threads);
  std::size_t changed = 0;
  for (std::size_t i = 0; i < target.size(); ++i) {
    ASSERT_NEAR(target[i], expected[i], 1e-5 * (1 + std::fabs(expected[i]))) << "element " << i;
    if (target[i] != base[i]) ++changed;
  }
  EXPECT_GT(changed, target.size() / 2);  // the deltas went somewhere
}

TEST(MergeApply, WholeTwoDimensionalTarget) {
  std::mt19937 random(1);
  // in = 75 and rank 5: vector loops with tails on every instruction set, rank not a multiple of 4.
  auto op = make_op(random_tensor({5, 75}, random), random_tensor({41, 5}, random), 0.75F);
  expect_matches_reference({41, 75}, {op}, random);
}

TEST(MergeApply, RowSlicesOfAFusedTarget) {
  std::mt19937 random(2);
  // Qwen3.5's in_proj_qkv: Q, K and V row blocks of unequal heights.
  std::vector<MergeOp> ops;
  std::int64_t start = 0;
  for (const std::int64_t rows : {16, 8, 9}) {
    auto op = make_op(random_tensor({3, 70}, random), random_tensor({rows, 3}, random), 2.0F);
    op.slice_start = start;
    start += rows;
    ops.push_back(op);
  }
  expect_matches_reference({33, 70}, ops, random);
  // A slice that covers part of the target leaves the rest untouched.
  auto partial = ops[1];
  std::vector<float> target(33 * 70, 1.0F);
  apply_merge_ops(target, std::vector<std::int64_t>{33, 70}, {partial}, 1);
  for (std::int64_t row = 0; row < 33; ++row) {
    const bool inside = row >= 16 && row < 24;
    EXPECT_EQ(target[static_cast<std::size_t>(row * 70)] != 1.0F, inside) << "row " << row;
  }
}

TEST(MergeApply, OneExpertOfThreeDimensionalFactors) {
  std::mt19937 random(3);
  const auto a = random_tensor({4, 2, 66}, random);
  const auto b = random_tensor({4, 35, 2}, random);
  for (int expert = 0; expert < 4; ++expert) {
    auto op = make_op(a, b, 0.5F);
    op.expert = expert;
    expect_matches_reference({35, 66}, {op}, random);
  }
  // A side with one expert is shared by all.
  auto shared = make_op(random_tensor({1, 2, 66}, random), b, 1.5F);
  shared.expert = 3;
  expect_matches_reference({35, 66}, {shared}, random);
}

TEST(MergeApply, FusedInterleavedGateUp) {
  std::mt19937 random(4);
  // gpt-oss: gate_up_proj [E, in, 2 * out], g0, u0, g1, u1, ... along the last axis.
  std::vector<MergeOp> ops;
  for (int half = 0; half < 2; ++half) {
    auto op = make_op(random_tensor({3, 4, 40}, random), random_tensor({3, 36, 4}, random), 0.25F);
    op.expert_3d = true;
    op.fused_proj_idx = half;
    op.interleaved = true;
    ops.push_back(op);
  }
  expect_matches_reference({3, 40, 72}, ops, random);
}

TEST(MergeApply, FusedConcatenatedOnEitherAxis) {
  std::mt19937 random(5);
  for (const bool on_last_axis : {true, false}) {
    // Qwen3-VL: [E, in, 2 * out] (axis 2); Qwen3.5: [E, 2 * out, in] (axis 1, delta transposed).
    const std::vector<std::int64_t> shape =
        on_last_axis ? std::vector<std::int64_t>{2, 48, 68} : std::vector<std::int64_t>{2, 68, 48};
    std::vector<MergeOp> ops;
    for (int half = 0; half < 2; ++half) {
      auto op = make_op(random_tensor({2, 3, 48}, random), random_tensor({2, 34, 3}, random), 1.0F);
      op.expert_3d = true;
      op.fused_proj_idx = half;
      ops.push_back(op);
    }
    SCOPED_TRACE(on_last_axis ? "axis 2" : "axis 1");
    expect_matches_reference(shape, ops, random);
  }
}

TEST(MergeApply, PlainAndTransposedExpertTargets) {
  std::mt19937 random(6);
  for (const bool transposed : {false, true}) {
    // down_proj as [E, in, out] (the delta as bmm gives it) or [E, out, in].
    const std::vector<std::int64_t> shape =
        transposed ? std::vector<std::int64_t>{3, 21, 50} : std::vector<std::int64_t>{3, 50, 21};
    auto op = make_op(random_tensor({3, 2, 50}, random), random_tensor({1, 21, 2}, random), 3.0F);
    op.expert_3d = true;
    SCOPED_TRACE(transposed ? "transposed" : "as is");
    expect_matches_reference(shape, {op}, random);
  }
  // A square target takes the delta as it is, as the cookbook does (it transposes only on a mismatch).
  auto square = make_op(random_tensor({1, 2, 24}, random), random_tensor({2, 24, 2}, random), 1.0F);
  square.expert_3d = true;
  expect_matches_reference({2, 24, 24}, {square}, random);
}

TEST(MergeApply, EveryRowSplitAndThreadCountGivesTheSameBits) {
  std::mt19937 random(7);
  const std::vector<std::int64_t> shape{3, 40, 72};
  std::vector<MergeOp> ops;
  for (int half = 0; half < 2; ++half) {
    auto op = make_op(random_tensor({3, 5, 40}, random), random_tensor({3, 36, 5}, random), 0.5F);
    op.expert_3d = true;
    op.fused_proj_idx = half;
    op.interleaved = true;
    ops.push_back(op);
  }
  const std::vector<float> base = random_values(count_of(shape), random);
  auto whole = base;
  apply_merge_ops(whole, shape, ops, 1);
  for (const unsigned threads : {2U, 3U, 7U}) {
    auto split = base;
    apply_merge_ops(split, shape, ops, threads);
    EXPECT_EQ(0, std::memcmp(split.data(), whole.data(), whole.size() * sizeof(float))) << threads << " threads";
  }
  // Rows given in pieces that cut through experts and through groups of rows.
  const TargetMerge merge("target.weight", shape, ops);
  ASSERT_EQ(merge.rows(), 120);
  ASSERT_EQ(merge.row_length(), 72);
  auto pieces = base;
  MergeScratch scratch;
  for (const auto& [first, last] :
       std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 1}, {1, 39}, {39, 45}, {45, 120}}) {
    merge.add_to_rows(
        std::span(pieces).subspan(static_cast<std::size_t>(first * 72), static_cast<std::size_t>((last - first) * 72)),
        first, scratch);
  }
  EXPECT_EQ(0, std::memcmp(pieces.data(), whole.data(), whole.size() * sizeof(float)));
}

TEST(MergeApply, ShapesThatDoNotFitAreRefusedNamingBothTensors) {
  std::mt19937 random(8);
  const auto a = random_tensor({2, 8}, random);
  const auto b = random_tensor({6, 2}, random);
  std::vector<float> target(6 * 9);
  expect_tinker_error(errc::invalid_argument, "adapter tensor 'adapter.weight'", [&] {
    apply_merge_ops(target, std::vector<std::int64_t>{6, 9}, {make_op(a, b, 1)}, 1);
  });
  expect_tinker_error(errc::invalid_argument, "base tensor 'target.weight'", [&] {
    apply_merge_ops(target, std::vector<std::int64_t>{9, 6}, {make_op(a, b, 1)}, 1);
  });
  auto sliced = make_op(a, b, 1);
  sliced.slice_start = 3;  // rows 3..9 of a 6-row target
  std::vector<float> square(6 * 8);
  expect_tinker_error(errc::invalid_argument, "at rows 3..9 does not fit", [&] {
    apply_merge_ops(square, std::vector<std::int64_t>{6, 8}, {sliced}, 1);
  });
  expect_tinker_error(errc::invalid_argument, "disagree on the rank", [&] {
    apply_merge_ops(square, std::vector<std::int64_t>{6, 8}, {make_op(a, random_tensor({6, 3}, random), 1)}, 1);
  });
  auto expert = make_op(random_tensor({2, 2, 8}, random), random_tensor({2, 6, 2}, random), 1);
  expert.expert = 2;
  expect_tinker_error(errc::invalid_argument, "expert 2 is out of range", [&] {
    apply_merge_ops(square, std::vector<std::int64_t>{6, 8}, {expert}, 1);
  });
  // gpt-oss's interleaving runs along the last axis only.
  auto interleaved = make_op(random_tensor({2, 2, 8}, random), random_tensor({2, 6, 2}, random), 1);
  interleaved.expert_3d = true;
  interleaved.fused_proj_idx = 0;
  interleaved.interleaved = true;
  std::vector<float> fused(2 * 12 * 8);
  expect_tinker_error(errc::invalid_argument, "interleaved target must be", [&] {
    apply_merge_ops(fused, std::vector<std::int64_t>{2, 12, 8}, {interleaved}, 1);
  });
  interleaved.interleaved = false;
  expect_tinker_error(errc::invalid_argument, "fits neither half", [&] {
    apply_merge_ops(fused, std::vector<std::int64_t>{2, 12, 9}, {interleaved}, 1);
  });
  auto three_experts = make_op(random_tensor({3, 2, 8}, random), random_tensor({3, 6, 2}, random), 1);
  three_experts.expert_3d = true;
  std::vector<float> two_experts(2 * 8 * 6);
  expect_tinker_error(errc::invalid_argument, "one per expert of the target", [&] {
    apply_merge_ops(two_experts, std::vector<std::int64_t>{2, 8, 6}, {three_experts}, 1);
  });
  expect_tinker_error(errc::invalid_argument, "values for shape", [&] {
    apply_merge_ops(std::span(square).first(10), std::vector<std::int64_t>{6, 8}, {make_op(a, b, 1)}, 1);
  });
}

// Each check runs every form of the kernels this CPU can run (AVX-512, AVX2 + FMA, baseline), not
// only the one in use.
void check_bfloat_conversions(const kernels::KernelSet& set);
void check_low_rank_rows(const kernels::KernelSet& set);

TEST(MergeKernels, BfloatConversionsAgreeWithTheLibrary) {
  for (const auto& set : kernels::supported_kernel_sets()) {
    SCOPED_TRACE(set.name);
    check_bfloat_conversions(set);
  }
}

TEST(MergeKernels, LowRankRowsSumOverTheRank) {
  for (const auto& set : kernels::supported_kernel_sets()) {
    SCOPED_TRACE(set.name);
    check_low_rank_rows(set);
  }
}

TEST(MergeKernels, TheFormInUseIsTheFirstSupported) {
  const auto sets = kernels::supported_kernel_sets();
  ASSERT_FALSE(sets.empty());
  EXPECT_STREQ(sets.back().name, "baseline");
  EXPECT_STREQ(kernels::instruction_set(), sets.front().name);
}

void check_bfloat_conversions(const kernels::KernelSet& set) {
  // Every BF16 pattern decodes as the library decodes it.
  std::vector<std::byte> patterns(65536 * 2);
  for (std::uint32_t bits = 0; bits < 65536; ++bits) {
    const auto half = static_cast<std::uint16_t>(bits);
    std::memcpy(patterns.data() + 2 * bits, &half, 2);
  }
  std::vector<float> decoded(65536), expected_decoded(65536);
  set.bf16_to_f32(patterns.data(), decoded.data(), decoded.size());
  st::to_f32(st::Dtype::bf16, patterns, expected_decoded);
  EXPECT_EQ(0, std::memcmp(decoded.data(), expected_decoded.data(), decoded.size() * sizeof(float)));

  // Rounding: every midpoint and its neighbours, NaNs, infinities, the largest floats, random bits.
  std::vector<float> values;
  for (std::uint32_t high = 0; high < 65536; high += 7) {
    for (const std::uint32_t low : {0x0000U, 0x0001U, 0x7fffU, 0x8000U, 0x8001U, 0xffffU}) {
      values.push_back(std::bit_cast<float>(high << 16 | low));
    }
  }
  values.insert(values.end(),
                {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                 std::numeric_limits<float>::quiet_NaN(), std::bit_cast<float>(0x7f800001U),
                 std::bit_cast<float>(0xff81ffffU), std::numeric_limits<float>::max(),
                 -std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min(), 0.0F, -0.0F});
  std::mt19937 random(9);
  for (int i = 0; i < 100000; ++i) values.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(random())));
  std::vector<std::byte> encoded(values.size() * 2), expected_encoded(values.size() * 2);
  set.f32_to_bf16(values.data(), encoded.data(), values.size());
  st::from_f32(st::Dtype::bf16, values, expected_encoded);
  for (std::size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(std::memcmp(encoded.data() + 2 * i, expected_encoded.data() + 2 * i, 2), 0)
        << "value bits " << std::hex << std::bit_cast<std::uint32_t>(values[i]);
  }
  // Ties go to the even pattern: 1 + 3/256 lies halfway between 1 + 2/256 and 1 + 4/256.
  const float tie = 1.0F + 3.0F / 256;
  std::byte tie_bytes[2];
  set.f32_to_bf16(&tie, tie_bytes, 1);
  std::uint16_t tie_bits = 0;
  std::memcpy(&tie_bits, tie_bytes, 2);
  EXPECT_EQ(tie_bits, 0x3f82);  // 1 + 4/256
}

void check_low_rank_rows(const kernels::KernelSet& set) {
  // Exact dyadic values: any summation order gives the same floats. 70 columns: the vector loop
  // of every form and a scalar tail.
  const std::size_t rank = 3, len = 70, stride = len + 5;
  std::vector<float> coefficients(kernels::rows_per_call * rank), vectors(rank * stride), delta(4 * len);
  for (std::size_t i = 0; i < coefficients.size(); ++i) coefficients[i] = static_cast<float>(i % 5) - 2.0F;
  for (std::size_t i = 0; i < vectors.size(); ++i) vectors[i] = static_cast<float>(i % 9) * 0.25F;
  set.low_rank_rows(delta.data(), len, coefficients.data(), rank, vectors.data(), stride);
  for (std::size_t row = 0; row < kernels::rows_per_call; ++row) {
    for (std::size_t j = 0; j < len; ++j) {
      float expected = 0;
      for (std::size_t k = 0; k < rank; ++k) expected += coefficients[row * rank + k] * vectors[k * stride + j];
      ASSERT_EQ(delta[row * len + j], expected) << row << ", " << j;
    }
  }
  std::vector<float> target(2 * len, 1.0F);
  set.add_strided(target.data() + 1, 2, delta.data(), len);
  EXPECT_EQ(target[0], 1.0F);
  EXPECT_EQ(target[1], 1.0F + delta[0]);
  EXPECT_EQ(target[2 * len - 1], 1.0F + delta[len - 1]);
  std::vector<float> contiguous(len, 0.5F);
  set.add_strided(contiguous.data(), 1, delta.data(), len);
  for (std::size_t j = 0; j < len; ++j) ASSERT_EQ(contiguous[j], 0.5F + delta[j]) << j;
}

}  // namespace merge_apply_test
}  // namespace tinker::weights::detail
