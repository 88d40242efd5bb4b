// ConnectionPool rules with fake connections: MRU reuse, limits, FIFO waiting, cancellation,
// idle limits and the sweep.
#include "http/pool.hpp"

#include <tinker/error.hpp>

#include <gtest/gtest.h>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <optional>
#include <vector>

namespace tinker::http {
namespace {

namespace asio = boost::asio;

class FakeConnection final : public PooledConnection {
 public:
  FakeConnection(int id_, std::vector<int>* closed_) : id(id_), closed(closed_) {}
  void close() noexcept override { closed->push_back(id); }
  int id;
  std::vector<int>* closed;
};

int id_of(const Lease& lease) {
  return static_cast<FakeConnection&>(*lease.connection).id;
}

// Records what each acquire got, in completion order.
class PoolHarness {
 public:
  explicit PoolHarness(PoolLimits limits) : pool(io.get_executor(), limits) {}

  static asio::awaitable<void> acquire_into(ConnectionPool* pool, std::vector<std::optional<int>>* results,
                                            std::size_t index) {
    try {
      Lease lease = co_await pool->acquire();
      (*results)[index] = lease.reused() ? id_of(lease) : 0;                 // 0 = "open a new connection"
      if (lease.reused()) pool->release(std::move(lease.connection), true);  // hand it straight back
    } catch (const error& e) {
      EXPECT_EQ(e.code(), make_error_code(errc::cancelled));
      (*results)[index] = -1;
    }
  }

  void start_acquire(asio::cancellation_signal* signal = nullptr) {
    results.emplace_back();
    auto coroutine = acquire_into(&pool, &results, results.size() - 1);
    if (signal != nullptr) {
      asio::co_spawn(io, std::move(coroutine), asio::bind_cancellation_slot(signal->slot(), asio::detached));
    } else {
      asio::co_spawn(io, std::move(coroutine), asio::detached);
    }
    run_ready();
  }

  // poll() leaves the context stopped when it runs out of work; restart it each time.
  void run_ready() {
    io.restart();
    io.poll();
  }

  std::unique_ptr<PooledConnection> make(int id) { return std::make_unique<FakeConnection>(id, &closed); }

  // Declared before the pool: its destructor still closes idle connections into `closed`.
  asio::io_context io;
  std::vector<std::optional<int>> results;
  std::vector<int> closed;
  ConnectionPool pool;
};

TEST(HttpPool, OpensUpToTheLimitThenQueuesInFifoOrder) {
  PoolHarness h(PoolLimits(2, 2));
  h.start_acquire();
  h.start_acquire();
  h.start_acquire();  // waits
  h.start_acquire();  // waits
  EXPECT_EQ(h.results[0], 0);
  EXPECT_EQ(h.results[1], 0);
  EXPECT_FALSE(h.results[2].has_value());
  EXPECT_EQ(h.pool.waiting(), 2u);
  EXPECT_EQ(h.pool.open(), 2u);

  h.pool.release(h.make(7), true);  // the first waiter gets connection 7 and hands it back...
  h.run_ready();
  EXPECT_EQ(h.results[2], 7);
  EXPECT_EQ(h.results[3], 7);  // ...to the next waiter, in order
  EXPECT_EQ(h.pool.open(), 2u);
  EXPECT_EQ(h.pool.created(), 2u);
}

TEST(HttpPool, MostRecentlyUsedIdleConnectionFirst) {
  PoolHarness h(PoolLimits(4, 4));
  for (int i = 0; i < 3; ++i) h.start_acquire();
  h.pool.release(h.make(1), true);
  h.pool.release(h.make(2), true);
  h.pool.release(h.make(3), true);
  h.start_acquire();
  EXPECT_EQ(h.results[3], 3);
}

TEST(HttpPool, AFailedConnectionGivesItsSlotToTheNextWaiter) {
  PoolHarness h(PoolLimits(1, 1));
  h.start_acquire();
  h.start_acquire();
  EXPECT_EQ(h.pool.waiting(), 1u);
  h.pool.release(nullptr, false);  // the new connection could not be opened
  h.run_ready();
  EXPECT_EQ(h.results[1], 0);  // the waiter may open one now
  EXPECT_EQ(h.pool.open(), 1u);
  EXPECT_EQ(h.pool.created(), 2u);
}

TEST(HttpPool, AnUnusableConnectionIsClosedNotReused) {
  PoolHarness h(PoolLimits(2, 2));
  h.start_acquire();
  h.pool.release(h.make(5), false);
  EXPECT_EQ(h.closed, std::vector<int>{5});
  EXPECT_EQ(h.pool.open(), 0u);
  EXPECT_EQ(h.pool.idle(), 0u);
}

TEST(HttpPool, CancelledWaiterLeavesTheQueue) {
  PoolHarness h(PoolLimits(1, 1));
  h.start_acquire();
  asio::cancellation_signal signal;
  h.start_acquire(&signal);
  h.start_acquire();
  EXPECT_EQ(h.pool.waiting(), 2u);
  signal.emit(asio::cancellation_type::terminal);
  h.run_ready();
  EXPECT_EQ(h.results[1], -1);
  EXPECT_EQ(h.pool.waiting(), 1u);
  h.pool.release(h.make(9), true);
  h.run_ready();
  EXPECT_EQ(h.results[2], 9);  // the cancelled waiter was skipped
}

TEST(HttpPool, IdleLimitClosesTheLeastRecentlyUsedAtTheSweep) {
  PoolHarness h(PoolLimits(3, 1));
  for (int i = 0; i < 3; ++i) h.start_acquire();
  h.pool.release(h.make(1), true);
  h.pool.release(h.make(2), true);
  EXPECT_TRUE(h.closed.empty()) << "a dip in load closes nothing at once";
  EXPECT_EQ(h.pool.idle(), 2u);
  h.pool.sweep_idle(std::chrono::steady_clock::now() + std::chrono::milliseconds(100));
  EXPECT_TRUE(h.closed.empty()) << "surplus connections get a grace period";
  h.pool.sweep_idle(std::chrono::steady_clock::now() + ConnectionPool::surplus_idle_grace +
                    std::chrono::milliseconds(100));
  EXPECT_EQ(h.closed, std::vector<int>{1});
  EXPECT_EQ(h.pool.idle(), 1u);
  EXPECT_EQ(h.pool.open(), 2u);
}

TEST(HttpPool, AConnectionBeyondTheIdleLimitIsReusedUnderSteadyLoad) {
  PoolHarness h(PoolLimits(3, 1));
  for (int i = 0; i < 3; ++i) h.start_acquire();
  h.pool.release(h.make(1), true);
  h.pool.release(h.make(2), true);
  h.pool.release(h.make(3), true);
  for (int i = 0; i < 3; ++i) h.start_acquire();
  EXPECT_TRUE(h.closed.empty());
  EXPECT_EQ(h.pool.created(), 3u) << "no connection closed and reopened";
}

TEST(HttpPool, SweepClosesConnectionsIdleTooLong) {
  PoolLimits limits(2, 2);
  limits.idle_timeout = std::chrono::milliseconds(100);
  PoolHarness h(limits);
  h.start_acquire();
  h.start_acquire();
  h.pool.release(h.make(1), true);
  h.pool.release(h.make(2), true);
  h.pool.sweep_idle(std::chrono::steady_clock::now() + std::chrono::milliseconds(50));
  EXPECT_TRUE(h.closed.empty());
  h.pool.sweep_idle(std::chrono::steady_clock::now() + std::chrono::seconds(1));
  EXPECT_EQ(h.closed.size(), 2u);
  EXPECT_EQ(h.pool.open(), 0u);
}

TEST(HttpPool, ShutdownFailsWaitersAndClosesIdle) {
  PoolHarness h(PoolLimits(1, 1));
  h.start_acquire();
  h.start_acquire();
  h.pool.shutdown();
  h.run_ready();
  EXPECT_EQ(h.results[1], -1);
  h.start_acquire();
  EXPECT_EQ(h.results[2], -1);
}

}  // namespace
}  // namespace tinker::http
