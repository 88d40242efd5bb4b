#include "programs/local/server/header_values.hpp"

#include "programs/local/server/http_dates.hpp"

#include <charconv>
#include <optional>

namespace tinker::local::front {
namespace {

// RFC 9110's optional whitespace (OWS) around header values: spaces and tabs only.
constexpr bool is_optional_whitespace(char c) noexcept {
  return c == ' ' || c == '\t';
}

std::string_view trim_optional_whitespace(std::string_view s) noexcept {
  while (!s.empty() && is_optional_whitespace(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_optional_whitespace(s.back())) s.remove_suffix(1);
  return s;
}

// A non-empty run of decimal digits, all of `text`; nullopt otherwise (and on overflow).
std::optional<std::uint64_t> parse_digits(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::string_view media_type(std::string_view content_type) noexcept {
  return trim_optional_whitespace(content_type.substr(0, content_type.find(';')));
}

std::string seconds_text(std::chrono::milliseconds value) {
  const long long ms = value.count() < 0 ? 0 : value.count();
  std::string text = std::to_string(ms / 1000);
  const int fraction = static_cast<int>(ms % 1000);
  if (fraction != 0) {
    const char digits[3] = {static_cast<char>('0' + fraction / 100), static_cast<char>('0' + fraction / 10 % 10),
                            static_cast<char>('0' + fraction % 10)};
    std::string_view tail(digits, 3);
    while (!tail.empty() && tail.back() == '0') tail.remove_suffix(1);
    text += '.';
    text += tail;
  }
  return text;
}

void append_retry_after(RetryAfterForm form, std::chrono::milliseconds value, std::chrono::system_clock::time_point now,
                        std::vector<Header>& headers) {
  switch (form) {
    case RetryAfterForm::none: return;
    case RetryAfterForm::seconds: headers.emplace_back("Retry-After", seconds_text(value)); return;
    case RetryAfterForm::milliseconds:
      headers.emplace_back("retry-after-ms", std::to_string(value.count() < 0 ? 0 : value.count()));
      return;
    case RetryAfterForm::http_date: {
      // An HTTP-date has whole seconds: round the target up so the client never comes back early.
      const auto target = std::chrono::ceil<std::chrono::seconds>(now + value);
      headers.emplace_back("Retry-After", http_date(target));
      return;
    }
  }
}

RangeRequest parse_range(std::string_view header, std::uint64_t size) {
  RangeRequest whole;
  header = trim_optional_whitespace(header);
  constexpr std::string_view kUnit = "bytes=";
  if (header.size() < kUnit.size() || !iequals(header.substr(0, kUnit.size()), kUnit)) return whole;
  const std::string_view spec = trim_optional_whitespace(header.substr(kUnit.size()));
  if (spec.find(',') != std::string_view::npos) return whole;  // several ranges: serve it all
  const std::size_t dash = spec.find('-');
  if (dash == std::string_view::npos) return whole;
  const std::string_view first_text = trim_optional_whitespace(spec.substr(0, dash));
  const std::string_view last_text = trim_optional_whitespace(spec.substr(dash + 1));

  RangeRequest range;
  range.kind = RangeRequest::Kind::partial;
  if (first_text.empty()) {  // "-n": the last n bytes
    const auto suffix = parse_digits(last_text);
    if (!suffix) return whole;
    if (*suffix == 0 || size == 0) {
      range.kind = RangeRequest::Kind::unsatisfiable;
      return range;
    }
    range.first = *suffix >= size ? 0 : size - *suffix;
    range.last = size - 1;
    return range;
  }
  const auto first = parse_digits(first_text);
  if (!first) return whole;
  std::uint64_t last = size == 0 ? 0 : size - 1;
  if (!last_text.empty()) {
    const auto parsed = parse_digits(last_text);
    if (!parsed || *parsed < *first) return whole;  // syntactically invalid: ignore the header
    if (*parsed < last) last = *parsed;
  }
  if (*first >= size) {
    range.kind = RangeRequest::Kind::unsatisfiable;
    return range;
  }
  range.first = *first;
  range.last = last;
  return range;
}

}  // namespace tinker::local::front
