// One blocking call: start the async operation on the caller's thread with a promise-based
// handler, wait for it, and turn the outcome into a Result<T> that keeps the diagnostics.
//
// Why the operation can be initiated from any thread: `async_initiate` with a plain handler
// (like `use_future`) calls the initiation immediately on the calling thread, so a TrainingClient
// call takes its turnstile ticket at call time, in the caller's call order. The `detail::xxx`
// functions behind the public `async_x` are assumed safe to call from any thread: they take the
// ticket from an atomic and hop onto the io executor (co_spawn posts) before touching client
// state, and fill the diagnostics before the handler runs (src/client/async/complete.hpp). The handler
// has no associated executor, so it runs on the io thread and only fulfils the promise.
#pragma once

#include "sync/runtime.hpp"

#include <tinker/error.hpp>
#include <tinker/sync/result.hpp>

#include <boost/system/error_code.hpp>

#include <future>
#include <optional>
#include <string>
#include <utility>

namespace tinker::sync::detail {

template <class T>
using Outcome = std::pair<boost::system::error_code, T>;

template <class T>
class PromiseHandler {
 public:
  explicit PromiseHandler(std::promise<Outcome<T>> promise) : promise_(std::move(promise)) {}

  void operator()(boost::system::error_code code, T value) { promise_.set_value(Outcome<T>(code, std::move(value))); }

 private:
  std::promise<Outcome<T>> promise_;
};

/// The error of a blocking call made on the io thread, where waiting would deadlock.
error called_on_io_thread(const char* what);

/// The error of an operation whose handler was destroyed without being called (its client shut
/// down under it).
error abandoned(const char* what);

/// `initiate(diagnostics&, PromiseHandler<T>)` starts the operation with the handler as its
/// completion token, e.g. `client.async_get_info(diag, std::move(handler))`. `what` names the
/// call in errors ("TrainingClient::get_info").
template <class T, class Initiate>
Result<T> call_blocking(const RuntimePtr& runtime_ptr, const char* what, Initiate&& initiate) {
  try {
    const Runtime& runtime = checked(runtime_ptr, what);
    if (runtime.on_io_thread()) return Result<T>(boost::system::in_place_error, Failure(called_on_io_thread(what)));
    std::promise<Outcome<T>> promise;
    std::future<Outcome<T>> outcome_future = promise.get_future();
    diagnostics diag;
    std::forward<Initiate>(initiate)(diag, PromiseHandler<T>(std::move(promise)));
    std::optional<Outcome<T>> outcome;
    try {
      outcome.emplace(outcome_future.get());
    } catch (const std::future_error&) {
      return Result<T>(boost::system::in_place_error, Failure(abandoned(what)));
    }
    if (outcome->first) return Result<T>(boost::system::in_place_error, Failure(outcome->first, std::move(diag)));
    return Result<T>(boost::system::in_place_value, std::move(outcome->second));
  } catch (const error& e) {  // thrown while initiating (an empty handle, say)
    return Result<T>(boost::system::in_place_error, Failure(e));
  }
}

/// The throwing form: the value, or the tinker::error with its diagnostics.
template <class T>
T value_or_throw(Result<T>&& result) {
  if (result.has_error()) result.error().raise();
  return std::move(*result);
}

}  // namespace tinker::sync::detail
