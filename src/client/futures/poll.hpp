// Future polling (doc/protocol.md#future-polling, doc/protocol.md#futures): the retrieve_future poll loop behind
// every future, and the combination of several futures into one (doc/protocol.md#futures).
//
// Runs on the client's io thread as a coroutine. Each poll is
//   POST /api/v1/retrieve_future  {"request_id": "<id>", "allow_metadata_only": true|false}
// on the futures pool, with no transport retries, a 45 s read timeout (doc/protocol.md#pools-timeouts-and-throttles)
// and the headers X-Tinker-Request-Iteration (0, 1, ...), X-Tinker-Request-Type, X-Tinker-Create-Promise-
// Roundtrip-Time (iteration 0 only), and Accept: application/x-protobuf for protobuf results.
//
// What each answer does (doc/protocol.md#futures, in order):
//   200 protobuf                      -> result
//   200 {"type":"try_again",...}      -> queue state noted, poll again at once
//   200 {"status":"complete_metadata"} -> poll again at once with allow_metadata_only=false
//                                        (a second one is errc::protocol_error)
//   200 {"error", "category"}         -> errc::request_failed, category in diagnostics
//   200 other JSON                    -> result (the typed decoders of api/response.hpp judge it)
//   408                               -> not ready: queue state from a JSON body, poll again at once
//   5xx                               -> poll again at once
//   429, connection failure, timeout  -> sleep min(2^c, 30) s (c counts these in a row), poll again.
//                                        Retry-After is ignored here (doc/protocol.md#headers: only the transport
//                                        retries read it)
//   410                               -> errc::gone: the result is lost (PollOutcome::expired)
//   400                               -> poll again at once, at most 3 times in a row (a 408 with a
//                                        JSON body resets the count), then errc::bad_request
//   402                               -> billing pause (doc/protocol.md#billing-pause-402) when PollRequest::billing is
//   set anything else                     -> fatal, with the status's error code
// Choices: src/http does not turn a bare 400 into a connection error as the Python pool does
// (doc/protocol.md#pools-timeouts-and-throttles), so a bare 400 is treated like any 400. A TLS failure is fatal rather
// than retried forever. A 200 body that is neither protobuf nor a JSON object is errc::decode_error.
#pragma once

#include "api/execute_with_retries.hpp"
#include "client/async/byte_budget.hpp"
#include "client/futures/poll_answer.hpp"
#include "http/client.hpp"

#include <tinker/error.hpp>
#include <tinker/types/futures.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tinker::client::futures {

using TimePoint = std::chrono::system_clock::time_point;

/// What the poll loop knows about its future, shared with the user-facing future so it can
/// answer "how long have I waited, and why" (read it on the io thread only).
class PollProgress {
 public:
  PollProgress() = default;

  /// Choice: a future counts as `active` until the server says otherwise.
  QueueState queue_state = QueueState::active;
  std::optional<std::string> queue_state_reason;
  /// When waiting began (the client clock); the loop sets it on start if left at the epoch, so
  /// a caller may preset the submit time instead.
  TimePoint started{};
  std::int64_t polls_sent = 0;
  /// The payload size a complete_metadata answer announced (for the response-byte budget).
  std::optional<std::int64_t> payload_size;

  std::chrono::milliseconds waited(TimePoint now) const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(now - started);
  }
};

/// One change of a future's queue state.
class QueueStateReport {
 public:
  QueueStateReport() = default;
  QueueStateReport(QueueState state_, std::optional<std::string> reason_, std::chrono::milliseconds waited_)
      : state(state_), reason(std::move(reason_)), waited(waited_) {}

  QueueState state = QueueState::active;
  std::optional<std::string> reason;  ///< as the server gave it
  std::chrono::milliseconds waited{0};

  friend bool operator==(const QueueStateReport&, const QueueStateReport&) = default;
};

/// Called on the io thread whenever (queue_state, reason) changes. Answers whose state is
/// unknown and that carry no reason are ignored (doc/protocol.md#futures).
using QueueStateObserver = std::function<void(const QueueStateReport&)>;
/// Receives the paused-queue warning (doc/protocol.md#futures): never for `active`, at most once a minute per
/// future. The SDK has no logger yet; the client layer routes this to its log.
using WarningSink = std::function<void(const std::string&)>;

class PollRequest {
 public:
  PollRequest() = default;
  PollRequest(std::string request_id_, FutureType type_)
      : request_id(std::move(request_id_)), type(type_), protobuf_result(has_protobuf_result(type_)) {}

  std::string request_id;  ///< from the ticket (doc/protocol.md#futures)
  FutureType type = FutureType::create_model;
  /// Send Accept: application/x-protobuf (defaults from `type`).
  bool protobuf_result = false;
  /// From the start of the submit to the ticket (X-Tinker-Create-Promise-Roundtrip-Time).
  std::chrono::microseconds create_roundtrip{0};
  /// Give up with errc::timeout at this time of the client's clock. The public future passes
  /// none (doc/protocol.md#futures: its result(timeout) bounds only the caller's wait).
  std::optional<TimePoint> deadline;

  QueueStateObserver on_queue_state;
  WarningSink warn;
  QueueSubject subject = QueueSubject::training;
  std::string subject_id;  ///< model id, base model or sampler id for the warning text
  /// Instead of subject_id, a view of an id that outlives the poll (the sampler's, which the
  /// sample's task holds): no copy per sample.
  std::string_view subject_view;
  std::string_view subject_text() const noexcept { return subject_view.empty() ? subject_id : subject_view; }
  /// Shared with the user-facing future; the loop makes its own when empty.
  std::shared_ptr<PollProgress> progress;

  /// The in-flight response budget (doc/protocol.md#pools-timeouts-and-throttles): a complete_metadata answer reserves
  /// the announced size in it before the payload is fetched; the reservation is held by the outcome until the caller
  /// has decoded the result. Null = no budget.
  async::ByteBudget* response_budget = nullptr;

  /// Billing pause state of the client holder (doc/protocol.md#billing-pause-402); null = a 402 is fatal.
  api::BillingPause* billing = nullptr;
  std::chrono::seconds billing_max_pause{3600};

  /// Hears the future's state changes, its retried polls and 429 waits (doc/observability.md); null: nobody.
  /// Set only when it listens (Observer::watches_events), so an unobserved poll tests one pointer.
  http::Observer* observer = nullptr;
};

class PollOutcome {
 public:
  PollOutcome() = default;

  /// Empty on success. errc::cancelled when the awaiting coroutine was cancelled, errc::timeout
  /// when the deadline passed, errc::gone on 410, errc::request_failed for a failed operation.
  boost::system::error_code error;
  /// For failures: HTTP status, message, category; request_id is the future's (or the server's
  /// x-request-id when it sent one, with the future's id in the message).
  diagnostics diag;
  /// On success: the final answer (status, content type, body) for api::decode_json_response /
  /// api::decode_protobuf_response.
  http::Response result;

  /// HTTP 410: the server lost the result. Sampling may resubmit the original request; a
  /// training operation must fail (it may have run, and must never run twice).
  bool expired() const noexcept { return error == errc::gone; }

  /// The response-budget bytes held for this result (released when the last copy goes).
  std::shared_ptr<async::BudgetReservation> reservation;
};

/// The body of one poll: {"request_id":"<id>","allow_metadata_only":true|false}, replacing
/// `body`'s text (its capacity is kept). Throws tinker::error if the id is not UTF-8.
void write_poll_body(std::string& body, std::string_view request_id, bool allow_metadata_only);

/// Polls one future to its end. Never throws; cancellation through the awaiting coroutine's
/// cancellation slot (terminal or partial) ends it promptly with errc::cancelled and closes
/// the connection of a poll in flight. `client` must outlive the operation.
boost::asio::awaitable<PollOutcome> poll_future(http::HttpClient& client, PollRequest request);

/// The same, with the request and the outcome in the caller's frame (both must outlive the
/// awaitable): for a caller that awaits a poll per request it serves (the sampler), whose frame
/// would otherwise hold a second outcome, and the poll's frame a copy of each.
boost::asio::awaitable<void> poll_future_into(http::HttpClient& client, PollRequest& request, PollOutcome& outcome);

/// The outcome of several futures awaited together.
class CombinedOutcome {
 public:
  CombinedOutcome() = default;

  /// The first failure to arrive (the other polls were then cancelled), else empty.
  boost::system::error_code error;
  diagnostics diag;
  std::size_t failed_index = 0;  ///< which request failed, when `error` is set
  /// One result per request, in request order; complete only when `error` is empty.
  std::vector<http::Response> results;
};

/// Polls all `requests` concurrently (doc/protocol.md#futures: chunked forward_backward). The first failure
/// wins and cancels the others; cancelling the caller cancels all. Returns only after every
/// poll has ended, so nothing outlives the call.
boost::asio::awaitable<CombinedOutcome> poll_all(http::HttpClient& client, std::vector<PollRequest> requests);

}  // namespace tinker::client::futures
