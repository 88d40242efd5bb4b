// The time limit of the exchanges on one connection, kept by a timer that is armed lazily.
//
// Beast's basic_stream arms a timer for every read and write and cancels it when the operation
// completes: per exchange, two timer-queue insertions and removals, and a cancelled wait whose
// handler still runs. Here the timer outlives the exchanges: starting an exchange only records its
// deadline, and the timer, armed at most once per timeout, checks on waking whether the exchange
// then in progress is past its deadline. An exchange that is cancels the socket's operations, and
// its reader reports a timeout (expired() says which cancellations were timeouts).
//
// Single-threaded like the connection: every call, and the timer's handler, run on the
// connection's executor.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <memory>

namespace tinker::http {

class ExchangeDeadline {
 public:
  using clock = std::chrono::steady_clock;

  explicit ExchangeDeadline(const boost::asio::any_io_executor& executor);
  /// Detaches from the timer: a wake-up already queued finds no socket and does nothing.
  ~ExchangeDeadline();
  ExchangeDeadline(const ExchangeDeadline&) = delete;
  ExchangeDeadline& operator=(const ExchangeDeadline&) = delete;

  /// Watches `socket` until stop(): its pending operations are cancelled once `timeout` has
  /// passed. Calling it again moves the deadline (a new phase of the same exchange).
  void start(boost::asio::ip::tcp::socket& socket, std::chrono::milliseconds timeout);
  /// The exchange is over: a later wake-up leaves the socket alone.
  void stop() noexcept { state_->socket = nullptr; }
  /// The deadline passed during the watch (and the socket's operations were cancelled).
  bool expired() const noexcept { return state_->expired; }

 private:
  struct State {
    explicit State(const boost::asio::any_io_executor& executor) : timer(executor) {}
    boost::asio::steady_timer timer;
    boost::asio::ip::tcp::socket* socket = nullptr;  ///< watched; null between exchanges
    clock::time_point deadline{};
    clock::time_point wakes_at{};  ///< when the timer's wait ends, if armed
    bool armed = false;
    bool expired = false;
  };

  static void arm(const std::shared_ptr<State>& state);
  static void on_wake(const std::shared_ptr<State>& state);

  // Shared with the timer's handler, which may run after the connection is gone.
  std::shared_ptr<State> state_;
};

}  // namespace tinker::http
