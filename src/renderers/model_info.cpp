// recommended_renderers: the chat format each served model was trained on, best first.
//
// The table follows the Tinker cookbook's model list (tinker_cookbook/model_info.py), so a model
// name picks the same renderer in both. Base models (no chat tuning) get role_colon. Models whose
// family tinker-cpp does not render yet (vision-language models, Qwen3.5 and later, Kimi K2.5 and
// later, Nemotron) are refused with the family's name rather than given a near miss: a renderer
// that is almost the model's format trains the model on the wrong tokens without any error.
#include "renderers/families.hpp"

#include <tinker/error.hpp>

#include <algorithm>
#include <array>
#include <string>

namespace tinker::renderers {
namespace {

using Names = std::vector<std::string>;

struct KnownModel {
  std::string_view name;       ///< the service's model name
  std::string_view renderers;  ///< comma-separated, best first
};

constexpr std::array<KnownModel, 28> known_models{{
    // tinker-local's own models: a ChatML tokenizer with no thinking markup (see tinker-local).
    {"tinker-local/tiny-lm", "qwen3_instruct,role_colon"},
    {"tinker-local/tiny-lm-sp", "role_colon"},
    {"meta-llama/Llama-3.1-8B-Instruct", "llama3"},
    {"meta-llama/Llama-3.3-70B-Instruct", "llama3"},
    {"meta-llama/Llama-3.2-1B", "role_colon"},
    {"meta-llama/Llama-3.2-3B", "role_colon"},
    {"meta-llama/Llama-3.1-8B", "role_colon"},
    {"meta-llama/Llama-3.1-70B", "role_colon"},
    {"Qwen/Qwen3-8B-Base", "role_colon"},
    {"Qwen/Qwen3-30B-A3B-Base", "role_colon"},
    {"Qwen/Qwen3-8B", "qwen3,qwen3_disable_thinking"},
    {"Qwen/Qwen3-32B", "qwen3,qwen3_disable_thinking"},
    {"Qwen/Qwen3-30B-A3B", "qwen3,qwen3_disable_thinking"},
    {"Qwen/Qwen3-235B-A22B", "qwen3,qwen3_disable_thinking"},
    {"Qwen/Qwen3-4B-Instruct-2507", "qwen3_instruct"},
    {"Qwen/Qwen3-30B-A3B-Instruct-2507", "qwen3_instruct"},
    {"Qwen/Qwen3-235B-A22B-Instruct-2507", "qwen3_instruct"},
    {"Qwen/Qwen3.5-9B-Base", "role_colon"},
    {"Qwen/Qwen3.5-35B-A3B-Base", "role_colon"},
    {"deepseek-ai/DeepSeek-V3.1", "deepseekv3,deepseekv3_thinking"},
    {"deepseek-ai/DeepSeek-V3.1-Base", "role_colon"},
    {"openai/gpt-oss-20b", "gpt_oss_no_sysprompt,gpt_oss_medium_reasoning"},
    {"openai/gpt-oss-120b", "gpt_oss_no_sysprompt,gpt_oss_medium_reasoning"},
    {"moonshotai/Kimi-K2-Thinking", "kimi_k2"},
    // Served, but in a format tinker-cpp does not render yet (the cookbook's family is named).
    {"Qwen/Qwen3-VL-30B-A3B-Instruct", "!qwen3_vl_instruct"},
    {"Qwen/Qwen3-VL-235B-A22B-Instruct", "!qwen3_vl_instruct"},
    {"moonshotai/Kimi-K2.5", "!kimi_k25"},
    {"moonshotai/Kimi-K2.6", "!kimi_k26"},
}};

// Families of whole model lines that are not rendered yet, by name prefix.
constexpr std::array<std::pair<std::string_view, std::string_view>, 4> unsupported_lines{{
    {"Qwen/Qwen3.5-", "qwen3_5"},
    {"Qwen/Qwen3.6-", "qwen3_5"},
    {"Qwen/Qwen3.8-", "qwen3_8"},
    {"nvidia/NVIDIA-Nemotron-", "nemotron3"},
}};

Names split_names(std::string_view list) {
  Names names;
  while (!list.empty()) {
    const std::size_t comma = std::min(list.find(','), list.size());
    names.emplace_back(list.substr(0, comma));
    list.remove_prefix(std::min(comma + 1, list.size()));
  }
  return names;
}

[[noreturn]] void throw_unsupported(std::string_view model, std::string_view family) {
  throw error(errc::invalid_argument, "model " + std::string(model) + " uses the \"" + std::string(family) +
                                          "\" chat format, which tinker-cpp does not render yet (renderers: " +
                                          detail::joined_renderer_names() + ")");
}

}  // namespace

std::vector<std::string> recommended_renderers(std::string_view model_name) {
  const std::string_view model = model_name.substr(0, model_name.find(':'));
  for (const KnownModel& known : known_models) {
    if (known.name != model) continue;
    if (known.renderers.starts_with('!')) throw_unsupported(model, known.renderers.substr(1));
    return split_names(known.renderers);
  }
  for (const auto& [prefix, family] : unsupported_lines) {
    if (model.starts_with(prefix)) {
      if (model.ends_with("-Base")) return {"role_colon"};
      throw_unsupported(model, family);
    }
  }
  throw error(errc::invalid_argument,
              "no recommended renderer for model \"" + std::string(model) +
                  "\": it is not one the service lists; pick one of renderer_names() with make_renderer");
}

std::string recommended_renderer(std::string_view model_name) {
  return recommended_renderers(model_name).front();
}

}  // namespace tinker::renderers
