// gpt-oss (Harmony) with a pinned date in its system message, for tests (the
// `gpt_oss_*_reasoning` families write today's date there, as the model's template does), and its
// tool declarations (gpt_oss_tools.cpp).
#pragma once

#include "renderers/families.hpp"

#include <optional>
#include <span>
#include <string>

namespace tinker::renderers::detail {

/// A gpt-oss renderer; with `reasoning_effort` it opens every conversation with the Harmony system
/// message ("Reasoning: {effort}", "Current date: {current_date}", today's when empty) and is
/// named gpt_oss_{effort}_reasoning, else gpt_oss_no_sysprompt.
std::unique_ptr<Renderer> make_gpt_oss(TokenizerPtr tokenizer, std::optional<std::string> reasoning_effort,
                                       std::optional<std::string> current_date = std::nullopt);

/// The developer message's "# Tools" section declaring `tools` (not empty) in Harmony's
/// TypeScript-like `namespace functions`, as the cookbook writes it: each tool as "// {description}"
/// and "type {name} = (_:\n{\n...\n}) => any;" with a line per parameter (its title,
/// description and examples as comments before it, "?" when optional, its default after it), or
/// "() => any;" without parameters. Throws tinker::error (invalid_argument) naming
/// tools[i].parameters when they are not a JSON object's text.
std::string harmony_tools_section(std::span<const ToolSpec> tools);

}  // namespace tinker::renderers::detail
