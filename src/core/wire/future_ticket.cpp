#include "core/wire/future_ticket.hpp"

#include <cstdint>
#include <cstring>
#include <optional>

namespace tinker::wire {
namespace {

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
bool printable_without_backslash(std::string_view text) noexcept {
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

class PlainScanner {
 public:
  explicit PlainScanner(std::string_view text) : text_(text) {}

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

}  // namespace

bool read_plain_future_ticket(std::string_view text, UntypedAPIFuture& out) {
  PlainScanner scan(text);
  std::optional<std::string_view> request_id;
  std::optional<std::string_view> model_id;
  if (!scan.take('{')) return false;
  do {
    std::string_view key;
    std::string_view value;
    if (!scan.plain_string(key) || !scan.take(':') || !scan.plain_string(value)) return false;
    if (key == "request_id" && !request_id) {
      request_id = value;
    } else if (key == "model_id" && !model_id) {
      model_id = value;
    } else {
      return false;
    }
  } while (scan.take(','));
  if (!scan.take('}') || !scan.at_end() || !request_id) return false;
  out.request_id.assign(request_id->data(), request_id->size());
  if (model_id) {
    out.model_id.emplace(model_id->data(), model_id->size());
  } else {
    out.model_id.reset();
  }
  return true;
}

}  // namespace tinker::wire
