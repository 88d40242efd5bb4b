// A Clock for tests: sleeps complete at once (posted, never inline) and advance `now`; every
// requested delay is recorded so back-off tests take no real time.
#pragma once

#include "http/clock.hpp"

#include <boost/asio/post.hpp>

#include <chrono>
#include <vector>

namespace tinker::test {

class FakeClock final : public http::Clock {
 public:
  explicit FakeClock(boost::asio::any_io_executor executor,
                     std::chrono::system_clock::time_point start = std::chrono::sys_days{std::chrono::year{2026} / 11 /
                                                                                         21})
      : executor_(std::move(executor)), now_(start) {}

  std::chrono::system_clock::time_point now() const override { return now_; }

  void async_sleep(std::chrono::milliseconds delay,
                   boost::asio::any_completion_handler<void(boost::system::error_code)> handler) override {
    sleeps.push_back(delay);
    now_ += delay;
    boost::asio::post(executor_, [h = std::move(handler)]() mutable { std::move(h)(boost::system::error_code()); });
  }

  std::vector<std::chrono::milliseconds> sleeps;

 private:
  boost::asio::any_io_executor executor_;
  std::chrono::system_clock::time_point now_;
};

}  // namespace tinker::test
