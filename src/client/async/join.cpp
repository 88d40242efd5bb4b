#include "client/async/join.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <exception>
#include <memory>

namespace tinker::client::async {

namespace asio = boost::asio;

Join::Join(const asio::any_io_executor& executor, std::size_t parts)
    : countdown_(parts), all_done_(executor), signals_(parts) {
  all_done_.expires_at(asio::steady_timer::time_point::max());
}

Countdown::Finished Join::finish(std::size_t part, bool failed) {
  const Countdown::Finished finished = countdown_.finish(part, failed);
  if (finished.last) all_done_.cancel();  // wakes the waiting coroutine
  return finished;
}

void Join::cancel_unfinished() {
  for (std::size_t i = 0; i < signals_.size(); ++i) {
    if (!countdown_.finished(i)) signals_[i].emit(asio::cancellation_type::terminal);
  }
}

asio::awaitable<void> Join::wait_all(bool pass_on_cancellation) {
  co_await asio::this_coro::throw_if_cancelled(false);
  while (countdown_.remaining() != 0) {
    auto [ec] = co_await all_done_.async_wait(asio::as_tuple(asio::use_awaitable));
    (void)ec;  // every wake-up is a cancellation: all done, or the caller was cancelled
    if (countdown_.remaining() == 0) co_return;
    if (pass_on_cancellation) cancel_unfinished();
    co_await asio::this_coro::reset_cancellation_state();
  }
}

namespace {

// The completion of one task of run_all.
class FinishTask {
 public:
  FinishTask(std::shared_ptr<Join> join, std::size_t index) : join_(std::move(join)), index_(index) {}
  void operator()(const std::exception_ptr&) { join_->finish(index_, false); }

 private:
  std::shared_ptr<Join> join_;
  std::size_t index_;
};

}  // namespace

asio::awaitable<void> run_all(std::vector<asio::awaitable<void>> tasks) {
  if (tasks.empty()) co_return;
  const asio::any_io_executor executor = co_await asio::this_coro::executor;
  auto join = std::make_shared<Join>(executor, tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i) asio::co_spawn(executor, std::move(tasks[i]), FinishTask(join, i));
  co_await join->wait_all(false);
}

}  // namespace tinker::client::async
