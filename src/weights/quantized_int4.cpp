// compressed-tensors "pack-quantized" INT4 (Kimi K2/K2.5 routed experts): eight 4-bit integers an
// int32, lowest bits first, each stored as value + 8, one scale per group of columns.
//
// The offset is compressed-tensors' own (pack_to_int32 adds 2^(bits-1) before packing, and vLLM
// reads symmetric 4-bit weights as uint4b8). The cookbook reads the nibbles as two's complement
// instead, which agrees with the offset encoding on no value; we follow the format's writer.
#include "weights/quantized_codecs.hpp"

#include <tinker/error.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace tinker::weights::detail::quantized_codecs {
namespace {

constexpr std::int64_t int4_per_word = 8;
constexpr int int4_offset = 8;
constexpr int int4_min = -8;
constexpr int int4_max = 7;
// The cookbook's symmetric scale: the group's largest magnitude maps to 7 (so -8 is never used),
// and a scale never below this floor (an all-zero group).
constexpr float int4_scale_divisor = 7.0F;
constexpr float int4_min_scale = 1e-12F;

std::uint32_t load_word(const std::byte* p) noexcept {
  std::uint32_t word = 0;
  std::memcpy(&word, p, sizeof word);  // little-endian, like the file
  return word;
}

void store_word(std::byte* p, std::uint32_t word) noexcept {
  std::memcpy(p, &word, sizeof word);
}

// Round half to even, as torch.round, whatever the floating-point environment's rounding mode.
float round_half_even(float x) noexcept {
  const float nearest = std::round(x);  // half away from zero
  if (std::fabs(x - std::trunc(x)) == 0.5F) return 2.0F * std::round(x / 2.0F);
  return nearest;
}

void round_row_to_dtype(std::vector<float>& row, std::vector<std::byte>& scratch, safetensors::Dtype dtype) {
  if (dtype != safetensors::Dtype::bf16 && dtype != safetensors::Dtype::f16) return;  // f32 holds them already
  scratch.resize(row.size() * safetensors::dtype_size(dtype));
  safetensors::from_f32(dtype, row, scratch);
  safetensors::to_f32(dtype, scratch, row);
}

}  // namespace

void decode_int4(const Int4Rows& r, std::span<const std::byte> packed, std::span<const std::byte> scales,
                 std::span<float> out) {
  const std::int64_t cols = r.packed_cols * int4_per_word;
  const auto scale_bytes = static_cast<std::size_t>(r.groups) * safetensors::dtype_size(r.scale_dtype);
  std::vector<float> row_scales(static_cast<std::size_t>(r.groups));
  for (std::int64_t row = r.first; row < r.last; ++row) {
    safetensors::to_f32(r.scale_dtype, scales.subspan(static_cast<std::size_t>(row) * scale_bytes, scale_bytes),
                        row_scales);
    const std::byte* words = packed.data() + row * r.packed_cols * 4;
    float* values = out.data() + (row - r.first) * cols;
    for (std::int64_t col = 0; col < cols; ++col) {
      const std::uint32_t word = load_word(words + (col / int4_per_word) * 4);
      const auto nibble = static_cast<int>((word >> (4 * (col % int4_per_word))) & 0xFU);
      values[col] = static_cast<float>(nibble - int4_offset) * row_scales[static_cast<std::size_t>(col / r.group_size)];
    }
  }
}

void encode_int4(const Int4Rows& r, std::span<const float> values, safetensors::Dtype value_dtype,
                 std::span<std::byte> packed_out, std::span<std::byte> scales_out, const std::string& label) {
  const std::int64_t cols = r.packed_cols * int4_per_word;
  const auto scale_bytes = static_cast<std::size_t>(r.groups) * safetensors::dtype_size(r.scale_dtype);
  std::vector<float> row(static_cast<std::size_t>(cols));
  std::vector<float> row_scales(static_cast<std::size_t>(r.groups));
  std::vector<float> stored_scales(static_cast<std::size_t>(r.groups));
  std::vector<std::uint32_t> words(static_cast<std::size_t>(r.packed_cols));
  std::vector<std::byte> scratch;
  for (std::int64_t index = 0; index < r.last - r.first; ++index) {
    std::copy_n(values.data() + index * cols, cols, row.begin());
    round_row_to_dtype(row, scratch, value_dtype);
    std::fill(words.begin(), words.end(), 0U);
    for (std::int64_t group = 0; group < r.groups; ++group) {
      const auto begin = row.begin() + group * r.group_size;
      float amax = 0;
      for (auto it = begin; it != begin + r.group_size; ++it) {
        if (!std::isfinite(*it)) {
          throw error(errc::invalid_argument, label + ": a merged value is not finite (" + std::to_string(*it) +
                                                  "), it cannot be encoded as INT4");
        }
        amax = std::max(amax, std::fabs(*it));
      }
      const float scale = std::max(amax / int4_scale_divisor, int4_min_scale);
      row_scales[static_cast<std::size_t>(group)] = scale;
      for (std::int64_t col = group * r.group_size; col < (group + 1) * r.group_size; ++col) {
        const float q = std::clamp(round_half_even(row[static_cast<std::size_t>(col)] / scale),
                                   static_cast<float>(int4_min), static_cast<float>(int4_max));
        const auto nibble = static_cast<std::uint32_t>(static_cast<int>(q) + int4_offset);
        words[static_cast<std::size_t>(col / int4_per_word)] |= nibble << (4 * (col % int4_per_word));
      }
    }
    const auto scales_row = scales_out.subspan(static_cast<std::size_t>(index) * scale_bytes, scale_bytes);
    safetensors::from_f32(r.scale_dtype, row_scales, scales_row);
    safetensors::to_f32(r.scale_dtype, scales_row, stored_scales);
    for (std::size_t g = 0; g < stored_scales.size(); ++g) {
      if (!std::isfinite(stored_scales[g])) {
        throw error(errc::invalid_argument, label + ": scale " + std::to_string(row_scales[g]) + " is beyond what " +
                                                std::string(safetensors::to_string(r.scale_dtype)) + " holds");
      }
    }
    std::byte* packed_row = packed_out.data() + index * r.packed_cols * 4;
    for (std::int64_t c = 0; c < r.packed_cols; ++c) store_word(packed_row + c * 4, words[static_cast<std::size_t>(c)]);
  }
}

}  // namespace tinker::weights::detail::quantized_codecs
