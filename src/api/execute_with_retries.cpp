#include "api/execute_with_retries.hpp"

#include "http/headers.hpp"
#include "http/observer.hpp"
#include "http/retry_policy.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace tinker::api {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;

constexpr std::chrono::seconds billing_retry_delay{5};
constexpr std::chrono::seconds billing_incident_gap{300};
constexpr std::chrono::seconds billing_warning_interval{60};

}  // namespace

std::optional<milliseconds> BillingPause::on_payment_required(std::chrono::system_clock::time_point now,
                                                              std::chrono::seconds max_pause) {
  if (!incident_start_ || now - last_402_ > billing_incident_gap) {
    incident_start_ = now;
    last_warning_.reset();
  }
  last_402_ = now;
  if (now - *incident_start_ >= max_pause) return std::nullopt;
  return milliseconds(billing_retry_delay);
}

bool BillingPause::should_warn(std::chrono::system_clock::time_point now) {
  if (last_warning_ && now - *last_warning_ < billing_warning_interval) return false;
  last_warning_ = now;
  return true;
}

namespace {

bool is_unreadable(const boost::system::error_code& ec) {
  return ec == errc::decode_error || ec == errc::protocol_error;
}

// The warning for an answer that is sent for again: what was wrong, the server's request id.
std::string unreadable_line(const http::Request& request, const diagnostics& decode_diag, int unreadable,
                            milliseconds delay) {
  std::string line = request.path.str() + ": the answer could not be read (" + decode_diag.message + ")";
  if (!decode_diag.request_id.empty()) line += " (request id " + decode_diag.request_id + ")";
  line += "; sending the call again in " + std::to_string(delay.count()) + " ms (" + std::to_string(unreadable) +
          " of " + std::to_string(max_unreadable_answers) + ")";
  return line;
}

// doc/observability.md: the retry (and a 402's billing pause) as a line and events.
void report_call_retry(http::Observer& observer, const http::Request& request, const CallOutcome& outcome,
                       milliseconds delay, int attempt) {
  const boost::system::error_code ec = std::get<0>(outcome);
  const int status = std::get<1>(outcome).status;
  RetryScheduled event;
  event.layer = RetryLayer::call;
  const std::string path = observer.event_path(request.path);
  event.path = path;
  const std::string reason = observer.redact(http::failure_reason(status, ec, {}));
  event.reason = reason;
  event.status = status;
  event.delay = delay;
  event.attempt = attempt;
  observer.retry_scheduled(event);
  if (ec != errc::payment_required) return;
  BackoffStarted started;
  started.cause = BackoffCause::payment_required;
  started.layer = RetryLayer::call;
  started.path = event.path;
  started.delay = delay;
  observer.backoff_started(started);
}

void report_billing_pause_over(http::Observer& observer, const http::Request& request, milliseconds waited) {
  BackoffEnded ended;
  ended.cause = BackoffCause::payment_required;
  ended.layer = RetryLayer::call;
  const std::string path = observer.event_path(request.path);
  ended.path = path;
  ended.waited = waited;
  observer.backoff_ended(ended);
}

// The observer when it wants retries reported, else null.
http::Observer* event_observer(const http::HttpClient& client) noexcept {
  http::Observer* observer = client.observer();
  return observer != nullptr && observer->watches_events() ? observer : nullptr;
}

// What execute_with_retries does after an attempt: stop (its outcome is final), or send again
// after `delay`. Decided by a plain function, so that its locals are not in the coroutine's frame.
class Verdict {
 public:
  static Verdict done() { return Verdict(); }
  static Verdict again(milliseconds delay, http::Observer* billing_pause_observer) {
    Verdict verdict;
    verdict.finished = false;
    verdict.delay = delay;
    verdict.billing_pause_observer = billing_pause_observer;
    return verdict;
  }

  bool finished = true;
  milliseconds delay{0};
  http::Observer* billing_pause_observer = nullptr;  ///< told when a 402's pause is over
};

// The call retry's decision after one attempt (doc/protocol.md#call-retries): the answer accepted, or
// refused as unreadable (sent for again, a few times), or a failure retried after a delay, or the
// outcome final. `outcome` and `diag` are updated as the call's.
Verdict judge_attempt(http::HttpClient& client, const http::Request& request, diagnostics& diag,
                      const CallRetrySettings& settings, CallOutcome& outcome,
                      std::chrono::system_clock::time_point start, int& failures, int& unreadable) {
  boost::system::error_code ec = std::get<0>(outcome);
  if (!ec && settings.accept) {
    diagnostics decode_diag;
    ec = settings.accept(std::get<1>(outcome), decode_diag);
    if (ec && is_unreadable(ec) && unreadable < max_unreadable_answers) {
      const milliseconds delay = milliseconds(100) * (1 << unreadable++);
      if (settings.warn) settings.warn(unreadable_line(request, decode_diag, unreadable, delay));
      return Verdict::again(delay, nullptr);
    }
    if (ec) diag = std::move(decode_diag);
    std::get<0>(outcome) = ec;
    return Verdict::done();
  }
  if (!ec) diag.clear();  // details of an earlier, retried failure no longer apply
  if (!ec || ec == errc::cancelled) return Verdict::done();
  if (!settings.retry_failures) return Verdict::done();
  if (ec == errc::conflict && settings.conflict_is_final) return Verdict::done();
  const bool backpressure = ec == errc::rate_limited || ec == errc::payment_required;
  if (backpressure && settings.return_backpressure) return Verdict::done();

  std::optional<milliseconds> delay;
  http::Clock& clock = client.clock();
  if (ec == errc::payment_required && settings.billing != nullptr) {
    delay = settings.billing->on_payment_required(clock.now(), settings.billing_max_pause);  // no attempt used
  } else if (http::call_should_retry(ec)) {
    const auto elapsed = std::chrono::duration_cast<milliseconds>(clock.now() - start);
    delay = http::call_retry_delay(failures++, elapsed, client.options().retry);
  }
  if (!delay) return Verdict::done();
  http::Observer* const observer = event_observer(client);
  if (observer != nullptr) report_call_retry(*observer, request, outcome, *delay, failures + 1);
  return Verdict::again(*delay, ec == errc::payment_required ? observer : nullptr);
}

// One attempt: the settings' own, else one send with transport retries on the call's request (no copy, no co_spawn, no
// wrapper frame). Chosen here so that the coroutine has one co_await, and one awaited value in its
// frame, for both (a conditional expression inside the coroutine is what GCC 12 miscompiles).
asio::awaitable<CallOutcome> start_attempt(http::HttpClient& client, const http::Request& request, diagnostics& diag,
                                           const CallRetrySettings& settings) {
  if (settings.attempt) return settings.attempt(client, request, diag);
  return client.send(request, &diag);
}

void set_cancelled(CallOutcome& outcome) {
  outcome = CallOutcome{make_error_code(errc::cancelled), http::Response()};
}

}  // namespace

// One coroutine per call, holding one outcome: what does not suspend is in judge_attempt. The outcome is the
// attempt's own variable, initialised by the co_await (an outcome declared outside the loop and assigned from it
// would be a second CallOutcome in the frame: 1056 bytes, above glibc's small bins, where 1000 is under them;
// doc/performance.md#samplingclient).
asio::awaitable<CallOutcome> execute_with_retries(http::HttpClient& client, http::Request request, diagnostics& diag,
                                                  CallRetrySettings settings) {
  if (request.method != http::Method::get && request.idempotency_key.empty()) {
    static_assert(http::idempotency_key_size <= http::IdempotencyKey::capacity);
    http::write_idempotency_key(request.idempotency_key.overwrite(http::idempotency_key_size));
  }
  const auto start = client.clock().now();
  int failures = 0;
  int unreadable = 0;
  for (;;) {
    CallOutcome outcome = co_await start_attempt(client, request, diag, settings);
    const Verdict verdict = judge_attempt(client, request, diag, settings, outcome, start, failures, unreadable);
    if (verdict.finished) co_return std::move(outcome);
    const bool interrupted = static_cast<bool>(co_await http::sleep_for(client.clock(), verdict.delay));
    if (verdict.billing_pause_observer != nullptr) {
      report_billing_pause_over(*verdict.billing_pause_observer, request, verdict.delay);
    }
    if (interrupted) {
      set_cancelled(outcome);
      co_return std::move(outcome);
    }
    client.tally().note_retry();
  }
}

}  // namespace tinker::api
