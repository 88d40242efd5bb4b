#include "client/async/byte_budget.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

namespace tinker::client::async {

namespace asio = boost::asio;

ByteBudget::ByteBudget(asio::any_io_executor executor, std::int64_t capacity)
    : executor_(std::move(executor)), remaining_(capacity) {}

asio::awaitable<void> ByteBudget::acquire(std::int64_t bytes) {
  if (try_acquire(bytes)) co_return;
  auto waiter = waiters_.emplace(waiters_.end(), executor_, bytes);
  waiter->wake.expires_at(asio::steady_timer::time_point::max());
  auto [ec] = co_await waiter->wake.async_wait(asio::as_tuple(asio::use_awaitable));
  (void)ec;  // woken by release() (granted) or by the caller's cancellation
  const bool granted = waiter->granted;
  waiters_.erase(waiter);
  if (!granted) {
    grant_waiters();  // a cancelled head of the line must not block the ones behind it
    throw boost::system::system_error(asio::error::operation_aborted);
  }
}

void ByteBudget::release(std::int64_t bytes) {
  remaining_ += bytes;
  grant_waiters();
}

void ByteBudget::grant_waiters() {
  for (Waiter& waiter : waiters_) {
    if (remaining_ < 0) return;
    if (waiter.granted) continue;
    waiter.granted = true;
    remaining_ -= waiter.bytes;
    waiter.wake.cancel();
  }
}

}  // namespace tinker::client::async
