// How a Tinker adapter name becomes a base model's weight name: the string rules the merge planner
// and the PEFT converter share. The cookbook writes its rules as Python str.replace calls applied in
// order (every occurrence, not only a prefix), so these helpers do exactly that.
#pragma once

#include "weights/lora_plan.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tinker::weights::detail {

using NameRemaps = std::vector<std::pair<std::string, std::string>>;

/// `text` with every occurrence of `from` replaced by `to`, scanning left to right (str.replace).
std::string replace_all(std::string text, std::string_view from, std::string_view to);
/// The remaps applied in order.
std::string apply_remaps(std::string name, const NameRemaps& remaps);

/// The standard rules: strip "base_model.model.", the unembedding to "lm_head" when the base has
/// one (else to the tied "model.embed_tokens"), then the vision models' "model.language_model.".
NameRemaps standard_name_remaps(const MergeProfile& profile, const ModelLayout& model);
/// Qwen3.5's rules: the language-model prefix first, then the unembedding onto the top-level
/// "lm_head" or, with tied embeddings, the prefixed "embed_tokens".
NameRemaps qwen3_5_name_remaps(const MergeProfile& profile, const ModelLayout& model);
/// Kimi K2.5's rules for merging: its text model lives under "language_model.model.".
NameRemaps kimi_k25_name_remaps();
/// Kimi K2.5: an adapter naming "lm_head" directly gets the outer "language_model." prefix too.
std::string kimi_k25_lm_head_fixup(std::string target);

/// True for a routed-expert name ("...mlp.experts.w1.weight"; not "shared_experts").
bool is_expert_name(std::string_view name);
/// The module's own name: "q_proj" for "model.layers.0.self_attn.q_proj.weight".
std::string leaf_module(std::string_view target);
/// `text` without `suffix` when it ends with it (str.removesuffix).
std::string_view remove_suffix(std::string_view text, std::string_view suffix);

/// True when `name` is a base weight: a tensor of the files or a quantized logical weight.
bool has_weight(const ModelLayout& model, const std::string& name);
/// The shape of the base weight `name` (logical shape for a quantized one), or nullptr.
const std::vector<std::int64_t>* weight_shape(const ModelLayout& model, const std::string& name);
/// Every weight name, tensors and quantized logical weights, sorted.
std::vector<std::string> weight_names(const ModelLayout& model);
/// The first weight (in name order) of the same layer as `layer_prefix` (".layers.<N>.") whose
/// name ends with `suffix`: the base may spell the path differently ("backbone." for "model.").
std::optional<std::string> find_layer_weight(const ModelLayout& model, std::string_view layer_prefix,
                                             std::string_view suffix);
/// " in <shard file>" for a base weight, for error messages ("" when it cannot be told).
std::string weight_location(const ModelLayout& model, const std::string& name);

/// "[64, 32]".
std::string format_shape(const std::vector<std::int64_t>& shape);

}  // namespace tinker::weights::detail
