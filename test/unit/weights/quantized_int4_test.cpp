// compressed-tensors pack-quantized INT4 (Kimi K2/K2.5 experts): decoding (eight nibbles an
// int32, lowest first, each the integer nibble - 8, times its group's scale) and the cookbook's
// symmetric re-quantization after a merge.
#include "weights/quantized.hpp"

#include "support/expect_error.hpp"
#include "unit/weights/quantized_test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace tinker::weights::quantized_test {
namespace {

const std::string expert = "model.layers.1.mlp.experts.0.gate_proj";

// One expert projection of `rows` x `cols` (group `group`), its scale of `scale_dtype`.
ModelLayout int4_layout(std::int64_t rows, std::int64_t cols, std::int64_t group, Dtype scale_dtype = Dtype::bf16,
                        Dtype shape_dtype = Dtype::i32) {
  auto layout =
      make_layout(pack_quantized_config(group), {{expert + ".weight_packed", {Dtype::i32, {rows, cols / 8}}},
                                                 {expert + ".weight_scale", {scale_dtype, {rows, cols / group}}},
                                                 {expert + ".weight_shape", {shape_dtype, {2}}}});
  detail::find_quantized_weights(layout);
  return layout;
}

const QuantizedWeight& int4_weight(const ModelLayout& layout) {
  return layout.quantized.at(expert + ".weight");
}

TEST(QuantizedInt4, NibblesAreLowestFirstAndOffsetByEight) {
  // Row 0: nibbles 0..7 (0x76543210) are -8..-1, scale 0.5; row 1: nibbles 8..15 are 0..7, scale 2.
  const auto layout = int4_layout(2, 8, 8);
  const PartBytes bytes{
      {i32_bytes({0x76543210U, 0xFEDCBA98U}), float_bytes(Dtype::bf16, {0.5F, 2.0F}), i32_bytes({2, 8})}};
  const auto values = detail::dequantize(int4_weight(layout), bytes.spans(), layout);
  const std::vector<float> expected{-4, -3.5F, -3, -2.5F, -2, -1.5F, -1, -0.5F, 0, 2, 4, 6, 8, 10, 12, 14};
  EXPECT_EQ(values, expected);
}

TEST(QuantizedInt4, EachGroupHasItsScale) {
  // One row of 16 in two groups of 8: word 0 holds columns 0-7, word 1 columns 8-15.
  for (const auto scale_dtype : {Dtype::bf16, Dtype::f16, Dtype::f32}) {
    const auto layout = int4_layout(1, 16, 8, scale_dtype, Dtype::i64);
    const PartBytes bytes{
        {i32_bytes({0x88888889U, 0x0000000FU}), float_bytes(scale_dtype, {3.0F, 0.5F}), i64_bytes({1, 16})}};
    const auto values = detail::dequantize(int4_weight(layout), bytes.spans(), layout);
    const std::vector<float> expected{3, 0, 0, 0, 0, 0, 0, 0, 3.5F, -4, -4, -4, -4, -4, -4, -4};
    EXPECT_EQ(values, expected) << safetensors::to_string(scale_dtype);
  }
}

TEST(QuantizedInt4, EncodesSymmetricallyWithSevenAtTheLargestMagnitude) {
  // amax 7 -> scale 1; 3.5 and -3.5 round half to even (4, -4), 0.5 to 0; stored as q + 8.
  const auto layout = int4_layout(2, 8, 8);
  const std::vector<float> values{7, -7, 3.5F, 0.5F, 0, -3.5F, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0};
  const auto pieces = detail::encode(int4_weight(layout), values, layout);
  ASSERT_EQ(pieces.size(), 2U);
  EXPECT_EQ(pieces[0].part, 0U);
  EXPECT_EQ(pieces[1].part, 1U);
  EXPECT_EQ(word_at(pieces[0].bytes, 0), 0xA9488C1FU);
  EXPECT_EQ(word_at(pieces[0].bytes, 1), 0x88888888U);  // an all-zero group
  // Scale 1.0 is BF16 0x3F80; the zero group's scale is the 1e-12 floor, BF16 0x2B8D.
  EXPECT_EQ(pieces[1].bytes, u8_bytes({0x80, 0x3F, 0x8D, 0x2B}));
}

TEST(QuantizedInt4, WhatTheCookbookWritesRoundTripsExactly) {
  // Groups whose largest |q| is 7 with a BF16 scale re-encode to the same bytes.
  const auto layout = int4_layout(1, 16, 8);
  const PartBytes original{
      {i32_bytes({0x92D6B81FU, 0xC8888881U}), float_bytes(Dtype::bf16, {0.5F, 3.0F}), i32_bytes({1, 16})}};
  const auto values = detail::dequantize(int4_weight(layout), original.spans(), layout);
  const std::vector<float> expected{3.5F, -3.5F, 0, 1.5F, -1, 2.5F, -3, 0.5F, -21, 0, 0, 0, 0, 0, 0, 12};
  EXPECT_EQ(values, expected);
  const auto pieces = detail::encode(int4_weight(layout), values, layout);
  EXPECT_EQ(pieces[0].bytes, original.parts[0]);
  EXPECT_EQ(pieces[1].bytes, original.parts[1]);
}

TEST(QuantizedInt4, MergedValuesComeBackWithinHalfAStep) {
  const auto layout = int4_layout(3, 64, 32);
  std::vector<float> values(3 * 64);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = std::cos(static_cast<float>(i) * 0.71F) * 0.05F;
  const auto pieces = detail::encode(int4_weight(layout), values, layout);
  const PartBytes encoded{{pieces[0].bytes, pieces[1].bytes, i32_bytes({3, 64})}};
  const auto decoded = detail::dequantize(int4_weight(layout), encoded.spans(), layout);
  std::vector<float> scales(6);
  safetensors::to_f32(Dtype::bf16, pieces[1].bytes, scales);
  for (std::size_t i = 0; i < values.size(); ++i) {
    // Half a step, plus the BF16 rounding of the value and of the scale.
    EXPECT_LE(std::fabs(decoded[i] - values[i]), 0.55F * scales[i / 32]) << i;
  }

  // Rows [1, 3) alone: the same bytes, at those rows' offsets.
  const auto tail = detail::encode(int4_weight(layout), std::span(values).subspan(64), layout, 1, 3);
  EXPECT_EQ(tail[0].offset, 8U * 4);
  EXPECT_EQ(tail[1].offset, 2U * 2);
  EXPECT_EQ(tail[0].bytes, std::vector<std::byte>(pieces[0].bytes.begin() + 32, pieces[0].bytes.end()));
  EXPECT_EQ(tail[1].bytes, std::vector<std::byte>(pieces[1].bytes.begin() + 4, pieces[1].bytes.end()));
  std::vector<float> middle(64);
  detail::dequantize(int4_weight(layout), encoded.spans(), layout, middle, 1, 2);
  EXPECT_EQ(middle, std::vector<float>(decoded.begin() + 64, decoded.begin() + 128));
}

TEST(QuantizedInt4, AnF16ScaleBeyondItsRangeIsRefused) {
  const auto layout = int4_layout(1, 8, 8, Dtype::f16);
  const std::vector<float> values(8, 1e6F);  // scale 1e6 / 7 > 65504
  test::expect_tinker_error(errc::invalid_argument, "is beyond what F16 holds",
                            [&] { detail::encode(int4_weight(layout), values, layout); });
  std::vector<float> not_finite(8, 1.0F);
  not_finite[3] = -INFINITY;
  test::expect_tinker_error(errc::invalid_argument, "weight_packed': a merged value is not finite",
                            [&] { detail::encode(int4_weight(layout), not_finite, layout); });
}

TEST(QuantizedInt4, WeightShapeMustAgreeWithThePackedTensor) {
  const auto layout = int4_layout(2, 8, 8);
  const PartBytes padded{{i32_bytes({0, 0}), float_bytes(Dtype::bf16, {1, 1}), i32_bytes({2, 7})}};
  test::expect_tinker_error(errc::invalid_file, "tensor '" + expert + ".weight_shape': says [2, 7] but",
                            [&] { detail::dequantize(int4_weight(layout), padded.spans(), layout); });
  const PartBytes truncated{{i32_bytes({0}), float_bytes(Dtype::bf16, {1, 1}), i32_bytes({2, 8})}};
  test::expect_tinker_error(errc::invalid_file, "weight_packed': 4 bytes for I32 [2, 1] (8 bytes)",
                            [&] { detail::dequantize(int4_weight(layout), truncated.spans(), layout); });
  const PartBytes two_parts{{i32_bytes({0, 0}), float_bytes(Dtype::bf16, {1, 1})}};
  test::expect_tinker_error(errc::invalid_argument, "2 parts given for 3",
                            [&] { detail::dequantize(int4_weight(layout), two_parts.spans(), layout); });
}

TEST(QuantizedInt4, AsymmetricWeightsAreNamedButNotDecoded) {
  auto layout = make_layout(pack_quantized_config(8, false, false), {{expert + ".weight_packed", {Dtype::i32, {1, 1}}},
                                                                     {expert + ".weight_scale", {Dtype::bf16, {1, 1}}},
                                                                     {expert + ".weight_shape", {Dtype::i32, {2}}}});
  detail::find_quantized_weights(layout);
  const PartBytes bytes{{i32_bytes({0}), float_bytes(Dtype::bf16, {1}), i32_bytes({1, 8})}};
  test::expect_tinker_error(errc::invalid_argument, "asymmetric pack-quantized weights (zero points) are not supported",
                            [&] { detail::dequantize(int4_weight(layout), bytes.spans(), layout); });
  test::expect_tinker_error(errc::invalid_argument, "asymmetric",
                            [&] { detail::encode(int4_weight(layout), std::vector<float>(8), layout); });
}

}  // namespace
}  // namespace tinker::weights::quantized_test
