// load_tinker_adapter and read_model_layout (src/weights/adapter_loading.cpp): what a Tinker
// adapter directory and a base model directory turn into, and every malformed input refused with
// the file and the tensor named.
#include "support/expect_error.hpp"
#include "unit/weights/family_models.hpp"
#include "weights/lora_plan.hpp"

#include <gtest/gtest.h>

namespace tinker::weights::detail {
namespace adapter_loading_test {

using test::expect_tinker_error;
using test::TempDir;
namespace fx = test::lora_fixtures;
namespace st = tinker::safetensors;

TEST(LoadTinkerAdapter, ReadsPairsSortedByModuleWithTheConfigsRankAndAlpha) {
  TempDir dir("tinker-adapter");
  std::vector<fx::AdapterTensor> tensors = fx::lora_pair("base_model.model.model.layers.0.mlp.up_proj", 2, 3, 5, 10);
  fx::append(tensors, fx::lora_pair("base_model.model.model.layers.0.mlp.down_proj", 2, 5, 3, 20));
  fx::write_adapter(dir.path(), tensors, 2, 16);

  const TinkerAdapter adapter = load_tinker_adapter(dir.path());
  EXPECT_EQ(adapter.directory, dir.path());
  EXPECT_EQ(adapter.rank, 2);
  EXPECT_EQ(adapter.lora_alpha, 16.0);
  EXPECT_EQ(adapter.scale(), 8.0);
  ASSERT_EQ(adapter.pairs.size(), 2U);
  EXPECT_EQ(adapter.pairs[0].name, "base_model.model.model.layers.0.mlp.down_proj.weight");
  EXPECT_EQ(adapter.pairs[1].name, "base_model.model.model.layers.0.mlp.up_proj.weight");
  EXPECT_EQ(adapter.pairs[1].a->shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(adapter.pairs[1].b->shape, (std::vector<std::int64_t>{5, 2}));
  EXPECT_EQ(adapter.pairs[1].a->values, (std::vector<float>{10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(adapter.pairs[1].b->values.front(), 1010.0F);
  EXPECT_GT(adapter.bytes_read, (6 + 10 + 10 + 6) * 4U);
}

TEST(LoadTinkerAdapter, ConvertsBf16MatricesAndAcceptsExpertPairsAndEmptyPlaceholders) {
  TempDir dir("tinker-adapter");
  std::vector<fx::AdapterTensor> tensors =
      fx::expert_pair("base_model.model.model.layers.0.mlp.experts.w1", 1, 3, 2, 4, 6, 1);
  tensors.push_back({"base_model.model.model.layers.0.mlp.experts.w3.lora_A.weight", {0}});
  tensors.push_back({"base_model.model.model.layers.0.mlp.experts.w3.lora_B.weight", {0}});
  fx::write_adapter(dir.path(), tensors, 2, 4, st::Dtype::bf16);

  const TinkerAdapter adapter = load_tinker_adapter(dir.path());
  ASSERT_EQ(adapter.pairs.size(), 2U);
  EXPECT_EQ(adapter.pairs[0].a->shape, (std::vector<std::int64_t>{1, 2, 4}));
  EXPECT_EQ(adapter.pairs[0].b->shape, (std::vector<std::int64_t>{3, 6, 2}));
  EXPECT_EQ(adapter.pairs[0].a->values[7], 8.0F);  // 1 + 7, exact in bf16
  EXPECT_TRUE(adapter.pairs[1].a->values.empty());
  EXPECT_TRUE(adapter.pairs[1].b->values.empty());
}

// Writes a one-module adapter whose tensors are `tensors` and whose config is `config`.
void write_raw_adapter(const std::filesystem::path& dir, const std::vector<st::OwnedTensor>& tensors,
                       const std::string& config) {
  std::filesystem::create_directories(dir);
  st::write_file(dir / "adapter_model.safetensors", tensors);
  fx::write_text(dir / "adapter_config.json", config);
}

st::OwnedTensor f32_tensor(const std::string& name, std::vector<std::int64_t> shape) {
  const std::vector<float> values(static_cast<std::size_t>(fx::element_count(shape)), 0.5F);
  return st::make_tensor(name, std::move(shape), values);
}

const std::string q_a = "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight";
const std::string q_b = "base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight";
const std::string good_config = R"({"r": 4, "lora_alpha": 8})";

TEST(LoadTinkerAdapter, RefusesAMissingOrIncompleteConfig) {
  TempDir dir("tinker-adapter");
  st::write_file(dir / "adapter_model.safetensors", {f32_tensor(q_a, {4, 8}), f32_tensor(q_b, {6, 4})});
  expect_tinker_error(errc::io_error, "adapter_config.json: cannot be read: No such file",
                      [&] { load_tinker_adapter(dir.path()); });

  fx::write_text(dir / "adapter_config.json", R"({"lora_alpha": 8})");
  expect_tinker_error(errc::invalid_file, "adapter_config.json: missing required key 'r'",
                      [&] { load_tinker_adapter(dir.path()); });
  fx::write_text(dir / "adapter_config.json", R"({"r": 4})");
  expect_tinker_error(errc::invalid_file, "adapter_config.json: missing required key 'lora_alpha'",
                      [&] { load_tinker_adapter(dir.path()); });
  fx::write_text(dir / "adapter_config.json", R"({"r": 2.5, "lora_alpha": 8})");
  expect_tinker_error(errc::invalid_file, "'r' is 2.5, not a positive integer",
                      [&] { load_tinker_adapter(dir.path()); });
  fx::write_text(dir / "adapter_config.json", R"({"r": 4, "lora_alpha": "eight"})");
  expect_tinker_error(errc::invalid_file, "'lora_alpha' is \"eight\", not a number",
                      [&] { load_tinker_adapter(dir.path()); });
  fx::write_text(dir / "adapter_config.json", "[4, 8]");
  expect_tinker_error(errc::invalid_file, "adapter_config.json: not a JSON object",
                      [&] { load_tinker_adapter(dir.path()); });
}

TEST(LoadTinkerAdapter, RefusesARankThatDiffersFromTheConfig) {
  TempDir dir("tinker-adapter");
  write_raw_adapter(dir.path(), {f32_tensor(q_a, {2, 8}), f32_tensor(q_b, {6, 2})}, good_config);
  expect_tinker_error(errc::invalid_file,
                      "adapter_model.safetensors: tensor '" + q_a +
                          "': rank 2 (lora_A [2, 8]) differs from adapter_config.json's r = 4",
                      [&] { load_tinker_adapter(dir.path()); });
  write_raw_adapter(dir.path(), {f32_tensor(q_a, {4, 8}), f32_tensor(q_b, {6, 3})}, good_config);
  expect_tinker_error(errc::invalid_file, "tensor '" + q_b + "': rank 3 (lora_B [6, 3]) differs",
                      [&] { load_tinker_adapter(dir.path()); });
}

TEST(LoadTinkerAdapter, RefusesUnpairedAndForeignTensors) {
  TempDir dir("tinker-adapter");
  write_raw_adapter(dir.path(), {f32_tensor(q_a, {4, 8})}, good_config);
  expect_tinker_error(errc::invalid_file, "tensor '" + q_a + "' has no lora_B ('" + q_b + "')",
                      [&] { load_tinker_adapter(dir.path()); });
  write_raw_adapter(dir.path(),
                    {f32_tensor(q_a, {4, 8}), f32_tensor(q_b, {6, 4}), f32_tensor("x.lora_B.weight", {6, 4})},
                    good_config);
  expect_tinker_error(errc::invalid_file, "tensor 'x.lora_B.weight' has no lora_A ('x.lora_A.weight')",
                      [&] { load_tinker_adapter(dir.path()); });
  write_raw_adapter(dir.path(),
                    {f32_tensor(q_a, {4, 8}), f32_tensor(q_b, {6, 4}), f32_tensor("lm_head.weight", {6, 8})},
                    good_config);
  expect_tinker_error(errc::invalid_file, "tensor 'lm_head.weight' is not a LoRA matrix",
                      [&] { load_tinker_adapter(dir.path()); });
  write_raw_adapter(dir.path(), {}, good_config);
  expect_tinker_error(errc::invalid_file, "adapter_model.safetensors: no LoRA matrices",
                      [&] { load_tinker_adapter(dir.path()); });
}

TEST(LoadTinkerAdapter, RefusesNonFloatAndMisshapenMatrices) {
  TempDir dir("tinker-adapter");
  st::OwnedTensor ints{q_a, st::Dtype::i32, {4, 8}, std::vector<std::byte>(4 * 8 * 4)};
  write_raw_adapter(dir.path(), {ints, f32_tensor(q_b, {6, 4})}, good_config);
  expect_tinker_error(errc::invalid_file, "tensor '" + q_a + "': dtype I32", [&] { load_tinker_adapter(dir.path()); });

  write_raw_adapter(dir.path(), {f32_tensor(q_a, {1, 4, 8}), f32_tensor(q_b, {1, 6, 4})}, good_config);
  expect_tinker_error(errc::invalid_file, "are not both 2-D", [&] { load_tinker_adapter(dir.path()); });

  const std::string w1 = "base_model.model.model.layers.0.mlp.experts.w1";
  write_raw_adapter(dir.path(), {f32_tensor(w1 + ".lora_A.weight", {4, 8}), f32_tensor(w1 + ".lora_B.weight", {6, 4})},
                    good_config);
  expect_tinker_error(errc::invalid_file, "are not both 3-D (routed experts", [&] { load_tinker_adapter(dir.path()); });
  write_raw_adapter(dir.path(),
                    {f32_tensor(w1 + ".lora_A.weight", {1, 4, 8}), f32_tensor(w1 + ".lora_B.weight", {1, 6, 4})},
                    good_config);
  expect_tinker_error(errc::invalid_file, "both hold one expert", [&] { load_tinker_adapter(dir.path()); });
  write_raw_adapter(dir.path(),
                    {f32_tensor(w1 + ".lora_A.weight", {2, 4, 8}), f32_tensor(w1 + ".lora_B.weight", {3, 6, 4})},
                    good_config);
  expect_tinker_error(errc::invalid_file, "lora_A has 2 experts, lora_B 3", [&] { load_tinker_adapter(dir.path()); });
  write_raw_adapter(dir.path(), {f32_tensor(q_a, {0}), f32_tensor(q_b, {0})}, good_config);
  expect_tinker_error(errc::invalid_file, "tensor '" + q_a + "': empty LoRA matrix",
                      [&] { load_tinker_adapter(dir.path()); });
}

TEST(LoadTinkerAdapter, RefusesAMissingWeightsFile) {
  TempDir dir("tinker-adapter");
  fx::write_text(dir / "adapter_config.json", good_config);
  expect_tinker_error(errc::io_error, "adapter_model.safetensors", [&] { load_tinker_adapter(dir.path()); });
}

TEST(ReadModelLayout, ReadsConfigFactsAndEveryHeader) {
  TempDir dir("tinker-layout");
  fx::write_model(dir.path(),
                  R"({"architectures": ["KimiK25ForConditionalGeneration"],
                      "text_config": {"model_type": "kimi_k2", "architectures": ["DeepseekV3ForCausalLM"],
                                      "quantization_config": {"quant_method": "compressed-tensors",
                                                              "format": "float-quantized"}}})",
                  {{"language_model.model.embed_tokens.weight", {32, 16}},
                   {"language_model.lm_head.weight", {32, 16}, st::Dtype::f32}});
  const ModelLayout layout = read_model_layout(dir.path());
  EXPECT_EQ(layout.directory, dir.path());
  EXPECT_EQ(layout.model_type, "kimi_k2");  // from text_config: the top level has none
  EXPECT_EQ(layout.architectures, (std::vector<std::string>{"KimiK25ForConditionalGeneration"}));
  EXPECT_EQ(layout.quant_method, "compressed-tensors");
  EXPECT_EQ(layout.quant_format, "float-quantized");
  EXPECT_NE(layout.config_json.find("kimi_k2"), std::string::npos);
  ASSERT_EQ(layout.tensors.size(), 2U);
  EXPECT_EQ(layout.tensors.at("language_model.lm_head.weight").dtype, st::Dtype::f32);
  EXPECT_EQ(layout.tensors.at("language_model.model.embed_tokens.weight").shape, (std::vector<std::int64_t>{32, 16}));
  EXPECT_TRUE(layout.quantized.empty());
}

TEST(ReadModelLayout, PrefersTheTopLevelOverTextConfig) {
  TempDir dir("tinker-layout");
  fx::write_model(dir.path(),
                  R"({"model_type": "qwen3_5", "architectures": ["Qwen3_5ForConditionalGeneration"],
                      "quantization_config": {"quant_method": "fp8"},
                      "text_config": {"model_type": "qwen3_5_text", "quantization_config": {"quant_method": "mxfp4"}}})",
                  {{"model.language_model.norm.weight", {16}}});
  const ModelLayout layout = read_model_layout(dir.path());
  EXPECT_EQ(layout.model_type, "qwen3_5");
  EXPECT_EQ(layout.quant_method, "fp8");
  EXPECT_EQ(layout.quant_format, "");
}

TEST(ReadModelLayout, RefusesAMissingOrBrokenConfigAndAModelWithoutWeights) {
  TempDir dir("tinker-layout");
  expect_tinker_error(errc::io_error, "config.json: cannot be read: No such file",
                      [&] { read_model_layout(dir.path()); });
  fx::write_text(dir / "config.json", "{\"model_type\": ");
  expect_tinker_error(errc::invalid_file, "config.json: not JSON", [&] { read_model_layout(dir.path()); });
  fx::write_text(dir / "config.json", "{\"model_type\": \"qwen3\"}");
  EXPECT_THROW(read_model_layout(dir.path()), error);
}

}  // namespace adapter_loading_test
}  // namespace tinker::weights::detail
