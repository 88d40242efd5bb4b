// recommended_renderers: the chat format each model was trained on, best first.
//
// The table follows the Tinker cookbook's model list (tinker_cookbook/model_info.py), so a model
// name picks the same renderer in both, retired models included (their checkpoints can still be
// rendered and exported). Base models (no chat tuning) get role_colon. Inkling's family, tml_v0,
// is named here; make_renderer then explains why tinker-cpp cannot build it.
#include "renderers/families.hpp"

#include <tinker/error.hpp>
#include <tinker/model_name.hpp>

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

constexpr std::string_view qwen3 = "qwen3,qwen3_disable_thinking";
constexpr std::string_view qwen3_5 = "qwen3_5,qwen3_5_disable_thinking";
constexpr std::string_view qwen3_8 =
    "qwen3_8_xhigh_reasoning,qwen3_8_disable_thinking,qwen3_8_medium_reasoning,qwen3_8_low_reasoning";
constexpr std::string_view gpt_oss = "gpt_oss_no_sysprompt,gpt_oss_medium_reasoning";
constexpr std::string_view nemotron3 = "nemotron3,nemotron3_disable_thinking,nemotron3_preserve_thinking";
constexpr std::string_view nemotron3_super =
    "nemotron3,nemotron3_disable_thinking,nemotron3_preserve_thinking,nemotron3_low_thinking";
constexpr std::string_view nemotron3_ultra =
    "nemotron3_ultra,nemotron3_ultra_disable_thinking,nemotron3_ultra_medium_thinking,"
    "nemotron3_ultra_preserve_thinking";
constexpr std::string_view nemotron3_lightning =
    "nemotron3_ultra,nemotron3_ultra_disable_thinking,nemotron3_ultra_preserve_thinking";

constexpr std::array<KnownModel, 43> known_models{{
    // tinker-local's own models (see tinker-local): a ChatML tokenizer with no thinking markup, a
    // SentencePiece one, and the vision model written in Qwen3.5's format.
    {"tinker-local/tiny-lm", "qwen3_instruct,role_colon"},
    {"tinker-local/tiny-lm-sp", "role_colon"},
    {"tinker-local/tiny-vl", qwen3_5},
    {"meta-llama/Llama-3.1-8B-Instruct", "llama3"},
    {"meta-llama/Llama-3.3-70B-Instruct", "llama3"},
    {"meta-llama/Llama-3.2-1B", "role_colon"},
    {"meta-llama/Llama-3.2-3B", "role_colon"},
    {"meta-llama/Llama-3.1-8B", "role_colon"},
    {"meta-llama/Llama-3.1-70B", "role_colon"},
    {"Qwen/Qwen3-VL-30B-A3B-Instruct", "qwen3_vl_instruct"},
    {"Qwen/Qwen3-VL-235B-A22B-Instruct", "qwen3_vl_instruct"},
    {"Qwen/Qwen3-8B-Base", "role_colon"},
    {"Qwen/Qwen3-30B-A3B-Base", "role_colon"},
    {"Qwen/Qwen3-8B", qwen3},
    {"Qwen/Qwen3-32B", qwen3},
    {"Qwen/Qwen3-30B-A3B", qwen3},
    {"Qwen/Qwen3-235B-A22B", qwen3},
    {"Qwen/Qwen3-4B-Instruct-2507", "qwen3_instruct"},
    {"Qwen/Qwen3-30B-A3B-Instruct-2507", "qwen3_instruct"},
    {"Qwen/Qwen3-235B-A22B-Instruct-2507", "qwen3_instruct"},
    {"Qwen/Qwen3.5-4B", qwen3_5},
    {"Qwen/Qwen3.5-9B", qwen3_5},
    {"Qwen/Qwen3.5-9B-Base", "role_colon"},
    {"Qwen/Qwen3.5-27B", qwen3_5},
    {"Qwen/Qwen3.5-35B-A3B", qwen3_5},
    {"Qwen/Qwen3.5-35B-A3B-Base", "role_colon"},
    {"Qwen/Qwen3.5-397B-A17B", qwen3_5},
    {"Qwen/Qwen3.6-27B", qwen3_5},
    {"Qwen/Qwen3.6-35B-A3B", qwen3_5},
    {"Qwen/Qwen3.8-27B", qwen3_8},
    {"deepseek-ai/DeepSeek-V3.1", "deepseekv3,deepseekv3_thinking"},
    {"deepseek-ai/DeepSeek-V3.1-Base", "role_colon"},
    {"openai/gpt-oss-20b", gpt_oss},
    {"openai/gpt-oss-120b", gpt_oss},
    {"moonshotai/Kimi-K2-Thinking", "kimi_k2"},
    {"moonshotai/Kimi-K2.5", "kimi_k25,kimi_k25_disable_thinking"},
    {"moonshotai/Kimi-K2.6", "kimi_k26,kimi_k26_disable_thinking,kimi_k26_preserve_thinking"},
    {"nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", nemotron3},
    {"nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16", nemotron3_super},
    {"nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16", nemotron3_ultra},
    {"nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-BF16", nemotron3_lightning},
    // Inkling and Inkling-Small (any "thinkingmachines/Inkling..." name; see below).
    {"thinkingmachines/Inkling", "tml_v0"},
    {"thinkingmachines/Inkling-Small", "tml_v0"},
}};

// Inkling models the table does not list yet share the family, as in the cookbook.
constexpr std::string_view inkling_prefix = "thinkingmachines/Inkling";

Names split_names(std::string_view list) {
  Names names;
  while (!list.empty()) {
    const std::size_t comma = std::min(list.find(','), list.size());
    names.emplace_back(list.substr(0, comma));
    list.remove_prefix(std::min(comma + 1, list.size()));
  }
  return names;
}

}  // namespace

std::vector<std::string> recommended_renderers(std::string_view model_name) {
  // ":peft:<context length>" (the long-context variants) and any other suffix name the same model.
  const std::string_view model = model_lookup_name(model_name);
  for (const KnownModel& known : known_models) {
    if (known.name == model) return split_names(known.renderers);
  }
  if (model.starts_with(inkling_prefix)) return {"tml_v0"};
  throw error(errc::invalid_argument,
              "no recommended renderer for model \"" + std::string(model) +
                  "\": it is not one the service lists; pick one of renderer_names() with make_renderer");
}

std::string recommended_renderer(std::string_view model_name) {
  return recommended_renderers(model_name).front();
}

}  // namespace tinker::renderers
