// How every public operation of the clients starts: its body runs as a coroutine on the holder's
// executor, the caller's handler is completed with the result (client/async/complete.hpp), and a
// failure is reported to the service's telemetry as the Python SDK reports it
// (client/session/telemetry_report.hpp, doc/protocol.md#telemetry).
#pragma once

#include "client/async/complete.hpp"
#include "client/session/holder.hpp"
#include "client/session/telemetry_report.hpp"

#include <boost/asio/awaitable.hpp>

#include <memory>
#include <tuple>
#include <utility>

namespace tinker::client::session {

/// Runs `function(args..., diag)` and reports its failure (report_failure with `session_end`): a public call's body
/// wrapped as Python's `capture_exceptions(fatal=True)` wraps it. An exception escaping `function` is turned into its
/// error code first. A named coroutine taking everything by value (GCC 12 rule 2).
template <class T, class Function, class... Args>
boost::asio::awaitable<async::OperationResult<T>> reported_operation(std::shared_ptr<detail::ClientHolder> holder,
                                                                     bool session_end, Function* function,
                                                                     std::tuple<Args...> args, diagnostics& diag) {
  async::OperationResult<T> result{};
  try {
    auto operation = std::apply([&](Args&... arg) { return function(std::move(arg)..., diag); }, args);
    result = co_await std::move(operation);
  } catch (...) {
    result = async::OperationResult<T>(detail::current_exception_error(diag), T{});
  }
  if (std::get<0>(result)) report_failure(*holder, std::get<0>(result), diag, session_end);
  co_return result;
}

/// spawn_and_complete (client/async/complete.hpp) of `function(args..., diag)` wrapped in reported_operation.
template <class T, class Function, class... Args>
void spawn_reported(std::shared_ptr<detail::ClientHolder> holder, bool session_end, diagnostics* diag_out,
                    detail::Handler<T> handler, Function* function, Args&&... args) {
  using ArgsTuple = std::tuple<std::decay_t<Args>...>;
  auto executor = holder->executor();
  async::spawn_and_complete<T>(executor, diag_out, std::move(handler),
                               &reported_operation<T, Function, std::decay_t<Args>...>, std::move(holder), session_end,
                               function, ArgsTuple(std::forward<Args>(args)...));
}

}  // namespace tinker::client::session
