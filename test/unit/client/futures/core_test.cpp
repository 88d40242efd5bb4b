// FutureCore, the state behind tinker::Future<T>: settling once, waiting asynchronously and by
// blocking, cancelled waits, cancel(), the deferred start, and the io-thread guard.
#include "client/futures/core.hpp"

#include <gtest/gtest.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <thread>

namespace tinker::detail {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;

std::shared_ptr<FutureCore> make_core(asio::io_context& io) {
  return std::make_shared<FutureCore>(io.get_executor(), "req-1");
}

TEST(FutureCore, WaitersCompleteOnceWithTheFirstSettlementAndNeverInline) {
  asio::io_context io;
  auto core = make_core(io);
  Future<int> future(core);
  auto first = future.async_get(asio::use_future);
  core->set_result(std::make_shared<int>(7));
  core->set_error(make_error_code(errc::server_error), diagnostics());  // ignored: already settled
  auto second = future.async_get(asio::use_future);
  EXPECT_EQ(first.wait_for(milliseconds(0)), std::future_status::timeout) << "completed inline";
  io.run();
  EXPECT_EQ(first.get(), 7);
  EXPECT_EQ(second.get(), 7);
  EXPECT_TRUE(future.status().ready);
}

TEST(FutureCore, AnErrorReachesTheWaitersDiagnostics) {
  asio::io_context io;
  auto core = make_core(io);
  Future<int> future(core);
  diagnostics diag;
  auto waiting = future.async_get(diag, asio::use_future);
  diagnostics failure;
  failure.message = "target_tokens length 3 != model_input length 4";
  failure.category = RequestErrorCategory::user;
  core->set_error(make_error_code(errc::request_failed), failure);
  io.run();
  EXPECT_THROW(waiting.get(), boost::system::system_error);
  EXPECT_EQ(diag.message, failure.message);
  EXPECT_EQ(diag.request_id, "req-1");  // filled in from the future
  EXPECT_EQ(diag.category, RequestErrorCategory::user);
}

// The waiter's handler is the caller's own, erased once: its executor still decides where the
// completion runs (here another io_context, which alone runs it).
TEST(FutureCore, AWaitCompletesOnTheHandlersOwnExecutor) {
  asio::io_context io;
  asio::io_context other;
  auto core = make_core(io);
  Future<int> future(core);
  int value = 0;
  bool on_other = false;
  future.async_get(asio::bind_executor(other.get_executor(), [&](boost::system::error_code ec, int v) {
    EXPECT_FALSE(ec);
    value = v;
    on_other = other.get_executor().running_in_this_thread();
  }));
  core->set_result(std::make_shared<int>(3));
  io.run();
  EXPECT_EQ(value, 0) << "completed on the core's executor";
  other.run();
  EXPECT_EQ(value, 3);
  EXPECT_TRUE(on_other);
}

// With tinker::use_awaitable a failure is thrown as tinker::error carrying the diagnostics the
// operation filled.
TEST(FutureCore, AnAwaitedFailureThrowsItsDiagnostics) {
  asio::io_context io;
  auto core = make_core(io);
  Future<int> future(core);
  diagnostics diag;
  diag.message = "boom";
  core->set_error(make_error_code(errc::server_error), diag);
  std::string thrown;
  asio::co_spawn(
      io,
      [](Future<int> awaited, std::string* out) -> asio::awaitable<void> {
        try {
          (void)co_await awaited.async_get(tinker::use_awaitable);
        } catch (const error& e) {
          *out = e.diag().message + " / " + e.diag().request_id;
        }
      }(future, &thrown),
      asio::detached);
  io.run();
  EXPECT_EQ(thrown, "boom / req-1");
}

TEST(FutureCore, ACancelledWaitDoesNotSettleTheFuture) {
  asio::io_context io;
  auto core = make_core(io);
  Future<int> future(core);
  asio::cancellation_signal cancel;
  auto cancelled = future.async_get(asio::bind_cancellation_slot(cancel.slot(), asio::use_future));
  cancel.emit(asio::cancellation_type::terminal);
  io.run();
  io.restart();
  EXPECT_THROW(cancelled.get(), boost::system::system_error);
  EXPECT_FALSE(core->ready());
  auto later = future.async_get(asio::use_future);
  core->set_result(std::make_shared<int>(3));
  io.run();
  EXPECT_EQ(later.get(), 3);
}

TEST(FutureCore, CancelRunsTheProducersHookOnTheIoThreadOnce) {
  asio::io_context io;
  auto core = make_core(io);
  int calls = 0;
  std::thread::id hook_thread;
  core->set_cancel_hook([&] {
    ++calls;
    hook_thread = std::this_thread::get_id();
    core->set_error(make_error_code(errc::cancelled), diagnostics());
  });
  Future<int> future(core);
  future.cancel();
  future.cancel();
  EXPECT_EQ(calls, 0) << "the hook runs on the io thread, not in cancel()";
  std::thread io_thread([&] { io.run(); });
  const std::thread::id io_thread_id = io_thread.get_id();
  io_thread.join();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(hook_thread, io_thread_id);
  EXPECT_THROW(future.get(), error);
}

TEST(FutureCore, ACancelBeforeTheProducerRegisteredIsHonouredWhenItDoes) {
  asio::io_context io;
  auto core = make_core(io);
  Future<int> future(core);
  future.cancel();
  bool hooked = false;
  core->set_cancel_hook([&] { hooked = true; });
  io.run();
  EXPECT_TRUE(hooked);
}

TEST(FutureCore, BlockingGetTimesOutThenReturnsTheResult) {
  asio::io_context io;
  auto core = make_core(io);
  Future<int> future(core);
  try {
    future.get(milliseconds(20));
    FAIL() << "must time out";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::timeout);
    EXPECT_EQ(e.diag().request_id, "req-1");
  }
  std::thread producer([&] { core->set_result(std::make_shared<int>(11)); });
  EXPECT_EQ(future.get(), 11);
  producer.join();
}

asio::awaitable<void> blocking_get_on_io_thread(Future<int> future, bool* refused) {
  try {
    future.get();
  } catch (const error& e) {
    *refused = e.code() == errc::invalid_argument;
  }
  co_return;
}

TEST(FutureCore, BlockingGetOnTheIoThreadIsRefusedUnlessSettled) {
  asio::io_context io;
  auto core = make_core(io);
  bool refused = false;
  asio::co_spawn(io, blocking_get_on_io_thread(Future<int>(core), &refused), asio::detached);
  io.run();
  EXPECT_TRUE(refused);
  core->set_result(std::make_shared<int>(5));
  EXPECT_EQ(Future<int>(core).get(), 5);  // a settled future reads anywhere
}

asio::awaitable<void> wait_then_mark(std::shared_ptr<FutureCore> core, milliseconds fallback, bool* done) {
  co_await core->wait_for_start(fallback);
  *done = true;
}

TEST(FutureCore, DeferredStartWaitsForAWaitOrTheFallback) {
  asio::io_context io;
  auto started_by_wait = make_core(io);
  bool first_done = false;
  asio::co_spawn(io, wait_then_mark(started_by_wait, milliseconds(60'000), &first_done), asio::detached);
  io.run_for(milliseconds(20));
  EXPECT_FALSE(first_done);
  auto waiting = Future<int>(started_by_wait).async_get(asio::use_future);  // a wait starts it
  io.run_for(milliseconds(20));
  EXPECT_TRUE(first_done);

  auto by_fallback = make_core(io);
  bool second_done = false;
  io.restart();
  asio::co_spawn(io, wait_then_mark(by_fallback, milliseconds(30), &second_done), asio::detached);
  io.run_for(milliseconds(100));
  EXPECT_TRUE(second_done);
  started_by_wait->set_result(std::make_shared<int>(1));
  io.restart();
  io.run_for(milliseconds(20));
  EXPECT_EQ(waiting.get(), 1);
}

TEST(FutureCore, StatusReportsQueueStateChangesToTheCallback) {
  asio::io_context io;
  auto core = make_core(io);
  Future<int> future(core);
  std::vector<QueueStateChange> changes;
  future.on_queue_state([&](const QueueStateChange& change) { changes.push_back(change); });
  core->note_queue_state(QueueState::paused_capacity, std::string("waiting for capacity"));
  core->note_queue_state(QueueState::paused_capacity, std::string("waiting for capacity"));  // no change
  core->note_queue_state(QueueState::active, std::nullopt);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].state, QueueState::paused_capacity);
  EXPECT_EQ(changes[0].reason, "waiting for capacity");
  const FutureStatus status = future.status();
  EXPECT_EQ(status.queue_state, QueueState::active);
  EXPECT_FALSE(status.ready);
  EXPECT_EQ(status.request_id, "req-1");
}

}  // namespace
}  // namespace tinker::detail
