// "Spawn a coroutine and complete a Handler<T> with its result": the body of every `detail::xxx`
// function behind a public `async_x` (include/tinker/async.hpp).
//
//   // The operation: a named coroutine (GCC 12 rule 2) taking its arguments by value and, last,
//   // the diagnostics it fills on failure.
//   asio::awaitable<std::tuple<error_code, WeightsInfoResponse>> get_weights_info_op(
//       std::shared_ptr<ClientHolder> holder, std::string tinker_path, diagnostics& diag);
//
//   void rest_get_weights_info(std::shared_ptr<ClientHolder> holder, std::string path,
//                              diagnostics* diag_out, Handler<WeightsInfoResponse> handler) {
//     spawn_and_complete<WeightsInfoResponse>(holder->executor(), diag_out, std::move(handler),
//                                             &get_weights_info_op, holder, std::move(path));
//   }
//
// Guarantees:
// - never completes inside the caller: co_spawn posts the completion when the operation finished
//   without ever suspending;
// - the handler runs on its own associated executor (the io executor when it has none);
// - `*diag_out` (when not null) receives the operation's diagnostics before the handler runs;
// - the handler's cancellation slot (e.g. `bind_cancellation_slot`, `parallel_group`) cancels the
//   operation's coroutine: the pending I/O completes with operation_aborted;
// - an exception escaping the operation becomes an error code: tinker::error keeps its code and
//   diagnostics, boost::system::system_error its code, anything else errc::protocol_error with the
//   exception's message. The handler then receives a value-initialised T.
#pragma once

#include "core/types/exception_error.hpp"

#include <tinker/async.hpp>
#include <tinker/error.hpp>

#include <boost/asio/any_completion_executor.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <exception>
#include <tuple>
#include <type_traits>
#include <utility>

namespace tinker::client::async {

using detail::Handler;

template <class T>
using OperationResult = std::tuple<boost::system::error_code, T>;

/// The completion handed to co_spawn: calls the user's handler with the operation's result and
/// exposes the user's handler's executor and cancellation slot to co_spawn.
template <class T>
class CompleteHandler {
 public:
  using cancellation_slot_type = boost::asio::cancellation_slot;

  explicit CompleteHandler(Handler<T> handler) : handler_(std::move(handler)) {}

  cancellation_slot_type get_cancellation_slot() const noexcept {
    return handler_ ? handler_.get_cancellation_slot() : cancellation_slot_type();
  }
  const Handler<T>& inner() const noexcept { return handler_; }

  void operator()(std::exception_ptr failure, OperationResult<T> result) {
    if (failure) {
      // run_operation catches everything, so only a failure of co_spawn itself lands here.
      std::move(handler_)(make_error_code(errc::protocol_error), T{});
      return;
    }
    std::move(handler_)(std::get<0>(result), std::move(std::get<1>(result)));
  }

 private:
  Handler<T> handler_;
};

/// Runs `function(args..., diag)` and turns escaping exceptions into error codes; copies the
/// diagnostics to `diag_out`. A named coroutine taking everything by value (GCC 12 rule 2).
template <class T, class Function, class... Args>
boost::asio::awaitable<OperationResult<T>> run_operation(Function* function, std::tuple<Args...> args,
                                                         diagnostics* diag_out) {
  static_assert(std::is_default_constructible_v<T>, "the failure path completes with T{}");
  diagnostics diag;
  OperationResult<T> result{};
  try {
    auto operation = std::apply([&](Args&... arg) { return function(std::move(arg)..., diag); }, args);
    result = co_await std::move(operation);
  } catch (...) {
    result = OperationResult<T>(detail::current_exception_error(diag), T{});
  }
  if (diag_out != nullptr) *diag_out = std::move(diag);
  co_return result;
}

/// Starts `function(args..., diagnostics&)` — a coroutine returning
/// `awaitable<std::tuple<error_code, T>>` — on `executor` and completes `handler` with its result
/// (see the file comment for the guarantees). `args` are decayed and moved into the coroutine.
template <class T, class Function, class... Args>
void spawn_and_complete(const boost::asio::any_io_executor& executor, diagnostics* diag_out, Handler<T> handler,
                        Function* function, Args&&... args) {
  using ArgsTuple = std::tuple<std::decay_t<Args>...>;
  boost::asio::co_spawn(
      executor,
      run_operation<T, Function, std::decay_t<Args>...>(function, ArgsTuple(std::forward<Args>(args)...), diag_out),
      CompleteHandler<T>(std::move(handler)));
}

}  // namespace tinker::client::async

// co_spawn dispatches the completion to the user's handler's executor.
template <class T, class Candidate>
struct boost::asio::associated_executor<tinker::client::async::CompleteHandler<T>, Candidate> {
  using type = boost::asio::associated_executor_t<tinker::detail::Handler<T>, Candidate>;
  static type get(const tinker::client::async::CompleteHandler<T>& h,
                  const Candidate& candidate = Candidate()) noexcept {
    return boost::asio::get_associated_executor(h.inner(), candidate);
  }
};
