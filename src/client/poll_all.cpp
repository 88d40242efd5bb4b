// Combined futures (spec 6.5): N poll loops at once, results in request order, the first
// failure cancels the rest. Plain counting on the io thread rather than parallel_group: the
// poll coroutines complete with (exception_ptr, PollOutcome), whose error lives inside the
// outcome where parallel_group's wait_for_one_error cannot see it.
#include "client/future_poll.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <exception>

namespace tinker::client {
namespace {

namespace asio = boost::asio;

// Shared by the waiting coroutine and the completion handlers of its polls (io thread only).
class JoinState {
 public:
  JoinState(const asio::any_io_executor& executor, std::size_t count)
      : all_done(executor), outcomes(count), signals(count), finished(count, false), remaining(count) {
    all_done.expires_at(asio::steady_timer::time_point::max());
  }

  void finish(std::size_t index, PollOutcome outcome) {
    finished[index] = true;
    --remaining;
    const bool first_failure = outcome.error && !failed_index;
    outcomes[index] = std::move(outcome);
    if (first_failure) {
      failed_index = index;
      cancel_unfinished();
    }
    if (remaining == 0) all_done.cancel();  // wakes the waiting coroutine
  }

  void cancel_unfinished() {
    for (std::size_t i = 0; i < signals.size(); ++i) {
      if (!finished[i]) signals[i].emit(asio::cancellation_type::terminal);
    }
  }

  asio::steady_timer all_done;
  std::vector<PollOutcome> outcomes;
  std::vector<asio::cancellation_signal> signals;  ///< one per poll; never resized (signals cannot move)
  std::vector<bool> finished;
  std::size_t remaining;
  std::optional<std::size_t> failed_index;
};

// Completion of one poll coroutine. An exception can only mean it was cancelled before it
// started (poll_future itself never throws).
class FinishOne {
 public:
  FinishOne(std::shared_ptr<JoinState> state, std::size_t index) : state_(std::move(state)), index_(index) {}

  void operator()(const std::exception_ptr& failure, PollOutcome outcome) {
    if (failure) {
      outcome = PollOutcome();
      outcome.error = make_error_code(errc::cancelled);
      outcome.diag.message = "waiting for the future was cancelled before it started";
    }
    state_->finish(index_, std::move(outcome));
  }

 private:
  std::shared_ptr<JoinState> state_;
  std::size_t index_;
};

asio::awaitable<void> wait_until_all_done(JoinState& state) {
  while (state.remaining != 0) {
    auto [ec] = co_await state.all_done.async_wait(asio::as_tuple(asio::use_awaitable));
    (void)ec;  // every wake-up is a cancellation: all done, or the caller cancelled us
    if (state.remaining == 0) co_return;
    // The caller cancelled: pass it on to every poll and keep waiting for them to end.
    state.cancel_unfinished();
    co_await asio::this_coro::reset_cancellation_state();
  }
}

}  // namespace

asio::awaitable<CombinedOutcome> poll_all(http::HttpClient& client, std::vector<PollRequest> requests) {
  CombinedOutcome combined;
  if (requests.empty()) co_return combined;
  const asio::any_io_executor executor = co_await asio::this_coro::executor;
  auto state = std::make_shared<JoinState>(executor, requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    auto handler = asio::bind_cancellation_slot(state->signals[i].slot(), FinishOne(state, i));
    asio::co_spawn(executor, poll_future(client, std::move(requests[i])), std::move(handler));
  }
  co_await asio::this_coro::throw_if_cancelled(false);  // must wait for the polls even when cancelled
  co_await wait_until_all_done(*state);
  if (state->failed_index) {
    const std::size_t failed = *state->failed_index;
    combined.error = state->outcomes[failed].error;
    combined.diag = std::move(state->outcomes[failed].diag);
    combined.failed_index = failed;
    co_return combined;
  }
  combined.results.reserve(state->outcomes.size());
  for (PollOutcome& outcome : state->outcomes) combined.results.push_back(std::move(outcome.result));
  co_return combined;
}

}  // namespace tinker::client
