/// \file
/// tinker::Future<T>: the result of an operation the server has accepted
/// (`doc/protocol.md#futures`).
#pragma once

#include <tinker/async.hpp>
#include <tinker/error.hpp>
#include <tinker/types/futures.hpp>

#include <boost/asio/associator.hpp>
#include <boost/asio/async_result.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace tinker {

/// One change of a request's queue state, as the server reported it while the result was
/// polled (`doc/protocol.md#futures`).
class QueueStateChange {
 public:
  /// An active state.
  QueueStateChange() = default;
  /// A change to `state_` for `reason_`, `waited_` after submission.
  QueueStateChange(QueueState state_, std::optional<std::string> reason_, std::chrono::milliseconds waited_)
      : state(state_), reason(std::move(reason_)), waited(waited_) {}

  QueueState state = QueueState::active;  ///< the new state
  std::optional<std::string> reason;      ///< as the server gave it
  std::chrono::milliseconds waited{0};    ///< since the operation was submitted
};

/// Hears every queue-state change of a Future (Future::on_queue_state). Runs on the client's io
/// thread: it must not block, and must not call the blocking API.
using QueueStateCallback = std::function<void(const QueueStateChange&)>;

/// A snapshot of a future's progress; safe to take from any thread.
class FutureStatus {
 public:
  /// A fresh, active, not-ready status.
  FutureStatus() = default;

  std::string request_id;  ///< the server's future id (the last one, if the operation was resubmitted)
  QueueState queue_state = QueueState::active;    ///< the last state the server reported
  std::optional<std::string> queue_state_reason;  ///< the server's reason for it, if any
  std::chrono::milliseconds waited{0};            ///< since submission until now, or until the result arrived
  bool ready = false;                             ///< a result or an error is there

  /// What the operation cost the client before the server had it (`doc/bench.md#operation-costs`), filled for the
  /// training operations and for sample/compute_logprobs; zero or empty for other futures.
  ///@{
  /// Client time spent encoding the request bodies: every chunk of a chunked forward_backward, every attempt of a
  /// sample that was submitted again.
  std::chrono::nanoseconds encode_time{0};
  /// Bytes of those bodies as encoded (before any zstd compression the server asked for), summed likewise.
  std::uint64_t body_bytes = 0;
  /// From the call until the server accepted the operation (the ticket of its last chunk arrived), including waits
  /// for its turn, the throttles and retries; empty while not accepted, and for futures it is not measured for.
  std::optional<std::chrono::nanoseconds> submit_time;
  ///@}
};

namespace detail {

/// The type-erased shared state behind every Future (src/client/futures/core.hpp).
class FutureCore;
using ErasedResult = std::shared_ptr<const void>;

void future_async_wait(const std::shared_ptr<FutureCore>& core, diagnostics* diag, Handler<ErasedResult> handler);
/// Blocks the calling thread; throws tinker::error (errc::timeout when `timeout` passes, and
/// errc::invalid_argument when called on the client's io thread, which would deadlock).
ErasedResult future_wait_blocking(const std::shared_ptr<FutureCore>& core,
                                  std::optional<std::chrono::milliseconds> timeout);
FutureStatus future_status(const FutureCore& core);
void future_on_queue_state(FutureCore& core, QueueStateCallback callback);
void future_cancel(FutureCore& core);

// Adapts the erased result to the caller's own handler, which it holds as it is (no second
// type erasure): the waiter's erased handler reports this handler's executor, allocator and
// cancellation slot (the associator below), so it is dispatched to that executor, and the
// handler is then called directly with the copied result.
template <class T, class CompletionHandler>
class ResultCaster {
 public:
  explicit ResultCaster(CompletionHandler handler) : handler_(std::move(handler)) {}

  void operator()(boost::system::error_code code, ErasedResult result) {
    T value{};
    if (!code && result) value = *static_cast<const T*>(result.get());
    std::move(handler_)(code, std::move(value));
  }

  CompletionHandler handler_;
};

// Starts a Future's wait for any token: the token's handler goes to the future's core inside one
// erased handler.
template <class T>
class LaunchWait {
 public:
  template <class CompletionHandler>
  void operator()(CompletionHandler&& handler, diagnostics* diag, const std::shared_ptr<FutureCore>& core) const {
    using Caster = ResultCaster<T, std::decay_t<CompletionHandler>>;
    future_async_wait(core, diag, Handler<ErasedResult>(Caster(std::forward<CompletionHandler>(handler))));
  }
};

}  // namespace detail

/// The result of an operation the server has accepted: a cheap shared handle, copies refer to
/// the same result.
///
/// Submitting an operation completes with a Future once the server returned its ticket; the
/// client then polls `retrieve_future` in the background whether or not anyone awaits, so
/// several operations can be pipelined before waiting for any:
///
///     auto fb = co_await training.async_forward_backward(batch, tinker::use_awaitable);
///     auto step = co_await training.async_optim_step(adam, tinker::use_awaitable);  // pipelined
///     tinker::ForwardBackwardOutput out = co_await fb.async_get(tinker::use_awaitable);
///
/// or, from a thread that is not the client's io thread, `fb.get()` / `fb.get(timeout)`.
///
/// Waiting: `async_get` honours per-operation cancellation (its cancellation slot, e.g. in a
/// parallel_group with a timer): a cancelled wait completes with errc::cancelled and leaves the
/// background poll running, so the result can still be awaited later (choice: the Python SDK
/// also cancels the poller; here `cancel()` does that explicitly, because a training operation
/// runs on the server whether or not its result is fetched). `get(timeout)` throws errc::timeout
/// when the time passes, and likewise leaves the poll running.
///
/// Errors: the operation's failure as the server reported it (errc::request_failed with its
/// category for a failed result, errc::gone when the server lost a training result, the HTTP
/// class of a fatal poll answer), errc::cancelled after cancel() or when the client shuts down.
///
/// Progress: `status()` tells how long the request has waited and in which queue state; a
/// callback set with `on_queue_state` hears every change (it runs on the client's io thread and
/// must not block).
///
/// \tparam T the result type, e.g. ForwardBackwardOutput or SampleResponse.
template <class T>
class Future {
 public:
  /// An empty future (valid() is false); every operation on it throws.
  Future() = default;
  /// Internal: the clients create futures; users get them from `async_x` calls.
  explicit Future(std::shared_ptr<detail::FutureCore> core) : core_(std::move(core)) {}

  /// False for a default-constructed or moved-from future.
  bool valid() const noexcept { return core_ != nullptr; }

  /// Completes with the result, or with the operation's error; the form with `diag` also fills
  /// it on failure. Any thread, any completion token; the completion runs on the token's
  /// executor (the client's io thread by default). Throws `tinker::error` (invalid_argument) at
  /// once on an empty future.
  ///@{
  template <class Token = default_token>
  auto async_get(Token&& token = {}) const {
    diagnostics* const none = nullptr;  // a typed pointer: tinker::use_awaitable finds it among the arguments
    return boost::asio::async_initiate<Token, void(boost::system::error_code, T)>(detail::LaunchWait<T>(), token, none,
                                                                                  checked());
  }
  template <class Token = default_token>
  auto async_get(diagnostics& diag, Token&& token = {}) const {
    diagnostics* const filled = &diag;
    return boost::asio::async_initiate<Token, void(boost::system::error_code, T)>(detail::LaunchWait<T>(), token,
                                                                                  filled, checked());
  }
  ///@}

  /// Blocks until the result is there; throws tinker::error. Not on the client's io thread
  /// (there it throws errc::invalid_argument instead of deadlocking).
  T get() const { return take(detail::future_wait_blocking(checked(), std::nullopt)); }
  /// As get(), but throws errc::timeout after `timeout` (the poll goes on).
  T get(std::chrono::milliseconds timeout) const { return take(detail::future_wait_blocking(checked(), timeout)); }

  /// A snapshot of the progress: request id, queue state, time waited, readiness. Any thread.
  FutureStatus status() const { return detail::future_status(*checked()); }
  /// Replaces the queue-state callback (runs on the io thread; must not block).
  void on_queue_state(QueueStateCallback callback) const {
    detail::future_on_queue_state(*checked(), std::move(callback));
  }
  /// Stops the background poll; waiters complete with errc::cancelled. The operation itself
  /// may still run on the server.
  void cancel() const { detail::future_cancel(*checked()); }

 private:
  const std::shared_ptr<detail::FutureCore>& checked() const {
    if (!core_) throw error(errc::invalid_argument, "this tinker::Future is empty (default-constructed or moved from)");
    return core_;
  }
  static T take(const detail::ErasedResult& result) { return *static_cast<const T*>(result.get()); }

  std::shared_ptr<detail::FutureCore> core_;
};

}  // namespace tinker

namespace boost::asio {

/// A Future's completion reports its caller's handler's executor, allocator and cancellation slot.
template <template <class, class> class Associator, class T, class CompletionHandler, class DefaultCandidate>
struct associator<Associator, tinker::detail::ResultCaster<T, CompletionHandler>, DefaultCandidate>
    : Associator<CompletionHandler, DefaultCandidate> {
  static typename Associator<CompletionHandler, DefaultCandidate>::type get(
      const tinker::detail::ResultCaster<T, CompletionHandler>& caster) noexcept {
    return Associator<CompletionHandler, DefaultCandidate>::get(caster.handler_);
  }
  static auto get(const tinker::detail::ResultCaster<T, CompletionHandler>& caster,
                  const DefaultCandidate& candidate) noexcept
      -> decltype(Associator<CompletionHandler, DefaultCandidate>::get(caster.handler_, candidate)) {
    return Associator<CompletionHandler, DefaultCandidate>::get(caster.handler_, candidate);
  }
};

}  // namespace boost::asio
