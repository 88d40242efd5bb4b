// Combined futures (doc/protocol.md#futures): N poll loops at once, results in request order, the first
// failure cancels the rest. Plain counting on the io thread rather than parallel_group: the
// poll coroutines complete with (exception_ptr, PollOutcome), whose error lives inside the
// outcome where parallel_group's wait_for_one_error cannot see it.
#include "client/futures/poll.hpp"

#include "client/async/join.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>

#include <exception>

namespace tinker::client::futures {
namespace {

namespace asio = boost::asio;

// The outcomes of the polls, beside the join that counts them (io thread only).
class PollJoin {
 public:
  PollJoin(const asio::any_io_executor& executor, std::size_t count) : join(executor, count), outcomes(count) {}

  // The first failure cancels the polls still running.
  void finish(std::size_t index, PollOutcome outcome) {
    const bool failed = static_cast<bool>(outcome.error);
    outcomes[index] = std::move(outcome);
    if (join.finish(index, failed).first_failure) join.cancel_unfinished();
  }

  async::Join join;
  std::vector<PollOutcome> outcomes;
};

// Completion of one poll coroutine. An exception can only mean it was cancelled before it
// started (poll_future itself never throws).
class FinishOne {
 public:
  FinishOne(std::shared_ptr<PollJoin> state, std::size_t index) : state_(std::move(state)), index_(index) {}

  void operator()(const std::exception_ptr& failure, PollOutcome outcome) {
    if (failure) {
      outcome = PollOutcome();
      outcome.error = make_error_code(errc::cancelled);
      outcome.diag.message = "waiting for the future was cancelled before it started";
    }
    state_->finish(index_, std::move(outcome));
  }

 private:
  std::shared_ptr<PollJoin> state_;
  std::size_t index_;
};

}  // namespace

asio::awaitable<CombinedOutcome> poll_all(http::HttpClient& client, std::vector<PollRequest> requests) {
  CombinedOutcome combined;
  if (requests.empty()) co_return combined;
  const asio::any_io_executor executor = co_await asio::this_coro::executor;
  auto state = std::make_shared<PollJoin>(executor, requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    auto handler = asio::bind_cancellation_slot(state->join.slot(i), FinishOne(state, i));
    asio::co_spawn(executor, poll_future(client, std::move(requests[i])), std::move(handler));
  }
  // Waits for the polls even when cancelled, passing the cancellation on to them.
  co_await state->join.wait_all(true);
  if (const std::optional<std::size_t> failed_index = state->join.first_failure()) {
    const std::size_t failed = *failed_index;
    combined.error = state->outcomes[failed].error;
    combined.diag = std::move(state->outcomes[failed].diag);
    combined.failed_index = failed;
    co_return combined;
  }
  combined.results.reserve(state->outcomes.size());
  for (PollOutcome& outcome : state->outcomes) combined.results.push_back(std::move(outcome.result));
  co_return combined;
}

}  // namespace tinker::client::futures
