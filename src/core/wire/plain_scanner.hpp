// A scanner for the plain JSON shapes the service sends on hot paths (future tickets, batched
// completions): objects, arrays, strings of printable ASCII without escapes, and integers. Readers
// built on it accept only those shapes and leave every other text, valid JSON or not, to the
// schema decoder, which reads the rest of JSON and words the errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace tinker::wire::plain {

// A word with a byte below `n` (n at most 0x80) among bytes below 0x80 has the high bit of that
// byte's lane set by this (the classic "has less" bit trick; bytes of 0x80 and above are tested
// apart).
constexpr std::uint64_t ones = 0x0101010101010101ULL;
constexpr std::uint64_t high_bits = 0x80 * ones;

constexpr std::uint64_t has_less(std::uint64_t word, std::uint64_t n) noexcept {
  return (word - n * ones) & ~word & high_bits;
}

constexpr std::uint64_t has_byte(std::uint64_t word, std::uint64_t byte) noexcept {
  return has_less(word ^ (byte * ones), 1);
}

// True when every byte is printable ASCII (0x20-0x7e) and none is a backslash.
inline bool printable_without_backslash(std::string_view text) noexcept {
  std::size_t i = 0;
  std::uint64_t bad = 0;
  for (; i + 8 <= text.size(); i += 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, text.data() + i, 8);
    bad |= (word & high_bits) | has_less(word, 0x20) | has_byte(word, 0x7f) | has_byte(word, '\\');
  }
  for (; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    bad |= static_cast<std::uint64_t>(c < 0x20 || c >= 0x7f || c == '\\');
  }
  return bad == 0;
}

class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  // Skips JSON whitespace, then takes `c` if it comes next.
  bool take(char c) noexcept {
    skip_space();
    if (at_ == text_.size() || text_[at_] != c) return false;
    ++at_;
    return true;
  }

  // A string of printable ASCII other than '"' and '\\' (so the text is exactly its value): the
  // closing quote found by memchr, the bytes before it checked eight at a time.
  bool plain_string(std::string_view& value) noexcept {
    if (!take('"')) return false;
    const char* start = text_.data() + at_;
    const void* quote = std::memchr(start, '"', text_.size() - at_);
    if (quote == nullptr) return false;
    const auto length = static_cast<std::size_t>(static_cast<const char*>(quote) - start);
    if (!printable_without_backslash(std::string_view(start, length))) return false;
    value = std::string_view(start, length);
    at_ += length + 1;
    return true;
  }

  // A non-negative integer without sign, fraction or exponent, no leading zeros, at most 18
  // digits (so within int64).
  bool natural(std::int64_t& value) noexcept {
    skip_space();
    std::size_t i = at_;
    std::int64_t read = 0;
    while (i < text_.size() && text_[i] >= '0' && text_[i] <= '9') {
      if (i - at_ == 18) return false;
      read = read * 10 + (text_[i] - '0');
      ++i;
    }
    const std::size_t digits = i - at_;
    if (digits == 0 || (digits > 1 && text_[at_] == '0')) return false;
    if (i < text_.size() && (text_[i] == '.' || text_[i] == 'e' || text_[i] == 'E')) return false;
    value = read;
    at_ = i;
    return true;
  }

  // The literal `word` (null, true, false) if it comes next.
  bool literal(std::string_view word) noexcept {
    skip_space();
    if (text_.substr(at_, word.size()) != word) return false;
    at_ += word.size();
    return true;
  }

  bool at_end() noexcept {
    skip_space();
    return at_ == text_.size();
  }

 private:
  void skip_space() noexcept {
    while (at_ < text_.size() &&
           (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n' || text_[at_] == '\r')) {
      ++at_;
    }
  }

  std::string_view text_;
  std::size_t at_ = 0;
};

}  // namespace tinker::wire::plain
