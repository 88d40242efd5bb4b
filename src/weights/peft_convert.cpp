// Tinker's adapter names -> the names vLLM, SGLang and PEFT look for (the cookbook's
// _adapter.py): the family's remaps, 3-D expert pairs expanded to one 2-D pair per expert,
// components Tinker trains apart merged into the fused module Hugging Face has (rank summed,
// block-diagonal lora_B), and the serving frameworks' own prefixes.
#include "weights/peft_convert.hpp"
#include "weights/key_mapping.hpp"
#include "weights/lora_plan.hpp"

#include <tinker/error.hpp>

#include <algorithm>
#include <set>

namespace tinker::weights::detail {
namespace {

/// Prefixes a serving framework renames when it loads the checkpoint (vLLM maps Nemotron-H's
/// "backbone." to "model."): the adapter's keys must carry the framework's names.
constexpr std::pair<std::string_view, std::pair<std::string_view, std::string_view>> serving_prefix_remaps[] = {
    {"nemotron_h", {"backbone.", "model."}},
};

using TensorPtr = std::shared_ptr<const FloatTensor>;

struct PeftBuilder {
  std::map<std::string, TensorPtr> tensors;
  std::set<std::string> target_modules;

  /// Adds the pair for base weight `target` ("model.layers.0.mlp.up_proj.weight").
  void add(const std::string& target, TensorPtr a, TensorPtr b) {
    const std::string module(remove_suffix(target, ".weight"));
    const std::string key_a = "base_model.model." + module + ".lora_A.weight";
    if (tensors.contains(key_a)) {
      throw error(errc::invalid_argument, "two adapter modules map to the same PEFT key '" + key_a +
                                              "' (an adapter for another model family?)");
    }
    tensors.emplace(key_a, std::move(a));
    tensors.emplace("base_model.model." + module + ".lora_B.weight", std::move(b));
    target_modules.insert(leaf_module(module));
  }
};

/// Matrix `index` of a 3-D [E, rows, cols] tensor (index 0 of a shared E = 1 side) as 2-D.
TensorPtr expert_matrix(const FloatTensor& tensor, std::int64_t index) {
  if (tensor.shape[0] == 1) index = 0;
  const auto rows = tensor.shape[1];
  const auto cols = tensor.shape[2];
  auto out = std::make_shared<FloatTensor>();
  out->shape = {rows, cols};
  const auto begin = tensor.values.begin() + static_cast<std::ptrdiff_t>(index * rows * cols);
  out->values.assign(begin, begin + static_cast<std::ptrdiff_t>(rows * cols));
  return out;
}

/// experts.w1 ([E, r, in] / [E, out, r]) -> experts.<e>.gate_proj for every e; a side shared by
/// every expert (E = 1) becomes one tensor every expert's key refers to.
void expand_expert_pair(PeftBuilder& out, const AdapterPair& pair, std::string target, const MergeProfile& profile) {
  target = apply_remaps(std::move(target), profile.expert_key_remaps);
  const std::int64_t experts = std::max(pair.a->shape[0], pair.b->shape[0]);
  const TensorPtr shared_a = pair.a->shape[0] == 1 ? expert_matrix(*pair.a, 0) : nullptr;
  const TensorPtr shared_b = pair.b->shape[0] == 1 ? expert_matrix(*pair.b, 0) : nullptr;
  for (std::int64_t e = 0; e < experts; ++e) {
    out.add(replace_all(target, ".experts", ".experts." + std::to_string(e)),
            shared_a ? shared_a : expert_matrix(*pair.a, e), shared_b ? shared_b : expert_matrix(*pair.b, e));
  }
}

/// The components of one fused module of one layer, by component name.
struct FusedGroup {
  std::string fused;                                  ///< "in_proj"
  std::map<std::string, const AdapterPair*> by_name;  ///< "gate_proj" -> pair
};

/// Merges a layer's components into its fused module: lora_A stacks the components' A rows
/// ([sum r, in]); lora_B places each component's B at its row block and its own rank columns,
/// zero elsewhere ([fused rows, sum r]), so B A is each component's delta in its own rows.
/// Returns the summed rank.
std::int64_t merge_fused_group(PeftBuilder& out, const std::string& layer_prefix, const FusedGroup& group,
                               const ModelLayout& model, const MergeProfile& profile) {
  const std::string suffix = "." + group.fused + ".weight";
  const auto fused_key = find_layer_weight(model, layer_prefix, suffix);
  if (!fused_key) {
    throw error(errc::invalid_argument, "no base tensor ending in '" + suffix + "' in the layer of '" + layer_prefix +
                                            "' in " + model.directory.string());
  }
  const auto order = std::find_if(profile.fused_projection_map.begin(), profile.fused_projection_map.end(),
                                  [&](const auto& entry) { return entry.first == group.fused; });
  std::vector<const AdapterPair*> parts;
  for (const std::string& name : order->second) {
    const auto it = group.by_name.find(name);
    if (it == group.by_name.end()) {
      throw error(errc::invalid_argument, "adapter lacks '" + layer_prefix + "." + name + "' for base tensor '" +
                                              *fused_key + "', which fuses " + std::to_string(order->second.size()) +
                                              " projections Tinker trains apart");
    }
    parts.push_back(it->second);
  }
  const std::int64_t fused_rows = weight_shape(model, *fused_key)->front();
  const std::int64_t in = parts.front()->a->shape[1];
  std::int64_t rank = 0;
  for (const AdapterPair* part : parts) rank += part->a->shape[0];

  auto a = std::make_shared<FloatTensor>();
  a->shape = {rank, in};
  auto b = std::make_shared<FloatTensor>();
  b->shape = {fused_rows, rank};
  b->values.assign(static_cast<std::size_t>(fused_rows * rank), 0.0F);
  std::int64_t row = 0;
  std::int64_t column = 0;
  for (const AdapterPair* part : parts) {
    const std::int64_t part_rank = part->a->shape[0];
    const std::int64_t part_rows = part->b->shape[0];
    a->values.insert(a->values.end(), part->a->values.begin(), part->a->values.end());
    for (std::int64_t i = 0; i < part_rows; ++i) {
      const auto source = part->b->values.begin() + static_cast<std::ptrdiff_t>(i * part_rank);
      std::copy(source, source + static_cast<std::ptrdiff_t>(part_rank),
                b->values.begin() + static_cast<std::ptrdiff_t>((row + i) * rank + column));
    }
    row += part_rows;
    column += part_rank;
  }
  out.add(layer_prefix + suffix, std::move(a), std::move(b));
  return rank;
}

std::string serving_key(std::string key, std::string_view model_type) {
  for (const auto& [type, remap] : serving_prefix_remaps) {
    if (type == model_type) key = replace_all(std::move(key), remap.first, remap.second);
  }
  return key;
}

}  // namespace

std::string_view peft_refusal_reason(std::string_view model_type) noexcept {
  if (model_type == "deepseek_v3") {
    return "DeepSeek V3/V3.1 (model_type 'deepseek_v3') has no LoRA adapter serving in vLLM or SGLang: "
           "merge the adapter into the model instead (--format merged)";
  }
  return {};
}

PeftAdapter convert_to_peft(const TinkerAdapter& adapter, const ModelLayout& model) {
  if (const auto reason = peft_refusal_reason(model.model_type); !reason.empty()) {
    throw error(errc::invalid_argument, std::string(reason));
  }
  // The merge plan checks every name and shape against the base: an adapter a merge would refuse
  // is not written as a PEFT adapter either.
  PeftAdapter peft;
  peft.profile = plan_merge(adapter, model).profile;
  const MergeProfile& profile = peft.profile;
  const NameRemaps remaps =
      profile.split_qkv_projections ? qwen3_5_name_remaps(profile, model) : standard_name_remaps(profile, model);

  PeftBuilder out;
  std::map<std::string, FusedGroup> fused_groups;  // by layer prefix + fused module
  for (const AdapterPair& pair : adapter.pairs) {
    const std::string target = apply_remaps(apply_remaps(pair.name, remaps), profile.extra_key_remaps);
    if (is_expert_name(pair.name)) {
      if (pair.a->values.empty() && pair.b->values.empty()) continue;  // placeholder (Nemotron's w3)
      expand_expert_pair(out, pair, target, profile);
      continue;
    }
    const std::string leaf = leaf_module(target);
    const auto fused =
        std::find_if(profile.fused_projection_map.begin(), profile.fused_projection_map.end(), [&](const auto& entry) {
          return std::find(entry.second.begin(), entry.second.end(), leaf) != entry.second.end();
        });
    if (fused == profile.fused_projection_map.end()) {
      out.add(target, pair.a, pair.b);
      continue;
    }
    const std::string layer_prefix(remove_suffix(target, "." + leaf + ".weight"));
    FusedGroup& group = fused_groups[layer_prefix + "\n" + fused->first];
    group.fused = fused->first;
    group.by_name[leaf] = &pair;
  }
  for (const auto& [key, group] : fused_groups) {
    const std::string layer_prefix = key.substr(0, key.find('\n'));
    peft.rank_pattern[group.fused] = merge_fused_group(out, layer_prefix, group, model, profile);
  }
  if (out.tensors.empty()) {
    throw error(errc::invalid_argument,
                adapter.directory.string() + ": no LoRA weights to export (only empty placeholders)");
  }

  std::map<std::string, TensorPtr> served;
  for (auto& [key, tensor] : out.tensors) {
    std::string name = serving_key(key, model.model_type);
    if (served.contains(name)) {
      throw error(errc::invalid_argument, "two adapter modules map to the same PEFT key '" + name + "'");
    }
    served.emplace(std::move(name), std::move(tensor));
  }
  peft.tensors.assign(std::make_move_iterator(served.begin()), std::make_move_iterator(served.end()));
  peft.target_modules.assign(out.target_modules.begin(), out.target_modules.end());
  peft.lora_alpha = adapter.lora_alpha;
  peft.rank = adapter.rank;
  return peft;
}

}  // namespace tinker::weights::detail
