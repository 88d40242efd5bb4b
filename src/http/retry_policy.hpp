// Retry decisions and delays of the transport retries (doc/protocol.md#transport-retries) and
// the call retries (whole call, doc/protocol.md#call-retries). Pure functions: time and randomness come in
// as arguments so tests are exact.
#pragma once

#include "http/message.hpp"

#include <tinker/config.hpp>

#include <boost/system/error_code.hpp>

#include <chrono>
#include <optional>
#include <string_view>

namespace tinker::http {

// ---- Transport retries--------------------------------------------------------------------------------

/// The header `x-should-retry: true|false` (case-insensitive, trimmed) decides; otherwise
/// statuses 408, 409, 429 and >= 500 are retried. Pass an empty header when absent.
bool should_retry_status(int status, std::string_view x_should_retry_header) noexcept;

/// Whether the transport retries may try a failed attempt again: after a transport failure (no response,
/// status 0) only connection_failed and timeout are retried (a TLS error, a response over the
/// limits or a cancellation are final); after a response, should_retry_status decides.
bool transport_should_retry(boost::system::error_code ec, const Response& response) noexcept;

/// An HTTP-date (RFC 9110 5.6.7) in any of its three forms: IMF-fixdate
/// "Sun, 06 Nov 1994 08:49:37 GMT", RFC 850 "Sunday, 06-Nov-94 08:49:37 GMT" and asctime
/// "Sun Nov  6 08:49:37 1994". A two-digit RFC 850 year more than 50 years after `now`'s year
/// is taken from the previous century. nullopt when malformed.
std::optional<std::chrono::system_clock::time_point> parse_http_date(std::string_view text,
                                                                     std::chrono::system_clock::time_point now);
/// As above, relative to the current time.
std::optional<std::chrono::system_clock::time_point> parse_http_date(std::string_view text);

/// The server's retry hint: `retry-after-ms` (float milliseconds), else
/// `retry-after` as float seconds, else as an HTTP-date. The first header value that parses
/// decides (as in the Python SDK): the hint counts only if it lies in (0, max_hint], otherwise
/// the result is nullopt and the caller falls back to exponential back-off. Never throws.
std::optional<std::chrono::milliseconds> server_retry_hint(const Response& r, std::chrono::system_clock::time_point now,
                                                           std::chrono::milliseconds max_hint);

/// An exponential back-off schedule, shared by the transport retries and the download's status retries: before
/// retry number n (0 for the first), min(initial * 2^n, cap) * (1 - 0.25 * random_unit), where
/// random_unit lies in [0, 1) (0: no jitter). Jitter only shortens it.
class Backoff {
 public:
  /// `cap` defaults to no cap at all.
  explicit Backoff(std::chrono::milliseconds initial,
                   std::chrono::milliseconds cap = std::chrono::milliseconds::max()) noexcept
      : initial_(initial), cap_(cap) {}

  std::chrono::milliseconds delay(int retries_done, double random_unit) const noexcept;

 private:
  std::chrono::milliseconds initial_;
  std::chrono::milliseconds cap_;
};

/// The transport retries' back-off: Backoff(initial_delay, max_delay).
std::chrono::milliseconds backoff_delay(int retries_done, double random_unit, const RetryOptions& o);

/// The delay before the next transport attempt: the server hint of `response_or_null` if it has
/// a usable one, else backoff_delay. Pass nullptr after a transport failure.
std::chrono::milliseconds transport_retry_delay(const Response* response_or_null, int retries_done,
                                                std::chrono::system_clock::time_point now, double random_unit,
                                                const RetryOptions& o);

// ---- Call retries ---------------------------------------------------------------------------------

/// The call retries retry timeout, connection_failed, request_timeout, conflict, rate_limited and
/// server_error. Everything else is not: payment_required (402) has its own billing pause
/// (doc/protocol.md#billing-pause-402), cancelled is final, and codes of other categories are
/// never retried (the HTTP client maps every transport failure to a tinker::errc).
bool call_should_retry(boost::system::error_code ec) noexcept;

/// The sleep after a retryable failure, or nullopt when the call budget is spent.
/// `failures_so_far` is the 0-based index k of the failure just observed (0 after the first
/// failure, as Python's attempt_count); `elapsed` is the wall time since the first attempt.
/// Result: min(2^k s, call_max_delay), truncated so that elapsed + sleep <= call_budget.
std::optional<std::chrono::milliseconds> call_retry_delay(int failures_so_far, std::chrono::milliseconds elapsed,
                                                          const RetryOptions& o);

}  // namespace tinker::http
