#include "client/sampling/retry.hpp"

#include "http/retry_policy.hpp"

#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

namespace tinker::client::sampling {

namespace asio = boost::asio;
using std::chrono::milliseconds;

RetrySlot& RetrySlot::operator=(RetrySlot&& other) noexcept {
  if (this != &other) {
    release();
    handler_ = std::move(other.handler_);
  }
  return *this;
}

RetrySlot::~RetrySlot() {
  release();
}

void RetrySlot::release() noexcept {
  if (handler_) {
    handler_->leave();
    handler_.reset();
  }
}

SampleRetryHandler::SampleRetryHandler(asio::any_io_executor executor, std::int64_t max_concurrent,
                                       std::optional<milliseconds> progress_timeout, Delays delays,
                                       std::function<double()> random_unit)
    : executor_(executor),
      slots_(executor, std::max<std::int64_t>(max_concurrent, 1) - 1),
      progress_timeout_(progress_timeout),
      delays_(delays),
      random_unit_(std::move(random_unit)),
      watchdog_(executor_) {}

asio::awaitable<RetrySlot> SampleRetryHandler::enter() {
  co_await slots_.acquire(1);
  co_return admit();
}

RetrySlot SampleRetryHandler::try_enter() {
  if (!slots_.try_acquire(1)) return RetrySlot();
  return admit();
}

// A slot is taken: the progress clock starts with the first sample in flight.
RetrySlot SampleRetryHandler::admit() {
  if (in_flight_ == 0) last_progress_ = Clock::now();
  ++in_flight_;
  return RetrySlot(shared_from_this());
}

void SampleRetryHandler::leave() noexcept {
  --in_flight_;
  slots_.release(1);
}

bool SampleRetryHandler::should_retry(boost::system::error_code ec) noexcept {
  return ec == errc::gone || http::call_should_retry(ec);
}

milliseconds SampleRetryHandler::retry_delay(int attempt) const {
  const double base = static_cast<double>(delays_.base.count());
  const double cap = static_cast<double>(delays_.max.count());
  double delay = std::min(base * std::pow(2.0, std::min(attempt - 1, 60)), cap);
  const double unit = random_unit_ ? random_unit_() : 0.5;
  delay += delay * delays_.jitter_factor * (2.0 * unit - 1.0);
  return milliseconds(static_cast<milliseconds::rep>(std::clamp(delay, 0.0, cap)));
}

// Asked twice per sample: the coarse clock (src/core/coarse_clock.hpp) against the precise stamp of
// the last progress, so a stall is seen up to a few milliseconds late, never early.
bool SampleRetryHandler::stuck() const noexcept {
  if (found_stuck_since_ == last_progress_) return true;
  return stuck_at(core::coarse_steady_now());
}

bool SampleRetryHandler::stuck_at(Clock::time_point now) const noexcept {
  return progress_timeout_ && now - last_progress_ >= *progress_timeout_;
}

boost::system::error_code SampleRetryHandler::stuck_error(diagnostics& diag) const {
  std::ostringstream message;
  const double seconds = progress_timeout_ ? static_cast<double>(progress_timeout_->count()) / 1000.0 : 0.0;
  message << "No progress made in " << seconds << "s. Requests appear to be stuck.";
  diag.clear();
  diag.message = message.str();
  return make_error_code(errc::timeout);
}

SampleRetryHandler::Watch::~Watch() {
  if (handler_ == nullptr) return;
  Entry& entry = entry_;
  (entry.previous != nullptr ? entry.previous->next : handler_->watched_first_) = entry.next;
  (entry.next != nullptr ? entry.next->previous : handler_->watched_last_) = entry.previous;
  if (handler_->watched_first_ == nullptr) handler_->disarm_watchdog();  // an armed timer keeps io_context::run() busy
}

void SampleRetryHandler::watch(Watch& watch, asio::cancellation_signal& signal) {
  if (!progress_timeout_ || watch.handler_ != nullptr) return;
  watch.handler_ = this;
  watch.entry_.signal = &signal;
  Watch::Entry& entry = watch.entry_;
  entry.previous = watched_last_;
  entry.next = nullptr;
  (watched_last_ != nullptr ? watched_last_->next : watched_first_) = &entry;
  watched_last_ = &entry;
  arm_watchdog();
}

void SampleRetryHandler::arm_watchdog() {
  if (watchdog_armed_ || !progress_timeout_) return;
  watchdog_armed_ = true;
  watchdog_.expires_at(last_progress_ + *progress_timeout_);
  watchdog_.async_wait([weak = weak_from_this()](boost::system::error_code ec) {
    if (auto self = weak.lock()) self->on_watchdog(ec);
  });
}

void SampleRetryHandler::disarm_watchdog() {
  if (!watchdog_armed_) return;
  watchdog_armed_ = false;
  watchdog_.cancel();
}

// A cancelled wait changes nothing: disarm_watchdog() or a new arm_watchdog() cancelled it.
void SampleRetryHandler::on_watchdog(boost::system::error_code ec) {
  if (ec == asio::error::operation_aborted) return;
  watchdog_armed_ = false;
  if (watched_first_ == nullptr) return;
  // The precise clock: the watchdog fired on it at the deadline.
  if (!stuck_at(Clock::now())) {
    arm_watchdog();  // progress was made meanwhile: wait for the new deadline
    return;
  }
  found_stuck_since_ = last_progress_;
  // Cancelling an operation never completes it inside emit(), but copy the list anyway.
  std::vector<Watch::Entry*> stuck_now;
  for (Watch::Entry* entry = watched_first_; entry != nullptr; entry = entry->next) stuck_now.push_back(entry);
  for (Watch::Entry* entry : stuck_now) {
    entry->stuck = true;
    entry->signal->emit(asio::cancellation_type::terminal);
  }
}

}  // namespace tinker::client::sampling
