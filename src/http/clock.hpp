// Time as the transport sees it: "now" for HTTP dates and sleeps for retry back-off. Tests
// substitute a fake clock so back-off takes no real time.
#pragma once

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <functional>
#include <memory>

namespace tinker::http {

class Clock {
 public:
  virtual ~Clock() = default;

  virtual std::chrono::system_clock::time_point now() const = 0;
  /// Completes after `delay` with success, or with operation_aborted when the handler's
  /// cancellation slot fires. Never completes inside the call (the handler is posted).
  virtual void async_sleep(std::chrono::milliseconds delay,
                           boost::asio::any_completion_handler<void(boost::system::error_code)> handler) = 0;
};

/// Awaits clock.async_sleep; returns operation_aborted if the coroutine was cancelled meanwhile.
inline boost::asio::awaitable<boost::system::error_code> sleep_for(Clock& clock, std::chrono::milliseconds delay) {
  auto initiation = [&clock](auto handler, std::chrono::milliseconds d) { clock.async_sleep(d, std::move(handler)); };
  auto token = boost::asio::as_tuple(boost::asio::use_awaitable);
  auto [ec] =
      co_await boost::asio::async_initiate<decltype(token), void(boost::system::error_code)>(initiation, token, delay);
  co_return ec;
}

/// Real time: system_clock and a steady_timer on `executor`.
std::shared_ptr<Clock> make_system_clock(boost::asio::any_io_executor executor);

/// A uniform random number in [0, 1), for retry jitter; injectable for deterministic tests.
using RandomUnit = std::function<double()>;
RandomUnit default_random_unit();

}  // namespace tinker::http
