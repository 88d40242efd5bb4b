// plan_merge for the MoE families: one op per expert into separate weights (Qwen3 MoE, Kimi,
// DeepSeek, Nemotron), one 3-D op into fused gate_up_proj/down_proj (Qwen3.5, Qwen3-VL: halves
// concatenated; gpt-oss: interleaved), Nemotron's fused in_proj, Kimi K2.5's prefix, and quantized
// expert weights as targets.
#include "support/expect_error.hpp"
#include "unit/weights/plan_description.hpp"

#include <gtest/gtest.h>

namespace tinker::weights::detail {
namespace merge_planning_moe_test {

using test::expect_tinker_error;
using test::TempDir;
namespace fx = test::lora_fixtures;

/// The ops of separate experts 0 .. count-1: "<base_experts>.<e>.<proj>.weight <- <adapter>.<w>.weight expert e".
std::vector<std::string> separate_expert_ops(const std::string& base_experts, const std::string& adapter_experts,
                                             int count, const std::vector<std::pair<std::string, std::string>>& projs) {
  std::vector<std::string> lines;
  for (int e = 0; e < count; ++e) {
    for (const auto& [w, proj] : projs) {
      lines.push_back(base_experts + "." + std::to_string(e) + "." + proj + ".weight <- " + adapter_experts + "." + w +
                      ".weight expert " + std::to_string(e));
    }
  }
  return lines;
}

const std::vector<std::pair<std::string, std::string>> gate_up_down = {
    {"w1", "gate_proj"}, {"w3", "up_proj"}, {"w2", "down_proj"}};

TEST(PlanMergeExperts, Qwen3MoeGetsOneOpPerExpert) {
  TempDir dir("tinker-plan");
  const MergePlan plan = fx::plan_family(dir.path(), fx::qwen3_moe());
  auto expected =
      separate_expert_ops("model.layers.0.mlp.experts", "base_model.model.model.layers.0.mlp.experts", 4, gate_up_down);
  expected.push_back(
      "model.layers.0.self_attn.q_proj.weight <- base_model.model.model.layers.0.self_attn.q_proj.weight");
  EXPECT_EQ(fx::describe_plan(plan), fx::sorted(expected));
  // Every expert's op refers to the whole 3-D pair; the op's expert picks the slice.
  const MergeOp& op = plan.ops.at("model.layers.0.mlp.experts.3.down_proj.weight").front();
  EXPECT_EQ(op.a->shape, (std::vector<std::int64_t>{4, 4, 12}));
  EXPECT_EQ(op.b->shape, (std::vector<std::int64_t>{1, 16, 4}));
}

TEST(PlanMergeExperts, Qwen3_5MoeFusesGateAndUpOnDimOne) {
  TempDir dir("tinker-plan");
  const MergePlan plan = fx::plan_family(dir.path(), fx::qwen3_5_moe());
  const std::string experts = "model.language_model.layers.0.mlp.experts.";
  const std::string adapter = "base_model.model.model.layers.0.mlp.experts.";
  EXPECT_EQ(fx::describe_plan(plan), fx::sorted({
                                         experts + "gate_up_proj <- " + adapter + "w1.weight 3-D gate",
                                         experts + "gate_up_proj <- " + adapter + "w3.weight 3-D up",
                                         experts + "down_proj <- " + adapter + "w2.weight 3-D",
                                         "model.language_model.layers.0.mlp.shared_expert.up_proj.weight <- "
                                         "base_model.model.model.layers.0.mlp.shared_expert.up_proj.weight",
                                         "lm_head.weight <- base_model.model.model.unembed_tokens.weight",
                                     }));
}

TEST(PlanMergeExperts, Qwen3VlFusesGateAndUpOnDimTwo) {
  TempDir dir("tinker-plan");
  const MergePlan plan = fx::plan_family(dir.path(), fx::qwen3_vl_moe());
  const std::string experts = "model.language_model.layers.0.mlp.experts.";
  const std::string adapter = "base_model.model.model.layers.0.mlp.experts.";
  EXPECT_EQ(fx::describe_plan(plan), fx::sorted({
                                         experts + "gate_up_proj <- " + adapter + "w1.weight 3-D gate",
                                         experts + "gate_up_proj <- " + adapter + "w3.weight 3-D up",
                                         experts + "down_proj <- " + adapter + "w2.weight 3-D",
                                         "model.language_model.layers.0.self_attn.q_proj.weight <- "
                                         "base_model.model.model.layers.0.self_attn.q_proj.weight",
                                     }));
}

TEST(PlanMergeExperts, GptOssRemapsAttentionAndInterleavesGateAndUp) {
  TempDir dir("tinker-plan");
  const MergePlan plan = fx::plan_family(dir.path(), fx::gpt_oss());
  const std::string adapter = "base_model.model.model.layers.0.";
  EXPECT_EQ(fx::describe_plan(plan),
            fx::sorted({
                "model.layers.0.self_attn.q_proj.weight <- " + adapter + "attn.q_proj.weight",
                "model.layers.0.self_attn.o_proj.weight <- " + adapter + "attn.o_proj.weight",
                "model.layers.0.mlp.experts.gate_up_proj <- " + adapter + "mlp.experts.w1.weight 3-D gate interleaved",
                "model.layers.0.mlp.experts.gate_up_proj <- " + adapter + "mlp.experts.w3.weight 3-D up interleaved",
                "model.layers.0.mlp.experts.down_proj <- " + adapter + "mlp.experts.w2.weight 3-D interleaved",
            }));
}

TEST(PlanMergeExperts, GptOssMxfp4ExpertsArePlannedOntoTheirLogicalWeights) {
  TempDir dir("tinker-plan");
  const MergePlan plan = fx::plan_family(dir.path(), fx::gpt_oss_mxfp4());
  EXPECT_EQ(plan.profile.expert_layout, ExpertLayout::fused_interleaved);
  const std::string adapter = "base_model.model.model.layers.0.mlp.experts.";
  EXPECT_EQ(fx::describe_plan(plan),
            fx::sorted({
                "model.layers.0.mlp.experts.gate_up_proj <- " + adapter + "w1.weight 3-D gate interleaved",
                "model.layers.0.mlp.experts.gate_up_proj <- " + adapter + "w3.weight 3-D up interleaved",
                "model.layers.0.mlp.experts.down_proj <- " + adapter + "w2.weight 3-D interleaved",
            }));
}

TEST(PlanMergeExperts, KimiK2AndDeepSeekV3GetOneOpPerExpert) {
  for (const auto& [family, profile] :
       {std::pair{fx::kimi_k2(), "default"}, std::pair{fx::deepseek_v3(), "deepseek"}}) {
    TempDir dir("tinker-plan");
    const MergePlan plan = fx::plan_family(dir.path(), family);
    EXPECT_EQ(plan.profile.family, profile);
    auto expected = separate_expert_ops("model.layers.1.mlp.experts", "base_model.model.model.layers.1.mlp.experts", 3,
                                        gate_up_down);
    for (const char* module :
         {"layers.0.self_attn.q_a_proj", "layers.0.self_attn.q_b_proj", "layers.1.mlp.shared_experts.gate_proj"}) {
      expected.push_back("model." + std::string(module) + ".weight <- base_model.model.model." + module + ".weight");
    }
    EXPECT_EQ(fx::describe_plan(plan), fx::sorted(expected));
  }
}

TEST(PlanMergeExperts, KimiK2PackedInt4ExpertsArePlannedOntoTheirLogicalWeights) {
  TempDir dir("tinker-plan");
  const MergePlan plan = fx::plan_family(dir.path(), fx::kimi_k2_int4());
  auto expected =
      separate_expert_ops("model.layers.1.mlp.experts", "base_model.model.model.layers.1.mlp.experts", 3, gate_up_down);
  for (const char* module :
       {"layers.0.self_attn.q_a_proj", "layers.0.self_attn.q_b_proj", "layers.1.mlp.shared_experts.gate_proj"}) {
    expected.push_back("model." + std::string(module) + ".weight <- base_model.model.model." + module + ".weight");
  }
  EXPECT_EQ(fx::describe_plan(plan), fx::sorted(expected));
}

TEST(PlanMergeExperts, KimiK25TargetsTheOuterLanguageModelPrefix) {
  TempDir dir("tinker-plan");
  const MergePlan plan = fx::plan_family(dir.path(), fx::kimi_k25());
  EXPECT_EQ(plan.profile.family, "kimi_k25");
  auto expected = separate_expert_ops("language_model.model.layers.1.mlp.experts",
                                      "base_model.model.model.layers.1.mlp.experts", 2, gate_up_down);
  expected.push_back(
      "language_model.model.layers.0.self_attn.q_a_proj.weight <- "
      "base_model.model.model.layers.0.self_attn.q_a_proj.weight");
  expected.push_back("language_model.lm_head.weight <- base_model.model.model.unembed_tokens.weight");
  EXPECT_EQ(fx::describe_plan(plan), fx::sorted(expected));
}

TEST(PlanMergeExperts, KimiK25PrefixesAnAdapterThatNamesLmHeadDirectly) {
  fx::FamilyCase family = fx::kimi_k25();
  family.adapter = fx::lora_pair("base_model.model.lm_head", fx::kRank, fx::kHidden, fx::kVocab);
  TempDir dir("tinker-plan");
  EXPECT_EQ(fx::describe_plan(fx::plan_family(dir.path(), family)),
            std::vector<std::string>{"language_model.lm_head.weight <- base_model.model.lm_head.weight"});
}

TEST(PlanMergeExperts, NemotronSlicesInProjRemapsPrefixesAndSkipsTheEmptyPlaceholder) {
  TempDir dir("tinker-plan");
  const MergePlan plan = fx::plan_family(dir.path(), fx::nemotron_h());
  EXPECT_EQ(plan.profile.family, "nemotron");
  auto expected =
      separate_expert_ops("backbone.layers.1.mixer.experts", "base_model.model.model.layers.1.mixer.experts", 4,
                          {{"w1", "up_proj"}, {"w2", "down_proj"}});
  const std::string mixer0 = "base_model.model.backbone.layers.0.mixer.";
  expected.insert(expected.end(),
                  {
                      "backbone.layers.0.mixer.in_proj.weight <- " + mixer0 + "gate_proj.weight rows from 0",
                      "backbone.layers.0.mixer.in_proj.weight <- " + mixer0 + "x_proj.weight rows from 12",
                      "backbone.layers.0.mixer.out_proj.weight <- " + mixer0 + "out_proj.weight",
                      "backbone.layers.1.mixer.shared_experts.up_proj.weight <- "
                      "base_model.model.backbone.layers.1.mixer.shared_experts.up_proj.weight",
                      "backbone.layers.2.mixer.q_proj.weight <- base_model.model.backbone.layers.2.mixer.q_proj.weight",
                      "lm_head.weight <- base_model.model.model.lm_head.weight",
                  });
  EXPECT_EQ(fx::describe_plan(plan), fx::sorted(expected));
}

TEST(PlanMergeExperts, NemotronXProjNeedsGateProjForItsOffset) {
  fx::FamilyCase family = fx::nemotron_h();
  std::erase_if(family.adapter,
                [](const fx::AdapterTensor& t) { return t.name.find("mixer.gate_proj") != std::string::npos; });
  TempDir dir("tinker-plan");
  expect_tinker_error(errc::invalid_argument,
                      "adapter 'base_model.model.backbone.layers.0.mixer.x_proj.weight': its rows of base tensor "
                      "'backbone.layers.0.mixer.in_proj.weight' start after those of "
                      "'base_model.model.backbone.layers.0.mixer.gate_proj.weight', which the adapter lacks",
                      [&] { fx::plan_family(dir.path(), family); });
}

TEST(PlanMergeExperts, AFusedHalfThatDoesNotFitIsRefused) {
  fx::FamilyCase family = fx::qwen3_vl_moe();
  for (auto& tensor : family.base) {
    if (tensor.name.ends_with("gate_up_proj")) tensor.shape = {2, 16, 20};
  }
  TempDir dir("tinker-plan");
  expect_tinker_error(errc::invalid_argument,
                      "adapter 'base_model.model.model.layers.0.mlp.experts.w1.weight' (rank 4): delta [2, 16, 12] "
                      "(experts, in, out) as the gate half does not fit base tensor "
                      "'model.language_model.layers.0.mlp.experts.gate_up_proj' [2, 16, 20] in model.safetensors",
                      [&] { fx::plan_family(dir.path(), family); });
}

TEST(PlanMergeExperts, AnExpertCountThatDiffersFromTheFusedWeightIsRefused) {
  fx::FamilyCase family = fx::qwen3_vl_moe();
  for (auto& tensor : family.base) {
    if (tensor.name.ends_with("down_proj")) tensor.shape = {3, 12, 16};
  }
  TempDir dir("tinker-plan");
  expect_tinker_error(
      errc::invalid_argument,
      "adapter 'base_model.model.model.layers.0.mlp.experts.w2.weight' (rank 4): delta [2, 12, 16] "
      "(experts, in, out) does not fit base tensor 'model.language_model.layers.0.mlp.experts.down_proj' "
      "[3, 12, 16]",
      [&] { fx::plan_family(dir.path(), family); });
}

TEST(PlanMergeExperts, AnExpertTheBaseLacksIsRefused) {
  fx::FamilyCase family = fx::qwen3_moe();
  std::erase_if(family.base, [](const fx::BaseTensor& t) { return t.name.find("experts.3.") != std::string::npos; });
  TempDir dir("tinker-plan");
  expect_tinker_error(errc::invalid_argument,
                      "adapter 'base_model.model.model.layers.0.mlp.experts.w1.weight' maps to base tensor "
                      "'model.layers.0.mlp.experts.3.gate_proj.weight', which the qwen3_moe base model",
                      [&] { fx::plan_family(dir.path(), family); });
}

TEST(PlanMergeExperts, AKimiAdapterOntoAQwen3MoeBaseIsRefused) {
  // Multi-head latent attention's q_a_proj has no counterpart in Qwen3.
  TempDir dir("tinker-plan");
  fx::write_model(dir / "base", fx::qwen3_moe().config_json, fx::qwen3_moe().base);
  fx::write_adapter(dir / "adapter", fx::kimi_k2().adapter, 4, 8);
  expect_tinker_error(errc::invalid_argument,
                      "adapter 'base_model.model.model.layers.0.self_attn.q_a_proj.weight' maps to base tensor "
                      "'model.layers.0.self_attn.q_a_proj.weight', which the qwen3_moe base model in",
                      [&] { plan_merge(load_tinker_adapter(dir / "adapter"), read_model_layout(dir / "base")); });
}

}  // namespace merge_planning_moe_test
}  // namespace tinker::weights::detail
