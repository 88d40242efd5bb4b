// build_lora_adapter for each family of the cookbook's merge profiles: the PEFT keys a serving
// framework looks for, against hand-written lists; experts expanded to 2-D pairs (shared sides
// broadcast); Nemotron's components merged into in_proj with rank_pattern/alpha_pattern and its
// serving prefix; DeepSeek V3 refused.
#include "support/expect_error.hpp"
#include "unit/weights/peft_output.hpp"
#include "weights/lora_plan.hpp"

#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

namespace tinker::weights {
namespace peft_export_families_test {

using test::expect_tinker_error;
using test::TempDir;
namespace fx = test::lora_fixtures;

std::vector<std::string> target_modules(const fx::PeftOutput& out) {
  return fx::string_list(out.config.at("target_modules"));
}

TEST(PeftFamilies, Qwen3MoeExpandsExpertsAndBroadcastsSharedSides) {
  TempDir dir("tinker-peft");
  const fx::FamilyCase family = fx::qwen3_moe();
  const fx::PeftOutput out = fx::export_peft(dir.path(), family);
  EXPECT_EQ(out.tensors.names(), fx::peft_keys_of({
                                     "model.layers.0.self_attn.q_proj",
                                     "model.layers.0.mlp.experts.0.gate_proj",
                                     "model.layers.0.mlp.experts.0.up_proj",
                                     "model.layers.0.mlp.experts.0.down_proj",
                                     "model.layers.0.mlp.experts.1.gate_proj",
                                     "model.layers.0.mlp.experts.1.up_proj",
                                     "model.layers.0.mlp.experts.1.down_proj",
                                     "model.layers.0.mlp.experts.2.gate_proj",
                                     "model.layers.0.mlp.experts.2.up_proj",
                                     "model.layers.0.mlp.experts.2.down_proj",
                                     "model.layers.0.mlp.experts.3.gate_proj",
                                     "model.layers.0.mlp.experts.3.up_proj",
                                     "model.layers.0.mlp.experts.3.down_proj",
                                 }));
  EXPECT_EQ(target_modules(out), (std::vector<std::string>{"down_proj", "gate_proj", "q_proj", "up_proj"}));
  const std::string expert3 = "base_model.model.model.layers.0.mlp.experts.3.";
  const std::string w = "base_model.model.model.layers.0.mlp.experts.";
  // gate (w1): lora_A shared by all experts, lora_B the expert's own.
  EXPECT_EQ(out.tensors.shapes.at(expert3 + "gate_proj.lora_A.weight"), (std::vector<std::int64_t>{4, 16}));
  EXPECT_EQ(out.tensors.shapes.at(expert3 + "gate_proj.lora_B.weight"), (std::vector<std::int64_t>{12, 4}));
  EXPECT_EQ(out.tensors.values.at(expert3 + "gate_proj.lora_A.weight"),
            fx::slice_values(family.tensor(w + "w1.lora_A.weight"), 0));
  EXPECT_EQ(out.tensors.values.at(expert3 + "gate_proj.lora_B.weight"),
            fx::slice_values(family.tensor(w + "w1.lora_B.weight"), 3));
  // down (w2): lora_A the expert's own, lora_B shared.
  EXPECT_EQ(out.tensors.values.at(expert3 + "down_proj.lora_A.weight"),
            fx::slice_values(family.tensor(w + "w2.lora_A.weight"), 3));
  EXPECT_EQ(out.tensors.values.at(expert3 + "down_proj.lora_B.weight"),
            fx::slice_values(family.tensor(w + "w2.lora_B.weight"), 0));
  EXPECT_EQ(out.tensors.values.at(expert3 + "up_proj.lora_B.weight"),
            fx::slice_values(family.tensor(w + "w3.lora_B.weight"), 3));
}

TEST(PeftFamilies, Qwen3_5KeepsSplitQkvUnderTheLanguageModelPrefix) {
  TempDir dir("tinker-peft");
  const fx::PeftOutput out = fx::export_peft(dir.path(), fx::qwen3_5_dense());
  EXPECT_EQ(out.summary.family, "qwen3_5");
  EXPECT_EQ(
      out.tensors.names(),
      fx::peft_keys_of({
          "model.language_model.layers.0.linear_attn.in_proj_q", "model.language_model.layers.0.linear_attn.in_proj_k",
          "model.language_model.layers.0.linear_attn.in_proj_v", "model.language_model.layers.0.linear_attn.out_proj",
          "model.language_model.layers.1.self_attn.q_proj",
          "model.language_model.embed_tokens",  // tied: no lm_head
      }));
  EXPECT_EQ(target_modules(out),
            (std::vector<std::string>{"embed_tokens", "in_proj_k", "in_proj_q", "in_proj_v", "out_proj", "q_proj"}));
  EXPECT_EQ(out.tensors.shapes.at("base_model.model.model.language_model.layers.0.linear_attn.in_proj_v.lora_B.weight"),
            (std::vector<std::int64_t>{16, 4}));
}

TEST(PeftFamilies, Qwen3_5MoeExpandsItsFusedExperts) {
  TempDir dir("tinker-peft");
  const fx::PeftOutput out = fx::export_peft(dir.path(), fx::qwen3_5_moe());
  EXPECT_EQ(out.tensors.names(), fx::peft_keys_of({
                                     "model.language_model.layers.0.mlp.experts.0.gate_proj",
                                     "model.language_model.layers.0.mlp.experts.0.up_proj",
                                     "model.language_model.layers.0.mlp.experts.0.down_proj",
                                     "model.language_model.layers.0.mlp.experts.1.gate_proj",
                                     "model.language_model.layers.0.mlp.experts.1.up_proj",
                                     "model.language_model.layers.0.mlp.experts.1.down_proj",
                                     "model.language_model.layers.0.mlp.experts.2.gate_proj",
                                     "model.language_model.layers.0.mlp.experts.2.up_proj",
                                     "model.language_model.layers.0.mlp.experts.2.down_proj",
                                     "model.language_model.layers.0.mlp.shared_expert.up_proj",
                                     "lm_head",
                                 }));
}

TEST(PeftFamilies, Qwen3VlExpandsExpertsUnderTheLanguageModelPrefix) {
  TempDir dir("tinker-peft");
  const fx::PeftOutput out = fx::export_peft(dir.path(), fx::qwen3_vl_moe());
  EXPECT_EQ(out.tensors.names(), fx::peft_keys_of({
                                     "model.language_model.layers.0.self_attn.q_proj",
                                     "model.language_model.layers.0.mlp.experts.0.gate_proj",
                                     "model.language_model.layers.0.mlp.experts.0.up_proj",
                                     "model.language_model.layers.0.mlp.experts.0.down_proj",
                                     "model.language_model.layers.0.mlp.experts.1.gate_proj",
                                     "model.language_model.layers.0.mlp.experts.1.up_proj",
                                     "model.language_model.layers.0.mlp.experts.1.down_proj",
                                 }));
}

std::vector<std::string> gpt_oss_expert_modules(int experts) {
  std::vector<std::string> modules;
  for (int e = 0; e < experts; ++e) {
    for (const char* proj : {"gate_proj", "up_proj", "down_proj"}) {
      modules.push_back("model.layers.0.mlp.experts." + std::to_string(e) + "." + proj);
    }
  }
  return modules;
}

TEST(PeftFamilies, GptOssUsesSelfAttnAndPerExpertKeys) {
  TempDir dir("tinker-peft");
  const fx::PeftOutput out = fx::export_peft(dir.path(), fx::gpt_oss());
  EXPECT_EQ(out.summary.family, "gpt_oss");
  EXPECT_EQ(out.tensors.names(), fx::peft_keys_of({
                                     "model.layers.0.self_attn.q_proj",
                                     "model.layers.0.self_attn.o_proj",
                                     "model.layers.0.mlp.experts.0.gate_proj",
                                     "model.layers.0.mlp.experts.0.up_proj",
                                     "model.layers.0.mlp.experts.0.down_proj",
                                     "model.layers.0.mlp.experts.1.gate_proj",
                                     "model.layers.0.mlp.experts.1.up_proj",
                                     "model.layers.0.mlp.experts.1.down_proj",
                                     "model.layers.0.mlp.experts.2.gate_proj",
                                     "model.layers.0.mlp.experts.2.up_proj",
                                     "model.layers.0.mlp.experts.2.down_proj",
                                     "model.layers.0.mlp.experts.3.gate_proj",
                                     "model.layers.0.mlp.experts.3.up_proj",
                                     "model.layers.0.mlp.experts.3.down_proj",
                                 }));
  EXPECT_EQ(target_modules(out), (std::vector<std::string>{"down_proj", "gate_proj", "o_proj", "q_proj", "up_proj"}));
}

TEST(PeftFamilies, GptOssMxfp4BaseGivesTheSameKeys) {
  TempDir dir("tinker-peft");
  const fx::PeftOutput out = fx::export_peft(dir.path(), fx::gpt_oss_mxfp4());
  EXPECT_EQ(out.tensors.names(), fx::peft_keys_of(gpt_oss_expert_modules(2)));
}

TEST(PeftFamilies, KimiK2ExpandsSeparateExperts) {
  for (const auto& family : {fx::kimi_k2(), fx::kimi_k2_int4()}) {
    TempDir dir("tinker-peft");
    const fx::PeftOutput out = fx::export_peft(dir.path(), family);
    EXPECT_EQ(out.tensors.names(), fx::peft_keys_of({
                                       "model.layers.0.self_attn.q_a_proj",
                                       "model.layers.0.self_attn.q_b_proj",
                                       "model.layers.1.mlp.experts.0.gate_proj",
                                       "model.layers.1.mlp.experts.0.up_proj",
                                       "model.layers.1.mlp.experts.0.down_proj",
                                       "model.layers.1.mlp.experts.1.gate_proj",
                                       "model.layers.1.mlp.experts.1.up_proj",
                                       "model.layers.1.mlp.experts.1.down_proj",
                                       "model.layers.1.mlp.experts.2.gate_proj",
                                       "model.layers.1.mlp.experts.2.up_proj",
                                       "model.layers.1.mlp.experts.2.down_proj",
                                       "model.layers.1.mlp.shared_experts.gate_proj",
                                   }));
  }
}

TEST(PeftFamilies, KimiK25KeepsTinkersTextModelNames) {
  // The cookbook converts K2.5 adapters with the standard rules (no prefix flag): "model.layers."
  // as in the Tinker adapter, and the unembedding onto "lm_head".
  TempDir dir("tinker-peft");
  const fx::PeftOutput out = fx::export_peft(dir.path(), fx::kimi_k25());
  EXPECT_EQ(out.summary.family, "kimi_k25");
  EXPECT_EQ(out.tensors.names(), fx::peft_keys_of({
                                     "model.layers.0.self_attn.q_a_proj",
                                     "model.layers.1.mlp.experts.0.gate_proj",
                                     "model.layers.1.mlp.experts.0.up_proj",
                                     "model.layers.1.mlp.experts.0.down_proj",
                                     "model.layers.1.mlp.experts.1.gate_proj",
                                     "model.layers.1.mlp.experts.1.up_proj",
                                     "model.layers.1.mlp.experts.1.down_proj",
                                     "lm_head",
                                 }));
}

TEST(PeftFamilies, NemotronMergesGateAndXIntoInProjAndServesUnderModel) {
  TempDir dir("tinker-peft");
  const fx::FamilyCase family = fx::nemotron_h();
  const fx::PeftOutput out = fx::export_peft(dir.path(), family);
  EXPECT_EQ(out.summary.family, "nemotron");
  EXPECT_EQ(out.tensors.names(), fx::peft_keys_of({
                                     "model.layers.0.mixer.in_proj",
                                     "model.layers.0.mixer.out_proj",
                                     "model.layers.1.mixer.experts.0.up_proj",
                                     "model.layers.1.mixer.experts.0.down_proj",
                                     "model.layers.1.mixer.experts.1.up_proj",
                                     "model.layers.1.mixer.experts.1.down_proj",
                                     "model.layers.1.mixer.experts.2.up_proj",
                                     "model.layers.1.mixer.experts.2.down_proj",
                                     "model.layers.1.mixer.experts.3.up_proj",
                                     "model.layers.1.mixer.experts.3.down_proj",
                                     "model.layers.1.mixer.shared_experts.up_proj",
                                     "model.layers.2.mixer.q_proj",
                                     "lm_head",
                                 }));
  EXPECT_EQ(target_modules(out),
            (std::vector<std::string>{"down_proj", "in_proj", "lm_head", "out_proj", "q_proj", "up_proj"}));
  EXPECT_EQ(boost::json::serialize(out.config.at("rank_pattern")), R"({"in_proj":8})");
  EXPECT_EQ(boost::json::serialize(out.config.at("alpha_pattern")), R"({"in_proj":16})");
  EXPECT_NE(out.config_text.find("  \"rank_pattern\": {\n    \"in_proj\": 8\n  },\n"), std::string::npos);

  // lora_A: gate's rows then x's; lora_B [34, 8]: gate's B in rows 0-11 and rank columns 0-3,
  // x's in rows 12-23 and columns 4-7, zero elsewhere (B, C and dt have no adapter).
  const std::string in_proj = "base_model.model.model.layers.0.mixer.in_proj.";
  const std::string mixer = "base_model.model.backbone.layers.0.mixer.";
  EXPECT_EQ(out.tensors.shapes.at(in_proj + "lora_A.weight"), (std::vector<std::int64_t>{8, 16}));
  EXPECT_EQ(out.tensors.shapes.at(in_proj + "lora_B.weight"), (std::vector<std::int64_t>{34, 8}));
  std::vector<float> expected_a = fx::counting_values(family.tensor(mixer + "gate_proj.lora_A.weight"));
  const auto x_a = fx::counting_values(family.tensor(mixer + "x_proj.lora_A.weight"));
  expected_a.insert(expected_a.end(), x_a.begin(), x_a.end());
  EXPECT_EQ(out.tensors.values.at(in_proj + "lora_A.weight"), expected_a);
  const auto gate_b = fx::counting_values(family.tensor(mixer + "gate_proj.lora_B.weight"));
  const auto x_b = fx::counting_values(family.tensor(mixer + "x_proj.lora_B.weight"));
  std::vector<float> expected_b(34 * 8, 0.0F);
  for (int row = 0; row < 12; ++row) {
    for (int r = 0; r < 4; ++r) {
      expected_b[row * 8 + r] = gate_b[row * 4 + r];
      expected_b[(row + 12) * 8 + 4 + r] = x_b[row * 4 + r];
    }
  }
  EXPECT_EQ(out.tensors.values.at(in_proj + "lora_B.weight"), expected_b);
}

TEST(PeftFamilies, NemotronRefusesAnInProjWithoutAllItsComponents) {
  TempDir dir("tinker-peft");
  fx::FamilyCase family = fx::nemotron_h();
  std::erase_if(family.adapter,
                [](const fx::AdapterTensor& t) { return t.name.find("mixer.x_proj") != std::string::npos; });
  fx::write_family(dir.path(), family);
  LoraAdapterOptions options{dir / "adapter", dir / "base", dir / "peft", "", {}};
  expect_tinker_error(errc::invalid_argument,
                      "adapter lacks 'backbone.layers.0.mixer.x_proj' for base tensor "
                      "'backbone.layers.0.mixer.in_proj.weight'",
                      [&] { build_lora_adapter(options); });
  EXPECT_FALSE(std::filesystem::exists(dir / "peft"));
}

TEST(PeftFamilies, DeepSeekV3IsRefusedButPlannedForAMerge) {
  TempDir dir("tinker-peft");
  fx::write_family(dir.path(), fx::deepseek_v3());
  LoraAdapterOptions options{dir / "adapter", dir / "base", dir / "peft", "", {}};
  expect_tinker_error(errc::invalid_argument, "model_type 'deepseek_v3') has no LoRA adapter serving",
                      [&] { build_lora_adapter(options); });
  EXPECT_FALSE(std::filesystem::exists(dir / "peft"));
  const auto plan =
      detail::plan_merge(detail::load_tinker_adapter(dir / "adapter"), detail::read_model_layout(dir / "base"));
  EXPECT_EQ(plan.profile.family, "deepseek");
  EXPECT_TRUE(plan.ops.contains("model.layers.1.mlp.experts.2.down_proj.weight"));
}

}  // namespace peft_export_families_test
}  // namespace tinker::weights
