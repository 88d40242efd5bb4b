#include "renderers/family_support.hpp"

#include "renderers/parsing.hpp"

#include <array>
#include <string>

namespace tinker::renderers::detail {
namespace {

std::size_t count_of(std::string_view text, std::string_view what) {
  std::size_t count = 0;
  for (std::size_t at = text.find(what); at != std::string_view::npos; at = text.find(what, at + what.size())) {
    ++count;
  }
  return count;
}

}  // namespace

std::vector<ContentPart> parts_with_thinking(std::string_view text) {
  if (text.find("<think>") == std::string_view::npos) return {TextPart(std::string(text))};
  constexpr std::array<BlockMarkers, 1> think{{{"<think>", "</think>", BlockKind::thinking}}};
  std::vector<ContentPart> parts;
  for (const TextBlock& block : split_blocks(text, think)) {
    if (block.inner.empty()) continue;
    if (block.kind == BlockKind::thinking) {
      parts.emplace_back(ThinkingPart(std::string(block.inner)));
    } else {
      parts.emplace_back(TextPart(std::string(block.raw)));
    }
  }
  return parts;
}

std::optional<UnparsedToolCall> unclosed_block(std::string_view text, std::string_view open, std::string_view close) {
  const std::size_t opened = count_of(text, open);
  if (opened == 0 || opened <= count_of(text, close)) return std::nullopt;
  return unterminated_tool_call(text.substr(text.rfind(open)), open, close);
}

}  // namespace tinker::renderers::detail
