#include "http/clock.hpp"

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <random>
#include <utility>

namespace tinker::http {
namespace {

namespace asio = boost::asio;
using SleepHandler = asio::any_completion_handler<void(boost::system::error_code)>;

// Installed in the caller's cancellation slot. It holds the timer weakly: if the sleep is
// abandoned (io_context destroyed with the wait pending), a late emit finds nothing to cancel.
class CancelSleep {
 public:
  explicit CancelSleep(std::weak_ptr<asio::steady_timer> timer) : timer_(std::move(timer)) {}

  void operator()(asio::cancellation_type) const {
    if (const auto timer = timer_.lock()) timer->cancel();
  }

 private:
  std::weak_ptr<asio::steady_timer> timer_;
};

// Completion of one sleep: owns the timer so that it lives until its wait has completed, and
// clears the caller's slot first. Why not bind the slot to async_wait directly: the timer's
// own cancellation handler stays in the slot after completion and points into the timer, so
// an emit after the sleep (the caller cancelling its whole operation later) would touch
// freed memory.
class SleepDone {
 public:
  SleepDone(std::shared_ptr<asio::steady_timer> timer, asio::cancellation_slot slot, SleepHandler handler)
      : timer_(std::move(timer)), slot_(slot), handler_(std::move(handler)) {}

  void operator()(boost::system::error_code ec) {
    if (slot_.is_connected()) slot_.clear();
    timer_.reset();
    std::move(handler_)(ec);
  }

 private:
  std::shared_ptr<asio::steady_timer> timer_;
  asio::cancellation_slot slot_;
  SleepHandler handler_;
};

class SystemClock final : public Clock {
 public:
  explicit SystemClock(asio::any_io_executor executor) : executor_(std::move(executor)) {}

  std::chrono::system_clock::time_point now() const override { return std::chrono::system_clock::now(); }

  void async_sleep(std::chrono::milliseconds delay, SleepHandler handler) override {
    if (!handler) return;  // nobody to tell; an empty any_completion_handler has no associations
    auto timer = std::make_shared<asio::steady_timer>(executor_, delay);
    asio::cancellation_slot slot = handler.get_cancellation_slot();
    if (slot.is_connected()) slot.emplace<CancelSleep>(timer);
    // The completion runs on the handler's associated executor (the wait never completes inline).
    auto executor = asio::get_associated_executor(handler, executor_);
    asio::steady_timer& wait_on = *timer;
    wait_on.async_wait(asio::bind_executor(std::move(executor), SleepDone(std::move(timer), slot, std::move(handler))));
  }

 private:
  asio::any_io_executor executor_;
};

double random_unit_now() {
  thread_local std::mt19937_64 engine{[] {
    std::random_device device;
    std::seed_seq seed{device(), device(), device(), device()};
    return std::mt19937_64(seed);
  }()};
  // The top 53 bits scaled by 2^-53: exactly representable, so the result is always < 1
  // (std::uniform_real_distribution may round up to 1.0 in libstdc++).
  return static_cast<double>(engine() >> 11) * 0x1.0p-53;
}

}  // namespace

std::shared_ptr<Clock> make_system_clock(boost::asio::any_io_executor executor) {
  return std::make_shared<SystemClock>(std::move(executor));
}

RandomUnit default_random_unit() {
  return &random_unit_now;
}

}  // namespace tinker::http
