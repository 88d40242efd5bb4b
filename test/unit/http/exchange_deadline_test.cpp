// ExchangeDeadline: the connection's lazily armed time limit. A real loopback socket pair; a read
// pending on the client side is what a deadline cancels.
#include "http/exchange_deadline.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <array>
#include <chrono>
#include <memory>
#include <optional>

namespace tinker::http {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;
using tcp = asio::ip::tcp;
using steady = std::chrono::steady_clock;

class ExchangeDeadlineTest : public ::testing::Test {
 protected:
  ExchangeDeadlineTest() : client_(io_), server_(io_) {
    tcp::acceptor acceptor(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    client_.connect(acceptor.local_endpoint());
    acceptor.accept(server_);
  }

  // Starts a read on the client socket; its outcome and when it came land in the fixture.
  void start_read() {
    asio::async_read(client_, asio::buffer(byte_), [this](boost::system::error_code ec, std::size_t) {
      read_error_ = ec;
      read_done_at_ = steady::now();
    });
  }

  // Runs the io_context for `duration` (or until it runs out of work).
  void run_for(steady::duration duration) {
    io_.restart();
    io_.run_for(duration);
  }

  // Runs until the pending read ends (5 s at most) and checks a deadline cut it.
  void expect_read_aborted() {
    run_for(std::chrono::seconds(5));
    ASSERT_TRUE(read_error_.has_value());
    EXPECT_EQ(*read_error_, asio::error::operation_aborted);
  }

  asio::io_context io_;
  tcp::socket client_;
  tcp::socket server_;
  std::array<char, 1> byte_{};
  std::optional<boost::system::error_code> read_error_;
  steady::time_point read_done_at_{};
};

TEST_F(ExchangeDeadlineTest, CancelsThePendingReadOncePast) {
  ExchangeDeadline deadline(io_.get_executor());
  const auto started = steady::now();
  deadline.start(client_, milliseconds(50));
  start_read();
  expect_read_aborted();
  EXPECT_TRUE(deadline.expired());
  EXPECT_GE(read_done_at_ - started, milliseconds(50));
  EXPECT_LT(read_done_at_ - started, milliseconds(2000));
}

TEST_F(ExchangeDeadlineTest, LeavesTheSocketAloneAfterStop) {
  ExchangeDeadline deadline(io_.get_executor());
  deadline.start(client_, milliseconds(30));
  deadline.stop();
  start_read();
  run_for(milliseconds(150));  // the timer wakes meanwhile and finds no exchange
  EXPECT_FALSE(read_error_.has_value());
  EXPECT_FALSE(deadline.expired());
  asio::write(server_, asio::buffer("x", 1));
  run_for(std::chrono::seconds(5));
  ASSERT_TRUE(read_error_.has_value());
  EXPECT_FALSE(*read_error_);
}

TEST_F(ExchangeDeadlineTest, AShorterTimeoutMovesTheArmedTimerEarlier) {
  ExchangeDeadline deadline(io_.get_executor());
  deadline.start(client_, std::chrono::seconds(30));  // an earlier exchange with a long timeout
  deadline.stop();
  const auto started = steady::now();
  deadline.start(client_, milliseconds(50));
  start_read();
  expect_read_aborted();
  EXPECT_LT(read_done_at_ - started, milliseconds(2000));
}

TEST_F(ExchangeDeadlineTest, ALaterDeadlineIsKeptWhenTheTimerWakesEarlier) {
  ExchangeDeadline deadline(io_.get_executor());
  deadline.start(client_, milliseconds(40));  // arms the timer for 40 ms
  start_read();
  const auto moved_at = steady::now();
  deadline.start(client_, milliseconds(300));  // a new phase: the 40 ms wake-up must re-arm
  expect_read_aborted();
  EXPECT_GE(read_done_at_ - moved_at, milliseconds(300));
}

TEST_F(ExchangeDeadlineTest, AnEndlessTimeoutDoesNotWrapIntoThePast) {
  ExchangeDeadline deadline(io_.get_executor());
  deadline.start(client_, milliseconds::max());
  start_read();
  run_for(milliseconds(100));
  EXPECT_FALSE(read_error_.has_value());
  EXPECT_FALSE(deadline.expired());
  client_.cancel();
  io_.restart();
  while (!read_error_ && io_.run_one_for(std::chrono::seconds(5)) != 0) {
  }
  EXPECT_EQ(read_error_, asio::error::operation_aborted);
}

TEST_F(ExchangeDeadlineTest, DestroyedWhileArmedLeavesNoWork) {
  {
    ExchangeDeadline deadline(io_.get_executor());
    deadline.start(client_, std::chrono::seconds(30));
  }
  const auto started = steady::now();
  run_for(std::chrono::seconds(10));  // returns as soon as the cancelled wait has run
  EXPECT_LT(steady::now() - started, std::chrono::seconds(2));
}

}  // namespace
}  // namespace tinker::http
