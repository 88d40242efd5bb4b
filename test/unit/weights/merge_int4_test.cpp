// A merge into a Kimi K2 base whose routed experts are compressed-tensors pack-quantized INT4,
// through the public build_merged_model: the adapter's 3-D w2 pair is planned onto each expert's
// virtual down_proj.weight, the stream decodes those rows, adds the delta and encodes them again
// into weight_packed and weight_scale. The result must be the bytes of decoding each whole weight,
// applying the plan's ops and encoding it whole; weight_shape, the dense tensors and config.json are
// copied unchanged.
#include "support/temp_files.hpp"
#include "weights/lora_plan.hpp"
#include "weights/quantized.hpp"

#include <tinker/safetensors.hpp>
#include <tinker/weights.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <random>

namespace tinker::weights::detail {
namespace merge_int4_test {

namespace fs = std::filesystem;
namespace st = tinker::safetensors;

constexpr std::int64_t experts = 2;
constexpr std::int64_t rows = 16;  // down_proj's out (hidden)
constexpr std::int64_t cols = 64;  // down_proj's in (intermediate): two groups of 32, 8 words a row
constexpr std::int64_t group = 32;
constexpr std::int64_t rank = 2;

std::string kimi_k2_config() {
  return R"({"model_type": "kimi_k2", "architectures": ["DeepseekV3ForCausalLM"],
    "quantization_config": {"quant_method": "compressed-tensors", "format": "pack-quantized",
      "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int",
        "symmetric": true, "strategy": "group", "group_size": 32}}},
      "ignore": ["lm_head", "re:.*self_attn.*"]}})";
}

std::string expert_base(std::int64_t expert) {
  return "model.layers.1.mlp.experts." + std::to_string(expert) + ".down_proj";
}

std::vector<st::OwnedTensor> packed_expert(std::int64_t expert, std::mt19937& random) {
  st::OwnedTensor packed{expert_base(expert) + ".weight_packed", st::Dtype::i32, {rows, cols / 8}, {}};
  packed.bytes.resize(static_cast<std::size_t>(rows * cols / 8 * 4));
  std::uniform_int_distribution<int> byte(0, 255);
  for (auto& b : packed.bytes) b = static_cast<std::byte>(byte(random));
  std::vector<float> scale_values(static_cast<std::size_t>(rows * cols / group));
  std::uniform_real_distribution<float> scale(0.005F, 0.02F);
  for (auto& v : scale_values) v = scale(random);
  const std::vector<std::int64_t> shape_values{rows, cols};
  st::OwnedTensor shape{expert_base(expert) + ".weight_shape", st::Dtype::i64, {2}, {}};
  shape.bytes.resize(16);
  std::memcpy(shape.bytes.data(), shape_values.data(), 16);
  return {packed,
          st::make_tensor(expert_base(expert) + ".weight_scale", {rows, cols / group}, scale_values, st::Dtype::bf16),
          shape};
}

std::vector<float> uniform_values(std::int64_t count, std::mt19937& random, float limit) {
  std::vector<float> values(static_cast<std::size_t>(count));
  std::uniform_real_distribution<float> uniform(-limit, limit);
  for (auto& v : values) v = uniform(random);
  return values;
}

std::vector<std::byte> bytes_of(const st::SafetensorsFile& file, const std::string& name) {
  const auto span = file.data(file.at(name));
  return {span.begin(), span.end()};
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(MergeInt4, KimiPackedExpertsAreDecodedMergedAndReencodedInPlace) {
  test::TempDir dir("tinker-merge-int4");
  const fs::path base = dir / "base";
  const fs::path adapter = dir / "adapter";
  fs::create_directories(base);
  fs::create_directories(adapter);
  std::mt19937 random(5);

  std::vector<st::OwnedTensor> base_tensors;
  for (std::int64_t e = 0; e < experts; ++e) {
    for (auto& tensor : packed_expert(e, random)) base_tensors.push_back(std::move(tensor));
  }
  const std::vector<float> dense_values(rows * rows, 0.125F);
  base_tensors.push_back(
      st::make_tensor("model.layers.1.self_attn.o_proj.weight", {rows, rows}, dense_values, st::Dtype::bf16));
  st::write_file(base / "model.safetensors", base_tensors);
  std::ofstream(base / "config.json") << kimi_k2_config();

  // Tinker's w2 (down): lora_A [E, r, in], lora_B [E, out, r].
  const std::string module = "base_model.model.model.layers.1.mlp.experts.w2";
  st::write_file(adapter / "adapter_model.safetensors",
                 {st::make_tensor(module + ".lora_A.weight", {experts, rank, cols},
                                  uniform_values(experts * rank * cols, random, 0.5F)),
                  st::make_tensor(module + ".lora_B.weight", {experts, rows, rank},
                                  uniform_values(experts * rows * rank, random, 0.5F))});
  std::ofstream(adapter / "adapter_config.json") << R"({"r": 2, "lora_alpha": 4})";

  // The expected bytes: each whole weight decoded, the plan's ops applied, encoded at once.
  const ModelLayout layout = read_model_layout(base);
  const MergePlan plan = plan_merge(load_tinker_adapter(adapter), layout);
  ASSERT_EQ(plan.ops.size(), static_cast<std::size_t>(experts));
  std::map<std::string, std::vector<std::byte>> expected;
  for (const auto& tensor : base_tensors) expected[tensor.name] = tensor.bytes;
  for (const auto& [target, ops] : plan.ops) {
    ASSERT_TRUE(layout.quantized.contains(target)) << target;
    const QuantizedWeight& weight = layout.quantized.at(target);
    std::vector<std::span<const std::byte>> parts;
    for (const auto& part : weight.parts) parts.emplace_back(expected.at(part));
    std::vector<float> values = dequantize(weight, parts, layout);
    apply_merge_ops(values, weight.logical.shape, ops, 1);
    for (const auto& piece : encode(weight, values, layout)) {
      auto& into = expected.at(weight.parts.at(piece.part));
      ASSERT_LE(piece.offset + piece.bytes.size(), into.size());
      std::memcpy(into.data() + piece.offset, piece.bytes.data(), piece.bytes.size());
    }
  }

  MergedModelOptions options;
  options.adapter_dir = adapter;
  options.base_model_dir = base;
  options.output_dir = dir / "merged";
  options.threads = 2;
  const ExportSummary summary = build_merged_model(options);
  EXPECT_EQ(summary.tensors_written, base_tensors.size());

  const auto merged = st::SafetensorsFile::open(dir / "merged" / "model.safetensors");
  for (const auto& tensor : base_tensors) {
    EXPECT_EQ(bytes_of(merged, tensor.name), expected.at(tensor.name)) << tensor.name;
  }
  for (std::int64_t e = 0; e < experts; ++e) {
    EXPECT_NE(expected.at(expert_base(e) + ".weight_packed"),
              base_tensors[static_cast<std::size_t>(3 * e)].bytes);  // the delta changed every expert
  }
  EXPECT_EQ(read_text(dir / "merged" / "config.json"), read_text(base / "config.json"));
}

}  // namespace merge_int4_test
}  // namespace tinker::weights::detail
