// A bounded pool of keep-alive connections for one origin and purpose
// (doc/architecture.md#connection-pools). It knows nothing about sockets: connections are opaque
// objects that can be closed, so the pool logic is tested with fake connections.
//
// Rules: most-recently-used idle connection first; at most `max_connections` open (idle + in
// use); requests beyond that wait in a FIFO queue and are handed connections (or free slots)
// in arrival order; a waiter that is cancelled leaves the queue; the sweep closes idle
// connections older than `idle_timeout`, and those beyond `max_idle` (least recently used
// first) once unused for `surplus_idle_grace`, so a steady load does not close and reopen
// connections at every dip in concurrency. Single-threaded: io thread only.
#pragma once

#include <tinker/config.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <list>
#include <memory>
#include <optional>
#include <vector>

namespace tinker::http {

class PooledConnection {
 public:
  virtual ~PooledConnection() = default;
  /// Closes the transport; the object is destroyed right after.
  virtual void close() noexcept = 0;

  std::chrono::steady_clock::time_point last_used{};
};

/// What acquire() hands out: an idle connection to reuse, or permission to open a new one
/// (connection == nullptr) that counts against the limit until released.
class Lease {
 public:
  Lease() = default;
  explicit Lease(std::unique_ptr<PooledConnection> c) : connection(std::move(c)) {}
  std::unique_ptr<PooledConnection> connection;
  bool reused() const noexcept { return connection != nullptr; }
};

class ConnectionPool {
 public:
  /// How long a connection beyond max_idle may sit unused before the sweep closes it.
  static constexpr std::chrono::milliseconds surplus_idle_grace{1000};

  ConnectionPool(boost::asio::any_io_executor executor, PoolLimits limits);
  ~ConnectionPool();
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  /// Waits for an idle connection or a free slot. Fails with errc::cancelled if the caller's
  /// cancellation slot fires while waiting or the pool is shut down.
  boost::asio::awaitable<Lease> acquire();

  /// The no-wait part of acquire(): a lease when one is available right now, else nothing (the
  /// caller then co_awaits acquire()). Saves a coroutine frame on the common path.
  std::optional<Lease> try_acquire();

  /// Returns a connection after a complete exchange (reusable) or gives its slot back
  /// (connection closed, or null when a new connection could not be opened).
  void release(std::unique_ptr<PooledConnection> connection, bool reusable);

  /// Closes idle connections unused for longer than idle_timeout, and those beyond max_idle
  /// unused for surplus_idle_grace.
  void sweep_idle(std::chrono::steady_clock::time_point now);

  /// Closes idle connections and fails every waiter; later acquires fail at once.
  void shutdown();

  std::size_t open() const noexcept { return open_; }
  std::size_t idle() const noexcept { return idle_.size(); }
  std::size_t waiting() const noexcept { return waiters_.size(); }
  std::size_t created() const noexcept { return created_; }
  const PoolLimits& limits() const noexcept { return limits_; }

 private:
  struct Waiter;
  bool hand_to_waiter(std::unique_ptr<PooledConnection>& connection);
  void close_connection(std::unique_ptr<PooledConnection> connection);

  boost::asio::any_io_executor executor_;
  PoolLimits limits_;
  std::vector<std::unique_ptr<PooledConnection>> idle_;  ///< back = most recently used
  std::list<Waiter*> waiters_;                           ///< FIFO
  std::size_t open_ = 0;
  std::size_t created_ = 0;
  bool shut_down_ = false;
};

}  // namespace tinker::http
