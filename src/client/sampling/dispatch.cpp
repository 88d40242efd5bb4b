#include "client/sampling/dispatch.hpp"

#include "client/training/chunking.hpp"

#include <tinker/error.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <string>
#include <type_traits>
#include <variant>

namespace tinker::client::sampling {
namespace {

namespace asio = boost::asio;

std::int64_t require_at_least_one(std::int64_t value, const char* name) {
  if (value < 1) {
    throw error(errc::invalid_configuration, std::string(name) + " must be at least 1, got " + std::to_string(value));
  }
  return value;
}

}  // namespace

std::int64_t estimate_prompt_bytes(const ModelInput& prompt) {
  return training::estimate_input_bytes(prompt, 10);
}

DispatchPermit::DispatchPermit(SampleDispatch& owner, async::BudgetReservation count,
                               std::optional<async::BudgetReservation> throttled, async::BudgetReservation bytes,
                               bool was_throttled)
    : owner_(&owner),
      count_(std::move(count)),
      throttled_(std::move(throttled)),
      bytes_(std::move(bytes)),
      was_throttled_(was_throttled) {}

DispatchPermit::DispatchPermit(DispatchPermit&& other) noexcept
    : owner_(other.owner_),
      count_(std::move(other.count_)),
      throttled_(std::move(other.throttled_)),
      bytes_(std::move(other.bytes_)),
      was_throttled_(other.was_throttled_) {
  other.owner_ = nullptr;
}

DispatchPermit::~DispatchPermit() {
  if (owner_ != nullptr) owner_->on_released(was_throttled_);
  // The reservations release their budgets after this (members are destroyed afterwards).
}

SampleDispatch::SampleDispatch(asio::any_io_executor executor, SampleTuning tuning, std::int64_t dispatch_bytes,
                               std::shared_ptr<SampleBackoff> backoff)
    : executor_(executor),
      tuning_(tuning),
      backoff_(std::move(backoff)),
      count_(executor, require_at_least_one(tuning.dispatch_count, "sample dispatch count") - 1),
      throttled_(executor,
                 require_at_least_one(tuning.dispatch_throttled_count, "sample throttled dispatch count") - 1),
      bytes_(executor, require_at_least_one(dispatch_bytes, "sample_dispatch_bytes_semaphore_size")) {}

// While a backoff is recent, bytes weigh more (doc/protocol.md#pools-timeouts-and-throttles: the stricter throttle).
std::int64_t SampleDispatch::weighted_bytes(std::int64_t estimated_bytes, bool recent) const noexcept {
  return recent ? estimated_bytes * tuning_.recent_byte_weight : estimated_bytes;
}

// The clock is read only once some backoff was recorded: a client that was never pushed back reads none here per
// sample (a clock read is 20-80 ns on a VM, doc/performance.md#samplingclient).
bool SampleDispatch::backoff_recent() const noexcept {
  if (!backoff_->until()) return false;
  return backoff_->recent(SampleBackoff::Clock::now(), tuning_.backoff_recent_window);
}

void SampleDispatch::count_dispatched(bool recent) noexcept {
  ++in_flight_;
  max_in_flight_ = std::max(max_in_flight_, in_flight_);
  if (recent) {
    ++throttled_in_flight_;
    max_throttled_ = std::max(max_throttled_, throttled_in_flight_);
  }
}

asio::awaitable<DispatchPermit> SampleDispatch::acquire(std::int64_t estimated_bytes) {
  const bool recent = backoff_recent();
  co_await count_.acquire(1);
  async::BudgetReservation count(count_, 1);  // released if a later acquire is cancelled
  std::optional<async::BudgetReservation> throttled;
  if (recent) {
    co_await throttled_.acquire(1);
    throttled.emplace(throttled_, 1);
  }
  const std::int64_t weighted = weighted_bytes(estimated_bytes, recent);
  co_await bytes_.acquire(weighted);
  async::BudgetReservation bytes(bytes_, weighted);
  count_dispatched(recent);
  co_return DispatchPermit(*this, std::move(count), std::move(throttled), std::move(bytes), recent);
}

std::optional<DispatchPermit> SampleDispatch::try_acquire(std::int64_t estimated_bytes) {
  const bool recent = backoff_recent();
  if (!count_.available() || (recent && !throttled_.available()) || !bytes_.available()) return std::nullopt;
  const std::int64_t weighted = weighted_bytes(estimated_bytes, recent);
  count_.try_acquire(1);
  async::BudgetReservation count(count_, 1);
  std::optional<async::BudgetReservation> throttled;
  if (recent) {
    throttled_.try_acquire(1);
    throttled.emplace(throttled_, 1);
  }
  bytes_.try_acquire(weighted);
  async::BudgetReservation bytes(bytes_, weighted);
  count_dispatched(recent);
  return std::optional<DispatchPermit>(std::in_place, *this, std::move(count), std::move(throttled), std::move(bytes),
                                       recent);
}

bool SampleDispatch::backoff_in_force() const noexcept {
  const auto until = backoff_->until();
  return until && SampleBackoff::Clock::now() < *until;
}

void SampleDispatch::on_released(bool was_throttled) noexcept {
  --in_flight_;
  if (was_throttled) --throttled_in_flight_;
}

asio::awaitable<void> SampleDispatch::wait_out_backoff() {
  std::optional<asio::steady_timer> timer;
  for (;;) {
    const auto until = backoff_->until();
    if (!until || SampleBackoff::Clock::now() >= *until) co_return;
    if (!timer) timer.emplace(executor_);
    timer->expires_at(*until);
    co_await timer->async_wait(asio::use_awaitable);
  }
}

void SampleDispatch::note_backpressure(std::int64_t estimated_bytes) {
  const auto wait = estimated_bytes <= tuning_.large_prompt_bytes ? tuning_.backoff_short : tuning_.backoff_long;
  backoff_->extend_to(SampleBackoff::Clock::now() + wait);
}

}  // namespace tinker::client::sampling
