// UTF-8 checks shared by every tokenizer backend. Strict as RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace tinker::tokenizer_detail {

/// The byte offset of the first byte that does not start a valid UTF-8 sequence, or nullopt when
/// all of `text` is valid.
std::optional<std::size_t> first_invalid_utf8(std::string_view text) noexcept;

/// Length of the valid UTF-8 sequence starting at text[pos], or 0 if none starts there.
std::size_t valid_sequence_length(std::string_view text, std::size_t pos) noexcept;

/// The length of the sequence a lead byte announces: 1 below 0x80, then 2, 3 or 4 by its high
/// bits. It does not validate: a continuation byte (0x80-0xBF) counts as 2, 0xF8-0xFF as 4.
constexpr std::size_t utf8_length_of_lead(unsigned char lead) noexcept {
  if (lead < 0x80) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

/// Appends `bytes` to `out`, each maximal invalid subsequence replaced by U+FFFD (as Rust's
/// String::from_utf8_lossy and Python's errors="replace" do).
void append_utf8_lossy(std::string& out, std::string_view bytes);

}  // namespace tinker::tokenizer_detail
