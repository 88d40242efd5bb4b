// Concurrency on one io thread for the RL trainer: a wake-up signal for one waiting coroutine, and
// gather(), which runs awaitables concurrently and collects their results in order.
//
// Everything here assumes the single-threaded io_context the SDK's clients run on: between a
// coroutine's check of a condition and its wait no other handler runs, so a notify() can only
// come while it waits (or before it checks).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstddef>
#include <exception>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace tinker::train::rl_detail {

/// Wakes one coroutine waiting in wait(). A waiter re-checks its condition in a loop.
class WakeSignal {
 public:
  explicit WakeSignal(const boost::asio::any_io_executor& executor)
      : timer_(executor, std::chrono::steady_clock::time_point::max()) {}

  void notify() { timer_.cancel(); }

  boost::asio::awaitable<void> wait() {
    timer_.expires_at(std::chrono::steady_clock::time_point::max());
    boost::system::error_code cancelled;  // a notify() ends the wait as operation_aborted
    co_await timer_.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, cancelled));
  }

 private:
  boost::asio::steady_timer timer_;
};

/// The shared state of one gather(): kept alive by every task's completion handler.
template <class T>
class GatherState {
 public:
  GatherState(const boost::asio::any_io_executor& executor, std::size_t count)
      : results(count), remaining(count), done(executor) {}

  std::vector<std::optional<T>> results;
  std::size_t remaining;
  std::exception_ptr failure;  // the first task failure, rethrown once all have finished
  WakeSignal done;
};

/// Runs every task concurrently on the current executor and returns their results in the tasks'
/// order. Waits for all of them even when one fails (their referents live in the caller's frame),
/// then rethrows the first failure.
template <class T>
boost::asio::awaitable<std::vector<T>> gather(std::vector<boost::asio::awaitable<T>> tasks) {
  const boost::asio::any_io_executor executor = co_await boost::asio::this_coro::executor;
  auto state = std::make_shared<GatherState<T>>(executor, tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    boost::asio::co_spawn(executor, std::move(tasks[i]), [state, i](std::exception_ptr failure, T value) {
      if (failure) {
        if (!state->failure) state->failure = failure;
      } else {
        state->results[i] = std::move(value);
      }
      if (--state->remaining == 0) state->done.notify();
    });
  }
  while (state->remaining > 0) co_await state->done.wait();
  if (state->failure) std::rethrow_exception(state->failure);
  std::vector<T> results;
  results.reserve(state->results.size());
  for (std::optional<T>& result : state->results) results.push_back(std::move(*result));
  co_return results;
}

}  // namespace tinker::train::rl_detail
