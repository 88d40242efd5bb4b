#include "client/sampling/submit.hpp"

#include "api/endpoints.hpp"
#include "client/sampling/report.hpp"
#include "client/session/telemetry_report.hpp"
#include "http/observer.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <tuple>
#include <utility>

namespace tinker::client::sampling {

using futures::settle_with;
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

// doc/sampling.md#sampling, doc/protocol.md#billing-pause-402: a 429, or a 402 inside the billing window, is a pacing
// signal, not an error.
bool is_backpressure(ClientHolder& holder, error_code ec) {
  if (ec == errc::rate_limited) return true;
  if (ec != errc::payment_required) return false;
  const auto max_pause = std::chrono::seconds(holder.config().billing_exception_max_pause_duration_sec);
  const auto now = holder.http().clock().now();
  if (!holder.billing().on_payment_required(now, max_pause)) return false;
  if (holder.billing().should_warn(now)) {
    holder.log(LogLevel::warning, "sampling is paused by a billing hold (HTTP 402); retrying");
  }
  return true;
}

asio::awaitable<void> sleep_for(std::chrono::milliseconds delay) {
  const asio::any_io_executor executor = co_await asio::this_coro::executor;
  asio::steady_timer timer(executor, delay);
  co_await timer.async_wait(asio::use_awaitable);
}

api::LayerTwoSettings attempt_settings(const SamplingState& s, const SampleOperation& op) {
  api::LayerTwoSettings l2 = s.holder->layer_two();
  l2.return_backpressure = true;
  l2.cost = op.cost;
  return l2;
}

// A backpressure answer met by an attempt (doc/sampling.md#backpressure-and-retries): the dispatch
// backs off, the retry is counted, and a watching observer hears of it, and of its end.
class BackpressureWatch {
 public:
  void note(const SamplingState& s, const SampleOperation& op, error_code ec) {
    s.holder->sample_dispatch().note_backpressure(op.estimated_bytes);
    s.holder->http().tally().note_retry();
    if (!s.holder->observer().watches_events()) return;
    pushed_back_ = ec;
    pushed_back_at_ = std::chrono::steady_clock::now();
    report_backpressure(*s.holder, ec, op.estimated_bytes);
  }
  void report_over(ClientHolder& holder) {
    if (pushed_back_) report_backpressure_over(holder, std::exchange(pushed_back_, {}), pushed_back_at_);
  }

 private:
  error_code pushed_back_;
  std::chrono::steady_clock::time_point pushed_back_at_{};
};

// Takes the ticket's request id (the future keeps its own copy; a resubmit writes a new one).
futures::PollRequest sample_poll_request(const SamplingState& s, const SampleOperation& op, UntypedAPIFuture& ticket) {
  futures::PollRequest poll(std::move(ticket.request_id), futures::FutureType::sample);
  poll.create_roundtrip =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - op.attempt_started);
  poll.protobuf_result = !s.holder->options().json_bulk_paths;
  poll.subject = futures::QueueSubject::sampling;
  poll.subject_view = s.sampling_session_id;  // the task holds the sampler's state
  return poll;
}

}  // namespace

// The seq_id, the throttles, then POST /asample (layer 2, no layer-1 retries), re-sent with the same
// seq_id after each backpressure answer (429, or 402 inside the billing window) once the shared
// backoff is over. A part of submit_sample's coroutine, not one of its own (a frame per sample); the
// coroutines it awaits are awaited only when they would wait.
asio::awaitable<error_code> submit_sample(const SamplingState& s, SampleOperation& op, TaskControl& control,
                                          UntypedAPIFuture& ticket, diagnostics& diag) {
  SampleRetryHandler& retry = *s.retry;
  SampleDispatch& dispatch = s.holder->sample_dispatch();
  for (;;) {
    if (op.layer_three && retry.stuck()) co_return retry.stuck_error(diag);
    ++op.attempts;
    op.attempt_started = std::chrono::steady_clock::now();
    error_code ec;
    {
      // The attempt runs inside the task: the stuck detector cancels the task through its
      // control, and a watch that turned stuck says why.
      SampleRetryHandler::Watch watch;
      if (op.layer_three) retry.watch(watch, control.signal);
      try {
        if (!s.holder->config_current())
          ec = co_await s.holder->ensure_config(diag);  // refreshes a JWT about to expire
        std::optional<DispatchPermit> permit;
        if (!ec) {
          op.request.seq_id = s.next_seq_id.fetch_add(1, std::memory_order_relaxed);
          if (std::optional<DispatchPermit> ready = dispatch.try_acquire(op.estimated_bytes)) {
            permit.emplace(std::move(*ready));
          } else {
            DispatchPermit waited = co_await dispatch.acquire(op.estimated_bytes);
            permit.emplace(std::move(waited));
          }
        }
        BackpressureWatch pushed_back;  // the 429 or 402 whose back-off this attempt waits out
        while (!ec) {
          if (dispatch.backoff_in_force()) co_await dispatch.wait_out_backoff();
          pushed_back.report_over(*s.holder);
          const api::LayerTwoSettings l2 = attempt_settings(s, op);
          ec = std::get<0>(co_await api::asample(s.holder->http(), op.request, ticket, diag, l2));
          if (!is_backpressure(*s.holder, ec)) break;
          pushed_back.note(s, op, std::exchange(ec, {}));  // then the same seq_id again
        }
      } catch (const boost::system::system_error&) {
        if (!watch.stuck()) throw;
      }
      if (watch.stuck()) co_return retry.stuck_error(diag);
    }
    if (!op.layer_three || !ec || !retry.retries_enabled() || !SampleRetryHandler::should_retry(ec)) co_return ec;
    const std::chrono::milliseconds delay = retry.retry_delay(op.attempts);
    if (s.holder->observer().watches_events()) report_sampling_retry(*s.holder, ec, diag, delay, op.attempts + 1);
    co_await sleep_for(delay);
    s.holder->http().tally().note_retry();
  }
}

namespace {

// The helpers below keep locals out of sample_until_done's frame: that frame (and the poll's)
// stays allocated for as long as a result is pending, so its size is heap per request.

// A sample that fails for good is a public call's failure (doc/protocol.md#telemetry).
void fail_sample(const SamplingState& s, FutureCore& core, error_code ec, diagnostics diag) {
  session::report_failure(*s.holder, ec, diag, /*session_end=*/true);
  core.set_error(ec, std::move(diag));
}

void fail_stuck(const SamplingState& s, FutureCore& core) {
  diagnostics diag;
  const error_code ec = s.retry->stuck_error(diag);
  fail_sample(s, core, ec, std::move(diag));
}

void settle_sample(const SamplingState& s, FutureCore& core, futures::PollOutcome& outcome,
                   const ResultDecoder& decode) {
  if (outcome.error) return fail_sample(s, core, outcome.error, std::move(outcome.diag));
  settle_with(core, outcome.error, std::move(outcome.diag), [&](ErasedResult& value, diagnostics& diag) {
    const error_code ec = decode(outcome.result, value, diag);
    if (ec) session::report_failure(*s.holder, ec, diag, /*session_end=*/true);
    return ec;
  });
}

// A fresh attempt after a lost result or a retryable failure; false when it failed (`core` is
// then settled with the error).
asio::awaitable<bool> resubmit(const SamplingState& s, SampleOperation& op, TaskControl& control,
                               UntypedAPIFuture& ticket, FutureCore& core, const futures::PollOutcome& lost) {
  const std::chrono::milliseconds delay = s.retry->retry_delay(op.attempts);
  if (s.holder->observer().watches_events()) {
    report_sampling_retry(*s.holder, lost.error, lost.diag, delay, op.attempts + 1);
  }
  co_await sleep_for(delay);
  s.holder->http().tally().note_retry();
  diagnostics diag;
  if (error_code ec = co_await submit_sample(s, op, control, ticket, diag)) {
    fail_sample(s, core, ec, std::move(diag));
    co_return false;
  }
  core.set_request_id(ticket.request_id);
  co_return true;
}

}  // namespace

// The poll runs inside this task (no coroutine of its own for the watch): the stuck detector
// cancels the whole task through its control, and a watch that turned stuck says why.
asio::awaitable<void> sample_until_done(const SamplingState& s, const std::shared_ptr<FutureCore>& core,
                                        TaskControl& control, SampleOperation& op, UntypedAPIFuture& ticket) {
  SampleRetryHandler& retry = *s.retry;
  for (;;) {
    // The deadline may have passed already: then the request is not polled.
    if (op.layer_three && retry.stuck()) co_return fail_stuck(s, *core);
    futures::PollOutcome outcome;
    {
      SampleRetryHandler::Watch watch;
      if (op.layer_three) retry.watch(watch, control.signal);
      futures::PollRequest poll = sample_poll_request(s, op, ticket);
      attach(poll, *s.holder, core);
      co_await futures::poll_future_into(s.holder->http(), poll, outcome);
      if (watch.stuck()) co_return fail_stuck(s, *core);
    }
    const bool again =
        op.layer_three && outcome.error && retry.retries_enabled() && SampleRetryHandler::should_retry(outcome.error);
    if (!again) {
      if (!outcome.error && op.layer_three) retry.note_progress();
      co_return settle_sample(s, *core, outcome, op.decode);
    }
    // doc/sampling.md#backpressure-and-retries: a lost result (410) or a retryable failure is a fresh attempt with a
    // new seq_id.
    if (!co_await resubmit(s, op, control, ticket, *core, outcome)) co_return;
  }
}

}  // namespace tinker::client::sampling
