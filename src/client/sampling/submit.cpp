#include "client/sampling/submit.hpp"

#include "api/endpoints.hpp"
#include "client/sampling/report.hpp"
#include "http/clock.hpp"
#include "http/observer.hpp"

#include <tuple>
#include <utility>

namespace tinker::client::sampling {

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

api::CallRetrySettings attempt_settings(const SamplingState& s, const SampleOperation& op) {
  api::CallRetrySettings call_retry = s.holder->retry_call();
  call_retry.return_backpressure = true;
  call_retry.cost = op.cost;
  return call_retry;
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

}  // namespace

// The wait before a fresh attempt (submit.hpp), on the transport's clock like every other retry's (tests substitute a
// fake one). Cancellation throws, as the awaited timer it replaces did, so the stuck detector's catch sees it.
asio::awaitable<void> sleep_before_retry(const SamplingState& s, std::chrono::milliseconds delay) {
  if (const error_code ec = co_await http::sleep_for(s.holder->http().clock(), delay)) {
    throw boost::system::system_error(ec);
  }
}

// The seq_id, the throttles, then POST /asample (call retries, no transport retries), re-sent with the same
// seq_id after each backpressure answer (429, or 402 inside the billing window) once the shared
// backoff is over. The coroutines it awaits (config refresh, dispatch permit, backoff) are awaited
// only when they would wait, so the usual sample costs no frame beyond this one.
asio::awaitable<error_code> submit_sample(const SamplingState& s, SampleOperation& op, TaskControl& control,
                                          UntypedAPIFuture& ticket, diagnostics& diag) {
  SampleRetryHandler& retry = *s.retry;
  SampleDispatch& dispatch = s.holder->sample_dispatch();
  for (;;) {
    if (op.resubmit && retry.stuck()) co_return retry.stuck_error(diag);
    ++op.attempts;
    // Precise clock reads cost 80-200 ns on some VMs; the first attempt reuses the call's stamp.
    op.attempt_started = op.first_attempt_started ? *std::exchange(op.first_attempt_started, std::nullopt)
                                                  : std::chrono::steady_clock::now();
    error_code ec;
    {
      // The attempt runs inside the task: the stuck detector cancels the task through its
      // control, and a watch that turned stuck says why.
      SampleRetryHandler::Watch watch;
      if (op.resubmit) retry.watch(watch, control.signal);
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
          // Named, then moved: a temporary inside the co_await would be destroyed twice by GCC 12; asample takes it by
          // rvalue reference, so this frame holds one CallRetrySettings, not two (its size is heap per sample in
          // flight, and above 1000 bytes a frame leaves glibc's small bins: doc/performance.md#samplingclient).
          api::CallRetrySettings call_retry = attempt_settings(s, op);
          ec = std::get<0>(co_await api::asample(s.holder->http(), op.request, ticket, diag, std::move(call_retry)));
          if (!is_backpressure(*s.holder, ec)) break;
          pushed_back.note(s, op, std::exchange(ec, {}));  // then the same seq_id again
        }
      } catch (const boost::system::system_error&) {
        if (!watch.stuck()) throw;
      }
      if (watch.stuck()) co_return retry.stuck_error(diag);
    }
    if (!ec) op.ticket_arrived = std::chrono::steady_clock::now();
    if (!op.resubmit || !ec || !retry.retries_enabled() || !SampleRetryHandler::should_retry(ec)) co_return ec;
    const std::chrono::milliseconds delay = retry.retry_delay(op.attempts);
    if (s.holder->observer().watches_events()) report_sampling_retry(*s.holder, ec, diag, delay, op.attempts + 1);
    co_await sleep_before_retry(s, delay);
    s.holder->http().tally().note_retry();
  }
}

}  // namespace tinker::client::sampling
