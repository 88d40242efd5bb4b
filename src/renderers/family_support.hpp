// Reading sampled text the way the DeepSeek V3.1 and Kimi K2 families write it: answers with
// <think> blocks, and tool-call blocks that may have been left open. Built on parsing.hpp.
#pragma once

#include <tinker/renderers.hpp>

#include <optional>
#include <string_view>
#include <vector>

namespace tinker::renderers::detail {

/// Text with <think>...</think> blocks as parts in order: text outside blocks as TextParts, the
/// blocks as ThinkingParts, empty pieces left out (an unclosed "<think>" stays text). Without
/// any "<think>", one TextPart of the whole text (even when empty), as Message(role, text) has.
std::vector<ContentPart> parts_with_thinking(std::string_view text);

/// An UnparsedToolCall for a block opened by `open` more often than closed by `close` in `text`
/// (from the last `open` on).
std::optional<UnparsedToolCall> unclosed_block(std::string_view text, std::string_view open, std::string_view close);

}  // namespace tinker::renderers::detail
