// The model families the exporters know (the cookbook's merge profiles, weights/_merge_*.py): how a
// family's Hugging Face weights differ from the names Tinker trains under. Detectors run in the
// cookbook's order and the first that recognises the base wins; the default profile takes the rest
// (Qwen3 dense and MoE, Qwen3-VL, Llama 3, Kimi K2).
#include "weights/key_mapping.hpp"
#include "weights/lora_plan.hpp"

#include <algorithm>
#include <optional>

namespace tinker::weights::detail {
namespace {

/// What every detector looks at in the weight names.
struct NameFacts {
  bool fused_experts = false;          ///< "...experts.gate_up_proj": one 3-D weight for all experts
  bool language_model_prefix = false;  ///< "model.language_model.": a vision model's text tower
};

NameFacts name_facts(const ModelLayout& model) {
  NameFacts facts;
  for (const std::string& name : weight_names(model)) {
    facts.fused_experts = facts.fused_experts || name.ends_with(".experts.gate_up_proj");
    facts.language_model_prefix = facts.language_model_prefix || name.starts_with("model.language_model.");
  }
  return facts;
}

bool architecture_contains(const ModelLayout& model, std::string_view fragment) {
  return std::any_of(model.architectures.begin(), model.architectures.end(),
                     [&](const std::string& name) { return name.find(fragment) != std::string::npos; });
}

/// gpt-oss names attention ".attn" where Hugging Face has ".self_attn", and fuses gate and up
/// projections of its experts interleaved: [g0, u0, g1, u1, ...] on the last axis.
std::optional<MergeProfile> detect_gpt_oss(const ModelLayout& model, const NameFacts& facts) {
  if (!architecture_contains(model, "GptOss")) return std::nullopt;
  MergeProfile profile;
  profile.family = "gpt_oss";
  profile.expert_layout = facts.fused_experts ? ExpertLayout::fused_interleaved : ExpertLayout::separate;
  profile.extra_key_remaps = {{".attn", ".self_attn"}};
  profile.has_language_model_prefix = facts.language_model_prefix;
  return profile;
}

/// DeepSeek V3/V3.1, by model_type (its architecture name is shared with Kimi K2, which is not
/// DeepSeek for the exporters: Kimi K2 is served with LoRA, DeepSeek V3 is not).
std::optional<MergeProfile> detect_deepseek(const ModelLayout& model, const NameFacts& facts) {
  if (model.model_type != "deepseek_v3") return std::nullopt;
  MergeProfile profile;
  profile.family = "deepseek";
  profile.has_language_model_prefix = facts.language_model_prefix;
  return profile;
}

/// Nemotron 3 (hybrid Mamba, attention and MoE): weights under "backbone.layers." but "lm_head" at
/// the top; experts with only up and down projections (Tinker's w1 and w2; w3 is an empty
/// placeholder); the Mamba mixer's gate_proj and x_proj, trained apart, are the first two row
/// blocks of Hugging Face's fused in_proj.
std::optional<MergeProfile> detect_nemotron(const ModelLayout& model, const NameFacts& facts) {
  if (!architecture_contains(model, "NemotronH")) return std::nullopt;
  MergeProfile profile;
  profile.family = "nemotron";
  profile.extra_key_remaps = {{"model.layers.", "backbone.layers."}, {"model.lm_head", "lm_head"}};
  profile.expert_key_remaps = {{".w1.weight", ".up_proj.weight"}, {".w2.weight", ".down_proj.weight"}};
  profile.fused_projection_map = {{"in_proj", {"gate_proj", "x_proj"}}};
  profile.has_language_model_prefix = facts.language_model_prefix;
  return profile;
}

/// Qwen3.5 and 3.6 (dense and MoE): linear-attention layers store one in_proj_qkv (Q, K, V rows of
/// unequal heights) where Tinker trains in_proj_q/k/v; MoE experts fuse [gate | up].
std::optional<MergeProfile> detect_qwen3_5(const ModelLayout& model, const NameFacts& facts) {
  if (model.model_type != "qwen3_5" && model.model_type != "qwen3_5_moe") return std::nullopt;
  MergeProfile profile;
  profile.family = "qwen3_5";
  profile.expert_layout = facts.fused_experts ? ExpertLayout::fused_concatenated : ExpertLayout::separate;
  profile.has_language_model_prefix = facts.language_model_prefix;
  profile.split_qkv_projections = true;
  return profile;
}

/// Kimi K2.5, a vision model around a Kimi K2 text model: its prefix is the outer
/// "language_model.model." (not "model.language_model."), which the planner's own rules handle,
/// so the standard prefix flag stays off.
std::optional<MergeProfile> detect_kimi_k25(const ModelLayout& model, const NameFacts&) {
  if (model.model_type != "kimi_k25") return std::nullopt;
  MergeProfile profile;
  profile.family = "kimi_k25";
  return profile;
}

MergeProfile default_profile(const NameFacts& facts) {
  MergeProfile profile;
  profile.family = "default";
  profile.expert_layout = facts.fused_experts ? ExpertLayout::fused_concatenated : ExpertLayout::separate;
  profile.has_language_model_prefix = facts.language_model_prefix;
  return profile;
}

}  // namespace

MergeProfile detect_merge_profile(const ModelLayout& model) {
  const NameFacts facts = name_facts(model);
  for (const auto detector : {detect_gpt_oss, detect_deepseek, detect_nemotron, detect_qwen3_5, detect_kimi_k25}) {
    if (auto profile = detector(model, facts)) return *std::move(profile);
  }
  return default_profile(facts);
}

}  // namespace tinker::weights::detail
