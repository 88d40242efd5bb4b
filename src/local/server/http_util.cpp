#include "local/server/http_util.hpp"

#include <charconv>
#include <cstdio>
#include <optional>

namespace tinker::local::front {
namespace {

using std::chrono::days;
using std::chrono::system_clock;

constexpr bool is_blank(char c) noexcept {
  return c == ' ' || c == '\t';
}

std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
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

bool icontains(std::string_view haystack, std::string_view needle) noexcept {
  if (needle.size() > haystack.size()) return false;
  for (std::size_t i = 0; i + needle.size() <= haystack.size(); ++i) {
    if (iequals(haystack.substr(i, needle.size()), needle)) return true;
  }
  return false;
}

std::string_view media_type(std::string_view content_type) noexcept {
  return trim(content_type.substr(0, content_type.find(';')));
}

std::string http_date(system_clock::time_point t) {
  static constexpr const char* kWeekdays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const auto seconds = std::chrono::floor<std::chrono::seconds>(t);
  const auto day = std::chrono::floor<days>(seconds);
  const std::chrono::year_month_day date{day};
  const std::chrono::hh_mm_ss<std::chrono::seconds> time{seconds - day};
  const std::chrono::weekday weekday{day};
  char buf[40];
  const int n = std::snprintf(buf, sizeof buf, "%s, %02u %s %04d %02d:%02d:%02d GMT", kWeekdays[weekday.c_encoding()],
                              static_cast<unsigned>(date.day()), kMonths[static_cast<unsigned>(date.month()) - 1],
                              static_cast<int>(date.year()), static_cast<int>(time.hours().count()),
                              static_cast<int>(time.minutes().count()), static_cast<int>(time.seconds().count()));
  return std::string(buf, static_cast<std::size_t>(n));
}

std::string rfc3339_micros(system_clock::time_point t) {
  const auto micros = std::chrono::floor<std::chrono::microseconds>(t);
  const auto day = std::chrono::floor<days>(micros);
  const std::chrono::year_month_day date{day};
  const std::chrono::hh_mm_ss<std::chrono::microseconds> time{micros - day};
  char buf[48];
  const int n =
      std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%06lldZ", static_cast<int>(date.year()),
                    static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                    static_cast<int>(time.hours().count()), static_cast<int>(time.minutes().count()),
                    static_cast<int>(time.seconds().count()), static_cast<long long>(time.subseconds().count()));
  return std::string(buf, static_cast<std::size_t>(n));
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

void append_retry_after(RetryAfterForm form, std::chrono::milliseconds value, system_clock::time_point now,
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
  header = trim(header);
  constexpr std::string_view kUnit = "bytes=";
  if (header.size() < kUnit.size() || !iequals(header.substr(0, kUnit.size()), kUnit)) return whole;
  const std::string_view spec = trim(header.substr(kUnit.size()));
  if (spec.find(',') != std::string_view::npos) return whole;  // several ranges: serve it all
  const std::size_t dash = spec.find('-');
  if (dash == std::string_view::npos) return whole;
  const std::string_view first_text = trim(spec.substr(0, dash));
  const std::string_view last_text = trim(spec.substr(dash + 1));

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
