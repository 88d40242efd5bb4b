// gpt-oss (Harmony) with a pinned date in its system message, for tests: the
// `gpt_oss_medium_reasoning` family writes today's date there, as the model's template does.
#pragma once

#include "renderers/families.hpp"

#include <optional>
#include <string>

namespace tinker::renderers::detail {

/// A gpt-oss renderer; with `reasoning_effort` it opens every conversation with the Harmony system
/// message ("Reasoning: {effort}", "Current date: {current_date}", today's when empty).
std::unique_ptr<Renderer> make_gpt_oss(TokenizerPtr tokenizer, std::optional<std::string> reasoning_effort,
                                       std::optional<std::string> current_date = std::nullopt);

}  // namespace tinker::renderers::detail
