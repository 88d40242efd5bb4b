// plan_merge (src/weights/merge_planning.cpp) for the dense families and Qwen3.5's split QKV, and
// the refusals: a delta that does not fit its base tensor, an adapter of another family, a
// missing sibling of a fused projection.
#include "support/expect_error.hpp"
#include "unit/weights/plan_description.hpp"

#include <gtest/gtest.h>

namespace tinker::weights::detail {
namespace merge_planning_test {

using test::expect_tinker_error;
using test::TempDir;
namespace fx = test::lora_fixtures;

const std::string layer0 = "base_model.model.model.layers.0.";

TEST(PlanMerge, Qwen3DenseMapsEveryModuleAndTheUnembeddingToLmHead) {
  TempDir dir("tinker-plan");
  const MergePlan plan = fx::plan_family(dir.path(), fx::qwen3_dense());
  EXPECT_EQ(plan.profile.family, "default");
  EXPECT_EQ(fx::describe_plan(plan),
            fx::sorted({
                "model.layers.0.self_attn.q_proj.weight <- " + layer0 + "self_attn.q_proj.weight",
                "model.layers.0.self_attn.k_proj.weight <- " + layer0 + "self_attn.k_proj.weight",
                "model.layers.0.self_attn.v_proj.weight <- " + layer0 + "self_attn.v_proj.weight",
                "model.layers.0.self_attn.o_proj.weight <- " + layer0 + "self_attn.o_proj.weight",
                "model.layers.0.mlp.gate_proj.weight <- " + layer0 + "mlp.gate_proj.weight",
                "model.layers.0.mlp.up_proj.weight <- " + layer0 + "mlp.up_proj.weight",
                "model.layers.0.mlp.down_proj.weight <- " + layer0 + "mlp.down_proj.weight",
                "lm_head.weight <- base_model.model.model.unembed_tokens.weight",
            }));
  const MergeOp& op = plan.ops.at("model.layers.0.mlp.down_proj.weight").front();
  EXPECT_FLOAT_EQ(op.scale, 2.0F);  // lora_alpha 8 / r 4
  EXPECT_EQ(op.a->shape, (std::vector<std::int64_t>{4, 24}));
  EXPECT_EQ(op.b->shape, (std::vector<std::int64_t>{16, 4}));
  EXPECT_EQ(op.a->values.front(), 700.0F);
}

TEST(PlanMerge, TiedEmbeddingsTakeTheUnembeddingDelta) {
  TempDir dir("tinker-plan");
  const MergePlan plan = fx::plan_family(dir.path(), fx::llama3_tied());
  EXPECT_EQ(fx::describe_plan(plan),
            fx::sorted({
                "model.layers.0.self_attn.q_proj.weight <- " + layer0 + "self_attn.q_proj.weight",
                "model.layers.0.self_attn.v_proj.weight <- " + layer0 + "self_attn.v_proj.weight",
                "model.embed_tokens.weight <- base_model.model.model.unembed_tokens.weight",
            }));
}

TEST(PlanMerge, Qwen3_5SplitQkvBecomesRowSlicesOfTheFusedWeight) {
  TempDir dir("tinker-plan");
  const MergePlan plan = fx::plan_family(dir.path(), fx::qwen3_5_dense());
  EXPECT_EQ(plan.profile.family, "qwen3_5");
  const std::string qkv = "model.language_model.layers.0.linear_attn.in_proj_qkv.weight <- " + layer0 + "linear_attn.";
  EXPECT_EQ(
      fx::describe_plan(plan),
      fx::sorted({
          qkv + "in_proj_q.weight rows from 0",
          qkv + "in_proj_k.weight rows from 8",   // after q's 8 rows
          qkv + "in_proj_v.weight rows from 16",  // after q's and k's
          "model.language_model.layers.0.linear_attn.out_proj.weight <- " + layer0 + "linear_attn.out_proj.weight",
          "model.language_model.layers.1.self_attn.q_proj.weight <- "
          "base_model.model.model.layers.1.self_attn.q_proj.weight",
          // Qwen3.5-4B ties its embeddings: the unembedding adapts the prefixed embed_tokens.
          "model.language_model.embed_tokens.weight <- base_model.model.model.unembed_tokens.weight",
      }));
}

TEST(PlanMerge, Qwen3_5WithoutAFusedWeightKeepsSplitProjections) {
  // A Qwen3.5 base whose linear attention stores q, k, v apart: ordinary modules.
  fx::FamilyCase family = fx::qwen3_5_dense();
  std::erase_if(family.base, [](const fx::BaseTensor& t) { return t.name.find("in_proj_qkv") != std::string::npos; });
  for (const char* part : {"q", "k"}) {
    family.base.push_back(
        {std::string("model.language_model.layers.0.linear_attn.in_proj_") + part + ".weight", {8, 16}});
  }
  family.base.push_back({"model.language_model.layers.0.linear_attn.in_proj_v.weight", {16, 16}});
  TempDir dir("tinker-plan");
  const MergePlan plan = fx::plan_family(dir.path(), family);
  EXPECT_EQ(plan.ops.at("model.language_model.layers.0.linear_attn.in_proj_k.weight").front().slice_start, -1);
}

TEST(PlanMerge, Qwen3_5NeedsTheQAndKSiblingsForOffsets) {
  fx::FamilyCase family = fx::qwen3_5_dense();
  std::erase_if(family.adapter,
                [](const fx::AdapterTensor& t) { return t.name.find("in_proj_k") != std::string::npos; });
  TempDir dir("tinker-plan");
  expect_tinker_error(errc::invalid_argument,
                      "adapter '" + layer0 +
                          "linear_attn.in_proj_q.weight': merging into base tensor "
                          "'model.language_model.layers.0.linear_attn.in_proj_qkv.weight' needs the in_proj_q, "
                          "in_proj_k and in_proj_v adapters of the layer, and '" +
                          layer0 + "linear_attn.in_proj_k.weight' is missing",
                      [&] { fx::plan_family(dir.path(), family); });
}

TEST(PlanMerge, ADeltaThatDoesNotFitNamesTheAdapterTheBaseTensorAndItsFile) {
  fx::FamilyCase family = fx::qwen3_dense();
  for (auto& tensor : family.base) {
    if (tensor.name == "model.layers.0.mlp.up_proj.weight") tensor.shape = {20, 16};
  }
  TempDir dir("tinker-plan");
  expect_tinker_error(errc::invalid_argument,
                      "adapter 'base_model.model.model.layers.0.mlp.up_proj.weight' (rank 4): delta [24, 16] does not "
                      "fit base tensor 'model.layers.0.mlp.up_proj.weight' [20, 16] in model.safetensors",
                      [&] { fx::plan_family(dir.path(), family); });
}

TEST(PlanMerge, ARowSliceBeyondTheFusedWeightIsRefused) {
  fx::FamilyCase family = fx::qwen3_5_dense();
  for (auto& tensor : family.base) {
    if (tensor.name.ends_with("in_proj_qkv.weight")) tensor.shape = {24, 16};
  }
  TempDir dir("tinker-plan");
  expect_tinker_error(errc::invalid_argument,
                      "adapter '" + layer0 +
                          "linear_attn.in_proj_v.weight' (rank 4): delta [16, 16] at rows 16..32 does not fit base "
                          "tensor 'model.language_model.layers.0.linear_attn.in_proj_qkv.weight' [24, 16] in "
                          "model.safetensors",
                      [&] { fx::plan_family(dir.path(), family); });
}

TEST(PlanMerge, AMisfitInAShardedBaseNamesTheShard) {
  TempDir dir("tinker-plan");
  fx::FamilyCase family = fx::qwen3_dense();
  fx::write_adapter(dir / "adapter", family.adapter, 4, 8);
  std::filesystem::create_directories(dir / "base");
  fx::write_text(dir / "base" / "config.json", family.config_json);
  std::vector<safetensors::OwnedTensor> first;
  std::vector<safetensors::OwnedTensor> second;
  std::map<std::string, std::string> weight_map;
  for (auto tensor : family.base) {
    const bool in_second = tensor.name.find(".mlp.") != std::string::npos;
    if (tensor.name == "model.layers.0.mlp.down_proj.weight") tensor.shape = {16, 20};
    (in_second ? second : first).push_back(fx::zeros(tensor));
    weight_map[tensor.name] = in_second ? "model-00002-of-00002.safetensors" : "model-00001-of-00002.safetensors";
  }
  safetensors::write_file(dir / "base" / "model-00001-of-00002.safetensors", first);
  safetensors::write_file(dir / "base" / "model-00002-of-00002.safetensors", second);
  fx::write_text(dir / "base" / "model.safetensors.index.json", safetensors::make_index_json(0, weight_map));
  expect_tinker_error(errc::invalid_argument,
                      "delta [16, 24] does not fit base tensor 'model.layers.0.mlp.down_proj.weight' [16, 20] in "
                      "model-00002-of-00002.safetensors",
                      [&] { plan_merge(load_tinker_adapter(dir / "adapter"), read_model_layout(dir / "base")); });
}

TEST(PlanMerge, AnAdapterOfAnotherFamilyNamesItsFirstUnmatchedTensorAndTheBase) {
  // A gpt-oss adapter (".attn", fused experts) onto a Qwen3 base.
  TempDir dir("tinker-plan");
  fx::write_model(dir / "base", fx::qwen3_dense().config_json, fx::qwen3_dense().base);
  fx::write_adapter(dir / "adapter", fx::gpt_oss().adapter, 4, 8);
  expect_tinker_error(errc::invalid_argument,
                      "adapter 'base_model.model.model.layers.0.attn.o_proj.weight' maps to base tensor "
                      "'model.layers.0.attn.o_proj.weight', which the qwen3 base model in " +
                          (dir / "base").string() + " does not have",
                      [&] { plan_merge(load_tinker_adapter(dir / "adapter"), read_model_layout(dir / "base")); });
}

TEST(PlanMerge, ALargerModelsAdapterDoesNotFit) {
  // The same family, a wider model: q_proj of 64 rows where the base has 32.
  fx::FamilyCase family = fx::qwen3_dense();
  family.adapter = fx::lora_pair(layer0 + "self_attn.q_proj", 4, 16, 64);
  TempDir dir("tinker-plan");
  expect_tinker_error(errc::invalid_argument,
                      "adapter '" + layer0 +
                          "self_attn.q_proj.weight' (rank 4): delta [64, 16] does not fit base tensor "
                          "'model.layers.0.self_attn.q_proj.weight' [32, 16]",
                      [&] { fx::plan_family(dir.path(), family); });
}

}  // namespace merge_planning_test
}  // namespace tinker::weights::detail
