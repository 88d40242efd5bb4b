// A byte semaphore with overdraft (doc/protocol.md#pools-timeouts-and-throttles): the forward/backward dispatch budget
// (bytes of requests being submitted) and the in-flight response budget (results announced by complete_metadata and not
// yet decoded).
//
// An acquire waits only while the remaining budget is negative, then subtracts its size, so a
// single request larger than the whole budget still proceeds (alone). Waiters are served in
// arrival order. io thread only; no locks.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <list>

namespace tinker::client::async {

class ByteBudget {
 public:
  ByteBudget(boost::asio::any_io_executor executor, std::int64_t capacity);
  ByteBudget(const ByteBudget&) = delete;
  ByteBudget& operator=(const ByteBudget&) = delete;

  /// Takes `bytes` once the budget is not negative (and every earlier waiter was served).
  /// Cancellable through the awaiting coroutine's slot: then nothing is taken and the
  /// coroutine sees operation_aborted as a boost::system::system_error.
  boost::asio::awaitable<void> acquire(std::int64_t bytes);
  /// Takes `bytes` if acquire() would not wait; else takes nothing and returns false. Lets a
  /// caller skip the coroutine frame of acquire() on the common path.
  bool try_acquire(std::int64_t bytes) noexcept {
    if (!available()) return false;
    remaining_ -= bytes;
    return true;
  }
  /// True if an acquire() now would not wait.
  bool available() const noexcept { return remaining_ >= 0 && waiters_.empty(); }
  void release(std::int64_t bytes);

  std::int64_t remaining() const noexcept { return remaining_; }
  std::size_t waiting() const noexcept { return waiters_.size(); }

 private:
  class Waiter {
   public:
    Waiter(const boost::asio::any_io_executor& executor, std::int64_t bytes_) : wake(executor), bytes(bytes_) {}
    boost::asio::steady_timer wake;
    std::int64_t bytes;
    bool granted = false;
  };

  void grant_waiters();

  boost::asio::any_io_executor executor_;
  std::int64_t remaining_;
  std::list<Waiter> waiters_;
};

/// Releases a reservation when it goes out of scope (also on errors and cancellation).
class BudgetReservation {
 public:
  BudgetReservation() = default;
  BudgetReservation(ByteBudget& budget, std::int64_t bytes) : budget_(&budget), bytes_(bytes) {}
  BudgetReservation(BudgetReservation&& other) noexcept : budget_(other.budget_), bytes_(other.bytes_) {
    other.budget_ = nullptr;
  }
  BudgetReservation& operator=(BudgetReservation&&) = delete;
  ~BudgetReservation() {
    if (budget_ != nullptr) budget_->release(bytes_);
  }

 private:
  ByteBudget* budget_ = nullptr;
  std::int64_t bytes_ = 0;
};

}  // namespace tinker::client::async
