/// \file
/// Base model names with a suffix (`doc/service.md#model-names`).
///
/// The service names long-context variants of a model with a suffix after a ':', for example
/// `Qwen/Qwen3.5-397B-A17B:peft:262144` (the `:peft:<context length>` form). Such a name is the
/// model's identity on the wire: it is sent as given and comes back as given. Wherever the SDK
/// looks a model up by name (its tokenizer, its recommended renderer, its Hugging Face id for an
/// export), everything from the first ':' on is ignored: every variant of a model shares the
/// model's tokenizer, chat format and weights layout.
#pragma once

#include <string_view>

namespace tinker {

/// The part of a base model name that names the model for lookups: everything before the first
/// ':' ("Qwen/Qwen3-8B:peft:131072" -> "Qwen/Qwen3-8B"); a name without ':' is returned whole.
/// The result views `model_name`'s characters: keep the string it came from alive.
constexpr std::string_view model_lookup_name(std::string_view model_name) noexcept {
  return model_name.substr(0, model_name.find(':'));
}

/// The suffix of a base model name, from its first ':' on (":peft:131072"); empty when there is
/// none. Views `model_name`'s characters like model_lookup_name.
constexpr std::string_view model_name_suffix(std::string_view model_name) noexcept {
  const std::size_t colon = model_name.find(':');
  return colon == std::string_view::npos ? std::string_view{} : model_name.substr(colon);
}

}  // namespace tinker
