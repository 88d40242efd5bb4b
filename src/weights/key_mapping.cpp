// The name rules shared by the merge planner and the PEFT converter (key_mapping.hpp), after the
// cookbook's build_name_remaps and its per-family variants.
#include "weights/key_mapping.hpp"

#include <tinker/safetensors.hpp>

#include <algorithm>
#include <cctype>
#include <exception>

namespace tinker::weights::detail {

std::string replace_all(std::string text, std::string_view from, std::string_view to) {
  if (from.empty()) return text;
  std::string out;
  out.reserve(text.size());
  std::size_t pos = 0;
  for (std::size_t hit = text.find(from); hit != std::string::npos; hit = text.find(from, pos)) {
    out.append(text, pos, hit - pos);
    out.append(to);
    pos = hit + from.size();
  }
  out.append(text, pos, std::string::npos);
  return out;
}

std::string apply_remaps(std::string name, const NameRemaps& remaps) {
  for (const auto& [from, to] : remaps) name = replace_all(std::move(name), from, to);
  return name;
}

NameRemaps standard_name_remaps(const MergeProfile& profile, const ModelLayout& model) {
  NameRemaps remaps{{"base_model.model.", ""}};
  const auto names = weight_names(model);
  const bool has_lm_head = std::any_of(names.begin(), names.end(), [](const std::string& name) {
    return name == "lm_head.weight" || name.ends_with(".lm_head.weight");
  });
  // Without a separate lm_head the embeddings are tied: the unembedding's LoRA adapts them.
  remaps.emplace_back("model.unembed_tokens", has_lm_head ? "lm_head" : "model.embed_tokens");
  if (profile.has_language_model_prefix) remaps.emplace_back("model.", "model.language_model.");
  return remaps;
}

NameRemaps qwen3_5_name_remaps(const MergeProfile& profile, const ModelLayout& model) {
  NameRemaps remaps{{"base_model.model.", ""}};
  if (!profile.has_language_model_prefix) {
    remaps.emplace_back("model.unembed_tokens", "lm_head");
    return remaps;
  }
  remaps.emplace_back("model.", "model.language_model.");
  const auto names = weight_names(model);
  const bool has_top_level_lm_head = std::any_of(names.begin(), names.end(), [](const std::string& name) {
    return name == "lm_head.weight" || name.starts_with("lm_head.");
  });
  // Qwen3.5-4B ties its embeddings (no lm_head); Qwen3.5-27B stores lm_head at the top level.
  remaps.emplace_back("model.language_model.unembed_tokens",
                      has_top_level_lm_head ? "lm_head" : "model.language_model.embed_tokens");
  return remaps;
}

NameRemaps kimi_k25_name_remaps() {
  return {{"base_model.model.", ""},
          {"model.", "language_model.model."},
          {"language_model.model.unembed_tokens", "language_model.lm_head"}};
}

std::string kimi_k25_lm_head_fixup(std::string target) {
  // Applied after the remaps: a remap rule "lm_head" -> "language_model.lm_head" would also hit
  // names that already carry the prefix.
  if (target.starts_with("lm_head")) return "language_model." + target;
  return target;
}

bool is_expert_name(std::string_view name) {
  return name.find(".experts") != std::string_view::npos;
}

std::string_view remove_suffix(std::string_view text, std::string_view suffix) {
  if (text.ends_with(suffix)) text.remove_suffix(suffix.size());
  return text;
}

std::string leaf_module(std::string_view target) {
  const std::string_view module = remove_suffix(target, ".weight");
  const auto dot = module.rfind('.');
  return std::string(dot == std::string_view::npos ? module : module.substr(dot + 1));
}

bool has_weight(const ModelLayout& model, const std::string& name) {
  return model.tensors.contains(name) || model.quantized.contains(name);
}

const std::vector<std::int64_t>* weight_shape(const ModelLayout& model, const std::string& name) {
  if (auto it = model.tensors.find(name); it != model.tensors.end()) return &it->second.shape;
  if (auto it = model.quantized.find(name); it != model.quantized.end()) return &it->second.logical.shape;
  return nullptr;
}

std::vector<std::string> weight_names(const ModelLayout& model) {
  std::vector<std::string> names;
  names.reserve(model.tensors.size() + model.quantized.size());
  for (const auto& entry : model.tensors) names.push_back(entry.first);
  for (const auto& entry : model.quantized) {
    if (!model.tensors.contains(entry.first)) names.push_back(entry.first);
  }
  std::sort(names.begin(), names.end());
  return names;
}

namespace {
/// ".layers.<N>." of `text` (the first such run of digits), or "".
std::string layer_marker(std::string_view text) {
  constexpr std::string_view marker = ".layers.";
  for (std::size_t at = text.find(marker); at != std::string_view::npos; at = text.find(marker, at + 1)) {
    std::size_t end = at + marker.size();
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end])) != 0) ++end;
    if (end > at + marker.size() && end < text.size() && text[end] == '.') {
      return std::string(text.substr(at, end + 1 - at));
    }
  }
  return {};
}
}  // namespace

std::optional<std::string> find_layer_weight(const ModelLayout& model, std::string_view layer_prefix,
                                             std::string_view suffix) {
  const std::string marker = layer_marker(layer_prefix);
  if (marker.empty()) return std::nullopt;
  for (const std::string& name : weight_names(model)) {
    if (name.find(marker) != std::string::npos && name.ends_with(suffix)) return name;
  }
  return std::nullopt;
}

std::string weight_location(const ModelLayout& model, const std::string& name) {
  std::string tensor = name;
  if (auto it = model.quantized.find(name); it != model.quantized.end() && !it->second.parts.empty()) {
    tensor = it->second.parts.front();
  }
  try {
    // Only on the way to an error: the layout keeps no file names, so the headers are read again.
    const auto weights = safetensors::SafetensorsModel::open(model.directory);
    const auto location = weights.find(tensor);
    if (location.file != nullptr) return " in " + location.file->path().filename().string();
  } catch (const std::exception&) {
    // The message goes out without the file name.
  }
  return {};
}

std::string format_shape(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

}  // namespace tinker::weights::detail
