/// \file
/// Typed events for metrics and tracing (`doc/observability.md`): set
/// ServiceClientOptions::on_event to receive what the SDK does on the wire, when it retries or
/// backs off, how futures progress and when the session heartbeat fails.
///
/// The hook is called on the client's io thread, synchronously, while the SDK is in the middle
/// of its work: keep it short and never block in it. An exception it throws is swallowed. The
/// `std::string_view` members point into the SDK's own buffers and are valid during the call
/// only: copy what you keep. No event carries a credential: paths come without their query
/// string and texts are redacted.
#pragma once

#include <tinker/types/futures.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string_view>
#include <variant>

namespace tinker {

/// One HTTP exchange ended: an answer arrived, or the connection failed before one did.
/// There is one per attempt, so a call retried twice makes three.
class RequestFinished {
 public:
  RequestFinished() = default;
  std::string_view method;                ///< "GET", "POST", ...
  std::string_view path;                  ///< the request's path, without the query string
  int status = 0;                         ///< HTTP status; 0 when no answer arrived (see `error`)
  std::string_view error;                 ///< empty when an answer arrived; else why not ("connection refused", ...)
  std::chrono::microseconds duration{0};  ///< from taking a connection to the end of the answer
  int attempt = 1;                        ///< transport-layer attempt of this call, 1 = first
  std::size_t bytes_sent = 0;             ///< request body bytes, as sent (after compression)
  std::size_t bytes_received = 0;         ///< response body bytes
  std::string_view request_id;            ///< the server's x-request-id; empty when it sent none
};

/// Which retry layer of `doc/protocol.md#retries` decided to send again.
enum class RetryLayer {
  transport,    ///< transport retry: the same request again (connection failures, 5xx, 408, 429)
  call,         ///< call retry: the whole call again, within its time budget
  sampling,     ///< sample resubmission: a fresh sampling attempt (new seq_id)
  future_poll,  ///< future polling: retrieve_future again after a failed or unreadable poll
};
/// "transport", "call", "sampling" or "future_poll".
const char* to_string(RetryLayer layer) noexcept;

/// A failed attempt will be sent again after `delay`.
class RetryScheduled {
 public:
  RetryScheduled() = default;
  RetryLayer layer = RetryLayer::transport;  ///< which retry layer sends it again
  std::string_view path;                     ///< the request's path, without the query string
  std::string_view reason;                   ///< "HTTP 503 (server error)", "timeout: ...", ... (redacted)
  int status = 0;                            ///< HTTP status of the failed attempt; 0 without an answer
  std::chrono::milliseconds delay{0};        ///< the wait before the next attempt
  int attempt = 1;                           ///< the attempt that comes next, 2 = first retry
};

/// Why the SDK holds requests back.
enum class BackoffCause {
  rate_limited,      ///< HTTP 429
  payment_required,  ///< HTTP 402 inside the billing window (`doc/protocol.md#billing-pause-402`)
};
/// "rate_limited" or "payment_required".
const char* to_string(BackoffCause cause) noexcept;

/// The SDK starts waiting because the server pushed back. For sampling, every SamplingClient
/// with the same key waits out the same back-off (`doc/sampling.md#backpressure-and-retries`).
class BackoffStarted {
 public:
  BackoffStarted() = default;
  BackoffCause cause = BackoffCause::rate_limited;  ///< why it waits
  RetryLayer layer = RetryLayer::transport;         ///< whose wait it is
  std::string_view path;                            ///< the request that was pushed back
  std::chrono::milliseconds delay{0};               ///< the planned wait
};

/// The wait of the BackoffStarted with the same path and layer is over; requests go out again.
class BackoffEnded {
 public:
  BackoffEnded() = default;
  BackoffCause cause = BackoffCause::rate_limited;  ///< as in the BackoffStarted
  RetryLayer layer = RetryLayer::transport;         ///< as in the BackoffStarted
  std::string_view path;                            ///< as in the BackoffStarted
  std::chrono::milliseconds waited{0};              ///< how long it actually waited
};

/// Where a future stands, as far as the client knows.
enum class FutureState {
  waiting,   ///< being polled; queued or running on the server (queue state `active`)
  paused,    ///< the server's queue holds it back (`paused_rate_limit`, `paused_capacity`)
  complete,  ///< its result arrived
  failed,    ///< it ended with an error (including cancellation)
};
/// "waiting", "paused", "complete" or "failed".
const char* to_string(FutureState state) noexcept;

/// A future moved to another state (its first poll makes it `waiting`).
class FutureStateChanged {
 public:
  FutureStateChanged() = default;
  std::string_view request_id;                  ///< the future's id (UntypedAPIFuture::request_id)
  std::string_view operation;                   ///< "Sample", "ForwardBackward", ... (X-Tinker-Request-Type)
  FutureState state = FutureState::waiting;     ///< the state it moved to
  QueueState queue_state = QueueState::active;  ///< the last queue state the server reported
  std::string_view queue_state_reason;          ///< as the server gave it; may be empty
  std::chrono::milliseconds waited{0};          ///< since polling began
  std::string_view error;                       ///< for `failed`: the error class ("timeout", ...)
};

/// A session heartbeat failed (`doc/protocol.md#endpoints`); one event per failed heartbeat.
class HeartbeatFailing {
 public:
  HeartbeatFailing() = default;
  std::string_view session_id;               ///< the session whose heartbeat failed
  std::chrono::milliseconds failing_for{0};  ///< since the last heartbeat that succeeded
  std::string_view reason;                   ///< why this one failed (redacted)
  /// True once failures have lasted long enough for a warning (the server ends the session if
  /// they continue).
  bool warning = false;
};

/// Any of the events above.
using Event =
    std::variant<RequestFinished, RetryScheduled, BackoffStarted, BackoffEnded, FutureStateChanged, HeartbeatFailing>;

/// Receives every event of a ServiceClient and the clients it made, on the client's io thread.
using EventHook = std::function<void(const Event& event)>;

}  // namespace tinker
