// Quantized base weights, as the cookbook merges them (`doc/export.md#quantized-bases`): a
// logical weight stored as several tensors is found from the headers, decoded to f32 for the
// merge, and encoded back into the same tensors.
//
// gpt-oss MXFP4 (config.json quantization_config.quant_method "mxfp4"): "<name>_blocks" U8
// [..., rows, n_blocks, 16] and "<name>_scales" U8 (or F8_E8M0) [..., rows, n_blocks]. Each block
// of 32 values along a row shares the scale 2^(s - 127) (E8M0; s = 255 is NaN); each byte holds
// two E2M1 values, the low nibble first: nibble n is {0, 0.5, 1, 1.5, 2, 3, 4, 6}[n & 7], negated
// when n & 8. The storage is [..., out, in]; the logical weight the planner targets is "<name>"
// (no suffix) with the last two axes swapped, [..., in = 32 * n_blocks, out], the layout of the
// unquantized gpt-oss experts (gate_up_proj [E, hidden, 2 * intermediate], gate/up interleaved on
// the last axis). "<name>_bias" is a plain tensor, untouched here.
//
// compressed-tensors pack-quantized (quantization_config.format "pack-quantized", top level or
// text_config: Kimi K2/K2.5): "<base>.weight_packed" I32 [rows, cols / 8], "<base>.weight_scale"
// BF16/F16/F32 [rows, cols / group_size], "<base>.weight_shape" I32/I64 [2] = {rows, cols}. Word
// (r, c) holds columns 8c .. 8c + 7, column 8c + k in bits [4k, 4k + 4); a nibble n is the integer
// n - 8 (compressed-tensors' offset encoding, read by vLLM as uint4b8), times the scale of its group
// of group_size consecutive columns. The logical weight is "<base>.weight" [rows, cols].
//
// What the merged export writes (the cookbook's shard merge): a quantized weight that receives a
// LoRA delta is decoded, the delta added, and re-encoded into the SAME tensors (names, dtypes and
// shapes unchanged; weight_shape and biases copied as they are); quantized weights the adapter does
// not touch, and config.json with its quantization_config, are copied unchanged.
#pragma once

#include "weights/lora_plan.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tinker::weights::detail {

/// Fills `layout.quantized` from `layout.tensors` and `layout.config_json`: with quant_method
/// "mxfp4", every "<name>_blocks" becomes "<name>" {blocks, scales}; with format "pack-quantized",
/// every "<base>.weight_packed" becomes "<base>.weight" {weight_packed, weight_scale,
/// weight_shape}. A name that is also a plain tensor stays a plain tensor. Logical dtype: BF16
/// (what the cookbook dequantizes to). The INT4 group size is the first positive
/// config_groups.*.weights.group_size, else the one the scale's shape implies; asymmetric
/// (weight_zero_point or "symmetric": false), non-4-bit or non-"int" weights are recorded with
/// `unsupported` set. Throws errc::invalid_file naming the tensor when its parts are missing or
/// disagree (dtype, rank, shapes), or when config.json is not JSON.
void find_quantized_weights(ModelLayout& layout);

/// The bytes of a weight's parts, in QuantizedWeight::parts order (whole tensors as mapped).
using QuantizedPartBytes = std::span<const std::span<const std::byte>>;

/// Decodes indices [first, last) of the logical tensor's first axis (last < 0: to the end) into
/// `out`, row-major in the logical layout: (last - first) * (product of the other logical axes)
/// floats. The values are exact (every E2M1 x E8M0 and int4 x scale product is an f32). The first
/// axis is the expert axis of a 3-D MXFP4 weight and the row axis of a packed INT4 weight; a 2-D
/// MXFP4 weight (axis 0 = in) is decoded whole only. Throws errc::invalid_file naming the tensor when
/// a part's bytes or weight_shape's values disagree with the layout, errc::invalid_argument for an
/// `unsupported` weight or a bad range.
void dequantize(const QuantizedWeight& weight, QuantizedPartBytes parts, const ModelLayout& layout,
                std::span<float> out, std::int64_t first = 0, std::int64_t last = -1);
/// The whole weight.
std::vector<float> dequantize(const QuantizedWeight& weight, QuantizedPartBytes parts, const ModelLayout& layout);

/// Bytes of re-encoded output: `bytes` go at byte `offset` of the tensor weight.parts[part].
struct EncodedPart {
  std::size_t part = 0;
  std::uint64_t offset = 0;
  std::vector<std::byte> bytes;
};

/// Encodes the logical values of indices [first, last) of the first axis (as dequantize) back into
/// the weight's storage, as the cookbook re-quantizes a merged weight: each value is first rounded
/// to the logical dtype (BF16), then
/// - MXFP4, per block of 32: e = the smallest integer with amax <= 6 * 2^e, where amax is the
///   block's largest magnitude raised to at least 1e-12 (so an all-zero block gets e = -42), e
///   clamped to [-127, 127], scale byte e + 127; each value / 2^e clamped to [-6, 6] and rounded to
///   the nearest E2M1 value, a tie going to the smaller magnitude, zero always nibble 0;
/// - packed INT4, per group: scale = max(amax / 7, 1e-12) in f32; q = round-half-even(v / scale)
///   clamped to [-8, 7], stored as q + 8; the scale stored in the scale tensor's dtype (nearest).
/// Returns the re-encoded pieces of the blocks and scales (MXFP4) or weight_packed and weight_scale
/// (INT4); weight_shape is unchanged. `values` holds what dequantize returns for the same range.
/// Throws errc::invalid_argument for a non-finite value, a scale beyond the scale dtype's range, an
/// `unsupported` weight or a bad range.
std::vector<EncodedPart> encode(const QuantizedWeight& weight, std::span<const float> values, const ModelLayout& layout,
                                std::int64_t first = 0, std::int64_t last = -1);

/// True for the parts encode() writes (blocks and scales, weight_packed and weight_scale); the
/// others (weight_shape) keep their bytes and are copied by whoever writes the output.
inline bool encode_rewrites_part(const QuantizedWeight& /*weight*/, std::size_t part) noexcept {
  return part < 2;
}

}  // namespace tinker::weights::detail
