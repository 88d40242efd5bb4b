// The stop signal of a holder's background loops (heartbeat, JWT refresh, telemetry).
//
// Each loop is a named coroutine holding a shared_ptr<Lifetime> and a weak_ptr to its holder
// (doc/architecture.md#toolchain-rules, rule 2). Every wait of a loop — a sleep, or a request in flight — is raced
// against the lifetime's stop timer with a parallel group, so ClientHolder::shutdown() ends
// every loop at once: their pending operation is cancelled and nothing stays queued on the
// io_context.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <memory>
#include <optional>

namespace tinker::client::session {

class Lifetime {
 public:
  explicit Lifetime(boost::asio::any_io_executor executor);

  bool stopped() const noexcept { return stopped_; }
  /// Wakes every wait below with "stopped". Idempotent.
  void stop();

  boost::asio::steady_timer& stop_timer() noexcept { return stop_timer_; }

 private:
  bool stopped_ = false;
  boost::asio::steady_timer stop_timer_;  ///< never expires; cancelled by stop()
};

/// Sleeps for `duration`. False when the lifetime stopped first (or already had).
boost::asio::awaitable<bool> sleep_unless_stopped(std::shared_ptr<Lifetime> lifetime,
                                                  std::chrono::steady_clock::duration duration);

/// Waits for `timer` to expire or be cancelled (a wake-up). False when the lifetime stopped.
boost::asio::awaitable<bool> wait_unless_stopped(std::shared_ptr<Lifetime> lifetime,
                                                 std::shared_ptr<boost::asio::steady_timer> timer);

/// Runs `operation` to completion, or cancels it when the lifetime stops first (nullopt then).
/// References inside `operation` stay valid: this returns only after it has finished.
boost::asio::awaitable<std::optional<boost::system::error_code>> run_unless_stopped(
    std::shared_ptr<Lifetime> lifetime, boost::asio::awaitable<boost::system::error_code> operation);

}  // namespace tinker::client::session
