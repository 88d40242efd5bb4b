// Call retries (doc/protocol.md#call-retries): the SDK wrapper around most submits. It re-sends a whole call (each
// attempt has transport retries inside) while failures are retryable and the 300 s budget lasts,
// and pauses silently on HTTP 402 inside the billing window (doc/protocol.md#billing-pause-402).
//
// Deliberately stricter than the Python SDK: every attempt of the logical call, in both layers,
// carries the same idempotency key, so a server can deduplicate a call that succeeded but whose
// answer was lost.
#pragma once

#include "api/operation_cost.hpp"
#include "http/client.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <string_view>
#include <tuple>

namespace tinker::api {

/// Billing-pause state of one client holder (doc/protocol.md#billing-pause-402).
class BillingPause {
 public:
  BillingPause() = default;

  /// Called on every 402. Returns the pause (5 s) while inside the incident's window, or
  /// nothing once the window is over (the 402 is then a normal error). An incident starts at
  /// the first 402 and is over when the last one is more than 300 s old.
  std::optional<std::chrono::milliseconds> on_payment_required(std::chrono::system_clock::time_point now,
                                                               std::chrono::seconds max_pause);
  /// True at most once a minute during an incident (for the warning log line).
  bool should_warn(std::chrono::system_clock::time_point now);

 private:
  std::optional<std::chrono::system_clock::time_point> incident_start_;
  std::chrono::system_clock::time_point last_402_{};
  std::optional<std::chrono::system_clock::time_point> last_warning_;
};

using CallOutcome = std::tuple<boost::system::error_code, http::Response>;

/// One attempt of a retried call; the default sends the request once (with transport retries inside).
using Attempt =
    std::function<boost::asio::awaitable<CallOutcome>(http::HttpClient&, const http::Request&, diagnostics&)>;

class CallRetrySettings {
 public:
  CallRetrySettings() = default;
  std::chrono::seconds billing_max_pause{3600};  ///< server flag billing_exception_max_pause_duration_sec
  BillingPause* billing = nullptr;               ///< shared per holder; null = 402 is fatal
  /// A 409 is the answer, not a reason to retry (checkpoint publish/unpublish, doc/rest.md#calls).
  bool conflict_is_final = false;
  /// Replaces the single send of each attempt (the archive URL's 503 loop, doc/rest.md#checkpoint-downloads).
  Attempt attempt;
  /// The sampling submit (doc/sampling.md#sampling) paces itself on backpressure: a 429 and a 402 come back
  /// to the caller at once instead of being retried or paused here.
  bool return_backpressure = false;
  /// False: failed attempts are not sent again here (a transport-retry-only call); unreadable answers
  /// still are (see `accept`).
  bool retry_failures = true;
  /// Decodes a successful answer. When it fails with decode_error or protocol_error (a body cut
  /// short or garbled on the way), the call is sent again with the same idempotency key, at most
  /// max_unreadable_answers times, waiting 100 ms, 200 ms, ... in between (doc/protocol.md#call-retries).
  std::function<boost::system::error_code(const http::Response&, diagnostics&)> accept;
  /// Hears a line for each answer sent again because it was unreadable (the holder's log, warning).
  std::function<void(std::string_view)> warn;
  /// Where the call's body encoding is recorded (tinker::FutureStatus::encode_time); null: nowhere.
  OperationCost* cost = nullptr;
};

/// How many unreadable answers in a row a call is sent again after.
inline constexpr int max_unreadable_answers = 3;

/// Sends `request` through `client` with call retries. `diag` receives the details of the
/// final failure. The request's idempotency key is fixed before the first attempt.
boost::asio::awaitable<CallOutcome> execute_with_retries(http::HttpClient& client, http::Request request,
                                                         diagnostics& diag, CallRetrySettings settings);

}  // namespace tinker::api
