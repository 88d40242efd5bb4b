// The dtype table and the float conversions of src/weights/dtypes.cpp. The f16 and bf16 encoders
// are checked against a reference written here differently: the nearest of the two neighbouring
// values (found by search over the decoder, itself checked on every bit pattern), ties to the even
// pattern, over every midpoint between neighbours and a stride through all floats.
#include "support/expect_error.hpp"

#include <tinker/safetensors.hpp>

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace tinker::safetensors {
namespace {

using test::expect_tinker_error;

std::uint16_t encode_half(Dtype dtype, float value) {
  std::byte out[2];
  from_f32(dtype, std::span<const float>(&value, 1), out);
  std::uint16_t bits = 0;
  std::memcpy(&bits, out, 2);
  return bits;
}

float decode_half(Dtype dtype, std::uint16_t bits) {
  std::byte in[2];
  std::memcpy(in, &bits, 2);
  float value = 0;
  to_f32(dtype, in, std::span<float>(&value, 1));
  return value;
}

float float_of_bits(std::uint32_t bits) {
  return std::bit_cast<float>(bits);
}

// The value of positive pattern `bits`, where the pattern just past the largest finite one (the
// infinity) counts as the next power of two: the rounding threshold to infinity lies halfway to it.
double extended_value(Dtype dtype, std::uint16_t bits, std::uint16_t infinity_bits) {
  if (bits == infinity_bits) return dtype == Dtype::f16 ? 65536.0 : std::ldexp(1.0, 128);
  return decode_half(dtype, bits);
}

// Round to nearest, ties to even, by search: the largest pattern not above |value|, or the next.
std::uint16_t reference_encode(Dtype dtype, float value) {
  const std::uint16_t infinity_bits = dtype == Dtype::f16 ? 0x7c00 : 0x7f80;
  const std::uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  const double magnitude = std::fabs(static_cast<double>(value));
  if (std::isinf(value)) return sign | infinity_bits;
  std::uint16_t low = 0;  // positive patterns are ordered like their values
  std::uint16_t high = infinity_bits;
  while (high - low > 1) {
    const auto middle = static_cast<std::uint16_t>((low + high) / 2);
    (extended_value(dtype, middle, infinity_bits) <= magnitude ? low : high) = middle;
  }
  if (extended_value(dtype, high, infinity_bits) <= magnitude) return sign | high;  // at or past infinity
  const double below = magnitude - extended_value(dtype, low, infinity_bits);
  const double above = extended_value(dtype, high, infinity_bits) - magnitude;
  const bool up = above < below || (above == below && (low & 1) != 0);
  return static_cast<std::uint16_t>(sign | (up ? high : low));
}

TEST(SafetensorsDtypes, NamesAndSizesOfEveryDtype) {
  const std::vector<std::tuple<Dtype, std::string_view, std::size_t>> expected = {
      {Dtype::boolean, "BOOL", 1},   {Dtype::u8, "U8", 1},           {Dtype::i8, "I8", 1},
      {Dtype::i16, "I16", 2},        {Dtype::u16, "U16", 2},         {Dtype::i32, "I32", 4},
      {Dtype::u32, "U32", 4},        {Dtype::i64, "I64", 8},         {Dtype::u64, "U64", 8},
      {Dtype::f16, "F16", 2},        {Dtype::bf16, "BF16", 2},       {Dtype::f32, "F32", 4},
      {Dtype::f64, "F64", 8},        {Dtype::f8_e4m3, "F8_E4M3", 1}, {Dtype::f8_e5m2, "F8_E5M2", 1},
      {Dtype::f8_e8m0, "F8_E8M0", 1}};
  for (const auto& [dtype, name, size] : expected) {
    EXPECT_EQ(to_string(dtype), name);
    EXPECT_EQ(dtype_from_string(name), dtype) << name;
    EXPECT_EQ(dtype_size(dtype), size) << name;
    EXPECT_EQ(is_float(dtype), name == "F16" || name == "BF16" || name == "F32" || name == "F64") << name;
  }
  EXPECT_EQ(dtype_from_string("f32"), std::nullopt);  // names are case-sensitive in the format
  EXPECT_EQ(dtype_from_string("F4"), std::nullopt);
  EXPECT_EQ(dtype_from_string(""), std::nullopt);
}

TEST(SafetensorsDtypes, ElementCountOfAScalarIsOne) {
  EXPECT_EQ((TensorInfo{"s", Dtype::f32, {}, 0, 4}.element_count()), 1U);
  EXPECT_EQ((TensorInfo{"m", Dtype::f32, {3, 0, 5}, 0, 0}.element_count()), 0U);
  EXPECT_EQ((TensorInfo{"m", Dtype::f32, {3, 4, 5}, 0, 240}.element_count()), 60U);
}

TEST(SafetensorsDtypes, EveryBf16AndF16PatternDecodesAndEncodesBack) {
  for (const Dtype dtype : {Dtype::bf16, Dtype::f16}) {
    for (std::uint32_t bits = 0; bits <= 0xffff; ++bits) {
      const float value = decode_half(dtype, static_cast<std::uint16_t>(bits));
      if (std::isnan(value)) {
        EXPECT_TRUE(std::isnan(decode_half(dtype, encode_half(dtype, value)))) << bits;
        continue;
      }
      ASSERT_EQ(encode_half(dtype, value), bits) << to_string(dtype) << " " << value;
    }
  }
}

TEST(SafetensorsDtypes, F16DecodesKnownValues) {
  EXPECT_EQ(decode_half(Dtype::f16, 0x3c00), 1.0F);
  EXPECT_EQ(decode_half(Dtype::f16, 0xc000), -2.0F);
  EXPECT_EQ(decode_half(Dtype::f16, 0x7bff), 65504.0F);
  EXPECT_EQ(decode_half(Dtype::f16, 0x0001), 0x1p-24F);  // smallest subnormal
  EXPECT_EQ(decode_half(Dtype::f16, 0x03ff), 1023 * 0x1p-24F);
  EXPECT_EQ(decode_half(Dtype::f16, 0x0400), 0x1p-14F);  // smallest normal
  EXPECT_EQ(decode_half(Dtype::f16, 0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::signbit(decode_half(Dtype::f16, 0x8000)));
  EXPECT_TRUE(std::isnan(decode_half(Dtype::f16, 0x7e00)));
  EXPECT_TRUE(std::isnan(decode_half(Dtype::f16, 0x7c01)));
}

TEST(SafetensorsDtypes, Bf16RoundsToNearestTiesToEven) {
  EXPECT_EQ(encode_half(Dtype::bf16, 1.0F), 0x3f80);
  EXPECT_EQ(encode_half(Dtype::bf16, float_of_bits(0x3f808000)), 0x3f80);  // tie, even below
  EXPECT_EQ(encode_half(Dtype::bf16, float_of_bits(0x3f818000)), 0x3f82);  // tie, even above
  EXPECT_EQ(encode_half(Dtype::bf16, float_of_bits(0x3f808001)), 0x3f81);  // just past the tie
  EXPECT_EQ(encode_half(Dtype::bf16, float_of_bits(0x3f807fff)), 0x3f80);  // just before it
  EXPECT_EQ(encode_half(Dtype::bf16, -1.0F), 0xbf80);
  EXPECT_EQ(encode_half(Dtype::bf16, -0.0F), 0x8000);
}

TEST(SafetensorsDtypes, Bf16KeepsNanInfinityAndSubnormals) {
  EXPECT_EQ(encode_half(Dtype::bf16, std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(encode_half(Dtype::bf16, -std::numeric_limits<float>::infinity()), 0xff80);
  EXPECT_EQ(encode_half(Dtype::bf16, std::numeric_limits<float>::max()), 0x7f80);  // rounds past the top
  // A signalling NaN whose payload lies in the dropped bits must not turn into infinity.
  EXPECT_TRUE(std::isnan(decode_half(Dtype::bf16, encode_half(Dtype::bf16, float_of_bits(0x7f800001)))));
  EXPECT_TRUE(std::isnan(decode_half(Dtype::bf16, encode_half(Dtype::bf16, float_of_bits(0xffc00000)))));
  EXPECT_TRUE(std::signbit(decode_half(Dtype::bf16, encode_half(Dtype::bf16, float_of_bits(0xffc00000)))));
  EXPECT_EQ(encode_half(Dtype::bf16, float_of_bits(0x00010000)), 0x0001);  // float subnormal, exact
  EXPECT_EQ(encode_half(Dtype::bf16, float_of_bits(0x00008000)), 0x0000);  // tie at the bottom: even
  EXPECT_EQ(encode_half(Dtype::bf16, float_of_bits(0x00018000)), 0x0002);
}

TEST(SafetensorsDtypes, F16RoundsToNearestTiesToEven) {
  EXPECT_EQ(encode_half(Dtype::f16, 1.0F), 0x3c00);
  EXPECT_EQ(encode_half(Dtype::f16, 1.0F + 0x1p-11F), 0x3c00);      // tie, even below
  EXPECT_EQ(encode_half(Dtype::f16, 1.0F + 3 * 0x1p-11F), 0x3c02);  // tie, even above
  EXPECT_EQ(encode_half(Dtype::f16, 1.0F + 0x1p-11F + 0x1p-23F), 0x3c01);
  EXPECT_EQ(encode_half(Dtype::f16, 0.1F), 0x2e66);
  EXPECT_EQ(encode_half(Dtype::f16, -0.0F), 0x8000);
}

TEST(SafetensorsDtypes, F16OverflowsToInfinityFrom65520) {
  EXPECT_EQ(encode_half(Dtype::f16, 65504.0F), 0x7bff);
  EXPECT_EQ(encode_half(Dtype::f16, std::nextafter(65520.0F, 0.0F)), 0x7bff);
  EXPECT_EQ(encode_half(Dtype::f16, 65520.0F), 0x7c00);  // the tie with 65536 goes to the even pattern: inf
  EXPECT_EQ(encode_half(Dtype::f16, -65520.0F), 0xfc00);
  EXPECT_EQ(encode_half(Dtype::f16, 1e10F), 0x7c00);
  EXPECT_EQ(encode_half(Dtype::f16, std::numeric_limits<float>::infinity()), 0x7c00);
}

TEST(SafetensorsDtypes, F16SubnormalsAndUnderflow) {
  EXPECT_EQ(encode_half(Dtype::f16, 0x1p-24F), 0x0001);
  EXPECT_EQ(encode_half(Dtype::f16, 0x1p-25F), 0x0000);  // tie between 0 and the smallest: even
  EXPECT_EQ(encode_half(Dtype::f16, std::nextafter(0x1p-25F, 1.0F)), 0x0001);
  EXPECT_EQ(encode_half(Dtype::f16, 3 * 0x1p-25F), 0x0002);        // tie between 1 and 2 units
  EXPECT_EQ(encode_half(Dtype::f16, 1023.5F * 0x1p-24F), 0x0400);  // rounds up into the normals
  EXPECT_EQ(encode_half(Dtype::f16, 1e-10F), 0x0000);
  EXPECT_EQ(encode_half(Dtype::f16, -1e-10F), 0x8000);
  EXPECT_EQ(encode_half(Dtype::f16, std::numeric_limits<float>::denorm_min()), 0x0000);
}

TEST(SafetensorsDtypes, F16KeepsNanAndItsSign) {
  EXPECT_TRUE(std::isnan(decode_half(Dtype::f16, encode_half(Dtype::f16, std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isnan(decode_half(Dtype::f16, encode_half(Dtype::f16, float_of_bits(0x7f800001)))));
  EXPECT_EQ(encode_half(Dtype::f16, float_of_bits(0xffc00000)) & 0x8000, 0x8000);
}

TEST(SafetensorsDtypes, EncodersMatchTheReferenceAtEveryMidpoint) {
  for (const Dtype dtype : {Dtype::bf16, Dtype::f16}) {
    const std::uint16_t last_finite = dtype == Dtype::f16 ? 0x7bff : 0x7f7f;
    for (std::uint16_t bits = 0; bits <= last_finite; ++bits) {
      const float low = decode_half(dtype, bits);
      const float high = bits == last_finite ? (dtype == Dtype::f16 ? 65536.0F : std::numeric_limits<float>::max())
                                             : decode_half(dtype, static_cast<std::uint16_t>(bits + 1));
      const float middle =
          bits == last_finite && dtype == Dtype::bf16 ? float_of_bits(0x7f7f8000) : low + (high - low) / 2;
      for (const float value : {middle, std::nextafter(middle, 0.0F), std::nextafter(middle, high), -middle}) {
        ASSERT_EQ(encode_half(dtype, value), reference_encode(dtype, value))
            << to_string(dtype) << " " << std::hexfloat << value;
      }
    }
  }
}

TEST(SafetensorsDtypes, EncodersMatchTheReferenceThroughAllFloats) {
  for (const Dtype dtype : {Dtype::bf16, Dtype::f16}) {
    for (std::uint64_t bits = 0; bits < 0x7f800000; bits += 0x4001) {
      const float value = float_of_bits(static_cast<std::uint32_t>(bits));
      ASSERT_EQ(encode_half(dtype, value), reference_encode(dtype, value))
          << to_string(dtype) << " " << std::hexfloat << value;
    }
  }
}

TEST(SafetensorsDtypes, F32AndF64ConvertExactlyOrToNearest) {
  const std::vector<float> values = {1.5F, -0.0F, 3.25e-30F, std::numeric_limits<float>::infinity()};
  std::vector<std::byte> bytes(values.size() * 4);
  from_f32(Dtype::f32, values, bytes);
  std::vector<float> back(values.size());
  to_f32(Dtype::f32, bytes, back);
  EXPECT_EQ(std::memcmp(back.data(), values.data(), bytes.size()), 0);

  const std::vector<double> doubles = {0.1, -1e300, 2.5};
  std::vector<float> from_doubles(3);
  to_f32(Dtype::f64, std::as_bytes(std::span(doubles)), from_doubles);
  EXPECT_EQ(from_doubles, (std::vector<float>{0.1F, -std::numeric_limits<float>::infinity(), 2.5F}));
}

TEST(SafetensorsDtypes, EmptyF32ConversionsPassNoNullPointerToMemcpy) {
  // Found by fuzz_safetensors: an F32 tensor of shape [0, 3] read into an empty vector gave
  // memcpy a null destination, undefined behaviour even for 0 bytes (UBSan reports it).
  std::vector<float> none;
  std::vector<std::byte> no_bytes;
  to_f32(Dtype::f32, no_bytes, none);
  from_f32(Dtype::f32, none, no_bytes);
  const auto tensor = make_tensor("e", {0, 3}, none);
  EXPECT_TRUE(tensor.bytes.empty());
  expect_tinker_error(errc::invalid_argument, "I32", [&] { to_f32(Dtype::i32, no_bytes, none); });
}

TEST(SafetensorsDtypes, ConversionsRefuseOtherDtypesAndWrongSizes) {
  std::vector<std::byte> bytes(8);
  std::vector<float> values(2);
  expect_tinker_error(errc::invalid_argument, "I32", [&] { to_f32(Dtype::i32, bytes, values); });
  expect_tinker_error(errc::invalid_argument, "F64", [&] { from_f32(Dtype::f64, values, bytes); });
  expect_tinker_error(errc::invalid_argument, "8 bytes for 2 elements", [&] { to_f32(Dtype::bf16, bytes, values); });
  expect_tinker_error(errc::invalid_argument, "8 bytes for 2 elements", [&] { from_f32(Dtype::f16, values, bytes); });
}

}  // namespace
}  // namespace tinker::safetensors
