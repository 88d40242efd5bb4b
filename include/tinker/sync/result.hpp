/// \file
/// The result type of the blocking facade's `try_` calls, and the runtime every sync object
/// shares.
#pragma once

#include <tinker/error.hpp>
#include <tinker/future.hpp>

#include <boost/system/result.hpp>

#include <memory>
#include <string>

namespace tinker::sync {

/// Why a call failed: the code and everything known about it.
class Failure {
 public:
  /// No failure (an empty code).
  Failure() = default;
  /// The failure `code_` with `diag_`.
  Failure(boost::system::error_code code_, diagnostics diag_) : code(code_), diag(std::move(diag_)) {}
  /// The code and diagnostics of the exception `e`.
  explicit Failure(const error& e) : code(e.code()), diag(e.diag()) {}

  boost::system::error_code code;  ///< what failed (a tinker::errc code)
  diagnostics diag;                ///< HTTP status, request id, server message, category, ...

  /// The same text as `tinker::error::what()`: the code's message, the server's message, the
  /// request id.
  std::string message() const { return as_error().what(); }
  /// The exception the throwing form of the call throws.
  error as_error() const { return error(code, diag); }
  /// Throws as_error().
  [[noreturn]] void raise() const { throw as_error(); }

  /// Equal when the codes and diagnostics are equal.
  friend bool operator==(const Failure&, const Failure&) = default;
};

/// Lets `boost::system::result<T, Failure>::value()` throw the tinker::error (found by
/// argument-dependent lookup).
[[noreturn]] inline void throw_exception_from_error(const Failure& failure, const boost::source_location&) {
  failure.raise();
}

/// The value of a `try_` call, or its Failure.
///
/// `boost::system::result<T, Failure>`: either the value, or the error code *with its
/// diagnostics* (HTTP status, request id, server message, category), so a `try_` call loses
/// nothing that the throwing call would report. Choice: a plain `boost::system::result<T>`
/// (error_code only) would drop the diagnostics; `tinker::error` itself cannot be the error type,
/// because Boost 1.81's `result::error()` needs a default-constructible one. `value()` on a
/// failure throws the same `tinker::error` the throwing call would:
///
///     tinker::sync::Result<tinker::GetInfoResponse> info = training.try_get_info();
///     if (!info) std::cerr << info.error().message() << '\n';   // or info.error().diag.request_id
template <class T>
using Result = boost::system::result<T, Failure>;

/// `future.get()` without throwing: the result, or the operation's failure.
template <class T>
Result<T> try_get(const Future<T>& future) {
  try {
    return Result<T>(boost::system::in_place_value, future.get());
  } catch (const error& e) {
    return Result<T>(boost::system::in_place_error, Failure(e));
  }
}

namespace detail {

/// The io_context, its thread and the async ServiceClient that every sync object of one
/// sync::ServiceClient shares (src/sync/runtime.hpp). The last sync object to go shuts it down.
class Runtime;
using RuntimePtr = std::shared_ptr<Runtime>;

}  // namespace detail
}  // namespace tinker::sync
