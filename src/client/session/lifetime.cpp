#include "client/session/lifetime.hpp"

#include <tinker/error.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <exception>

namespace tinker::client::session {

namespace asio = boost::asio;

Lifetime::Lifetime(asio::any_io_executor executor)
    : stop_timer_(std::move(executor), asio::steady_timer::time_point::max()) {}

void Lifetime::stop() {
  stopped_ = true;
  stop_timer_.cancel();
}

asio::awaitable<bool> wait_unless_stopped(std::shared_ptr<Lifetime> lifetime,
                                          std::shared_ptr<asio::steady_timer> timer) {
  if (lifetime->stopped()) co_return false;
  auto group = asio::experimental::make_parallel_group(timer->async_wait(asio::deferred),
                                                       lifetime->stop_timer().async_wait(asio::deferred));
  const auto condition = asio::experimental::wait_for_one();
  auto [order, timer_ec, stop_ec] = co_await group.async_wait(condition, asio::use_awaitable);
  (void)order;
  (void)timer_ec;
  (void)stop_ec;
  co_return !lifetime->stopped();
}

asio::awaitable<bool> sleep_unless_stopped(std::shared_ptr<Lifetime> lifetime,
                                           std::chrono::steady_clock::duration duration) {
  const asio::any_io_executor executor = co_await asio::this_coro::executor;
  auto timer = std::make_shared<asio::steady_timer>(executor, duration);
  co_return co_await wait_unless_stopped(std::move(lifetime), std::move(timer));
}

asio::awaitable<std::optional<boost::system::error_code>> run_unless_stopped(
    std::shared_ptr<Lifetime> lifetime, asio::awaitable<boost::system::error_code> operation) {
  if (lifetime->stopped()) co_return std::nullopt;
  const asio::any_io_executor executor = co_await asio::this_coro::executor;
  auto group = asio::experimental::make_parallel_group(asio::co_spawn(executor, std::move(operation), asio::deferred),
                                                       lifetime->stop_timer().async_wait(asio::deferred));
  const auto condition = asio::experimental::wait_for_one();
  auto [order, failure, ec, stop_ec] = co_await group.async_wait(condition, asio::use_awaitable);
  (void)stop_ec;
  if (order[0] != 0 || lifetime->stopped()) co_return std::nullopt;
  if (failure) co_return make_error_code(errc::protocol_error);  // the operation threw
  co_return ec;
}

}  // namespace tinker::client::session
