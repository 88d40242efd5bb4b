// Retry-After in every form a server can send: `retry-after-ms` (float milliseconds), `retry-after`
// as float seconds or as an HTTP-date (IMF-fixdate, RFC 850, asctime), and both headers at once. The
// first byte chooses: 0 retry-after-ms, 1 retry-after, 2 both ("<ms value>\n<retry-after value>"),
// 3 parse_http_date alone. Besides the sanitizers: a hint is always in (0, max_retry_after], and the
// transport-retry delay it produces is never negative nor above the larger of the two caps.
#include "fuzz_support.hpp"

#include "http/message.hpp"
#include "http/retry_policy.hpp"

#include <tinker/config.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace tinker::fuzz {
namespace {

using namespace std::chrono;

// A fixed "now" (2025-06-01T12:00:00Z) keeps every run of an input the same.
const system_clock::time_point kNow = sys_days{year{2025} / June / 1} + hours{12};

void check_hint(const http::Response& response) {
  const RetryOptions options;
  const auto hint = http::server_retry_hint(response, kNow, options.max_retry_after);
  if (hint && (*hint <= milliseconds::zero() || *hint > options.max_retry_after)) {
    property_failed("a Retry-After hint outside (0, max_retry_after]");
  }
  const milliseconds delay = http::transport_retry_delay(&response, 3, kNow, 0.5, options);
  if (delay < milliseconds::zero() || delay > std::max(options.max_delay, options.max_retry_after)) {
    property_failed("a transport-retry delay outside [0, max(max_delay, max_retry_after)]");
  }
}

http::Response with_headers(std::string_view ms, std::string_view seconds_or_date) {
  http::Response response;
  response.status = 429;
  if (!ms.empty()) response.headers.emplace_back("retry-after-ms", std::string(ms));
  if (!seconds_or_date.empty()) response.headers.emplace_back("retry-after", std::string(seconds_or_date));
  return response;
}

}  // namespace
}  // namespace tinker::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tinker::fuzz;
  const Selected input(data, size, 4);
  const std::string_view text = input.rest();
  switch (input.choice()) {
    case 0: check_hint(with_headers(text, {})); break;
    case 1: check_hint(with_headers({}, text)); break;
    case 2: {
      const std::size_t newline = text.find('\n');
      const std::string_view after = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
      check_hint(with_headers(text.substr(0, newline), after));
      break;
    }
    default: (void)tinker::http::parse_http_date(text, kNow); break;
  }
  return 0;
}
