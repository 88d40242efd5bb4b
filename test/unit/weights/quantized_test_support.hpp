// Model layouts built in memory (no files) for the quantized-weight tests, and the bytes of their
// parts.
#pragma once

#include "weights/quantized.hpp"

#include <tinker/safetensors.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace tinker::weights::quantized_test {

using detail::ModelLayout;
using detail::QuantizedKind;
using detail::QuantizedWeight;
using detail::TensorLayout;
using safetensors::Dtype;

inline std::string mxfp4_config() {
  return R"({"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss",
             "quantization_config": {"modules_to_not_convert": ["model.layers.*.self_attn"],
                                     "quant_method": "mxfp4"}})";
}

/// A compressed-tensors pack-quantized config as Kimi K2 ships it (K2.5: under text_config).
inline std::string pack_quantized_config(std::int64_t group_size, bool nested = false, bool symmetric = true,
                                         int num_bits = 4) {
  const std::string quantization =
      R"({"quant_method": "compressed-tensors", "format": "pack-quantized", "quantization_status": "compressed",
          "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": )" +
      std::to_string(num_bits) + R"(, "type": "int", "symmetric": )" + (symmetric ? "true" : "false") +
      R"(, "strategy": "group", "group_size": )" + (group_size > 0 ? std::to_string(group_size) : "null") +
      R"(}}}, "ignore": ["lm_head", "re:.*self_attn.*", "re:.*shared_experts.*"]})";
  if (nested) {
    return R"({"model_type": "kimi_k25", "architectures": ["KimiK25ForConditionalGeneration"],
               "text_config": {"model_type": "kimi_k2", "quantization_config": )" +
           quantization + "}}";
  }
  return R"({"model_type": "kimi_k2", "architectures": ["DeepseekV3ForCausalLM"], "quantization_config": )" +
         quantization + "}";
}

inline ModelLayout make_layout(std::string config, std::map<std::string, TensorLayout> tensors) {
  ModelLayout layout;
  layout.directory = "/models/base";
  layout.config_json = std::move(config);
  layout.tensors = std::move(tensors);
  return layout;
}

inline std::vector<std::byte> u8_bytes(std::initializer_list<unsigned> values) {
  std::vector<std::byte> bytes;
  for (const auto v : values) bytes.push_back(static_cast<std::byte>(v));
  return bytes;
}

inline std::vector<std::byte> i32_bytes(std::initializer_list<std::uint32_t> words) {
  std::vector<std::byte> bytes(words.size() * 4);
  std::size_t at = 0;
  for (const auto w : words) {
    std::memcpy(bytes.data() + at, &w, 4);
    at += 4;
  }
  return bytes;
}

inline std::vector<std::byte> i64_bytes(std::initializer_list<std::int64_t> values) {
  std::vector<std::byte> bytes(values.size() * 8);
  std::size_t at = 0;
  for (const auto v : values) {
    std::memcpy(bytes.data() + at, &v, 8);
    at += 8;
  }
  return bytes;
}

inline std::vector<std::byte> float_bytes(Dtype dtype, const std::vector<float>& values) {
  std::vector<std::byte> bytes(values.size() * safetensors::dtype_size(dtype));
  safetensors::from_f32(dtype, values, bytes);
  return bytes;
}

inline std::uint32_t word_at(const std::vector<std::byte>& bytes, std::size_t index) {
  std::uint32_t word = 0;
  std::memcpy(&word, bytes.data() + index * 4, 4);
  return word;
}

/// The bytes of a weight's parts, kept alive, with the spans dequantize takes.
struct PartBytes {
  std::vector<std::vector<std::byte>> parts;

  std::vector<std::span<const std::byte>> spans() const { return {parts.begin(), parts.end()}; }
};

/// A deterministic byte sequence (a linear congruential generator), for round trips.
inline std::vector<std::byte> pseudo_random_bytes(std::size_t count, std::uint32_t seed, unsigned low = 0,
                                                  unsigned high = 255) {
  std::vector<std::byte> bytes(count);
  std::uint32_t state = seed;
  for (auto& b : bytes) {
    state = state * 1664525U + 1013904223U;
    b = static_cast<std::byte>(low + (state >> 16) % (high - low + 1));
  }
  return bytes;
}

}  // namespace tinker::weights::quantized_test
