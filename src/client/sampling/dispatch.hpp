// The sampling submit's local throttles (doc/protocol.md#pools-timeouts-and-throttles, doc/sampling.md#sampling), one
// per client holder and shared by all its SamplingClients: the dispatch count (400), the throttled count (10, taken in
// addition while "backoff recent"), and the dispatch bytes (client/config sample_dispatch_bytes_semaphore_size,
// estimates weighted x20 while backoff recent), plus the backoff state shared per (base URL, API key)
// (client/sampling/backoff.hpp).
//
// The limits hold only while a request is being submitted (up to its ticket), not while its
// result is awaited. io thread of the holder only, except the shared backoff state (atomic).
#pragma once

#include "client/async/byte_budget.hpp"
#include "client/sampling/backoff.hpp"

#include <tinker/types/model_input.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

namespace tinker::client::sampling {

/// The numbers of doc/protocol.md#sample-resubmission, doc/protocol.md#pools-timeouts-and-throttles,
/// doc/sampling.md#sampling. Internal knob: tests shorten the waits and lower the limits with
/// ClientHolder::set_sample_tuning() before the first sample.
class SampleTuning {
 public:
  SampleTuning() = default;

  std::int64_t dispatch_count = 400;           ///< concurrent asample submissions
  std::int64_t dispatch_throttled_count = 10;  ///< additionally taken while backoff recent
  /// Bytes of prompts being submitted; nullopt = client/config sample_dispatch_bytes_semaphore_size.
  std::optional<std::int64_t> dispatch_bytes;
  std::int64_t recent_byte_weight = 20;       ///< estimate multiplier while backoff recent
  std::int64_t large_prompt_bytes = 131'072;  ///< estimates above this back off the long wait
  std::chrono::milliseconds backoff_short{1'000};
  std::chrono::milliseconds backoff_long{5'000};
  std::chrono::milliseconds backoff_recent_window{10'000};

  /// Sample resubmission (doc/protocol.md#sample-resubmission): concurrent sample operations end to end; nullopt =
  /// client/config sample_max_concurrent_requests (and the client's SamplingRetryConfig::max_connections).
  std::optional<std::int64_t> max_concurrent_samples;
  /// When set, these replace the SamplingRetryConfig values of every sampler of the holder.
  std::optional<std::chrono::milliseconds> progress_timeout;
  std::optional<std::chrono::milliseconds> retry_delay_base;
  std::optional<std::chrono::milliseconds> retry_delay_max;
};

/// doc/protocol.md#pools-timeouts-and-throttles: text tokens x 10, raw image bytes, an asset pointer's location length,
/// raw dmel bytes.
std::int64_t estimate_prompt_bytes(const ModelInput& prompt);

class SampleDispatch;

/// What one submission holds; gives it all back when destroyed.
class DispatchPermit {
 public:
  DispatchPermit(SampleDispatch& owner, async::BudgetReservation count,
                 std::optional<async::BudgetReservation> throttled, async::BudgetReservation bytes, bool was_throttled);
  DispatchPermit(DispatchPermit&& other) noexcept;
  DispatchPermit& operator=(DispatchPermit&&) = delete;
  ~DispatchPermit();

 private:
  SampleDispatch* owner_;
  async::BudgetReservation count_;
  std::optional<async::BudgetReservation> throttled_;
  async::BudgetReservation bytes_;
  bool was_throttled_;
};

class SampleDispatch {
 public:
  /// `dispatch_bytes`: the byte budget (the tuning's, else the server flag's).
  SampleDispatch(boost::asio::any_io_executor executor, SampleTuning tuning, std::int64_t dispatch_bytes,
                 std::shared_ptr<SampleBackoff> backoff);
  SampleDispatch(const SampleDispatch&) = delete;
  SampleDispatch& operator=(const SampleDispatch&) = delete;

  /// Takes the dispatch count, the throttled count when backoff is recent, and the estimate's
  /// bytes (weighted when backoff is recent). Cancellable: then nothing stays taken and the
  /// coroutine sees operation_aborted as a boost::system::system_error.
  boost::asio::awaitable<DispatchPermit> acquire(std::int64_t estimated_bytes);
  /// The permit acquire() would give without waiting, or nothing (then nothing is taken): the
  /// common path without acquire()'s coroutine frames.
  std::optional<DispatchPermit> try_acquire(std::int64_t estimated_bytes);

  /// Sleeps while the shared backoff is in force (re-checking, since another client may extend
  /// it meanwhile). Cancellable as acquire().
  boost::asio::awaitable<void> wait_out_backoff();
  /// True if wait_out_backoff() would wait now (a caller skips its coroutine frame otherwise).
  bool backoff_in_force() const noexcept;

  /// A 429 (or an in-window 402) answered a submission of `estimated_bytes`: back off 1 s, or
  /// 5 s above the large-prompt threshold, for every client sharing the state.
  void note_backpressure(std::int64_t estimated_bytes);

  const SampleTuning& tuning() const noexcept { return tuning_; }
  SampleBackoff& backoff() noexcept { return *backoff_; }
  const std::shared_ptr<SampleBackoff>& shared_backoff() const noexcept { return backoff_; }
  const async::ByteBudget& bytes() const noexcept { return bytes_; }

  /// Submissions holding a permit now, and the most there ever were (for tests and stats).
  std::int64_t in_flight() const noexcept { return in_flight_; }
  std::int64_t max_in_flight() const noexcept { return max_in_flight_; }
  std::int64_t max_throttled_in_flight() const noexcept { return max_throttled_; }

 private:
  friend class DispatchPermit;
  void on_released(bool was_throttled) noexcept;
  std::int64_t weighted_bytes(std::int64_t estimated_bytes, bool recent) const noexcept;
  /// Whether a backoff ended within the recent window (or is in force).
  bool backoff_recent() const noexcept;
  /// Updates the in-flight counters (and their maxima) for a permit just given.
  void count_dispatched(bool recent) noexcept;

  boost::asio::any_io_executor executor_;
  SampleTuning tuning_;
  std::shared_ptr<SampleBackoff> backoff_;
  // Counting semaphores as overdraft budgets of size n - 1 taken 1 at a time: an acquire
  // proceeds while the remainder is >= 0, so exactly n holders fit.
  async::ByteBudget count_;
  async::ByteBudget throttled_;
  async::ByteBudget bytes_;
  std::int64_t in_flight_ = 0;
  std::int64_t max_in_flight_ = 0;
  std::int64_t throttled_in_flight_ = 0;
  std::int64_t max_throttled_ = 0;
};

}  // namespace tinker::client::sampling
