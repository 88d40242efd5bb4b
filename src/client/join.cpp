#include "client/join.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <memory>

namespace tinker::detail {
namespace {

namespace asio = boost::asio;

// Counts finished tasks on the io thread; the waiter sleeps on a timer that the last one cancels.
class Countdown {
 public:
  Countdown(const asio::any_io_executor& executor, std::size_t count) : all_done(executor), remaining(count) {
    all_done.expires_at(asio::steady_timer::time_point::max());
  }
  void finish_one() {
    if (--remaining == 0) all_done.cancel();
  }
  asio::steady_timer all_done;
  std::size_t remaining;
};

class FinishOne {
 public:
  explicit FinishOne(std::shared_ptr<Countdown> countdown) : countdown_(std::move(countdown)) {}
  void operator()(const std::exception_ptr&) { countdown_->finish_one(); }

 private:
  std::shared_ptr<Countdown> countdown_;
};

}  // namespace

asio::awaitable<void> run_all(std::vector<asio::awaitable<void>> tasks) {
  if (tasks.empty()) co_return;
  const asio::any_io_executor executor = co_await asio::this_coro::executor;
  auto countdown = std::make_shared<Countdown>(executor, tasks.size());
  for (auto& task : tasks) asio::co_spawn(executor, std::move(task), FinishOne(countdown));
  // Every task must end before the caller's state goes away, even if the caller is cancelled.
  co_await asio::this_coro::throw_if_cancelled(false);
  while (countdown->remaining != 0) {
    auto [ec] = co_await countdown->all_done.async_wait(asio::as_tuple(asio::use_awaitable));
    (void)ec;
    co_await asio::this_coro::reset_cancellation_state();
  }
}

}  // namespace tinker::detail
