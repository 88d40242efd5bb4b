// Planning a merge: every adapter module mapped to the base tensor(s) its delta goes into, by the
// family's rules (the cookbook's plan_merge_ops per _merge_<family>.py), then every delta's shape
// checked against its target's (merge_validation.cpp) before a byte of the base is read.
#include "weights/merge_planning.hpp"
#include "weights/key_mapping.hpp"
#include "weights/lora_plan.hpp"

#include <tinker/error.hpp>

#include <algorithm>
#include <array>

namespace tinker::weights::detail {
namespace {

struct Planner {
  const TinkerAdapter& adapter;
  const ModelLayout& model;
  const MergeProfile& profile;
  float scale;
  MergePlan& plan;

  MergeOp make_op(const std::string& target, const AdapterPair& pair) const {
    MergeOp op;
    op.target = target;
    op.adapter_name = pair.name;
    op.a = pair.a;
    op.b = pair.b;
    op.scale = scale;
    return op;
  }
  void add(MergeOp op) {
    const std::string target = op.target;
    plan.ops[target].push_back(std::move(op));
  }
  const AdapterPair* find_pair(const std::string& name) const {
    const auto it = std::lower_bound(adapter.pairs.begin(), adapter.pairs.end(), name,
                                     [](const AdapterPair& pair, const std::string& key) { return pair.name < key; });
    return it != adapter.pairs.end() && it->name == name ? &*it : nullptr;
  }

  [[noreturn]] void throw_no_target(const AdapterPair& pair, const std::string& target) const {
    const std::string base =
        model.model_type.empty() ? std::string("the base model") : "the " + model.model_type + " base model";
    throw error(errc::invalid_argument, "adapter '" + pair.name + "' maps to base tensor '" + target + "', which " +
                                            base + " in " + model.directory.string() +
                                            " does not have (merge profile '" + profile.family +
                                            "'): was the adapter trained on another model?");
  }
};

/// Any module outside the special cases: its own base tensor, after the family's extra remaps.
void plan_standard_op(Planner& planner, const AdapterPair& pair, std::string target) {
  target = apply_remaps(std::move(target), planner.profile.extra_key_remaps);
  if (!has_weight(planner.model, target)) planner.throw_no_target(pair, target);
  planner.add(planner.make_op(target, pair));
}

/// Nemotron's Mamba gate_proj and x_proj: row blocks of the layer's fused in_proj, in the order of
/// the profile's map, each starting where its predecessors' lora_B rows end. False when `target`
/// is not such a component (or the base has no fused weight for its layer).
bool plan_fused_projection_op(Planner& planner, const AdapterPair& pair, const std::string& target) {
  const std::string leaf = leaf_module(target);
  for (const auto& [fused, components] : planner.profile.fused_projection_map) {
    const auto position = std::find(components.begin(), components.end(), leaf);
    if (position == components.end()) continue;
    const std::string suffix = "." + leaf + ".weight";
    const auto fused_key = find_layer_weight(planner.model, remove_suffix(target, suffix), "." + fused + ".weight");
    if (!fused_key) return false;
    const std::string adapter_prefix(remove_suffix(pair.name, suffix));
    std::int64_t start = 0;
    for (auto sibling = components.begin(); sibling != position; ++sibling) {
      const std::string sibling_name = adapter_prefix + "." + *sibling + ".weight";
      const AdapterPair* found = planner.find_pair(sibling_name);
      if (found == nullptr) {
        throw error(errc::invalid_argument, "adapter '" + pair.name + "': its rows of base tensor '" + *fused_key +
                                                "' start after those of '" + sibling_name +
                                                "', which the adapter lacks (a fused projection needs every component "
                                                "of its layer)");
      }
      start += found->b->shape.front();
    }
    MergeOp op = planner.make_op(*fused_key, pair);
    op.slice_start = start;
    planner.add(std::move(op));
    return true;
  }
  return false;
}

/// Qwen3.5's linear attention: in_proj_q/k/v are the Q, K and V row blocks of in_proj_qkv, whose
/// heights are the lora_B heights of the layer's q and k adapters. False when `target` is not one
/// of them or the base has no fused weight (then it is an ordinary module).
bool plan_split_qkv_op(Planner& planner, const AdapterPair& pair, const std::string& target) {
  static constexpr std::array<std::string_view, 3> suffixes{".in_proj_q.weight", ".in_proj_k.weight",
                                                            ".in_proj_v.weight"};
  const auto role =
      std::find_if(suffixes.begin(), suffixes.end(), [&](std::string_view suffix) { return target.ends_with(suffix); });
  if (role == suffixes.end()) return false;
  const std::string fused_key = std::string(remove_suffix(target, *role)) + ".in_proj_qkv.weight";
  if (!has_weight(planner.model, fused_key)) return false;
  const std::string adapter_prefix(remove_suffix(pair.name, *role));
  const AdapterPair* q = planner.find_pair(adapter_prefix + ".in_proj_q.weight");
  const AdapterPair* k = planner.find_pair(adapter_prefix + ".in_proj_k.weight");
  if (q == nullptr || k == nullptr) {
    throw error(errc::invalid_argument, "adapter '" + pair.name + "': merging into base tensor '" + fused_key +
                                            "' needs the in_proj_q, in_proj_k and in_proj_v adapters of the layer, "
                                            "and '" +
                                            adapter_prefix + (q == nullptr ? ".in_proj_q" : ".in_proj_k") +
                                            ".weight' is missing");
  }
  const std::int64_t q_rows = q->b->shape.front();
  const std::int64_t k_rows = k->b->shape.front();
  const std::array<std::int64_t, 3> starts{0, q_rows, q_rows + k_rows};
  MergeOp op = planner.make_op(fused_key, pair);
  op.slice_start = starts[static_cast<std::size_t>(role - suffixes.begin())];
  planner.add(std::move(op));
  return true;
}

/// A 3-D expert pair ("...experts.w1.weight"): one op per expert into separate weights, or one
/// op over all experts into the fused weight (gate and up as halves of gate_up_proj).
void plan_expert_ops(Planner& planner, const AdapterPair& pair, std::string target) {
  if (pair.a->values.empty() && pair.b->values.empty()) return;  // placeholder of a missing projection
  if (pair.a->shape.size() != 3 || pair.b->shape.size() != 3) {
    throw error(errc::invalid_argument, "adapter '" + pair.name + "': expert LoRA matrices must be 3-D, got lora_A " +
                                            format_shape(pair.a->shape) + " and lora_B " + format_shape(pair.b->shape));
  }
  const std::int64_t experts = std::max(pair.a->shape.front(), pair.b->shape.front());
  const MergeProfile& profile = planner.profile;
  target = apply_remaps(std::move(target), profile.extra_key_remaps);
  target = apply_remaps(std::move(target), profile.expert_key_remaps);

  if (profile.expert_layout == ExpertLayout::separate) {
    for (std::int64_t e = 0; e < experts; ++e) {
      const std::string expert_target = replace_all(target, ".experts", ".experts." + std::to_string(e));
      if (!has_weight(planner.model, expert_target)) planner.throw_no_target(pair, expert_target);
      MergeOp op = planner.make_op(expert_target, pair);
      op.expert = static_cast<int>(e);
      planner.add(std::move(op));
    }
    return;
  }
  int fused_proj_idx = -1;
  if (target.ends_with(".gate_proj.weight")) {
    fused_proj_idx = 0;
    target = replace_all(std::move(target), ".gate_proj.weight", ".gate_up_proj");
  } else if (target.ends_with(".up_proj.weight")) {
    fused_proj_idx = 1;
    target = replace_all(std::move(target), ".up_proj.weight", ".gate_up_proj");
  } else {
    target = replace_all(std::move(target), ".down_proj.weight", ".down_proj");
  }
  if (!has_weight(planner.model, target)) planner.throw_no_target(pair, target);
  MergeOp op = planner.make_op(target, pair);
  op.expert_3d = true;
  op.fused_proj_idx = fused_proj_idx;
  op.interleaved = profile.expert_layout == ExpertLayout::fused_interleaved;
  planner.add(std::move(op));
}

NameRemaps merge_name_remaps(const MergeProfile& profile, const ModelLayout& model) {
  if (profile.family == "qwen3_5") return qwen3_5_name_remaps(profile, model);
  if (profile.family == "kimi_k25") return kimi_k25_name_remaps();
  return standard_name_remaps(profile, model);
}

}  // namespace

MergePlan plan_merge(const TinkerAdapter& adapter, const ModelLayout& model) {
  MergePlan plan;
  plan.profile = detect_merge_profile(model);
  const MergeProfile& profile = plan.profile;
  Planner planner{adapter, model, profile, static_cast<float>(adapter.scale()), plan};
  const NameRemaps remaps = merge_name_remaps(profile, model);

  for (const AdapterPair& pair : adapter.pairs) {
    std::string target = apply_remaps(pair.name, remaps);
    if (profile.family == "kimi_k25") target = kimi_k25_lm_head_fixup(std::move(target));
    if (is_expert_name(pair.name)) {
      plan_expert_ops(planner, pair, std::move(target));
      continue;
    }
    if (profile.split_qkv_projections && plan_split_qkv_op(planner, pair, target)) continue;
    if (!profile.fused_projection_map.empty() && plan_fused_projection_op(planner, pair, target)) continue;
    plan_standard_op(planner, pair, std::move(target));
  }
  validate_merge_op_shapes(plan, model);
  return plan;
}

}  // namespace tinker::weights::detail
