// The shared state behind tinker::Future<T> (include/tinker/future.hpp).
//
// One producer (a coroutine on the client's io thread: the poll of doc/protocol.md#futures, a combination of
// several polls, or a resubmitting sampling loop) settles it once with a result or an error;
// any number of consumers wait for it, asynchronously (any completion token, any thread) or by
// blocking a thread that is not the io thread. Consumers may live on other threads, so the
// state is guarded by a mutex; it is touched once per wait and once per queue-state change,
// never per poll, so the lock is off the hot path.
#pragma once

#include "api/operation_cost.hpp"

#include <tinker/future.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/container/small_vector.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace tinker::detail {

class FutureCore : public std::enable_shared_from_this<FutureCore> {
 public:
  using Clock = std::chrono::steady_clock;

  /// `submitted` is when the operation began (waiting time counts from there).
  FutureCore(boost::asio::any_io_executor executor, std::string request_id, Clock::time_point submitted = Clock::now());
  FutureCore(const FutureCore&) = delete;
  FutureCore& operator=(const FutureCore&) = delete;

  // Producer side (io thread).
  void set_result(ErasedResult result);
  /// The same, settled at `settled_at` (a clock read the producer already made).
  void set_result(ErasedResult result, Clock::time_point settled_at);
  void set_error(boost::system::error_code code, diagnostics diag);
  /// A resubmitted operation has a new server id.
  void set_request_id(std::string request_id);
  /// Records a queue-state change and tells the user's callback (on the io thread).
  void note_queue_state(QueueState state, std::optional<std::string> reason);
  /// How cancel() stops the producer; called at most once, on the io thread.
  void set_cancel_hook(std::function<void()> hook);
  bool ready() const;

  // Consumer side (any thread).
  void async_wait(diagnostics* diag, Handler<ErasedResult> handler);
  ErasedResult wait_blocking(std::optional<std::chrono::milliseconds> timeout);
  FutureStatus status() const;
  void on_queue_state(QueueStateCallback callback);
  void cancel();

  const boost::asio::any_io_executor& executor() const noexcept { return executor_; }
  /// When the operation began (the `submitted` given to the constructor).
  Clock::time_point submitted() const noexcept { return submitted_; }

  /// What the operation cost the client until accepted (FutureStatus::encode_time, body_bytes, submit_time);
  /// written by the producer on the io thread.
  api::OperationCost cost;

  /// Deferred start (training futures): the producer calls this first and it returns when
  /// start() was called or `fallback` passed, so a pipelined loop's next submit reaches the
  /// server before the first poll of the previous result. io thread only.
  boost::asio::awaitable<void> wait_for_start(std::chrono::milliseconds fallback);
  /// Lets a deferred producer go; any thread, idempotent. Every wait calls it.
  void start();
  /// For a producer that never defers (the sampler polls at once): start() then has nothing to
  /// wake and posts nothing. Before the core is shared.
  void mark_started() noexcept { start_requested_ = true; }

 private:
  class Waiter {
   public:
    Waiter(std::uint64_t id_, diagnostics* diag_, Handler<ErasedResult> handler_)
        : id(id_), diag(diag_), handler(std::move(handler_)) {}
    std::uint64_t id;
    diagnostics* diag;
    Handler<ErasedResult> handler;
  };

  void settle(boost::system::error_code code, diagnostics diag, ErasedResult result, Clock::time_point settled_at);
  void complete(Waiter waiter);  // with the settled state; lock held
  void cancel_waiter(std::uint64_t id);
  bool on_io_thread() const;

  boost::asio::any_io_executor executor_;
  boost::asio::io_context* io_context_ = nullptr;  ///< to refuse blocking waits on the io thread

  mutable std::mutex mutex_;
  std::condition_variable settled_;
  bool ready_ = false;
  boost::system::error_code code_;
  diagnostics diag_;
  ErasedResult result_;
  /// Almost always one (the caller awaiting the future): kept in place, not on the heap.
  boost::container::small_vector<Waiter, 1> waiters_;
  std::uint64_t next_waiter_id_ = 0;

  std::string request_id_;
  Clock::time_point submitted_;
  Clock::time_point settled_at_{};
  QueueState queue_state_ = QueueState::active;
  std::optional<std::string> queue_state_reason_;
  QueueStateCallback callback_;
  std::function<void()> cancel_hook_;
  bool cancel_requested_ = false;
  bool start_requested_ = false;
  boost::asio::steady_timer* start_timer_ = nullptr;  ///< io thread only
};

}  // namespace tinker::detail
