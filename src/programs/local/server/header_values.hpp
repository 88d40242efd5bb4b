// The HTTP header values tinker-local's front end reads and writes: the media type of a
// Content-Type, a Range request and the Retry-After forms of a fault. Pure functions, unit-tested
// on their own. Header names and tokens compare case-insensitively with core's locale-free ASCII
// helpers (core/ascii.hpp), which the front end uses through this header.
#pragma once

#include "core/ascii.hpp"

#include <tinker/local/server.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tinker::local::front {

using ascii::icontains;
using ascii::iequals;

/// The media type of a Content-Type value, without parameters and surrounding blanks.
std::string_view media_type(std::string_view content_type) noexcept;

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

}  // namespace tinker::local::front
