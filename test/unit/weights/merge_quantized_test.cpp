// A merge into a quantized base (src/weights/merge_stream.cpp with quantized.hpp): a tiny gpt-oss
// whose experts' gate_up_proj is MXFP4, blocks in one shard and scales in the other. The stream
// decodes one expert at a time, adds the fused interleaved delta and re-encodes into the same
// tensors; the result must be the bytes of decoding the whole weight, adding the delta with
// apply_merge_ops and encoding it whole, and every other tensor must be copied unchanged.
#include "support/expect_error.hpp"
#include "support/temp_files.hpp"
#include "weights/merge_engine.hpp"
#include "weights/quantized.hpp"

#include <tinker/safetensors.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <random>

namespace tinker::weights::detail {
namespace merge_quantized_test {

namespace fs = std::filesystem;
namespace st = tinker::safetensors;

constexpr std::int64_t experts = 3;
constexpr std::int64_t hidden = 64;       // two MXFP4 blocks of 32 per row
constexpr std::int64_t intermediate = 8;  // gate_up_proj stores 2 * 8 rows per expert
constexpr std::int64_t rank = 2;
constexpr const char* weight_name = "model.layers.0.mlp.experts.gate_up_proj";

st::OwnedTensor u8_tensor(std::string name, std::vector<std::int64_t> shape, std::mt19937& random, int low, int high) {
  st::OwnedTensor tensor{std::move(name), st::Dtype::u8, std::move(shape), {}};
  std::int64_t count = 1;
  for (const auto dim : tensor.shape) count *= dim;
  std::uniform_int_distribution<int> pick(low, high);
  for (std::int64_t i = 0; i < count; ++i) tensor.bytes.push_back(static_cast<std::byte>(pick(random)));
  return tensor;
}

std::shared_ptr<const FloatTensor> factor(std::vector<std::int64_t> shape, std::mt19937& random) {
  auto tensor = std::make_shared<FloatTensor>();
  tensor->shape = std::move(shape);
  std::int64_t count = 1;
  for (const auto dim : tensor->shape) count *= dim;
  std::uniform_real_distribution<float> uniform(-1.0F, 1.0F);
  for (std::int64_t i = 0; i < count; ++i) tensor->values.push_back(uniform(random));
  return tensor;
}

TEST(MergeQuantized, MxfpExpertsAreDecodedMergedAndReencodedInPlace) {
  test::TempDir dir("tinker-merge-quantized");
  const fs::path base = dir / "base";
  fs::create_directories(base);
  std::mt19937 random(11);
  const auto blocks =
      u8_tensor(std::string(weight_name) + "_blocks", {experts, 2 * intermediate, hidden / 32, 16}, random, 0, 255);
  const auto scales =
      u8_tensor(std::string(weight_name) + "_scales", {experts, 2 * intermediate, hidden / 32}, random, 120, 130);
  const std::vector<float> bias_values(experts * 2 * intermediate, 0.5F);
  const auto bias =
      st::make_tensor(std::string(weight_name) + "_bias", {experts, 2 * intermediate}, bias_values, st::Dtype::bf16);
  const std::vector<float> q_values(hidden * hidden, 0.25F);
  const auto q_proj =
      st::make_tensor("model.layers.0.self_attn.q_proj.weight", {hidden, hidden}, q_values, st::Dtype::bf16);
  // The scales in the second shard: the stream keeps their new bytes until that shard is written.
  st::write_file(base / "model-00001-of-00002.safetensors", {q_proj, blocks});
  st::write_file(base / "model-00002-of-00002.safetensors", {bias, scales});
  std::ofstream(base / "model.safetensors.index.json")
      << st::make_index_json(0, {{q_proj.name, "model-00001-of-00002.safetensors"},
                                 {blocks.name, "model-00001-of-00002.safetensors"},
                                 {bias.name, "model-00002-of-00002.safetensors"},
                                 {scales.name, "model-00002-of-00002.safetensors"}});
  std::ofstream(base / "config.json") << R"({"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss",
      "quantization_config": {"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn"]}})";

  ModelLayout layout = read_model_layout(base);
  if (layout.quantized.empty()) find_quantized_weights(layout);
  ASSERT_TRUE(layout.quantized.contains(weight_name));
  const QuantizedWeight& weight = layout.quantized.at(weight_name);
  ASSERT_EQ(weight.logical.shape, (std::vector<std::int64_t>{experts, hidden, 2 * intermediate}));

  // Tinker's w1 (gate) and w3 (up): lora_A shared by the experts, lora_B one per expert.
  MergePlan plan;
  plan.profile.family = "gpt_oss";
  for (int half = 0; half < 2; ++half) {
    MergeOp op;
    op.target = weight_name;
    op.adapter_name = half == 0 ? "experts.w1" : "experts.w3";
    op.a = factor({1, rank, hidden}, random);
    op.b = factor({experts, intermediate, rank}, random);
    op.scale = 2.0F;
    op.expert_3d = true;
    op.fused_proj_idx = half;
    op.interleaved = true;
    plan.ops[weight_name].push_back(op);
  }

  // The expected bytes: the whole weight decoded, merged and encoded at once.
  std::vector<std::byte> expected_blocks = blocks.bytes;
  std::vector<std::byte> expected_scales = scales.bytes;
  {
    const std::vector<std::span<const std::byte>> parts{blocks.bytes, scales.bytes};
    std::vector<float> values = dequantize(weight, parts, layout);
    apply_merge_ops(values, weight.logical.shape, plan.ops.at(weight_name), 1);
    for (const auto& piece : encode(weight, values, layout)) {
      auto& into = weight.parts.at(piece.part) == blocks.name ? expected_blocks : expected_scales;
      ASSERT_LE(piece.offset + piece.bytes.size(), into.size());
      std::memcpy(into.data() + piece.offset, piece.bytes.data(), piece.bytes.size());
    }
  }
  ASSERT_NE(expected_blocks, blocks.bytes);  // the delta changed the weight

  MergedModelOptions options;
  options.base_model_dir = base;
  options.output_dir = dir / "merged";
  options.threads = 2;
  // 64-byte chunks: one expert per chunk.
  const ExportSummary summary = merge_with_plan(plan, layout, options, MergeEngineTuning{64});
  EXPECT_EQ(summary.tensors_written, 4U);
  EXPECT_EQ(summary.tensors_changed, 1U);

  const auto first = st::SafetensorsFile::open(dir / "merged" / "model-00001-of-00002.safetensors");
  const auto second = st::SafetensorsFile::open(dir / "merged" / "model-00002-of-00002.safetensors");
  const auto bytes_of = [](const st::SafetensorsFile& file, const std::string& name) {
    const auto span = file.data(file.at(name));
    return std::vector<std::byte>(span.begin(), span.end());
  };
  EXPECT_EQ(bytes_of(first, blocks.name), expected_blocks);
  EXPECT_EQ(bytes_of(second, scales.name), expected_scales);
  EXPECT_EQ(bytes_of(first, q_proj.name), q_proj.bytes);
  EXPECT_EQ(bytes_of(second, bias.name), bias.bytes);
  EXPECT_EQ(test::read_file(dir / "merged" / "config.json"), test::read_file(base / "config.json"));
}

}  // namespace merge_quantized_test
}  // namespace tinker::weights::detail
