// Tiny synthetic base models and Tinker adapters on disk for the exporter tests: a config.json and
// a model.safetensors with a family's real parameter names and small shapes, and an adapter
// directory (adapter_model.safetensors + adapter_config.json) in Tinker's names.
#pragma once

#include "support/temp_files.hpp"

#include <tinker/safetensors.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace tinker::test::lora_fixtures {

namespace st = tinker::safetensors;

/// A base weight: zeros of `dtype` (only headers matter to the planners), or for an integer dtype
/// the values `integers` (a compressed-tensors weight_shape).
struct BaseTensor {
  std::string name;
  std::vector<std::int64_t> shape;
  st::Dtype dtype = st::Dtype::bf16;
  std::vector<std::int64_t> integers = {};
};

/// An adapter tensor whose element i is `first + i`: every element distinct and exact in f32 and
/// (for small tensors) bf16, so a test can tell which slice went where.
struct AdapterTensor {
  std::string name;
  std::vector<std::int64_t> shape;
  float first = 0;
};

inline std::int64_t element_count(const std::vector<std::int64_t>& shape) {
  std::int64_t count = 1;
  for (const auto dim : shape) count *= dim;
  return count;
}

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

inline st::OwnedTensor zeros(const BaseTensor& tensor) {
  st::OwnedTensor owned;
  owned.name = tensor.name;
  owned.dtype = tensor.dtype;
  owned.shape = tensor.shape;
  const std::size_t size = st::dtype_size(tensor.dtype);
  owned.bytes.assign(static_cast<std::size_t>(element_count(tensor.shape)) * size, std::byte{0});
  for (std::size_t i = 0; i < tensor.integers.size() && (i + 1) * size <= owned.bytes.size(); ++i) {
    const auto value = static_cast<std::uint64_t>(tensor.integers[i]);
    for (std::size_t b = 0; b < size; ++b) owned.bytes[i * size + b] = static_cast<std::byte>(value >> (8 * b));
  }
  return owned;
}

/// config.json + model.safetensors in `dir` (created).
inline void write_model(const std::filesystem::path& dir, const std::string& config_json,
                        const std::vector<BaseTensor>& tensors) {
  std::filesystem::create_directories(dir);
  write_text(dir / "config.json", config_json);
  std::vector<st::OwnedTensor> owned;
  for (const auto& tensor : tensors) owned.push_back(zeros(tensor));
  st::write_file(dir / "model.safetensors", owned);
}

inline std::vector<float> counting_values(const AdapterTensor& tensor) {
  std::vector<float> values(static_cast<std::size_t>(element_count(tensor.shape)));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = tensor.first + static_cast<float>(i);
  return values;
}

/// adapter_model.safetensors + adapter_config.json {"lora_alpha": alpha, "r": rank} in `dir`.
inline void write_adapter(const std::filesystem::path& dir, const std::vector<AdapterTensor>& tensors, int rank,
                          int alpha, st::Dtype dtype = st::Dtype::f32) {
  std::filesystem::create_directories(dir);
  std::vector<st::OwnedTensor> owned;
  for (const auto& tensor : tensors) {
    const auto values = counting_values(tensor);
    owned.push_back(st::make_tensor(tensor.name, tensor.shape, values, dtype));
  }
  st::write_file(dir / "adapter_model.safetensors", owned);
  write_text(dir / "adapter_config.json", "{\"lora_alpha\": " + std::to_string(alpha) +
                                              ", \"r\": " + std::to_string(rank) + ", \"peft_type\": \"LORA\"}");
}

/// A LoRA pair of a module in Tinker's names: "<module>.lora_A.weight" [r, in] and
/// "<module>.lora_B.weight" [out, r].
inline std::vector<AdapterTensor> lora_pair(const std::string& module, std::int64_t rank, std::int64_t in,
                                            std::int64_t out, float first = 1) {
  return {{module + ".lora_A.weight", {rank, in}, first}, {module + ".lora_B.weight", {out, rank}, first + 1000}};
}

/// A 3-D expert pair ("...experts.w1"): lora_A [a_experts, r, in], lora_B [b_experts, out, r].
inline std::vector<AdapterTensor> expert_pair(const std::string& module, std::int64_t a_experts, std::int64_t b_experts,
                                              std::int64_t rank, std::int64_t in, std::int64_t out, float first = 1) {
  return {{module + ".lora_A.weight", {a_experts, rank, in}, first},
          {module + ".lora_B.weight", {b_experts, out, rank}, first + 1000}};
}

inline void append(std::vector<AdapterTensor>& into, const std::vector<AdapterTensor>& more) {
  into.insert(into.end(), more.begin(), more.end());
}

/// A written safetensors file read back: name -> (shape, values as f32), and its dtypes.
struct ReadBack {
  std::map<std::string, std::vector<std::int64_t>> shapes;
  std::map<std::string, std::vector<float>> values;
  std::map<std::string, st::Dtype> dtypes;
  std::map<std::string, std::string> metadata;

  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& entry : shapes) out.push_back(entry.first);
    return out;
  }
};

inline ReadBack read_safetensors(const std::filesystem::path& path) {
  const auto file = st::SafetensorsFile::open(path);
  ReadBack back;
  for (const auto& tensor : file.tensors()) {
    back.shapes[tensor.name] = tensor.shape;
    back.values[tensor.name] = file.read_f32(tensor);
    back.dtypes[tensor.name] = tensor.dtype;
  }
  back.metadata = file.metadata();
  return back;
}

/// The values written for matrix `index` of a 3-D adapter tensor's leading (expert) axis.
inline std::vector<float> slice_values(const AdapterTensor& tensor, std::int64_t index) {
  const auto all = counting_values(tensor);
  const std::int64_t per = element_count(tensor.shape) / tensor.shape.front();
  return {all.begin() + index * per, all.begin() + (index + 1) * per};
}

/// "base_model.model.<module>.lora_A.weight" and ".lora_B.weight", for expected key lists.
inline std::vector<std::string> peft_keys(const std::string& module) {
  return {"base_model.model." + module + ".lora_A.weight", "base_model.model." + module + ".lora_B.weight"};
}

}  // namespace tinker::test::lora_fixtures
