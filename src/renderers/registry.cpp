// make_renderer: the family names and their constructors.
#include "renderers/families.hpp"

#include <tinker/error.hpp>

#include <array>
#include <string>
#include <utility>

namespace tinker::renderers {
namespace {

struct Family {
  std::string_view name;
  std::unique_ptr<Renderer> (*make)(detail::TokenizerPtr);
};

// In the order the public header lists them.
constexpr std::array<Family, 10> families{{
    {"role_colon", &detail::make_role_colon},
    {"llama3", &detail::make_llama3},
    {"qwen3", &detail::make_qwen3},
    {"qwen3_disable_thinking", &detail::make_qwen3_disable_thinking},
    {"qwen3_instruct", &detail::make_qwen3_instruct},
    {"deepseekv3", &detail::make_deepseekv3},
    {"deepseekv3_thinking", &detail::make_deepseekv3_thinking},
    {"gpt_oss_no_sysprompt", &detail::make_gpt_oss_no_sysprompt},
    {"gpt_oss_medium_reasoning", &detail::make_gpt_oss_medium_reasoning},
    {"kimi_k2", &detail::make_kimi_k2},
}};

}  // namespace

std::string detail::joined_renderer_names() {
  std::string names;
  for (const Family& family : families) {
    if (!names.empty()) names += ", ";
    names += family.name;
  }
  return names;
}

std::vector<std::string> renderer_names() {
  std::vector<std::string> names;
  for (const Family& family : families) names.emplace_back(family.name);
  return names;
}

std::unique_ptr<Renderer> make_renderer(std::string_view name, std::shared_ptr<const Tokenizer> tokenizer) {
  if (tokenizer == nullptr) throw error(errc::invalid_argument, "make_renderer: the tokenizer is null");
  for (const Family& family : families) {
    if (family.name == name) return family.make(std::move(tokenizer));
  }
  throw error(errc::invalid_argument,
              "unknown renderer \"" + std::string(name) + "\" (known: " + detail::joined_renderer_names() + ")");
}

}  // namespace tinker::renderers
