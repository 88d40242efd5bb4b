// From (model name, tokenizer id) to the Hugging Face repo id and revision to load, as the Python
// SDK's get_tokenizer() decides (doc/tokenizers.md#where-a-tokenizer-comes-from).
#include <tinker/error.hpp>
#include <tinker/model_name.hpp>
#include <tinker/tokenizer.hpp>

#include "tokenizer/repo_id.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace tinker {
namespace {

constexpr std::string_view llama3_prefix = "meta-llama/Llama-3";
// Without a tokenizer id, Llama 3 models use this copy, which avoids the gated meta-llama repos.
constexpr std::string_view llama3_tokenizer = "thinkingmachineslabinc/meta-llama-3-instruct-tokenizer";

class PinnedTokenizer {
 public:
  constexpr PinnedTokenizer(std::string_view requested_, std::string_view id_, std::string_view revision_)
      : requested(requested_), id(id_), revision(revision_) {}

  std::string_view requested;
  std::string_view id;
  std::string_view revision;
};

// Remote-code tokenizers the Python SDK loads at a fixed commit.
constexpr std::array<PinnedTokenizer, 4> pinned_tokenizers{{
    {"moonshotai/Kimi-K2-Thinking", "moonshotai/Kimi-K2-Thinking", "612681931a8c906ddb349f8ad0f582cb552189cd"},
    {"moonshotai/Kimi-K2.5-Text-Only", "moonshotai/Kimi-K2.5", "4d01dfe0332d63057c186e0b262165819efb6611"},
    {"moonshotai/Kimi-K2.5", "moonshotai/Kimi-K2.5", "4d01dfe0332d63057c186e0b262165819efb6611"},
    {"moonshotai/Kimi-K2.6", "moonshotai/Kimi-K2.6", "b5aabbfb20227ed42becbf5541dbffd213942c58"},
}};

// A tokenizer id is cut at its first ':' by the same rule as a model name (the Python SDK's).
std::string_view before_colon(std::string_view text) {
  return model_lookup_name(text);
}

std::string derived_from_model_name(std::string_view model_name) {
  if (model_name.starts_with(llama3_prefix)) return std::string(llama3_tokenizer);
  if (std::count(model_name.begin(), model_name.end(), '/') == 2) {  // org/model/variant -> org/model
    return std::string(model_name.substr(0, model_name.rfind('/')));
  }
  return std::string(model_name);
}

}  // namespace

TokenizerRef resolve_tokenizer_id(std::string_view model_name, std::optional<std::string_view> tokenizer_id) {
  const std::string_view name = model_lookup_name(model_name);  // ":peft:<context length>" names the same model
  if (name.empty()) throw error(errc::invalid_argument, "model_name: must not be empty (before any ':')");
  std::optional<std::string_view> given;
  if (tokenizer_id && !before_colon(*tokenizer_id).empty()) given = before_colon(*tokenizer_id);

  TokenizerRef ref(given ? std::string(*given) : derived_from_model_name(name));
  for (const auto& pinned : pinned_tokenizers) {
    if (ref.id == pinned.requested) {
      ref.id = std::string(pinned.id);
      ref.revision = std::string(pinned.revision);
      break;
    }
  }
  ref.private_package = ref.id.starts_with("TML/") || ref.id.starts_with("thinkingmachines/");

  if (auto problem = tokenizer_detail::repo_id_problem(ref.id); !problem.empty()) {
    const std::string source = given ? "tokenizer_id \"" + std::string(*tokenizer_id) + "\""
                                     : "model_name \"" + std::string(model_name) + "\"";
    throw error(errc::invalid_argument,
                "tokenizer id \"" + ref.id + "\" (from " + source + ") is not a Hugging Face repo id: " + problem);
  }
  return ref;
}

}  // namespace tinker
