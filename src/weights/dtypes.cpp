// The element types of safetensors and the float conversions every exporter uses. bf16 and f16 are
// converted by bit manipulation (no hardware half-float support assumed); from_f32 rounds to
// nearest, ties to even, as torch's .to(torch.bfloat16) does, so a merged weight is the value the
// cookbook's Python produces.
#include <tinker/error.hpp>
#include <tinker/safetensors.hpp>

#include <array>
#include <bit>
#include <cstring>
#include <limits>

namespace tinker::safetensors {
namespace {

struct DtypeName {
  Dtype dtype;
  std::string_view name;
  std::size_t size;
};

constexpr std::array<DtypeName, 16> dtype_table{{
    {Dtype::boolean, "BOOL", 1},
    {Dtype::u8, "U8", 1},
    {Dtype::i8, "I8", 1},
    {Dtype::i16, "I16", 2},
    {Dtype::u16, "U16", 2},
    {Dtype::i32, "I32", 4},
    {Dtype::u32, "U32", 4},
    {Dtype::i64, "I64", 8},
    {Dtype::u64, "U64", 8},
    {Dtype::f16, "F16", 2},
    {Dtype::bf16, "BF16", 2},
    {Dtype::f32, "F32", 4},
    {Dtype::f64, "F64", 8},
    {Dtype::f8_e4m3, "F8_E4M3", 1},
    {Dtype::f8_e5m2, "F8_E5M2", 1},
    {Dtype::f8_e8m0, "F8_E8M0", 1},
}};

std::uint16_t load_u16(const std::byte* p) noexcept {
  std::uint16_t v = 0;
  std::memcpy(&v, p, sizeof v);
  return v;  // safetensors is little-endian, as is every machine this builds for
}

void store_u16(std::byte* p, std::uint16_t v) noexcept {
  std::memcpy(p, &v, sizeof v);
}

float bf16_to_float(std::uint16_t bits) noexcept {
  return std::bit_cast<float>(std::uint32_t{bits} << 16);
}

std::uint16_t float_to_bf16(float value) noexcept {
  const auto bits = std::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7fffffffU) > 0x7f800000U) {
    return static_cast<std::uint16_t>((bits >> 16) | 0x0040U);  // NaN stays a (quiet) NaN
  }
  const std::uint32_t lsb = (bits >> 16) & 1U;
  return static_cast<std::uint16_t>((bits + 0x7fffU + lsb) >> 16);  // nearest, ties to even
}

float f16_to_float(std::uint16_t h) noexcept {
  const std::uint32_t sign = std::uint32_t{h & 0x8000U} << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fU;
  std::uint32_t mantissa = h & 0x3ffU;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000U | (mantissa << 13));
  if (exponent != 0) return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
  if (mantissa == 0) return std::bit_cast<float>(sign);
  // Subnormal half: value = mantissa * 2^-24, exact in float.
  const float magnitude = static_cast<float>(mantissa) * 0x1p-24F;
  return sign != 0 ? -magnitude : magnitude;
}

std::uint16_t float_to_f16(float value) noexcept {
  const auto bits = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000U);
  const std::uint32_t abs_bits = bits & 0x7fffffffU;
  if (abs_bits > 0x7f800000U) return static_cast<std::uint16_t>(sign | 0x7e00U);   // NaN
  if (abs_bits >= 0x477ff000U) return static_cast<std::uint16_t>(sign | 0x7c00U);  // rounds past 65504: inf
  if (abs_bits >= 0x38800000U) {                                                   // normal half
    const std::uint32_t lsb = (abs_bits >> 13) & 1U;
    const std::uint32_t rounded = abs_bits + 0xfffU + lsb;
    return static_cast<std::uint16_t>(sign | ((rounded - 0x38000000U) >> 13));
  }
  // Subnormal (or zero) half: scale to units of 2^-24 and round to nearest even.
  const float magnitude = std::bit_cast<float>(abs_bits) * 0x1p24F;
  const float floor_value = static_cast<float>(static_cast<std::uint32_t>(magnitude));
  auto units = static_cast<std::uint32_t>(floor_value);
  const float fraction = magnitude - floor_value;
  if (fraction > 0.5F || (fraction == 0.5F && (units & 1U) != 0)) ++units;
  return static_cast<std::uint16_t>(sign | units);
}

[[noreturn]] void throw_not_float(Dtype dtype, const char* direction) {
  throw error(errc::invalid_argument,
              std::string("cannot convert ") + direction + " " + std::string(to_string(dtype)) + " (not a float type)");
}

void check_sizes(Dtype dtype, std::size_t bytes, std::size_t count) {
  if (bytes != count * dtype_size(dtype)) {
    throw error(errc::invalid_argument, "conversion of " + std::string(to_string(dtype)) + ": " +
                                            std::to_string(bytes) + " bytes for " + std::to_string(count) +
                                            " elements");
  }
}

}  // namespace

std::string_view to_string(Dtype dtype) noexcept {
  for (const auto& entry : dtype_table) {
    if (entry.dtype == dtype) return entry.name;
  }
  return "?";
}

std::optional<Dtype> dtype_from_string(std::string_view name) noexcept {
  for (const auto& entry : dtype_table) {
    if (entry.name == name) return entry.dtype;
  }
  return std::nullopt;
}

std::size_t dtype_size(Dtype dtype) noexcept {
  for (const auto& entry : dtype_table) {
    if (entry.dtype == dtype) return entry.size;
  }
  return 1;
}

bool is_float(Dtype dtype) noexcept {
  return dtype == Dtype::f16 || dtype == Dtype::bf16 || dtype == Dtype::f32 || dtype == Dtype::f64;
}

std::uint64_t TensorInfo::element_count() const noexcept {
  std::uint64_t count = 1;
  for (const auto dim : shape) count *= static_cast<std::uint64_t>(dim);
  return count;
}

void to_f32(Dtype dtype, std::span<const std::byte> bytes, std::span<float> out) {
  check_sizes(dtype, bytes.size(), out.size());
  const std::byte* in = bytes.data();
  switch (dtype) {
    case Dtype::f32:
      if (!bytes.empty()) std::memcpy(out.data(), in, bytes.size());  // an empty span's data() may be null
      return;
    case Dtype::bf16:
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = bf16_to_float(load_u16(in + 2 * i));
      return;
    case Dtype::f16:
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = f16_to_float(load_u16(in + 2 * i));
      return;
    case Dtype::f64:
      for (std::size_t i = 0; i < out.size(); ++i) {
        double value = 0;
        std::memcpy(&value, in + 8 * i, sizeof value);
        out[i] = static_cast<float>(value);
      }
      return;
    default: throw_not_float(dtype, "from");
  }
}

void from_f32(Dtype dtype, std::span<const float> values, std::span<std::byte> out) {
  check_sizes(dtype, out.size(), values.size());
  std::byte* dst = out.data();
  switch (dtype) {
    case Dtype::f32:
      if (!out.empty()) std::memcpy(dst, values.data(), out.size());  // an empty span's data() may be null
      return;
    case Dtype::bf16:
      for (std::size_t i = 0; i < values.size(); ++i) store_u16(dst + 2 * i, float_to_bf16(values[i]));
      return;
    case Dtype::f16:
      for (std::size_t i = 0; i < values.size(); ++i) store_u16(dst + 2 * i, float_to_f16(values[i]));
      return;
    default: throw_not_float(dtype, "to");
  }
}

}  // namespace tinker::safetensors
