// gpt-oss MXFP4 weights: decoding (E2M1 nibbles, low first, times 2^(s - 127), transposed to the
// logical [..., in, out]) and the cookbook's re-quantization after a merge.
#include "weights/quantized.hpp"

#include "support/expect_error.hpp"
#include "unit/weights/quantized_test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace tinker::weights::quantized_test {
namespace {

// One block of 32 values: a 2-D weight, blocks [1 row, 1 block, 16] -> logical [32, 1].
ModelLayout one_block_layout() {
  return make_layout(mxfp4_config(),
                     {{"lm.proj_blocks", {Dtype::u8, {1, 1, 16}}}, {"lm.proj_scales", {Dtype::u8, {1, 1}}}});
}

std::vector<float> decode_one_block(const std::vector<std::byte>& block, unsigned scale) {
  auto layout = one_block_layout();
  detail::find_quantized_weights(layout);
  const PartBytes bytes{{block, u8_bytes({scale})}};
  return detail::dequantize(layout.quantized.at("lm.proj"), bytes.spans(), layout);
}

// Encodes one block of 32 logical values; returns {16 block bytes..., scale byte}.
std::vector<std::byte> encode_one_block(const std::vector<float>& values) {
  auto layout = one_block_layout();
  detail::find_quantized_weights(layout);
  const auto pieces = detail::encode(layout.quantized.at("lm.proj"), values, layout);
  EXPECT_EQ(pieces.size(), 2U);
  auto bytes = pieces.at(0).bytes;
  bytes.insert(bytes.end(), pieces.at(1).bytes.begin(), pieces.at(1).bytes.end());
  return bytes;
}

std::vector<float> padded_block(std::vector<float> values) {
  values.resize(32, 0.0F);
  return values;
}

TEST(QuantizedMxfp4, DecodesEveryNibbleLowFirstTimesTheScale) {
  // Bytes 0..7 hold nibbles 0..15 in order (low nibble first); then the cookbook's vectors
  // 2 | 5 << 4 (1.0, 3.0) and 10 | 13 << 4 (-1.0, -3.0); scale byte 126 = 2^-1.
  const auto values =
      decode_one_block(u8_bytes({0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0xFE, 0x52, 0xDA, 0, 0, 0, 0, 0, 0}), 126);
  const std::vector<float> expected =
      padded_block({0.0F,  0.25F,  0.5F,  0.75F, 1.0F,  1.5F,  2.0F, 3.0F, -0.0F, -0.25F,
                    -0.5F, -0.75F, -1.0F, -1.5F, -2.0F, -3.0F, 0.5F, 1.5F, -0.5F, -1.5F});
  EXPECT_EQ(values, expected);
}

TEST(QuantizedMxfp4, ScaleIsTwoToTheByteMinus127) {
  const auto nibble_one = u8_bytes({0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});  // E2M1 1.0 first
  EXPECT_EQ(decode_one_block(nibble_one, 130)[0], 8.0F);  // the cookbook's 2^(130 - 127)
  EXPECT_EQ(decode_one_block(nibble_one, 127)[0], 1.0F);
  EXPECT_EQ(decode_one_block(nibble_one, 0)[0], std::ldexp(1.0F, -127));  // a subnormal f32, exact
  EXPECT_EQ(decode_one_block(nibble_one, 254)[0], std::ldexp(1.0F, 127));
  EXPECT_TRUE(std::isnan(decode_one_block(nibble_one, 255)[0]));  // E8M0 0xFF is NaN
  const auto zeros = decode_one_block(std::vector<std::byte>(16), 127);
  EXPECT_EQ(zeros, std::vector<float>(32, 0.0F));
}

TEST(QuantizedMxfp4, LogicalWeightIsTheStorageTransposedPerExpert) {
  // 2 experts x 2 storage rows (out) x 1 block: logical [2, 32 (in), 2 (out)].
  auto layout =
      make_layout(mxfp4_config(), {{"model.layers.0.mlp.experts.down_proj_blocks", {Dtype::u8, {2, 2, 1, 16}}},
                                   {"model.layers.0.mlp.experts.down_proj_scales", {Dtype::u8, {2, 2, 1}}}});
  detail::find_quantized_weights(layout);
  const auto& weight = layout.quantized.at("model.layers.0.mlp.experts.down_proj");
  EXPECT_EQ(weight.logical.shape, (std::vector<std::int64_t>{2, 32, 2}));
  std::vector<std::byte> blocks(64);
  blocks[0] = std::byte{0x32};        // expert 0, row 0: in 0 = 1.0, in 1 = 1.5
  blocks[16] = std::byte{0x07};       // expert 0, row 1: in 0 = 6.0
  blocks[32 + 15] = std::byte{0xC0};  // expert 1, row 0: in 31 = -2.0
  blocks[48 + 1] = std::byte{0x05};   // expert 1, row 1: in 2 = 3.0
  const PartBytes bytes{{blocks, u8_bytes({127, 128, 126, 125})}};
  const auto values = detail::dequantize(weight, bytes.spans(), layout);
  ASSERT_EQ(values.size(), 128U);
  const auto at = [&](int expert, int in, int out) {
    return values[static_cast<std::size_t>((expert * 32 + in) * 2 + out)];
  };
  EXPECT_EQ(at(0, 0, 0), 1.0F);
  EXPECT_EQ(at(0, 1, 0), 1.5F);
  EXPECT_EQ(at(0, 0, 1), 12.0F);   // 6 x 2^1
  EXPECT_EQ(at(1, 31, 0), -1.0F);  // -2 x 2^-1
  EXPECT_EQ(at(1, 2, 1), 0.75F);   // 3 x 2^-2
  EXPECT_EQ(at(1, 3, 1), 0.0F);

  // The second expert alone decodes to the same values.
  std::vector<float> second(64);
  detail::dequantize(weight, bytes.spans(), layout, second, 1, 2);
  EXPECT_EQ(second, std::vector<float>(values.begin() + 64, values.end()));
}

TEST(QuantizedMxfp4, EncodesToTheNearestValueTiesToTheSmallerMagnitude) {
  // amax 6 -> scale byte 127. 0.7 -> 0.5 and 1.3 -> 1.5 are the cookbook's vectors; 0.25, 0.75, 2.5
  // and 5 are halfway and go down; -0.75 -> -0.5 (nibble 9); -0.25 -> +0 (nibble 0).
  const auto bytes = encode_one_block(padded_block({6, -6, 0.7F, 1.3F, 0.25F, 0.75F, 2.5F, 5, -0.75F, -0.25F, 3, -4}));
  const auto expected = u8_bytes({0xF7, 0x31, 0x10, 0x64, 0x09, 0xE5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* scale */ 127});
  EXPECT_EQ(bytes, expected);
}

TEST(QuantizedMxfp4, ScaleByteIsTheSmallestExponentThatFitsTheBlock) {
  const auto scale_of = [](float amax) {
    return std::to_integer<unsigned>(encode_one_block(padded_block({amax})).at(16));
  };
  EXPECT_EQ(scale_of(6.0F), 127U);   // 6 <= 6 x 2^0
  EXPECT_EQ(scale_of(8.0F), 128U);   // ceil(log2(8 / 6)) = 1
  EXPECT_EQ(scale_of(12.0F), 128U);  // exactly 6 x 2^1
  EXPECT_EQ(scale_of(3.0F), 126U);   // exactly 6 x 2^-1
  EXPECT_EQ(scale_of(48.0F), 130U);
  EXPECT_EQ(scale_of(0.0F), 85U);  // an all-zero block: amax raised to 1e-12, 2^-42
  EXPECT_EQ(scale_of(1e-20F), 85U);
  // Each value is BF16 first: 6.01 rounds to 6.0 in BF16, so the block still fits 2^0.
  EXPECT_EQ(scale_of(6.01F), 127U);
  EXPECT_EQ(scale_of(6.05F), 128U);
}

TEST(QuantizedMxfp4, ScaledBlocksKeepTheirNibbles) {
  // The same values times 2^-3: the same nibbles, scale byte 124.
  std::vector<float> values = padded_block({6, -6, 0.7F, 1.3F, 0.25F, 0.75F, 2.5F, 5, -0.75F, -0.25F, 3, -4});
  for (auto& v : values) v = std::ldexp(v, -3);
  const auto bytes = encode_one_block(values);
  EXPECT_EQ(std::to_integer<unsigned>(bytes[0]), 0xF7U);
  EXPECT_EQ(std::to_integer<unsigned>(bytes[5]), 0xE5U);
  EXPECT_EQ(std::to_integer<unsigned>(bytes[16]), 124U);
}

TEST(QuantizedMxfp4, ExactValuesAndZerosRoundTrip) {
  // The cookbook's test: values E2M1 holds come back exactly.
  const auto exact = padded_block({0, 0.5F, 1, 1.5F, 2, 3, 4, 6, -0.5F, -1});
  const auto encoded = encode_one_block(exact);
  EXPECT_EQ(decode_one_block(std::vector<std::byte>(encoded.begin(), encoded.begin() + 16),
                             std::to_integer<unsigned>(encoded[16])),
            exact);
  const auto zeros = encode_one_block(std::vector<float>(32, 0.0F));
  EXPECT_EQ(zeros, [] {
    std::vector<std::byte> expected(17);
    expected[16] = std::byte{85};
    return expected;
  }());
}

TEST(QuantizedMxfp4, DecodeEncodeDecodeKeepsEveryValue) {
  // Any decoded block re-encodes to the same values (the scale may change when the largest nibble
  // is below 6, the values do not): merging a zero delta changes nothing.
  auto layout =
      make_layout(mxfp4_config(), {{"model.layers.0.mlp.experts.gate_up_proj_blocks", {Dtype::u8, {3, 8, 2, 16}}},
                                   {"model.layers.0.mlp.experts.gate_up_proj_scales", {Dtype::u8, {3, 8, 2}}}});
  detail::find_quantized_weights(layout);
  const auto& weight = layout.quantized.at("model.layers.0.mlp.experts.gate_up_proj");
  const PartBytes original{{pseudo_random_bytes(3 * 8 * 2 * 16, 7), pseudo_random_bytes(3 * 8 * 2, 11, 100, 150)}};
  const auto values = detail::dequantize(weight, original.spans(), layout);
  const auto pieces = detail::encode(weight, values, layout);
  ASSERT_EQ(pieces.size(), 2U);
  EXPECT_EQ(pieces[0].offset, 0U);
  EXPECT_EQ(pieces[1].offset, 0U);
  const PartBytes encoded{{pieces[0].bytes, pieces[1].bytes}};
  EXPECT_EQ(detail::dequantize(weight, encoded.spans(), layout), values);

  // Encoding the middle expert alone gives the same bytes at that expert's offsets.
  const std::vector<float> middle(values.begin() + 64 * 8, values.begin() + 2 * 64 * 8);
  const auto middle_pieces = detail::encode(weight, middle, layout, 1, 2);
  EXPECT_EQ(middle_pieces[0].offset, 8U * 2 * 16);
  EXPECT_EQ(middle_pieces[1].offset, 8U * 2);
  EXPECT_EQ(middle_pieces[0].bytes,
            std::vector<std::byte>(pieces[0].bytes.begin() + 256, pieces[0].bytes.begin() + 512));
  EXPECT_EQ(middle_pieces[1].bytes, std::vector<std::byte>(pieces[1].bytes.begin() + 16, pieces[1].bytes.begin() + 32));
}

TEST(QuantizedMxfp4, MergedValuesComeBackWithinHalfAStep) {
  // A value v of a block with scale 2^e comes back within 2^e (half the widest E2M1 gap, 4 to 6),
  // after BF16 rounding.
  auto layout =
      make_layout(mxfp4_config(), {{"m.w_blocks", {Dtype::u8, {1, 4, 2, 16}}}, {"m.w_scales", {Dtype::u8, {1, 4, 2}}}});
  detail::find_quantized_weights(layout);
  const auto& weight = layout.quantized.at("m.w");
  std::vector<float> values(64 * 4);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = std::sin(static_cast<float>(i) * 0.37F) * 0.02F;
  const auto pieces = detail::encode(weight, values, layout);
  const PartBytes encoded{{pieces[0].bytes, pieces[1].bytes}};
  const auto decoded = detail::dequantize(weight, encoded.spans(), layout);
  for (std::size_t in = 0; in < 64; ++in) {
    for (std::size_t out = 0; out < 4; ++out) {
      const auto scale_byte = std::to_integer<int>(pieces[1].bytes[out * 2 + in / 32]);
      const auto i = in * 4 + out;
      EXPECT_LE(std::fabs(decoded[i] - values[i]), std::ldexp(1.0F, scale_byte - 127) * 1.05F) << in << " " << out;
    }
  }
}

TEST(QuantizedMxfp4, NonFiniteMergedValuesAreRefused) {
  auto layout = one_block_layout();
  detail::find_quantized_weights(layout);
  auto values = std::vector<float>(32, 1.0F);
  values[5] = std::nanf("");
  test::expect_tinker_error(errc::invalid_argument, "tensor 'lm.proj_blocks': a merged value is not finite",
                            [&] { detail::encode(layout.quantized.at("lm.proj"), values, layout); });
  values[5] = 3.4e38F;  // finite in f32, infinite in BF16
  test::expect_tinker_error(errc::invalid_argument, "not finite",
                            [&] { detail::encode(layout.quantized.at("lm.proj"), values, layout); });
}

TEST(QuantizedMxfp4, RangesMustFitTheFirstAxis) {
  auto layout = make_layout(mxfp4_config(), {{"e_blocks", {Dtype::u8, {2, 1, 1, 16}}},
                                             {"e_scales", {Dtype::u8, {2, 1, 1}}},
                                             {"p_blocks", {Dtype::u8, {1, 1, 16}}},
                                             {"p_scales", {Dtype::u8, {1, 1}}}});
  detail::find_quantized_weights(layout);
  const PartBytes experts{{std::vector<std::byte>(32), u8_bytes({127, 127})}};
  std::vector<float> out(32);
  test::expect_tinker_error(errc::invalid_argument, "cannot work on [1, 3)",
                            [&] { detail::dequantize(layout.quantized.at("e"), experts.spans(), layout, out, 1, 3); });
  std::vector<float> too_small(31);
  test::expect_tinker_error(errc::invalid_argument, "31 values for 32", [&] {
    detail::dequantize(layout.quantized.at("e"), experts.spans(), layout, too_small, 1, 2);
  });
  const PartBytes plain{{std::vector<std::byte>(16), u8_bytes({127})}};
  std::vector<float> half(16);
  test::expect_tinker_error(errc::invalid_argument, "a 2-D MXFP4 weight goes whole",
                            [&] { detail::dequantize(layout.quantized.at("p"), plain.spans(), layout, half, 0, 16); });
}

}  // namespace
}  // namespace tinker::weights::quantized_test
