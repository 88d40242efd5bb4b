#include "client/async/complete.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

namespace tinker::client::async {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

asio::awaitable<OperationResult<std::string>> echo_op(std::string text, int repeat, diagnostics& diag) {
  (void)diag;
  std::string out;
  for (int i = 0; i < repeat; ++i) out += text;
  co_return OperationResult<std::string>(error_code{}, out);
}

asio::awaitable<OperationResult<int>> failing_op(int status, diagnostics& diag) {
  diag.http_status = status;
  diag.message = "server said no";
  co_return OperationResult<int>(make_error_code(errc::bad_request), 0);
}

asio::awaitable<OperationResult<int>> throwing_op(int kind, diagnostics& diag) {
  (void)diag;
  if (kind == 0) {
    diagnostics thrown;
    thrown.message = "field x";
    throw error(make_error_code(errc::decode_error), thrown);
  }
  if (kind == 1) throw std::runtime_error("boom");
  co_return OperationResult<int>(error_code{}, 1);
}

asio::awaitable<OperationResult<int>> sleeping_op(std::chrono::milliseconds duration, diagnostics& diag) {
  (void)diag;
  asio::steady_timer timer(co_await asio::this_coro::executor, duration);
  auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
  if (ec) co_return OperationResult<int>(make_error_code(errc::cancelled), 0);
  co_return OperationResult<int>(error_code{}, 7);
}

struct Outcome {
  error_code code;
  int value = -1;
};

TEST(SpawnAndComplete, CompletesWithValueButNeverInline) {
  asio::io_context io;
  std::optional<std::string> got;
  Handler<std::string> handler([&](error_code ec, std::string value) {
    EXPECT_FALSE(ec);
    got = value;
  });
  spawn_and_complete<std::string>(io.get_executor(), nullptr, std::move(handler), &echo_op, std::string("ab"), 3);
  EXPECT_FALSE(got.has_value());  // not inside the initiating call
  io.run();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, "ababab");
}

TEST(SpawnAndComplete, NotInlineEvenWhenCalledFromTheIoThread) {
  asio::io_context io;
  bool completed = false;
  bool completed_inside_call = false;
  asio::post(io, [&] {
    Handler<std::string> handler([&](error_code, std::string) { completed = true; });
    spawn_and_complete<std::string>(io.get_executor(), nullptr, std::move(handler), &echo_op, std::string("x"), 1);
    completed_inside_call = completed;
  });
  io.run();
  EXPECT_TRUE(completed);
  EXPECT_FALSE(completed_inside_call);
}

TEST(SpawnAndComplete, FailureFillsDiagnosticsBeforeTheHandlerRuns) {
  asio::io_context io;
  diagnostics diag;
  Outcome outcome;
  std::string message_seen_by_handler;
  Handler<int> handler([&](error_code ec, int value) {
    outcome = Outcome{ec, value};
    message_seen_by_handler = diag.message;
  });
  spawn_and_complete<int>(io.get_executor(), &diag, std::move(handler), &failing_op, 400);
  io.run();
  EXPECT_EQ(outcome.code, make_error_code(errc::bad_request));
  EXPECT_EQ(diag.http_status, 400);
  EXPECT_EQ(message_seen_by_handler, "server said no");
}

TEST(SpawnAndComplete, ExceptionsBecomeErrorCodes) {
  asio::io_context io;
  diagnostics diag_tinker;
  diagnostics diag_other;
  Outcome tinker_error;
  Outcome other_error;
  spawn_and_complete<int>(io.get_executor(), &diag_tinker, Handler<int>([&](error_code ec, int v) {
                            tinker_error = Outcome{ec, v};
                          }),
                          &throwing_op, 0);
  spawn_and_complete<int>(io.get_executor(), &diag_other, Handler<int>([&](error_code ec, int v) {
                            other_error = Outcome{ec, v};
                          }),
                          &throwing_op, 1);
  io.run();
  EXPECT_EQ(tinker_error.code, make_error_code(errc::decode_error));
  EXPECT_EQ(diag_tinker.message, "field x");
  EXPECT_EQ(other_error.code, make_error_code(errc::protocol_error));
  EXPECT_EQ(other_error.value, 0);
  EXPECT_EQ(diag_other.message, "boom");
}

TEST(SpawnAndComplete, HandlerCancellationSlotCancelsTheOperation) {
  asio::io_context io;
  asio::cancellation_signal signal;
  Outcome outcome;
  auto start = std::chrono::steady_clock::now();
  Handler<int> handler(asio::bind_cancellation_slot(signal.slot(), [&](error_code ec, int v) {
    outcome = Outcome{ec, v};
  }));
  spawn_and_complete<int>(io.get_executor(), nullptr, std::move(handler), &sleeping_op,
                          std::chrono::milliseconds(5000));
  asio::steady_timer cancel_timer(io, std::chrono::milliseconds(10));
  cancel_timer.async_wait([&](error_code) { signal.emit(asio::cancellation_type::terminal); });
  io.run();
  EXPECT_EQ(outcome.code, make_error_code(errc::cancelled));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(SpawnAndComplete, HandlerRunsOnItsOwnExecutor) {
  asio::io_context io;
  asio::io_context other;
  std::thread::id handler_thread;
  std::optional<std::string> got;
  Handler<std::string> handler(asio::bind_executor(other, [&](error_code, std::string value) {
    handler_thread = std::this_thread::get_id();
    got = value;
  }));
  spawn_and_complete<std::string>(io.get_executor(), nullptr, std::move(handler), &echo_op, std::string("z"), 2);
  io.run();
  EXPECT_FALSE(got.has_value());  // queued on `other`, which has not run yet
  std::thread runner([&] { other.run(); });
  runner.join();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, "zz");
  EXPECT_NE(handler_thread, std::this_thread::get_id());
}

}  // namespace
}  // namespace tinker::client::async
