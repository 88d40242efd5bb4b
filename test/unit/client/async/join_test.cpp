// The one join: client::async::Countdown (any thread) and client::async::run_all (io thread).
#include "client/async/join.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace tinker::client::async {
namespace {

namespace asio = boost::asio;

TEST(Countdown, TheLastFinishIsReportedOnceAndTheFirstFailureKept) {
  Countdown countdown(3);
  const auto first = countdown.finish(2, false);
  EXPECT_FALSE(first.last);
  EXPECT_FALSE(first.first_failure);
  EXPECT_TRUE(countdown.finished(2));
  EXPECT_FALSE(countdown.finished(0));
  EXPECT_TRUE(countdown.finish(0, true).first_failure);
  const auto last = countdown.finish(1, true);
  EXPECT_FALSE(last.first_failure);  // part 0 failed first
  EXPECT_TRUE(last.last);
  EXPECT_EQ(countdown.first_failure(), 0u);
  EXPECT_EQ(countdown.remaining(), 0u);
}

TEST(Countdown, ExactlyOneOfManyThreadsFinishesLast) {
  constexpr std::size_t parts = 64;
  Countdown countdown(parts);
  std::atomic<int> lasts{0};
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < parts; ++i) {
    threads.emplace_back([&, i] {
      if (countdown.finish(i, false).last) ++lasts;
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(lasts.load(), 1);
  EXPECT_FALSE(countdown.first_failure().has_value());
}

asio::awaitable<void> count_after_a_post(int& count) {
  co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
  ++count;
}

asio::awaitable<int> run_three(int& count) {
  std::vector<asio::awaitable<void>> tasks;
  for (int i = 0; i < 3; ++i) tasks.push_back(count_after_a_post(count));
  co_await run_all(std::move(tasks));
  co_return count;  // every task has ended by now
}

TEST(RunAll, ReturnsOnceEveryTaskHasEnded) {
  asio::io_context io;
  int count = 0;
  auto result = asio::co_spawn(io, run_three(count), asio::use_future);
  io.run();
  EXPECT_EQ(result.get(), 3);
}

TEST(RunAll, OfNothingReturnsAtOnce) {
  asio::io_context io;
  auto result = asio::co_spawn(io, run_all({}), asio::use_future);
  io.run();
  EXPECT_NO_THROW(result.get());
}

}  // namespace
}  // namespace tinker::client::async
