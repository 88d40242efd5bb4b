// MXFP4 (OCP Microscaling, FP4 E2M1 elements with one E8M0 power-of-two scale per 32 values), as
// gpt-oss stores its expert weights and as the cookbook re-quantizes them after a merge.
#include "weights/quantized_codecs.hpp"

#include <tinker/error.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

namespace tinker::weights::detail::quantized_codecs {
namespace {

constexpr std::int64_t mx_block_values = 32;
constexpr std::int64_t mx_block_bytes = 16;  // two E2M1 values a byte
constexpr std::array<float, 8> e2m1_magnitudes{0.0F, 0.5F, 1.0F, 1.5F, 2.0F, 3.0F, 4.0F, 6.0F};
// Halfway between consecutive magnitudes. A value exactly halfway takes the smaller magnitude:
// the cookbook snaps with argmin over the table, which returns the first (smaller) of two equal
// distances, and +0 (index 0) before -0 (index 8).
constexpr std::array<float, 7> e2m1_midpoints{0.25F, 0.75F, 1.25F, 1.75F, 2.5F, 3.5F, 5.0F};
constexpr float e2m1_max = 6.0F;

// For c = 0 .. 24 (ceil of 4 |x|), how many midpoints are below |x|: a midpoint m is below exactly
// when 4 m < c, 4 m being an integer.
constexpr auto e2m1_index_by_quarters = [] {
  std::array<std::uint8_t, 25> table{};
  for (std::size_t c = 0; c < table.size(); ++c) {
    for (const float midpoint : e2m1_midpoints) table[c] += 4.0F * midpoint < static_cast<float>(c) ? 1 : 0;
  }
  return table;
}();
// The cookbook raises a block's magnitude to this before taking the exponent, so an all-zero
// block gets scale 2^-42 (byte 85) rather than the smallest one.
constexpr float mx_min_amax = 1e-12F;
// Storage rows handled together: the logical side is the transpose, and a tile of rows lets it be
// read and written in runs instead of one float per cache line.
constexpr std::int64_t mx_tile_rows = 256;

using Tile = std::vector<float>;  // mx_tile_rows x mx_block_values: [row in tile][value in block]

// Rounds values to what `dtype` holds (the merged weight is BF16 when the cookbook re-quantizes it).
void round_to_dtype(std::span<float> values, safetensors::Dtype dtype) {
  if (dtype != safetensors::Dtype::bf16 && dtype != safetensors::Dtype::f16) return;  // f32 holds them already
  std::array<std::byte, 2 * mx_tile_rows * mx_block_values> bytes{};
  const auto size = safetensors::dtype_size(dtype) * values.size();
  safetensors::from_f32(dtype, values, std::span(bytes).first(size));
  safetensors::to_f32(dtype, std::span(bytes).first(size), values);
}

[[noreturn]] void fail_not_finite(const std::string& label, float value) {
  throw error(errc::invalid_argument,
              label + ": a merged value is not finite (" + std::to_string(value) + "), it cannot be encoded as MXFP4");
}

// The value of an E2M1 nibble (its low 4 bits).
float e2m1_value(unsigned nibble) noexcept {
  const float magnitude = e2m1_magnitudes[nibble & 7U];
  return (nibble & 8U) != 0 ? -magnitude : magnitude;
}

// The nibble of the E2M1 value nearest to x (|x| <= 6), ties to the smaller magnitude, zero 0.
unsigned e2m1_nibble(float x) noexcept {
  // The magnitude's index is the number of midpoints below it. The midpoints are multiples of 1/4,
  // so that number depends only on ceil(4 |x|) (exact: 4 |x| is a scaling by a power of two).
  const float quarters = 4.0F * std::min(std::fabs(x), e2m1_max);
  auto ceiling = static_cast<int>(quarters);  // 0 .. 24
  if (static_cast<float>(ceiling) < quarters) ++ceiling;
  const unsigned index = e2m1_index_by_quarters[static_cast<std::size_t>(ceiling)];
  return x < 0 && index != 0 ? (index | 8U) : index;
}

// 2^(byte - 127); byte 255 is NaN (OCP MX).
float e8m0_scale(std::uint8_t byte) noexcept {
  if (byte == 255) return std::numeric_limits<float>::quiet_NaN();
  return std::ldexp(1.0F, int{byte} - 127);
}

// The scale byte of a block whose largest magnitude is amax (finite, >= 0).
std::uint8_t e8m0_byte_for(float amax) noexcept {
  // The cookbook's exponent is ceil(log2(amax / 6)), the quotient taken in f32. frexp gives the
  // ceiling exactly: q = m 2^k with m in [0.5, 1), so log2 q is k - 1 when m = 0.5, else in (k - 1, k).
  const float quotient = std::max(amax, mx_min_amax) / e2m1_max;
  int k = 0;
  const float mantissa = std::frexp(quotient, &k);
  const int exponent = std::clamp(mantissa == 0.5F ? k - 1 : k, -127, 127);
  return static_cast<std::uint8_t>(exponent + 127);
}

}  // namespace

void decode_mxfp4(const MxMatrices& m, std::span<const std::byte> blocks, std::span<const std::byte> scales,
                  std::span<float> out) {
  const std::int64_t in = m.n_blocks * mx_block_values;
  Tile tile(static_cast<std::size_t>(mx_tile_rows * mx_block_values));
  for (std::int64_t matrix = m.first; matrix < m.last; ++matrix) {
    float* const logical = out.data() + (matrix - m.first) * in * m.rows;
    for (std::int64_t row0 = 0; row0 < m.rows; row0 += mx_tile_rows) {
      const std::int64_t tile_rows = std::min(mx_tile_rows, m.rows - row0);
      for (std::int64_t block = 0; block < m.n_blocks; ++block) {
        for (std::int64_t t = 0; t < tile_rows; ++t) {
          const std::int64_t scale_index = (matrix * m.rows + row0 + t) * m.n_blocks + block;
          const float scale = e8m0_scale(std::to_integer<std::uint8_t>(scales[scale_index]));
          const std::byte* packed = blocks.data() + scale_index * mx_block_bytes;
          float* values = tile.data() + t * mx_block_values;
          for (std::int64_t j = 0; j < mx_block_bytes; ++j) {
            const auto byte = std::to_integer<unsigned>(packed[j]);
            values[2 * j] = e2m1_value(byte & 0xFU) * scale;  // low nibble first
            values[2 * j + 1] = e2m1_value(byte >> 4U) * scale;
          }
        }
        for (std::int64_t i = 0; i < mx_block_values; ++i) {
          float* line = logical + (block * mx_block_values + i) * m.rows + row0;
          for (std::int64_t t = 0; t < tile_rows; ++t) line[t] = tile[t * mx_block_values + i];
        }
      }
    }
  }
}

void encode_mxfp4(const MxMatrices& m, std::span<const float> values, safetensors::Dtype value_dtype,
                  std::span<std::byte> blocks_out, std::span<std::byte> scales_out, const std::string& label) {
  const std::int64_t in = m.n_blocks * mx_block_values;
  Tile tile(static_cast<std::size_t>(mx_tile_rows * mx_block_values));
  for (std::int64_t matrix = m.first; matrix < m.last; ++matrix) {
    const float* const logical = values.data() + (matrix - m.first) * in * m.rows;
    for (std::int64_t row0 = 0; row0 < m.rows; row0 += mx_tile_rows) {
      const std::int64_t tile_rows = std::min(mx_tile_rows, m.rows - row0);
      const auto used = static_cast<std::size_t>(tile_rows * mx_block_values);
      for (std::int64_t block = 0; block < m.n_blocks; ++block) {
        for (std::int64_t i = 0; i < mx_block_values; ++i) {
          const float* line = logical + (block * mx_block_values + i) * m.rows + row0;
          for (std::int64_t t = 0; t < tile_rows; ++t) tile[t * mx_block_values + i] = line[t];
        }
        round_to_dtype(std::span(tile).first(used), value_dtype);
        for (std::int64_t t = 0; t < tile_rows; ++t) {
          const float* block_values = tile.data() + t * mx_block_values;
          float amax = 0;
          for (std::int64_t i = 0; i < mx_block_values; ++i) {
            if (!std::isfinite(block_values[i])) fail_not_finite(label, block_values[i]);
            amax = std::max(amax, std::fabs(block_values[i]));
          }
          const std::uint8_t scale_byte = e8m0_byte_for(amax);
          // Dividing by 2^e is multiplying by 2^-e, exact (or rounded alike when subnormal).
          const float inverse_scale = std::ldexp(1.0F, 127 - int{scale_byte});
          const std::int64_t scale_index = ((matrix - m.first) * m.rows + row0 + t) * m.n_blocks + block;
          scales_out[scale_index] = std::byte{scale_byte};
          std::byte* packed = blocks_out.data() + scale_index * mx_block_bytes;
          for (std::int64_t j = 0; j < mx_block_bytes; ++j) {
            const float low = std::clamp(block_values[2 * j] * inverse_scale, -e2m1_max, e2m1_max);
            const float high = std::clamp(block_values[2 * j + 1] * inverse_scale, -e2m1_max, e2m1_max);
            packed[j] = std::byte{static_cast<unsigned char>(e2m1_nibble(low) | (e2m1_nibble(high) << 4U))};
          }
        }
      }
    }
  }
}

}  // namespace tinker::weights::detail::quantized_codecs
