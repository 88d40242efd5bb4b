// Sample resubmission (doc/protocol.md#sample-resubmission): the sampling RetryHandler, one per sampling session
// (shared by the copies of its SamplingClient). It bounds the sample operations in flight end to end (client/config
// sample_max_concurrent_requests), decides which failures start a fresh attempt (a new seq_id) and after what delay,
// and detects stuck requests: when no sample operation through it has completed successfully for `progress_timeout`,
// the waiting ones fail.
//
// io thread of the holder only.
#pragma once

#include "client/async/byte_budget.hpp"
#include "core/coarse_clock.hpp"

#include <tinker/error.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace tinker::client::sampling {

class SampleRetryHandler;

/// One sample operation's place in the handler's concurrency limit; empty = not counted
/// (no resubmission). Released when destroyed.
class RetrySlot {
 public:
  RetrySlot() = default;
  explicit RetrySlot(std::shared_ptr<SampleRetryHandler> handler) : handler_(std::move(handler)) {}
  RetrySlot(RetrySlot&& other) noexcept = default;
  RetrySlot& operator=(RetrySlot&& other) noexcept;
  RetrySlot(const RetrySlot&) = delete;
  RetrySlot& operator=(const RetrySlot&) = delete;
  ~RetrySlot();

  bool active() const noexcept { return handler_ != nullptr; }

 private:
  void release() noexcept;
  std::shared_ptr<SampleRetryHandler> handler_;
};

class SampleRetryHandler : public std::enable_shared_from_this<SampleRetryHandler> {
 public:
  using Clock = std::chrono::steady_clock;

  /// How fresh attempts are spaced (doc/sampling.md#retry-settings); `enabled` false: none.
  class Delays {
   public:
    Delays() = default;
    bool enabled = true;
    std::chrono::milliseconds base{500};
    std::chrono::milliseconds max{10'000};
    double jitter_factor = 0.25;
  };

  /// `progress_timeout` nullopt = no stuck detection. `random_unit` in [0, 1) for the jitter.
  SampleRetryHandler(boost::asio::any_io_executor executor, std::int64_t max_concurrent,
                     std::optional<std::chrono::milliseconds> progress_timeout, Delays delays,
                     std::function<double()> random_unit);

  /// Waits for a place among the operations in flight. Entering while none are in flight
  /// restarts the progress clock (doc/protocol.md#sample-resubmission).
  boost::asio::awaitable<RetrySlot> enter();
  /// The slot enter() would give without waiting, or an empty one (then nothing is taken): the
  /// common path without enter()'s coroutine frames.
  RetrySlot try_enter();

  /// A sample operation completed successfully at `now` (a clock read the caller made as its answer arrived).
  void note_progress(Clock::time_point now) noexcept { last_progress_ = now; }

  /// doc/protocol.md#sample-resubmission: timeouts, connection failures, 408, 409, 429, 5xx and a lost result (410)
  /// start a fresh attempt; a failed future, cancellation and everything else do not.
  static bool should_retry(boost::system::error_code ec) noexcept;

  /// False when the client's SamplingRetryConfig turned fresh attempts off: a failure goes to the caller as it is.
  bool retries_enabled() const noexcept { return delays_.enabled; }

  /// The delay after attempt `attempt` (1, 2, ...): min(base * 2^(attempt-1), max), +- jitter
  /// (25 % by default), clamped to [0, max].
  std::chrono::milliseconds retry_delay(int attempt) const;

  /// True once no progress was made for the progress timeout (asked on the coarse clock: up to a few
  /// milliseconds late, never early).
  bool stuck() const noexcept;
  /// The same at `now`.
  bool stuck_at(Clock::time_point now) const noexcept;
  /// errc::timeout with the protocol's message.
  boost::system::error_code stuck_error(diagnostics& diag) const;

  std::optional<std::chrono::milliseconds> progress_timeout() const noexcept { return progress_timeout_; }
  std::int64_t in_flight() const noexcept { return in_flight_; }

  /// An operation under the stuck detector's watch from construction to destruction: when no
  /// progress was made for the progress timeout, the watchdog marks it stuck and emits a
  /// terminal cancellation on `signal` (which must outlive the watch). An empty watch (no
  /// stuck detection) is never stuck.
  class Watch {
   public:
    Watch() = default;
    Watch(const Watch&) = delete;
    Watch& operator=(const Watch&) = delete;
    ~Watch();
    bool stuck() const noexcept { return entry_.stuck; }

   private:
    friend class SampleRetryHandler;
    // A link of the handler's intrusive list of watched operations (a std::list node would be
    // an allocation per watch, two per sample).
    class Entry {
     public:
      boost::asio::cancellation_signal* signal = nullptr;
      bool stuck = false;
      Entry* previous = nullptr;
      Entry* next = nullptr;
    };
    SampleRetryHandler* handler_ = nullptr;
    Entry entry_;
  };

  /// Puts an operation cancelled through `signal` under watch (a no-op without stuck detection).
  /// io thread only; the watch must not outlive the handler.
  ///
  /// One watchdog timer per handler serves every watched operation (a timer and a parallel
  /// group per operation cost a third of the client's CPU per sample at 64 in flight): it
  /// wakes at the progress deadline and cancels the operations registered at that moment.
  void watch(Watch& watch, boost::asio::cancellation_signal& signal);

 private:
  friend class RetrySlot;
  RetrySlot admit();
  void leave() noexcept;
  void arm_watchdog();
  void disarm_watchdog();
  void on_watchdog(boost::system::error_code ec);

  boost::asio::any_io_executor executor_;
  async::ByteBudget slots_;  ///< a counting semaphore: budget n - 1 taken 1 at a time
  std::optional<std::chrono::milliseconds> progress_timeout_;
  Delays delays_;
  std::function<double()> random_unit_;
  std::int64_t in_flight_ = 0;
  Clock::time_point last_progress_ = Clock::now();
  /// The last progress the watchdog found stuck (on the precise clock): stuck() agrees at once, not a
  /// coarse tick later. Lapses by itself when progress moves last_progress_.
  Clock::time_point found_stuck_since_ = Clock::time_point::min();
  Watch::Entry* watched_first_ = nullptr;  ///< operations under watch now, oldest first
  Watch::Entry* watched_last_ = nullptr;
  boost::asio::steady_timer watchdog_;
  bool watchdog_armed_ = false;
};

}  // namespace tinker::client::sampling
