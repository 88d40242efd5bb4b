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
  std::string line = request.path + ": the answer could not be read (" + decode_diag.message + ")";
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

}  // namespace

asio::awaitable<CallOutcome> execute_with_retries(http::HttpClient& client, http::Request request, diagnostics& diag,
                                                  LayerTwoSettings settings) {
  if (request.method != http::Method::get && request.idempotency_key.empty()) {
    request.idempotency_key = http::new_idempotency_key();
  }
  http::Clock& clock = client.clock();
  const RetryOptions& retry = client.options().retry;
  const auto start = clock.now();
  int failures = 0;
  int unreadable = 0;
  for (;;) {
    CallOutcome outcome;
    if (settings.attempt) {
      outcome = co_await settings.attempt(client, request, diag);
    } else {
      // Inside this coroutine, on its request (no copy, no co_spawn, no wrapper frame).
      outcome = co_await client.send(request, &diag);
    }
    boost::system::error_code ec = std::get<0>(outcome);
    if (!ec && settings.accept) {
      diagnostics decode_diag;
      ec = settings.accept(std::get<1>(outcome), decode_diag);
      if (ec && is_unreadable(ec) && unreadable < max_unreadable_answers) {
        const milliseconds delay = milliseconds(100) * (1 << unreadable++);
        if (settings.warn) settings.warn(unreadable_line(request, decode_diag, unreadable, delay));
        if (co_await http::sleep_for(clock, delay)) co_return CallOutcome{make_error_code(errc::cancelled), {}};
        client.tally().note_retry();
        continue;
      }
      if (ec) diag = std::move(decode_diag);
      co_return CallOutcome{ec, std::move(std::get<1>(outcome))};
    }
    if (!ec) diag.clear();  // details of an earlier, retried failure no longer apply
    if (!ec || ec == errc::cancelled) co_return outcome;
    if (!settings.retry_failures) co_return outcome;
    if (ec == errc::conflict && settings.conflict_is_final) co_return outcome;
    const bool backpressure = ec == errc::rate_limited || ec == errc::payment_required;
    if (backpressure && settings.return_backpressure) co_return outcome;

    std::optional<milliseconds> delay;
    if (ec == errc::payment_required && settings.billing != nullptr) {
      delay = settings.billing->on_payment_required(clock.now(), settings.billing_max_pause);  // no attempt used
    } else if (http::layer2_should_retry(ec)) {
      const auto elapsed = std::chrono::duration_cast<milliseconds>(clock.now() - start);
      delay = http::layer2_delay(failures++, elapsed, retry);
    }
    if (!delay) co_return outcome;
    http::Observer* const observer = event_observer(client);
    if (observer != nullptr) report_call_retry(*observer, request, outcome, *delay, failures + 1);
    const auto sleep_error = co_await http::sleep_for(clock, *delay);
    if (observer != nullptr && ec == errc::payment_required) report_billing_pause_over(*observer, request, *delay);
    if (sleep_error) co_return CallOutcome{make_error_code(errc::cancelled), http::Response()};
    client.tally().note_retry();
  }
}

}  // namespace tinker::api
