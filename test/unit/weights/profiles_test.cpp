// detect_merge_profile (src/weights/profiles.cpp): each family of the cookbook's merge profiles
// recognised from config.json and the weight names, with the profile's rules, and the detectors'
// order when a config could match two of them.
#include "unit/weights/family_models.hpp"
#include "weights/lora_plan.hpp"

#include <gtest/gtest.h>

namespace tinker::weights::detail {
namespace profiles_test {

using test::TempDir;
namespace fx = test::lora_fixtures;

using Remaps = std::vector<std::pair<std::string, std::string>>;

MergeProfile profile_of(const fx::FamilyCase& family) {
  TempDir dir("tinker-profiles");
  fx::write_model(dir / "base", family.config_json, family.base);
  return detect_merge_profile(read_model_layout(dir / "base"));
}

const Remaps standard_expert_remaps = {
    {".w1.weight", ".gate_proj.weight"}, {".w3.weight", ".up_proj.weight"}, {".w2.weight", ".down_proj.weight"}};

TEST(MergeProfiles, DenseQwen3AndLlamaAreTheDefaultProfile) {
  for (const auto& family : {fx::qwen3_dense(), fx::llama3_tied()}) {
    const MergeProfile profile = profile_of(family);
    EXPECT_EQ(profile.family, "default");
    EXPECT_EQ(profile.expert_layout, ExpertLayout::separate);
    EXPECT_FALSE(profile.has_language_model_prefix);
    EXPECT_TRUE(profile.extra_key_remaps.empty());
    EXPECT_EQ(profile.expert_key_remaps, standard_expert_remaps);
    EXPECT_TRUE(profile.fused_projection_map.empty());
    EXPECT_FALSE(profile.split_qkv_projections);
  }
}

TEST(MergeProfiles, Qwen3MoeAndKimiK2HaveSeparateExperts) {
  for (const auto& family : {fx::qwen3_moe(), fx::kimi_k2()}) {
    const MergeProfile profile = profile_of(family);
    EXPECT_EQ(profile.family, "default");
    EXPECT_EQ(profile.expert_layout, ExpertLayout::separate);
  }
}

TEST(MergeProfiles, Qwen3VlIsDefaultWithTheLanguageModelPrefixAndFusedExperts) {
  const MergeProfile profile = profile_of(fx::qwen3_vl_moe());
  EXPECT_EQ(profile.family, "default");
  EXPECT_EQ(profile.expert_layout, ExpertLayout::fused_concatenated);
  EXPECT_TRUE(profile.has_language_model_prefix);
}

TEST(MergeProfiles, GptOssRemapsAttnAndInterleavesItsFusedExperts) {
  const MergeProfile profile = profile_of(fx::gpt_oss());
  EXPECT_EQ(profile.family, "gpt_oss");
  EXPECT_EQ(profile.expert_layout, ExpertLayout::fused_interleaved);
  EXPECT_EQ(profile.extra_key_remaps, (Remaps{{".attn", ".self_attn"}}));
  EXPECT_FALSE(profile.has_language_model_prefix);
  EXPECT_EQ(profile.expert_key_remaps, standard_expert_remaps);
}

TEST(MergeProfiles, GptOssWithoutFusedExpertsIsSeparate) {
  fx::FamilyCase family = fx::gpt_oss();
  std::erase_if(family.base, [](const fx::BaseTensor& t) { return t.name.find(".experts.") != std::string::npos; });
  EXPECT_EQ(profile_of(family).expert_layout, ExpertLayout::separate);
}

TEST(MergeProfiles, DeepSeekV3IsDetectedByModelType) {
  const MergeProfile profile = profile_of(fx::deepseek_v3());
  EXPECT_EQ(profile.family, "deepseek");
  EXPECT_EQ(profile.expert_layout, ExpertLayout::separate);
  EXPECT_TRUE(profile.extra_key_remaps.empty());
}

TEST(MergeProfiles, NemotronHasItsPrefixRemapsTwoProjectionExpertsAndTheFusedInProj) {
  const MergeProfile profile = profile_of(fx::nemotron_h());
  EXPECT_EQ(profile.family, "nemotron");
  EXPECT_EQ(profile.expert_layout, ExpertLayout::separate);
  EXPECT_EQ(profile.extra_key_remaps, (Remaps{{"model.layers.", "backbone.layers."}, {"model.lm_head", "lm_head"}}));
  EXPECT_EQ(profile.expert_key_remaps,
            (Remaps{{".w1.weight", ".up_proj.weight"}, {".w2.weight", ".down_proj.weight"}}));
  ASSERT_EQ(profile.fused_projection_map.size(), 1U);
  EXPECT_EQ(profile.fused_projection_map[0].first, "in_proj");
  EXPECT_EQ(profile.fused_projection_map[0].second, (std::vector<std::string>{"gate_proj", "x_proj"}));
  EXPECT_FALSE(profile.has_language_model_prefix);
}

TEST(MergeProfiles, Qwen3_5SplitsQkvAndKeepsTheLanguageModelPrefix) {
  const MergeProfile dense = profile_of(fx::qwen3_5_dense());
  EXPECT_EQ(dense.family, "qwen3_5");
  EXPECT_TRUE(dense.split_qkv_projections);
  EXPECT_TRUE(dense.has_language_model_prefix);
  EXPECT_EQ(dense.expert_layout, ExpertLayout::separate);
  const MergeProfile moe = profile_of(fx::qwen3_5_moe());
  EXPECT_EQ(moe.family, "qwen3_5");
  EXPECT_EQ(moe.expert_layout, ExpertLayout::fused_concatenated);
}

TEST(MergeProfiles, KimiK25HasItsOwnFamilyWithoutTheStandardPrefixFlag) {
  const MergeProfile profile = profile_of(fx::kimi_k25());
  EXPECT_EQ(profile.family, "kimi_k25");
  EXPECT_EQ(profile.expert_layout, ExpertLayout::separate);
  EXPECT_FALSE(profile.has_language_model_prefix);
}

ModelLayout layout_of(std::string model_type, std::vector<std::string> architectures,
                      const std::vector<std::string>& names) {
  ModelLayout layout;
  layout.model_type = std::move(model_type);
  layout.architectures = std::move(architectures);
  for (const auto& name : names) layout.tensors[name] = TensorLayout{safetensors::Dtype::bf16, {2, 2}};
  return layout;
}

TEST(MergeProfiles, DetectorsRunInTheCookbooksOrder) {
  // gpt-oss is tried before DeepSeek, DeepSeek before Nemotron, Nemotron before Qwen3.5, Qwen3.5
  // before Kimi K2.5.
  EXPECT_EQ(detect_merge_profile(layout_of("deepseek_v3", {"GptOssForCausalLM"}, {})).family, "gpt_oss");
  EXPECT_EQ(detect_merge_profile(layout_of("deepseek_v3", {"NemotronHForCausalLM"}, {})).family, "deepseek");
  EXPECT_EQ(detect_merge_profile(layout_of("qwen3_5", {"NemotronHForCausalLM"}, {})).family, "nemotron");
  EXPECT_EQ(detect_merge_profile(layout_of("qwen3_5_moe", {}, {})).family, "qwen3_5");
  EXPECT_EQ(detect_merge_profile(layout_of("kimi_k25", {}, {})).family, "kimi_k25");
  EXPECT_EQ(detect_merge_profile(layout_of("kimi_k2", {"DeepseekV3ForCausalLM"}, {})).family, "default");
  EXPECT_EQ(detect_merge_profile(layout_of("", {}, {})).family, "default");
}

TEST(MergeProfiles, QuantizedLogicalWeightsCountAsWeightNames) {
  // An MXFP4 gpt-oss checkpoint stores "gate_up_proj_blocks"; its logical weight is what makes the
  // experts fused.
  ModelLayout layout =
      layout_of("gpt_oss", {"GptOssForCausalLM"},
                {"model.layers.0.mlp.experts.gate_up_proj_blocks", "model.layers.0.mlp.experts.gate_up_proj_scales"});
  EXPECT_EQ(detect_merge_profile(layout).expert_layout, ExpertLayout::separate);
  layout.quantized["model.layers.0.mlp.experts.gate_up_proj"] = QuantizedWeight{};
  EXPECT_EQ(detect_merge_profile(layout).expert_layout, ExpertLayout::fused_interleaved);
}

}  // namespace profiles_test
}  // namespace tinker::weights::detail
