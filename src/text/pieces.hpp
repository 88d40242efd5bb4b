// Text cut into pieces, as it flows from the pre-tokenizers to the model. Pieces are spans of one
// arena string, so splitting a piece costs no allocation; a step that rewrites a piece (ByteLevel's
// byte-to-character map, Metaspace's space-to-"▁") appends the new text to the arena and moves the
// span there.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::tokenizer_detail {

class Pieces {
 public:
  class Span {
   public:
    Span() = default;
    Span(std::uint32_t offset_, std::uint32_t length_) : offset(offset_), length(length_) {}

    std::uint32_t offset = 0;
    std::uint32_t length = 0;
  };

  Pieces() = default;
  /// One piece holding all of `text`.
  explicit Pieces(std::string_view text) { reset(text); }

  /// Drops every piece and makes `text` the only one (keeps the allocations).
  void reset(std::string_view text) {
    arena.assign(text);
    spans.clear();
    if (!text.empty()) spans.emplace_back(0, static_cast<std::uint32_t>(text.size()));
  }

  std::string_view view(Span span) const { return std::string_view(arena).substr(span.offset, span.length); }
  std::size_t size() const noexcept { return spans.size(); }
  std::string_view operator[](std::size_t i) const { return view(spans[i]); }

  /// Appends `text` to the arena and returns its span (for rewritten pieces).
  Span append(std::string_view text) {
    const Span span(static_cast<std::uint32_t>(arena.size()), static_cast<std::uint32_t>(text.size()));
    arena.append(text);
    return span;
  }

  std::string arena;
  std::vector<Span> spans;
};

}  // namespace tinker::tokenizer_detail
