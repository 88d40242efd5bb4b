// The wait for an accepted sample's result (doc/sampling.md#backpressure-and-retries,
// doc/protocol.md#sample-resubmission): the poll of its ticket, and the fresh attempt (submit.cpp)
// that replaces a lost result (410) or a retryable failure.
#include "client/sampling/wait.hpp"

#include "client/sampling/report.hpp"
#include "client/session/telemetry_report.hpp"
#include "http/observer.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/deferred.hpp>

#include <utility>

namespace tinker::client::sampling {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {

// Takes the ticket's request id (the future keeps its own copy; a resubmit writes a new one).
futures::PollRequest sample_poll_request(const SamplingState& s, const SampleOperation& op, UntypedAPIFuture& ticket) {
  futures::PollRequest poll(std::move(ticket.request_id), futures::FutureType::sample);
  poll.create_roundtrip = std::chrono::duration_cast<std::chrono::microseconds>(op.ticket_arrived - op.attempt_started);
  poll.protobuf_result = !s.holder->options().json_bulk_paths;
  poll.subject = futures::QueueSubject::sampling;
  poll.subject_view = s.sampling_session_id;  // the task holds the sampler's state
  return poll;
}

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

// `settled_at` is when the answer arrived (the stamp of the sampler's progress, one clock read for both).
void settle_sample(const SamplingState& s, FutureCore& core, futures::PollOutcome& outcome, const ResultDecoder& decode,
                   FutureCore::Clock::time_point settled_at) {
  if (outcome.error) return fail_sample(s, core, outcome.error, std::move(outcome.diag));
  const auto decode_answer = [&](ErasedResult& value, diagnostics& diag) {
    const error_code ec = decode(outcome.result, value, diag);
    if (ec) session::report_failure(*s.holder, ec, diag, /*session_end=*/true);
    return ec;
  };
  futures::settle_with(core, outcome.error, std::move(outcome.diag), decode_answer, settled_at);
}

// A fresh attempt after a lost result or a retryable failure; false when it failed (`core` is
// then settled with the error).
asio::awaitable<bool> resubmit(const SamplingState& s, SampleOperation& op, TaskControl& control,
                               UntypedAPIFuture& ticket, FutureCore& core, const futures::PollOutcome& lost) {
  const std::chrono::milliseconds delay = s.retry->retry_delay(op.attempts);
  if (s.holder->observer().watches_events()) {
    report_sampling_retry(*s.holder, lost.error, lost.diag, delay, op.attempts + 1);
  }
  co_await sleep_before_retry(s, delay);
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
    if (op.resubmit && retry.stuck()) co_return fail_stuck(s, *core);
    futures::PollOutcome outcome;
    {
      SampleRetryHandler::Watch watch;
      if (op.resubmit) retry.watch(watch, control.signal);
      futures::PollRequest poll = sample_poll_request(s, op, ticket);
      attach(poll, *s.holder, core);
      // doc/sampling.md#batched-result-polling: with the server's sample_use_retrieve_futures, the result is
      // fetched only once the sampler's poller reported the request finished or failed.
      if (s.completions->enabled()) {
        CompletionWatcher::Wait wait(*s.completions, poll.request_id);
        if (wait.pending()) {
          auto [ec] = co_await wait.timer().async_wait(asio::as_tuple(asio::deferred));
          (void)ec;  // the outcome says why it woke
        }
        if (wait.outcome() == CompletionWait::cancelled) {
          if (watch.stuck()) co_return fail_stuck(s, *core);  // the stuck detector cancelled the wait
          throw boost::system::system_error(asio::error::operation_aborted);
        }
      }
      co_await futures::poll_future_into(s.holder->http(), poll, outcome);
      if (watch.stuck()) co_return fail_stuck(s, *core);
    }
    const bool again =
        op.resubmit && outcome.error && retry.retries_enabled() && SampleRetryHandler::should_retry(outcome.error);
    if (!again) {
      const FutureCore::Clock::time_point now = FutureCore::Clock::now();
      if (!outcome.error && op.resubmit) retry.note_progress(now);
      co_return settle_sample(s, *core, outcome, op.decode, now);
    }
    // doc/sampling.md#backpressure-and-retries: a lost result (410) or a retryable failure is a fresh attempt with a
    // new seq_id.
    if (!co_await resubmit(s, op, control, ticket, *core, outcome)) co_return;
  }
}

}  // namespace tinker::client::sampling
