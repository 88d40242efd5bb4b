// tinker::use_awaitable as a completion token (include/tinker/async.hpp), against fake operations
// built with the same detail::start machinery as every public async_x: the value or a
// tinker::error with the operation's diagnostics, and each composition with Asio's adapters
// (as_tuple, redirect_error, bind_cancellation_slot, deferred, parallel_group).
#include "support/heap_probe.hpp"

#include <tinker/async.hpp>

#include <boost/asio/append.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_future.hpp>

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>

namespace tinker::test {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

// ---- fake operations -----------------------------------------------------------------------

// The diagnostics a failing fake operation reports.
diagnostics not_found_diagnostics() {
  diagnostics diag;
  diag.http_status = 404;
  diag.request_id = "req-42";
  diag.message = "no such training run";
  return diag;
}

int g_started = 0;                             // fake operations initiated so far
std::optional<detail::Handler<int>> g_parked;  // an operation nothing can complete

// Calls the handler from a posted function on the fakes' executor. Not `post(executor,
// append(handler, ...))`: asking an any_completion_handler for its executor allocates, which
// would hide the token's own allocations (or their absence) in the cost test.
class Completion {
 public:
  Completion(detail::Handler<int> handler, error_code code, int value)
      : handler_(std::move(handler)), code_(code), value_(value) {}

  void operator()() { std::move(handler_)(code_, value_); }

 private:
  detail::Handler<int> handler_;
  error_code code_;
  int value_;
};

// Completes (posted, never inline) with `value`, or when `fail` with errc::not_found after
// filling the diagnostics (when the caller asked for them).
void fake_lookup(asio::any_io_executor executor, int value, bool fail, diagnostics* diag,
                 detail::Handler<int> handler) {
  ++g_started;
  error_code code;
  if (fail) {
    code = make_error_code(errc::not_found);
    value = 0;
    if (diag != nullptr) *diag = not_found_diagnostics();
  }
  asio::post(executor, Completion(std::move(handler), code, value));
}

// Completes only when the handler's cancellation slot fires, then with errc::cancelled and a
// message; with no slot connected it never completes.
void fake_wait_forever(asio::any_io_executor executor, diagnostics* diag, detail::Handler<int> handler) {
  ++g_started;
  auto slot = handler.get_cancellation_slot();
  if (!slot.is_connected()) {
    // Nothing can complete it: park it (the awaiting coroutine stays suspended).
    g_parked.emplace(std::move(handler));
    return;
  }
  auto pending = std::make_shared<detail::Handler<int>>(std::move(handler));
  slot.assign([executor, diag, pending](asio::cancellation_type) {
    if (!*pending) return;
    if (diag != nullptr) diag->message = "stopped waiting";
    asio::post(executor, Completion(std::move(*pending), make_error_code(errc::cancelled), 0));
  });
}

// The public face of the fakes, shaped like every `async_x` of the clients.
class FakeClient {
 public:
  explicit FakeClient(asio::any_io_executor executor) : executor_(std::move(executor)) {}

  template <class Token = default_token>
  auto async_lookup(int value, bool fail, Token&& token = {}) {
    return detail::start<int>(std::forward<Token>(token), nullptr, &fake_lookup, executor_, value, fail);
  }
  template <class Token = default_token>
  auto async_lookup(int value, bool fail, diagnostics& diag, Token&& token = {}) {
    return detail::start<int>(std::forward<Token>(token), &diag, &fake_lookup, executor_, value, fail);
  }
  template <class Token = default_token>
  auto async_wait_forever(Token&& token = {}) {
    return detail::start<int>(std::forward<Token>(token), nullptr, &fake_wait_forever, executor_);
  }
  template <class Token = default_token>
  auto async_wait_forever(diagnostics& diag, Token&& token = {}) {
    return detail::start<int>(std::forward<Token>(token), &diag, &fake_wait_forever, executor_);
  }

 private:
  asio::any_io_executor executor_;
};

// ---- test harness --------------------------------------------------------------------------

class UseAwaitable : public ::testing::Test {
 protected:
  void SetUp() override { g_started = 0; }
  // Destroys a parked handler (and the coroutine waiting on it) while `io` still exists.
  void TearDown() override { g_parked.reset(); }

  // Runs `coroutine` on `io` until nothing is left to do; returns its value (rethrows its
  // exception). Fails the test if it is still suspended then.
  template <class T>
  T run(asio::awaitable<T> coroutine) {
    auto future = asio::co_spawn(io, std::move(coroutine), asio::use_future);
    io.restart();
    io.run();
    if (future.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      ADD_FAILURE() << "the coroutine did not finish";
      throw std::runtime_error("coroutine still suspended");
    }
    return future.get();
  }

  asio::io_context io;
  FakeClient client{io.get_executor()};
};

// The error a coroutine threw, as seen by the test.
class Thrown {
 public:
  bool is_tinker_error = false;
  error_code code;
  diagnostics diag;
};

template <class T>
Thrown thrown_by(std::future<T>& future) {
  Thrown thrown;
  try {
    future.get();
  } catch (const error& e) {
    thrown.is_tinker_error = true;
    thrown.code = e.code();
    thrown.diag = e.diag();
  } catch (const boost::system::system_error& e) {
    thrown.code = e.code();
  }
  return thrown;
}

// ---- coroutines under test (named, parameters by value: GCC 12 rule) -----------------------

asio::awaitable<int> plain(FakeClient client, int value, bool fail) {
  co_return co_await client.async_lookup(value, fail, tinker::use_awaitable);
}

asio::awaitable<int> with_diag(FakeClient client, bool fail, diagnostics* diag) {
  co_return co_await client.async_lookup(5, fail, *diag, tinker::use_awaitable);
}

TEST_F(UseAwaitable, ReturnsTheValue) {
  EXPECT_EQ(run(plain(client, 7, false)), 7);
  EXPECT_EQ(g_started, 1);
}

TEST_F(UseAwaitable, ThrowsTinkerErrorCarryingTheOperationsDiagnostics) {
  auto future = asio::co_spawn(io, plain(client, 7, true), asio::use_future);
  io.run();
  const Thrown thrown = thrown_by(future);
  EXPECT_TRUE(thrown.is_tinker_error);
  EXPECT_EQ(thrown.code, errc::not_found);
  EXPECT_EQ(thrown.diag, not_found_diagnostics());
}

asio::awaitable<int> plain_default_token(FakeClient client, int value, bool fail) {
  co_return co_await client.async_lookup(value, fail);
}

TEST_F(UseAwaitable, TheDefaultTokenIsTinkerUseAwaitable) {
  static_assert(std::is_same_v<tinker::default_token, tinker::use_awaitable_t>);
  EXPECT_EQ(run(plain_default_token(client, 4, false)), 4);
  auto future = asio::co_spawn(io, plain_default_token(client, 7, true), asio::use_future);
  io.restart();
  io.run();
  const Thrown thrown = thrown_by(future);
  EXPECT_TRUE(thrown.is_tinker_error);
  EXPECT_EQ(thrown.code, errc::not_found);
  EXPECT_EQ(thrown.diag, not_found_diagnostics());
}

TEST_F(UseAwaitable, TheDiagnosticsOverloadAlsoFillsTheCallersDiagnostics) {
  diagnostics diag;
  auto future = asio::co_spawn(io, with_diag(client, true, &diag), asio::use_future);
  io.run();
  const Thrown thrown = thrown_by(future);
  EXPECT_TRUE(thrown.is_tinker_error);
  EXPECT_EQ(thrown.code, errc::not_found);
  EXPECT_EQ(thrown.diag, not_found_diagnostics());
  EXPECT_EQ(diag, not_found_diagnostics());

  diagnostics untouched;
  EXPECT_EQ(run(with_diag(client, false, &untouched)), 5);
  EXPECT_TRUE(untouched.empty());
}

asio::awaitable<int> started_then_awaited(FakeClient client) {
  auto lookup = client.async_lookup(3, false, tinker::use_awaitable);
  const int started_before = g_started;
  const int value = co_await std::move(lookup);
  co_return started_before * 100 + value;
}

TEST_F(UseAwaitable, TheOperationStartsWhenAwaitedNotWhenCalled) {
  EXPECT_EQ(run(started_then_awaited(client)), 3);  // 0 started before the co_await
}

TEST_F(UseAwaitable, TheAwaitableHasTheOperationsValueType) {
  using Awaited = decltype(client.async_lookup(1, false, tinker::use_awaitable));
  static_assert(std::is_same_v<Awaited, asio::awaitable<int>>);
  using Tupled = decltype(client.async_lookup(1, false, asio::as_tuple(tinker::use_awaitable)));
  static_assert(std::is_same_v<Tupled, asio::awaitable<std::tuple<error_code, int>>>);
  SUCCEED();
}

// ---- as_tuple ------------------------------------------------------------------------------

asio::awaitable<std::tuple<error_code, int>> tupled(FakeClient client, bool fail) {
  co_return co_await client.async_lookup(9, fail, asio::as_tuple(tinker::use_awaitable));
}

asio::awaitable<std::tuple<error_code, int>> tupled_with_diag(FakeClient client, diagnostics* diag) {
  co_return co_await client.async_lookup(9, true, *diag, asio::as_tuple(tinker::use_awaitable));
}

TEST_F(UseAwaitable, AsTupleGivesTheCodeAndValueWithoutThrowing) {
  const auto [ok_code, ok_value] = run(tupled(client, false));
  EXPECT_FALSE(ok_code);
  EXPECT_EQ(ok_value, 9);

  const auto [code, value] = run(tupled(client, true));
  EXPECT_EQ(code, errc::not_found);
  EXPECT_EQ(value, 0);
}

TEST_F(UseAwaitable, AsTupleLeavesTheDiagnosticsToTheDiagnosticsOverload) {
  diagnostics diag;
  const auto [code, value] = run(tupled_with_diag(client, &diag));
  EXPECT_EQ(code, errc::not_found);
  EXPECT_EQ(value, 0);
  EXPECT_EQ(diag, not_found_diagnostics());
}

// ---- redirect_error ------------------------------------------------------------------------

class Redirected {
 public:
  error_code code;
  int value = -1;
};

asio::awaitable<Redirected> redirected(FakeClient client, bool fail, error_code preset) {
  Redirected out;
  out.code = preset;
  out.value = co_await client.async_lookup(4, fail, asio::redirect_error(tinker::use_awaitable, out.code));
  co_return out;
}

TEST_F(UseAwaitable, RedirectErrorSetsTheCodeInsteadOfThrowing) {
  const Redirected failed = run(redirected(client, true, error_code{}));
  EXPECT_EQ(failed.code, errc::not_found);
  EXPECT_EQ(failed.value, 0);

  const Redirected succeeded = run(redirected(client, false, make_error_code(errc::timeout)));
  EXPECT_FALSE(succeeded.code);  // overwritten with success
  EXPECT_EQ(succeeded.value, 4);
}

// ---- bind_cancellation_slot ----------------------------------------------------------------

asio::awaitable<int> cancellable(FakeClient client, asio::cancellation_slot slot, diagnostics* diag) {
  co_return co_await client.async_wait_forever(*diag, asio::bind_cancellation_slot(slot, tinker::use_awaitable));
}

asio::awaitable<int> cancellable_without_diag(FakeClient client, asio::cancellation_slot slot) {
  co_return co_await client.async_wait_forever(asio::bind_cancellation_slot(slot, tinker::use_awaitable));
}

asio::awaitable<int> not_cancellable(FakeClient client) {
  co_return co_await client.async_wait_forever(tinker::use_awaitable);
}

// Runs until the fake operation has started and nothing else is ready.
void run_until_started(asio::io_context& io) {
  while (g_started == 0 && io.run_one() > 0) {
  }
  io.poll();
}

TEST_F(UseAwaitable, TheBoundSlotReachesTheOperationAndCancelsIt) {
  asio::cancellation_signal stop;
  diagnostics diag;
  auto future = asio::co_spawn(io, cancellable(client, stop.slot(), &diag), asio::use_future);
  run_until_started(io);
  ASSERT_EQ(g_started, 1);
  EXPECT_NE(future.wait_for(std::chrono::seconds(0)), std::future_status::ready);

  stop.emit(asio::cancellation_type::terminal);
  io.run();
  ASSERT_EQ(future.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  const Thrown thrown = thrown_by(future);
  EXPECT_TRUE(thrown.is_tinker_error);
  EXPECT_EQ(thrown.code, errc::cancelled);
  EXPECT_EQ(thrown.diag.message, "stopped waiting");
  EXPECT_EQ(diag.message, "stopped waiting");
}

TEST_F(UseAwaitable, TheBoundSlotCarriesTheTokensOwnDiagnosticsToo) {
  asio::cancellation_signal stop;
  auto future = asio::co_spawn(io, cancellable_without_diag(client, stop.slot()), asio::use_future);
  run_until_started(io);
  stop.emit(asio::cancellation_type::terminal);
  io.run();
  ASSERT_EQ(future.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  const Thrown thrown = thrown_by(future);
  EXPECT_TRUE(thrown.is_tinker_error);
  EXPECT_EQ(thrown.code, errc::cancelled);
  EXPECT_EQ(thrown.diag.message, "stopped waiting");
}

TEST_F(UseAwaitable, WithoutABoundSlotTheOperationSeesNone) {
  // The fake drops an operation it cannot cancel, so the coroutine never finishes: that proves
  // the slot the previous tests saw came from bind_cancellation_slot.
  auto future = asio::co_spawn(io, not_cancellable(client), asio::use_future);
  run_until_started(io);
  EXPECT_EQ(g_started, 1);
  EXPECT_TRUE(g_parked.has_value());
  EXPECT_NE(future.wait_for(std::chrono::seconds(0)), std::future_status::ready);
}

// ---- deferred ------------------------------------------------------------------------------

asio::awaitable<int> deferred_then_token(FakeClient client, bool fail) {
  auto lookup = client.async_lookup(6, fail, asio::deferred);
  co_return co_await std::move(lookup)(tinker::use_awaitable);
}

TEST_F(UseAwaitable, ADeferredOperationAwaitedWithTheTokenKeepsItsDiagnostics) {
  EXPECT_EQ(run(deferred_then_token(client, false)), 6);
  auto future = asio::co_spawn(io, deferred_then_token(client, true), asio::use_future);
  io.restart();
  io.run();
  const Thrown thrown = thrown_by(future);
  EXPECT_TRUE(thrown.is_tinker_error);
  EXPECT_EQ(thrown.code, errc::not_found);
  EXPECT_EQ(thrown.diag, not_found_diagnostics());
}

// ---- parallel_group ------------------------------------------------------------------------

using GroupResult = std::tuple<std::array<std::size_t, 2>, error_code, int, error_code, int>;

asio::awaitable<GroupResult> both(FakeClient client) {
  auto ok = client.async_lookup(1, false, asio::deferred);
  auto failing = client.async_lookup(2, true, asio::deferred);
  co_return co_await asio::experimental::make_parallel_group(std::move(ok), std::move(failing))
      .async_wait(asio::experimental::wait_for_all(), tinker::use_awaitable);
}

asio::awaitable<GroupResult> first_of(FakeClient client, diagnostics* diag) {
  auto forever = client.async_wait_forever(*diag, asio::deferred);
  auto quick = client.async_lookup(8, false, asio::deferred);
  co_return co_await asio::experimental::make_parallel_group(std::move(forever), std::move(quick))
      .async_wait(asio::experimental::wait_for_one(), tinker::use_awaitable);
}

TEST_F(UseAwaitable, AParallelGroupsCompletionIsAwaitedWithoutThrowing) {
  const auto [order, ok_code, ok_value, failed_code, failed_value] = run(both(client));
  EXPECT_FALSE(ok_code);
  EXPECT_EQ(ok_value, 1);
  EXPECT_EQ(failed_code, errc::not_found);
  EXPECT_EQ(failed_value, 0);
  EXPECT_EQ(g_started, 2);
  (void)order;
}

TEST_F(UseAwaitable, AParallelGroupCancelsTheSlowerOperationThroughItsSlot) {
  diagnostics diag;
  const auto [order, forever_code, forever_value, quick_code, quick_value] = run(first_of(client, &diag));
  EXPECT_EQ(order[0], 1u);  // the quick lookup finished first
  EXPECT_EQ(forever_code, errc::cancelled);
  EXPECT_EQ(diag.message, "stopped waiting");
  EXPECT_FALSE(quick_code);
  EXPECT_EQ(quick_value, 8);
  (void)forever_value;
}

// ---- other completion signatures -----------------------------------------------------------

// An initiation outside tinker: completes `void(error_code, Values...)` with `code` and
// `values`, taking no diagnostics.
template <class... Values>
class PostResult {
 public:
  PostResult(asio::any_io_executor executor, error_code code, Values... values)
      : executor_(std::move(executor)), code_(code), values_(std::move(values)...) {}

  template <class Handler>
  void operator()(Handler&& handler) {
    std::apply(
        [&](Values&... values) {
          asio::post(executor_, asio::append(std::forward<Handler>(handler), code_, std::move(values)...));
        },
        values_);
  }

 private:
  asio::any_io_executor executor_;
  error_code code_;
  std::tuple<Values...> values_;
};

asio::awaitable<void> code_only(asio::any_io_executor executor, error_code code) {
  co_await asio::async_initiate<const use_awaitable_t&, void(error_code)>(PostResult<>(executor, code),
                                                                          tinker::use_awaitable);
}

asio::awaitable<std::tuple<int, std::string>> two_values(asio::any_io_executor executor, error_code code) {
  co_return co_await asio::async_initiate<const use_awaitable_t&, void(error_code, int, std::string)>(
      PostResult<int, std::string>(executor, code, 1, "two"), tinker::use_awaitable);
}

TEST_F(UseAwaitable, AnOperationWithoutDiagnosticsThrowsTinkerErrorWithEmptyOnes) {
  run(code_only(io.get_executor(), error_code{}));
  auto future = asio::co_spawn(io, code_only(io.get_executor(), make_error_code(errc::timeout)), asio::use_future);
  io.restart();
  io.run();
  const Thrown thrown = thrown_by(future);
  EXPECT_TRUE(thrown.is_tinker_error);
  EXPECT_EQ(thrown.code, errc::timeout);
  EXPECT_TRUE(thrown.diag.empty());
}

TEST_F(UseAwaitable, SeveralValuesComeAsATuple) {
  const auto [number, text] = run(two_values(io.get_executor(), error_code{}));
  EXPECT_EQ(number, 1);
  EXPECT_EQ(text, "two");
  auto future =
      asio::co_spawn(io, two_values(io.get_executor(), make_error_code(errc::server_error)), asio::use_future);
  io.restart();
  io.run();
  EXPECT_EQ(thrown_by(future).code, errc::server_error);
}

// ---- cost ----------------------------------------------------------------------------------

// Counts the heap allocations of `rounds` plain co_awaits that succeed (the first round, which
// fills Asio's per-thread recycling caches, is not counted).
asio::awaitable<std::uint64_t> count_allocations(FakeClient client, int rounds, bool tinker_token) {
  co_await client.async_lookup(1, false, tinker::use_awaitable);
  co_await client.async_lookup(1, false, asio::use_awaitable);
  const AllocationCount counting;
  for (int i = 0; i < rounds; ++i) {
    if (tinker_token) {
      co_await client.async_lookup(i, false, tinker::use_awaitable);
    } else {
      co_await client.async_lookup(i, false, asio::use_awaitable);
    }
  }
  co_return counting.allocations();
}

// The counter the next test relies on sees an allocation of this thread, and none of another's.
TEST(AllocationCountTest, CountsThisThreadsAllocationsOnly) {
  const AllocationCount counting;
  auto owned = std::make_unique<int>(7);
  std::thread([] { auto elsewhere = std::make_unique<int>(8); }).join();
  EXPECT_EQ(counting.allocations(), 1u + 1u) << "the make_unique, and the std::thread's state";
  EXPECT_EQ(*owned, 7);
}

TEST_F(UseAwaitable, APlainCoAwaitAllocatesNoMoreThanAsiosOwnToken) {
  const std::uint64_t asio_token = run(count_allocations(client, 50, false));
  const std::uint64_t tinker_token = run(count_allocations(client, 50, true));
  EXPECT_LE(tinker_token, asio_token);
  EXPECT_EQ(tinker_token, 0u) << "the diagnostics or a frame went to the heap";
}

}  // namespace
}  // namespace tinker::test
