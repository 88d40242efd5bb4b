// make_renderer: the built-in family names and their constructors, and the families users
// register at run time (register_renderer).
#include "renderers/families.hpp"

#include <tinker/error.hpp>

#include <algorithm>
#include <array>
#include <mutex>
#include <string>
#include <utility>

namespace tinker::renderers {
namespace {

struct Family {
  std::string_view name;
  std::unique_ptr<Renderer> (*make)(detail::TokenizerPtr);
};

// In the order doc/renderers.md lists them.
constexpr std::array<Family, 34> families{{
    {"role_colon", &detail::make_role_colon},
    {"llama3", &detail::make_llama3},
    {"qwen3", &detail::make_qwen3},
    {"qwen3_disable_thinking", &detail::make_qwen3_disable_thinking},
    {"qwen3_instruct", &detail::make_qwen3_instruct},
    {"qwen3_vl", &detail::make_qwen3_vl},
    {"qwen3_vl_instruct", &detail::make_qwen3_vl_instruct},
    {"qwen3_5", &detail::make_qwen3_5},
    {"qwen3_5_disable_thinking", &detail::make_qwen3_5_disable_thinking},
    {"qwen3_8_xhigh_reasoning", &detail::make_qwen3_8_xhigh_reasoning},
    {"qwen3_8_medium_reasoning", &detail::make_qwen3_8_medium_reasoning},
    {"qwen3_8_low_reasoning", &detail::make_qwen3_8_low_reasoning},
    {"qwen3_8_disable_thinking", &detail::make_qwen3_8_disable_thinking},
    {"deepseekv3", &detail::make_deepseekv3},
    {"deepseekv3_disable_thinking", &detail::make_deepseekv3_disable_thinking},
    {"deepseekv3_thinking", &detail::make_deepseekv3_thinking},
    {"gpt_oss_no_sysprompt", &detail::make_gpt_oss_no_sysprompt},
    {"gpt_oss_low_reasoning", &detail::make_gpt_oss_low_reasoning},
    {"gpt_oss_medium_reasoning", &detail::make_gpt_oss_medium_reasoning},
    {"gpt_oss_high_reasoning", &detail::make_gpt_oss_high_reasoning},
    {"kimi_k2", &detail::make_kimi_k2},
    {"kimi_k25", &detail::make_kimi_k25},
    {"kimi_k25_disable_thinking", &detail::make_kimi_k25_disable_thinking},
    {"kimi_k26", &detail::make_kimi_k26},
    {"kimi_k26_disable_thinking", &detail::make_kimi_k26_disable_thinking},
    {"kimi_k26_preserve_thinking", &detail::make_kimi_k26_preserve_thinking},
    {"nemotron3", &detail::make_nemotron3},
    {"nemotron3_disable_thinking", &detail::make_nemotron3_disable_thinking},
    {"nemotron3_preserve_thinking", &detail::make_nemotron3_preserve_thinking},
    {"nemotron3_low_thinking", &detail::make_nemotron3_low_thinking},
    {"nemotron3_ultra", &detail::make_nemotron3_ultra},
    {"nemotron3_ultra_disable_thinking", &detail::make_nemotron3_ultra_disable_thinking},
    {"nemotron3_ultra_medium_thinking", &detail::make_nemotron3_ultra_medium_thinking},
    {"nemotron3_ultra_preserve_thinking", &detail::make_nemotron3_ultra_preserve_thinking},
}};

// Inkling's format lives in Thinking Machines' separate tml-renderers package, whose special
// tokens and image rule are not published: make_renderer says so instead of guessing.
constexpr std::string_view inkling_family = "tml_v0";
constexpr std::string_view inkling_refusal =
    "renderer \"tml_v0\" (Inkling) cannot be built by tinker-cpp: its chat format is defined by Thinking Machines' "
    "tml-renderers package, whose special tokens and image rule are not published. To train or sample Inkling from "
    "C++, build its ModelInputs from raw tokens: the o200k_base encoding (tinker::load_tiktoken_tokenizer with "
    "TiktokenOptions::o200k_base()) in the layout tml-renderers writes, e.g. rendered once in Python and passed here "
    "as token ids (doc/renderers.md#inkling)";

// Families registered at run time, in registration order.
class CustomFamilies {
 public:
  void add(std::string name, RendererFactory factory) {
    const std::lock_guard lock(mutex_);
    const auto found = find(name);
    if (found != entries_.end()) {
      found->second = std::move(factory);
    } else {
      entries_.emplace_back(std::move(name), std::move(factory));
    }
  }
  bool remove(std::string_view name) {
    const std::lock_guard lock(mutex_);
    const auto found = find(name);
    if (found == entries_.end()) return false;
    entries_.erase(found);
    return true;
  }
  RendererFactory factory(std::string_view name) const {
    const std::lock_guard lock(mutex_);
    const auto found = std::find_if(entries_.begin(), entries_.end(), [&](const auto& e) { return e.first == name; });
    return found == entries_.end() ? RendererFactory() : found->second;
  }
  std::vector<std::string> names() const {
    const std::lock_guard lock(mutex_);
    std::vector<std::string> result;
    for (const auto& entry : entries_) result.push_back(entry.first);
    return result;
  }

 private:
  using Entries = std::vector<std::pair<std::string, RendererFactory>>;
  Entries::iterator find(std::string_view name) {
    return std::find_if(entries_.begin(), entries_.end(), [&](const auto& entry) { return entry.first == name; });
  }

  mutable std::mutex mutex_;
  Entries entries_;
};

CustomFamilies& custom_families() {
  static CustomFamilies registry;
  return registry;
}

bool is_built_in(std::string_view name) {
  return name == inkling_family ||
         std::any_of(families.begin(), families.end(), [&](const Family& family) { return family.name == name; });
}

}  // namespace

std::string detail::joined_renderer_names() {
  std::string names;
  for (const std::string& name : renderer_names()) {
    if (!names.empty()) names += ", ";
    names += name;
  }
  return names;
}

std::vector<std::string> renderer_names() {
  std::vector<std::string> names;
  for (const Family& family : families) names.emplace_back(family.name);
  for (std::string& name : custom_families().names()) names.push_back(std::move(name));
  return names;
}

std::unique_ptr<Renderer> make_renderer(std::string_view name, std::shared_ptr<const Tokenizer> tokenizer) {
  if (tokenizer == nullptr) throw error(errc::invalid_argument, "make_renderer: the tokenizer is null");
  for (const Family& family : families) {
    if (family.name == name) return family.make(std::move(tokenizer));
  }
  if (name == inkling_family) throw error(errc::invalid_argument, std::string(inkling_refusal));
  if (const RendererFactory factory = custom_families().factory(name)) {
    std::unique_ptr<Renderer> renderer = factory(std::move(tokenizer));
    if (renderer == nullptr) {
      throw error(errc::invalid_argument,
                  "the factory registered for renderer \"" + std::string(name) + "\" returned no renderer");
    }
    return renderer;
  }
  throw error(errc::invalid_argument,
              "unknown renderer \"" + std::string(name) + "\" (known: " + detail::joined_renderer_names() + ")");
}

void register_renderer(std::string name, RendererFactory factory) {
  if (name.empty()) throw error(errc::invalid_argument, "register_renderer: the name is empty");
  if (!factory) throw error(errc::invalid_argument, "register_renderer(\"" + name + "\"): the factory is empty");
  if (is_built_in(name)) {
    throw error(errc::invalid_argument, "register_renderer: \"" + name +
                                            "\" is a built-in renderer; register yours under another name "
                                            "(a namespaced one such as \"myorg/" +
                                            name + "\" cannot collide)");
  }
  custom_families().add(std::move(name), std::move(factory));
}

bool unregister_renderer(std::string_view name) {
  return custom_families().remove(name);
}

}  // namespace tinker::renderers
