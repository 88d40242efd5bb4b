// Small HTTP helpers of tinker-local's front end: dates, byte ranges, Retry-After headers and
// locale-free ASCII comparisons. Pure functions, unit-tested on their own.
#pragma once

#include "wire/json_writer.hpp"

#include <tinker/local/server.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tinker::local::front {

constexpr char ascii_lower(char c) noexcept {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

constexpr bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  }
  return true;
}

/// True if `haystack` contains `needle`, ignoring ASCII case.
bool icontains(std::string_view haystack, std::string_view needle) noexcept;

/// The media type of a Content-Type value, without parameters and surrounding blanks.
std::string_view media_type(std::string_view content_type) noexcept;

/// RFC 9110 IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT" (seconds truncated).
std::string http_date(std::chrono::system_clock::time_point t);

/// RFC 3339 UTC with exactly six fractional digits: "2026-08-08T12:00:00.123456Z".
std::string rfc3339_micros(std::chrono::system_clock::time_point t);

/// A response header as name and value.
using Header = std::pair<std::string, std::string>;

/// The Retry-After header a fault states in `form` (each form a client honours): "Retry-After: 2"
/// (seconds, a decimal fraction when not whole), "Retry-After: <HTTP-date>" (now + value, rounded
/// up to the next whole second so the client never retries early) or "retry-after-ms: 1500".
/// Nothing for RetryAfterForm::none.
void append_retry_after(RetryAfterForm form, std::chrono::milliseconds value, std::chrono::system_clock::time_point now,
                        std::vector<Header>& headers);

/// Seconds as the shortest decimal text: 2000 ms -> "2", 1500 ms -> "1.5", 250 ms -> "0.25".
std::string seconds_text(std::chrono::milliseconds value);

/// What a `Range` request header asks of a representation of `size` bytes. Only one range of
/// the "bytes" unit is honoured ("a-b", "a-", "-n"); anything else (other units, several ranges,
/// syntax errors) is ignored and the whole representation is served, as RFC 9110 allows.
class RangeRequest {
 public:
  enum class Kind { whole, partial, unsatisfiable };

  Kind kind = Kind::whole;
  std::uint64_t first = 0;  ///< for partial: first byte offset
  std::uint64_t last = 0;   ///< for partial: last byte offset, inclusive
};

RangeRequest parse_range(std::string_view header, std::uint64_t size);

/// Appends `text` as a JSON string literal (quotes included): the wire layer's escaper.
using wire::append_json_string;

}  // namespace tinker::local::front
