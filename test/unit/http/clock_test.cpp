#include "http/clock.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <set>
#include <thread>
#include <vector>

namespace tinker::http {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;

TEST(HttpClock, NowIsSystemTime) {
  asio::io_context io;
  const auto clock = make_system_clock(io.get_executor());
  const auto before = std::chrono::system_clock::now();
  const auto now = clock->now();
  EXPECT_LE(before, now);
  EXPECT_LE(now, std::chrono::system_clock::now());
}

TEST(HttpClock, SleepCompletesAfterTheDelayAndNeverInline) {
  asio::io_context io;
  const auto clock = make_system_clock(io.get_executor());
  std::optional<boost::system::error_code> result;
  const auto start = Steady::now();
  Steady::time_point done;
  clock->async_sleep(50ms, [&](boost::system::error_code ec) {
    result = ec;
    done = Steady::now();
  });
  EXPECT_FALSE(result.has_value());  // not completed inside the call
  io.run();
  ASSERT_TRUE(result.has_value());
  EXPECT_FALSE(*result);
  EXPECT_GE(done - start, 50ms);
  EXPECT_LT(done - start, 2s);
}

TEST(HttpClock, ZeroDelayIsPostedToo) {
  asio::io_context io;
  const auto clock = make_system_clock(io.get_executor());
  bool completed = false;
  clock->async_sleep(0ms, [&](boost::system::error_code ec) {
    EXPECT_FALSE(ec);
    completed = true;
  });
  EXPECT_FALSE(completed);
  io.run();
  EXPECT_TRUE(completed);
}

TEST(HttpClock, CancellationSlotAbortsTheSleep) {
  asio::io_context io;
  const auto clock = make_system_clock(io.get_executor());
  asio::cancellation_signal signal;
  std::optional<boost::system::error_code> result;
  const auto start = Steady::now();
  clock->async_sleep(10s,
                     asio::bind_cancellation_slot(signal.slot(), [&](boost::system::error_code ec) { result = ec; }));
  asio::steady_timer trigger(io, 20ms);
  trigger.async_wait([&](boost::system::error_code) { signal.emit(asio::cancellation_type::terminal); });
  io.run();
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(*result, asio::error::operation_aborted);
  EXPECT_LT(Steady::now() - start, 5s);
}

TEST(HttpClock, CancelledBeforeRunStillCompletesThroughTheContext) {
  asio::io_context io;
  const auto clock = make_system_clock(io.get_executor());
  asio::cancellation_signal signal;
  std::optional<boost::system::error_code> result;
  clock->async_sleep(10s,
                     asio::bind_cancellation_slot(signal.slot(), [&](boost::system::error_code ec) { result = ec; }));
  signal.emit(asio::cancellation_type::total);
  EXPECT_FALSE(result.has_value());
  io.run();
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(*result, asio::error::operation_aborted);
}

TEST(HttpClock, EmitAfterCompletionIsHarmless) {
  asio::io_context io;
  const auto clock = make_system_clock(io.get_executor());
  asio::cancellation_signal signal;
  int calls = 0;
  clock->async_sleep(1ms, asio::bind_cancellation_slot(signal.slot(), [&](boost::system::error_code ec) {
                       EXPECT_FALSE(ec);
                       ++calls;
                     }));
  io.run();
  signal.emit(asio::cancellation_type::terminal);
  io.restart();
  io.run();
  EXPECT_EQ(calls, 1);
}

TEST(HttpClock, EmitAfterAnAbandonedSleepIsHarmless) {
  asio::cancellation_signal signal;
  bool called = false;
  {
    asio::io_context io;
    const auto clock = make_system_clock(io.get_executor());
    clock->async_sleep(10s,
                       asio::bind_cancellation_slot(signal.slot(), [&](boost::system::error_code) { called = true; }));
  }  // destroyed with the wait pending: the handler is dropped, not called
  signal.emit(asio::cancellation_type::terminal);
  EXPECT_FALSE(called);
}

TEST(HttpClock, TheSlotIsFreeAgainAfterTheSleep) {
  asio::io_context io;
  const auto clock = make_system_clock(io.get_executor());
  asio::cancellation_signal signal;
  std::vector<boost::system::error_code> results;
  const auto record = [&](boost::system::error_code ec) { results.push_back(ec); };
  clock->async_sleep(1ms, asio::bind_cancellation_slot(signal.slot(), record));
  io.run();
  signal.emit(asio::cancellation_type::terminal);  // late: must not reach the finished sleep
  // The same slot serves the next sleep.
  clock->async_sleep(10s, asio::bind_cancellation_slot(signal.slot(), record));
  signal.emit(asio::cancellation_type::partial);
  io.restart();
  io.run();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_FALSE(results[0]);
  EXPECT_EQ(results[1], asio::error::operation_aborted);
}

TEST(HttpClock, ManySleepsCompleteInDelayOrder) {
  asio::io_context io;
  const auto clock = make_system_clock(io.get_executor());
  std::vector<int> order;
  for (int delay : {30, 10, 20}) {
    clock->async_sleep(std::chrono::milliseconds(delay),
                       [&order, delay](boost::system::error_code) { order.push_back(delay); });
  }
  io.run();
  EXPECT_EQ(order, (std::vector<int>{10, 20, 30}));
}

TEST(HttpClock, RandomUnitIsInRangeAndVaries) {
  const RandomUnit random = default_random_unit();
  std::set<double> seen;
  for (int i = 0; i < 1000; ++i) {
    const double u = random();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    seen.insert(u);
  }
  EXPECT_GT(seen.size(), 990u);
}

TEST(HttpClock, RandomUnitWorksOnManyThreads) {
  std::vector<double> firsts(4);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < firsts.size(); ++t) {
    threads.emplace_back([&firsts, t] {
      const RandomUnit random = default_random_unit();
      for (int i = 0; i < 1000; ++i) (void)random();
      firsts[t] = random();
    });
  }
  for (auto& thread : threads) thread.join();
  // Each thread has its own independently seeded engine.
  EXPECT_EQ(std::set<double>(firsts.begin(), firsts.end()).size(), firsts.size());
}

}  // namespace
}  // namespace tinker::http
