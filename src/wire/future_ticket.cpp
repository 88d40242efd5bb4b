#include "wire/future_ticket.hpp"

#include <optional>

namespace tinker::wire {
namespace {

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

  // A string of printable ASCII other than '"' and '\\' (so the text is exactly its value).
  bool plain_string(std::string_view& value) noexcept {
    if (!take('"')) return false;
    const std::size_t start = at_;
    for (; at_ < text_.size(); ++at_) {
      const auto c = static_cast<unsigned char>(text_[at_]);
      if (c == '"') {
        value = text_.substr(start, at_ - start);
        ++at_;
        return true;
      }
      if (c < 0x20 || c >= 0x7f || c == '\\') return false;
    }
    return false;
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
