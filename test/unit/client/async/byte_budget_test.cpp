#include "client/async/byte_budget.hpp"

#include <gtest/gtest.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <vector>

namespace tinker::client::async {
namespace {

namespace asio = boost::asio;

asio::awaitable<void> take(ByteBudget& budget, std::int64_t bytes, std::vector<int>& order, int id) {
  co_await budget.acquire(bytes);
  order.push_back(id);
}

class Noted {
 public:
  explicit Noted(bool& failed) : failed_(&failed) {}
  void operator()(const std::exception_ptr& e) { *failed_ = e != nullptr; }

 private:
  bool* failed_;
};

TEST(ByteBudget, AnAcquireProceedsWhileTheBudgetIsNotNegativeEvenIfItOverdraws) {
  asio::io_context io;
  ByteBudget budget(io.get_executor(), 100);
  std::vector<int> order;
  asio::co_spawn(io, take(budget, 150, order, 1), asio::detached);
  io.run();
  EXPECT_EQ(order, std::vector<int>{1});
  EXPECT_EQ(budget.remaining(), -50);
}

TEST(ByteBudget, WaitersAreServedInOrderOnceReleasesMakeTheBudgetNonNegative) {
  asio::io_context io;
  ByteBudget budget(io.get_executor(), 100);
  std::vector<int> order;
  asio::co_spawn(io, take(budget, 150, order, 1), asio::detached);
  asio::co_spawn(io, take(budget, 10, order, 2), asio::detached);
  asio::co_spawn(io, take(budget, 10, order, 3), asio::detached);
  io.poll();
  EXPECT_EQ(order, std::vector<int>{1});
  EXPECT_EQ(budget.waiting(), 2u);
  budget.release(20);  // -30: still negative
  io.poll();
  EXPECT_EQ(order, std::vector<int>{1});
  budget.release(130);  // 100: both waiters fit, in order
  io.poll();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(budget.remaining(), 80);
}

TEST(ByteBudget, ACancelledWaiterTakesNothingAndDoesNotBlockTheOthers) {
  asio::io_context io;
  ByteBudget budget(io.get_executor(), 0);
  std::vector<int> order;
  asio::co_spawn(io, take(budget, 10, order, 1), asio::detached);  // -10
  asio::cancellation_signal cancel;
  bool failed = false;
  asio::co_spawn(io, take(budget, 1000, order, 2), asio::bind_cancellation_slot(cancel.slot(), Noted(failed)));
  asio::co_spawn(io, take(budget, 5, order, 3), asio::detached);
  io.poll();
  cancel.emit(asio::cancellation_type::terminal);
  io.poll();
  EXPECT_TRUE(failed);
  budget.release(10);
  io.poll();
  EXPECT_EQ(order, (std::vector<int>{1, 3}));
  EXPECT_EQ(budget.remaining(), -5);
}

TEST(ByteBudget, AReservationReturnsItsBytesOnceWhenItEnds) {
  asio::io_context io;
  ByteBudget budget(io.get_executor(), 100);
  std::vector<int> order;
  asio::co_spawn(io, take(budget, 60, order, 1), asio::detached);
  io.run();
  {
    BudgetReservation held(budget, 60);
    BudgetReservation moved(std::move(held));
    EXPECT_EQ(budget.remaining(), 40);
  }
  EXPECT_EQ(budget.remaining(), 100);
}

}  // namespace
}  // namespace tinker::client::async
