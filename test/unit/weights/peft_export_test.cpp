// build_lora_adapter and describe_base_model (src/weights/peft_export.cpp) on dense models: the
// PEFT keys, unscaled values, adapter_config.json as the cookbook writes it, the dtype kept, the
// progress reported, and every refusal leaving no output directory.
#include "support/expect_error.hpp"
#include "unit/weights/peft_output.hpp"

#include <tinker/weights.hpp>

#include <gtest/gtest.h>

namespace tinker::weights {
namespace peft_export_test {

using test::expect_tinker_error;
using test::TempDir;
namespace fx = test::lora_fixtures;
namespace st = tinker::safetensors;

TEST(BuildLoraAdapter, Qwen3DenseKeysAreTheHuggingFaceModulesWithUnscaledValues) {
  TempDir dir("tinker-peft");
  const fx::FamilyCase family = fx::qwen3_dense();
  const fx::PeftOutput out = fx::export_peft(dir.path(), family, "Qwen/Qwen3-8B");
  EXPECT_EQ(out.tensors.names(), fx::peft_keys_of({
                                     "model.layers.0.self_attn.q_proj",
                                     "model.layers.0.self_attn.k_proj",
                                     "model.layers.0.self_attn.v_proj",
                                     "model.layers.0.self_attn.o_proj",
                                     "model.layers.0.mlp.gate_proj",
                                     "model.layers.0.mlp.up_proj",
                                     "model.layers.0.mlp.down_proj",
                                     "lm_head",
                                 }));
  const std::string down = "base_model.model.model.layers.0.mlp.down_proj";
  EXPECT_EQ(out.tensors.shapes.at(down + ".lora_A.weight"), (std::vector<std::int64_t>{4, 24}));
  EXPECT_EQ(out.tensors.shapes.at(down + ".lora_B.weight"), (std::vector<std::int64_t>{16, 4}));
  // PEFT stores B unscaled: the serving framework applies lora_alpha / r.
  EXPECT_EQ(out.tensors.values.at(down + ".lora_B.weight"),
            fx::counting_values(family.tensor("base_model.model.model.layers.0.mlp.down_proj.lora_B.weight")));
  EXPECT_EQ(out.tensors.values.at("base_model.model.lm_head.lora_A.weight"),
            fx::counting_values(family.tensor("base_model.model.model.unembed_tokens.lora_A.weight")));
  EXPECT_EQ(out.tensors.dtypes.at(down + ".lora_A.weight"), st::Dtype::f32);
  EXPECT_EQ(out.tensors.metadata.at("format"), "pt");

  EXPECT_EQ(out.summary.output, dir / "peft");
  EXPECT_EQ(out.summary.family, "default");
  EXPECT_EQ(out.summary.tensors_written, 16U);
  EXPECT_EQ(out.summary.tensors_changed, 8U);
  EXPECT_GT(out.summary.bytes_read, 0U);
  EXPECT_EQ(out.summary.bytes_written, std::filesystem::file_size(dir / "peft" / "adapter_model.safetensors") +
                                           std::filesystem::file_size(dir / "peft" / "adapter_config.json"));
  EXPECT_FALSE(std::filesystem::exists(dir / "peft" / "checkpoint_complete"));
}

TEST(BuildLoraAdapter, WritesTheCookbooksAdapterConfigFieldForField) {
  TempDir dir("tinker-peft");
  const fx::PeftOutput out = fx::export_peft(dir.path(), fx::qwen3_dense(), "Qwen/Qwen3-8B");
  EXPECT_EQ(out.config_text, R"({
  "peft_type": "LORA",
  "auto_mapping": null,
  "base_model_name_or_path": "Qwen/Qwen3-8B",
  "bias": "none",
  "fan_in_fan_out": false,
  "inference_mode": true,
  "init_lora_weights": true,
  "lora_alpha": 8,
  "lora_dropout": 0.0,
  "modules_to_save": null,
  "r": 4,
  "rank_pattern": {},
  "alpha_pattern": {},
  "target_modules": [
    "down_proj",
    "gate_proj",
    "k_proj",
    "lm_head",
    "o_proj",
    "q_proj",
    "up_proj",
    "v_proj"
  ],
  "task_type": "CAUSAL_LM"
}
)");
}

TEST(BuildLoraAdapter, DropsTheTinkerSuffixFromTheBaseModelName) {
  TempDir dir("tinker-peft");
  const fx::PeftOutput out = fx::export_peft(dir.path(), fx::qwen3_dense(), "Qwen/Qwen3-8B:peft:131072");
  EXPECT_EQ(out.config.at("base_model_name_or_path").as_string(), "Qwen/Qwen3-8B");
}

TEST(BuildLoraAdapter, NamesTheBaseDirectoryWhenNoModelNameIsGiven) {
  TempDir dir("tinker-peft");
  const fx::PeftOutput out = fx::export_peft(dir.path(), fx::qwen3_dense());
  EXPECT_EQ(out.config.at("base_model_name_or_path").as_string(), (dir / "base").string());
}

TEST(BuildLoraAdapter, TiedEmbeddingsTakeTheUnembeddingAdapter) {
  TempDir dir("tinker-peft");
  const fx::PeftOutput out = fx::export_peft(dir.path(), fx::llama3_tied());
  EXPECT_EQ(out.tensors.names(), fx::peft_keys_of({"model.layers.0.self_attn.q_proj", "model.layers.0.self_attn.v_proj",
                                                   "model.embed_tokens"}));
  EXPECT_EQ(fx::string_list(out.config.at("target_modules")),
            (std::vector<std::string>{"embed_tokens", "q_proj", "v_proj"}));
}

TEST(BuildLoraAdapter, KeepsABf16AdapterInBf16) {
  TempDir dir("tinker-peft");
  const fx::FamilyCase family = fx::llama3_tied();
  fx::write_model(dir / "base", family.config_json, family.base);
  fx::write_adapter(dir / "adapter", family.adapter, 4, 8, st::Dtype::bf16);
  LoraAdapterOptions options{dir / "adapter", dir / "base", dir / "peft", "", {}};
  build_lora_adapter(options);
  const fx::ReadBack back = fx::read_safetensors(dir / "peft" / "adapter_model.safetensors");
  const std::string q_a = "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight";
  EXPECT_EQ(back.dtypes.at(q_a), st::Dtype::bf16);
  EXPECT_EQ(back.values.at(q_a), fx::counting_values(family.tensor(q_a)));  // 100 .. 163: exact in bf16
}

TEST(BuildLoraAdapter, ReportsProgressUpToTheLastTensor) {
  TempDir dir("tinker-peft");
  const fx::FamilyCase family = fx::llama3_tied();
  fx::write_family(dir.path(), family);
  std::vector<std::string> stages;
  ExportProgress last_write;
  LoraAdapterOptions options{dir / "adapter", dir / "base", dir / "peft", "meta-llama/Llama-3.2-1B",
                             [&](const ExportProgress& p) {
                               if (stages.empty() || stages.back() != p.stage) stages.emplace_back(p.stage);
                               if (p.stage == "writing") last_write = p;
                             }};
  build_lora_adapter(options);
  EXPECT_EQ(stages,
            (std::vector<std::string>{"reading adapter", "reading base model", "converting", "writing", "done"}));
  EXPECT_EQ(last_write.tensors_done, 6U);
  EXPECT_EQ(last_write.tensors_total, 6U);
  EXPECT_LE(last_write.bytes_done, last_write.bytes_total);
}

/// Runs build_lora_adapter expecting a refusal: `code`, `text` in the message, and no output
/// directory (nor a staging sibling) afterwards.
void expect_refused(const std::filesystem::path& root, errc code, const std::string& text) {
  LoraAdapterOptions options{root / "adapter", root / "base", root / "peft", "", {}};
  expect_tinker_error(code, text, [&] { build_lora_adapter(options); });
  EXPECT_FALSE(std::filesystem::exists(root / "peft"));
  for (const auto& entry : std::filesystem::directory_iterator(root)) {
    EXPECT_EQ(entry.path().filename().string().find("peft"), std::string::npos) << entry.path();
  }
}

TEST(BuildLoraAdapterRefusals, AnAdapterWhoseRankDiffersFromItsConfig) {
  TempDir dir("tinker-peft");
  fx::FamilyCase family = fx::qwen3_dense();
  fx::write_model(dir / "base", family.config_json, family.base);
  fx::write_adapter(dir / "adapter", family.adapter, 8, 16);  // the matrices have rank 4
  expect_refused(dir.path(), errc::invalid_file,
                 "tensor 'base_model.model.model.layers.0.mlp.down_proj.lora_A.weight': rank 4 (lora_A [4, 24]) "
                 "differs from adapter_config.json's r = 8");
}

TEST(BuildLoraAdapterRefusals, ADeltaThatDoesNotFitTheBase) {
  TempDir dir("tinker-peft");
  fx::FamilyCase family = fx::qwen3_dense();
  for (auto& tensor : family.base) {
    if (tensor.name == "model.layers.0.mlp.up_proj.weight") tensor.shape = {48, 16};
  }
  fx::write_family(dir.path(), family);
  expect_refused(dir.path(), errc::invalid_argument,
                 "adapter 'base_model.model.model.layers.0.mlp.up_proj.weight' (rank 4): delta [24, 16] does not fit "
                 "base tensor 'model.layers.0.mlp.up_proj.weight' [48, 16] in model.safetensors");
}

TEST(BuildLoraAdapterRefusals, AnAdapterOfAnotherFamily) {
  TempDir dir("tinker-peft");
  fx::write_model(dir / "base", fx::qwen3_dense().config_json, fx::qwen3_dense().base);
  fx::write_adapter(dir / "adapter", fx::gpt_oss().adapter, 4, 8);
  expect_refused(dir.path(), errc::invalid_argument,
                 "adapter 'base_model.model.model.layers.0.attn.o_proj.weight' maps to base tensor "
                 "'model.layers.0.attn.o_proj.weight', which the qwen3 base model");
}

TEST(BuildLoraAdapterRefusals, AMissingLoraB) {
  TempDir dir("tinker-peft");
  fx::FamilyCase family = fx::qwen3_dense();
  std::erase_if(family.adapter, [](const fx::AdapterTensor& t) { return t.name.ends_with("q_proj.lora_B.weight"); });
  fx::write_family(dir.path(), family);
  expect_refused(dir.path(), errc::invalid_file,
                 "adapter_model.safetensors: tensor 'base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight' "
                 "has no lora_B");
}

TEST(BuildLoraAdapterRefusals, AConfigWithoutLoraAlpha) {
  TempDir dir("tinker-peft");
  fx::write_family(dir.path(), fx::llama3_tied());
  fx::write_text(dir / "adapter" / "adapter_config.json", R"({"r": 4})");
  expect_refused(dir.path(), errc::invalid_file, "adapter_config.json: missing required key 'lora_alpha'");
}

TEST(BuildLoraAdapterRefusals, ABaseWithoutConfigJson) {
  TempDir dir("tinker-peft");
  fx::write_family(dir.path(), fx::llama3_tied());
  std::filesystem::remove(dir / "base" / "config.json");
  expect_refused(dir.path(), errc::io_error,
                 (dir / "base" / "config.json").string() + ": cannot be read: No such file");
}

TEST(BuildLoraAdapterRefusals, AnExistingOutput) {
  TempDir dir("tinker-peft");
  fx::write_family(dir.path(), fx::llama3_tied());
  std::filesystem::create_directory(dir / "peft");
  LoraAdapterOptions options{dir / "adapter", dir / "base", dir / "peft", "", {}};
  expect_tinker_error(errc::invalid_argument, "peft: already exists", [&] { build_lora_adapter(options); });
  EXPECT_TRUE(std::filesystem::is_empty(dir / "peft"));
}

TEST(BuildLoraAdapterRefusals, DeepSeekV3WithTheCookbooksReason) {
  TempDir dir("tinker-peft");
  fx::write_family(dir.path(), fx::deepseek_v3());
  expect_refused(dir.path(), errc::invalid_argument,
                 "DeepSeek V3/V3.1 (model_type 'deepseek_v3') has no LoRA adapter serving in vLLM or SGLang: merge "
                 "the adapter into the model instead");
}

TEST(DescribeBaseModel, TellsFamilyLayoutSizeAndWhatCanBeExported) {
  TempDir dir("tinker-describe");
  const fx::FamilyCase qwen3 = fx::qwen3_dense();
  fx::write_model(dir / "qwen3", qwen3.config_json, qwen3.base);
  const BaseModelInfo info = describe_base_model(dir / "qwen3");
  EXPECT_EQ(info.model_type, "qwen3");
  EXPECT_EQ(info.architectures, (std::vector<std::string>{"Qwen3ForCausalLM"}));
  EXPECT_EQ(info.family, "default");
  EXPECT_EQ(info.expert_layout, "separate");
  EXPECT_EQ(info.quantization, "");
  EXPECT_EQ(info.tensors, qwen3.base.size());
  std::uint64_t bytes = 0;
  for (const auto& tensor : qwen3.base) bytes += static_cast<std::uint64_t>(fx::element_count(tensor.shape)) * 2;
  EXPECT_EQ(info.bytes, bytes);
  EXPECT_TRUE(info.peft_supported);
  EXPECT_TRUE(info.gguf_supported);
  EXPECT_EQ(info.gguf_architecture, "qwen3");

  fx::write_model(dir / "deepseek", fx::deepseek_v3().config_json, fx::deepseek_v3().base);
  const BaseModelInfo deepseek = describe_base_model(dir / "deepseek");
  EXPECT_EQ(deepseek.family, "deepseek");
  EXPECT_FALSE(deepseek.peft_supported);
  EXPECT_NE(deepseek.peft_refusal.find("no LoRA adapter serving in vLLM or SGLang"), std::string::npos);
  EXPECT_FALSE(deepseek.gguf_supported);

  fx::write_model(dir / "gpt-oss", fx::gpt_oss().config_json, fx::gpt_oss().base);
  const BaseModelInfo gpt_oss = describe_base_model(dir / "gpt-oss");
  EXPECT_EQ(gpt_oss.family, "gpt_oss");
  EXPECT_EQ(gpt_oss.expert_layout, "fused_interleaved");
}

TEST(DescribeBaseModel, ReportsTheQuantizationFormatOrMethod) {
  TempDir dir("tinker-describe");
  fx::write_model(dir / "fp8", R"({"model_type": "deepseek_v3", "quantization_config": {"quant_method": "fp8"}})",
                  {{"model.norm.weight", {16}}});
  EXPECT_EQ(describe_base_model(dir / "fp8").quantization, "fp8");
  fx::write_model(dir / "int4",
                  R"({"model_type": "kimi_k25", "text_config": {"quantization_config":
                      {"quant_method": "compressed-tensors", "format": "pack-quantized"}}})",
                  {{"language_model.model.norm.weight", {16}}});
  EXPECT_EQ(describe_base_model(dir / "int4").quantization, "pack-quantized");
}

}  // namespace peft_export_test
}  // namespace tinker::weights
