// The arithmetic of the quantized formats (quantized.hpp states the rules), on byte spans whose
// geometry quantized.cpp has checked against the headers. Errors name `label` ("<dir>: tensor
// '<name>'").
#pragma once

#include <tinker/safetensors.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace tinker::weights::detail::quantized_codecs {

/// MXFP4 matrices: storage blocks [matrices, rows, n_blocks, 16] and scales [matrices, rows,
/// n_blocks]; each matrix decodes to the logical [n_blocks * 32, rows] (storage transposed).
struct MxMatrices {
  std::int64_t rows = 0;
  std::int64_t n_blocks = 0;
  std::int64_t first = 0;  ///< the matrices [first, last) of the whole tensor being worked on
  std::int64_t last = 0;
};

/// Decodes matrices [first, last): `blocks` and `scales` hold the whole tensor, `out` the range's
/// logical values.
void decode_mxfp4(const MxMatrices& m, std::span<const std::byte> blocks, std::span<const std::byte> scales,
                  std::span<float> out);
/// Encodes the range's logical values (rounded to `value_dtype` first) into `blocks_out` and
/// `scales_out`, which hold the range's storage only.
void encode_mxfp4(const MxMatrices& m, std::span<const float> values, safetensors::Dtype value_dtype,
                  std::span<std::byte> blocks_out, std::span<std::byte> scales_out, const std::string& label);

/// Packed INT4 rows: weight_packed [rows, packed_cols] I32, weight_scale [rows, groups] of
/// `scale_dtype`, cols = 8 * packed_cols = groups * group_size.
struct Int4Rows {
  std::int64_t packed_cols = 0;
  std::int64_t groups = 0;
  std::int64_t group_size = 0;
  safetensors::Dtype scale_dtype = safetensors::Dtype::bf16;
  std::int64_t first = 0;  ///< the rows [first, last) being worked on
  std::int64_t last = 0;
};

void decode_int4(const Int4Rows& r, std::span<const std::byte> packed, std::span<const std::byte> scales,
                 std::span<float> out);
void encode_int4(const Int4Rows& r, std::span<const float> values, safetensors::Dtype value_dtype,
                 std::span<std::byte> packed_out, std::span<std::byte> scales_out, const std::string& label);

}  // namespace tinker::weights::detail::quantized_codecs
