// The telemetry events the SDK sends of its own accord (doc/protocol.md#telemetry): SESSION_END, and for a public call
// that fails, Python's UNHANDLED_EXCEPTION or its GENERIC_EVENT "user_error", with the same fields and severities.
// Also `reported_operation`, the wrapper that sends them for every operation started through it.
#pragma once

#include "client/async/complete.hpp"
#include "client/session/holder.hpp"

#include <tinker/types/telemetry.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

namespace tinker::client::session {

/// A duration as Python's `str(timedelta)` writes it, the format SESSION_END's `duration` has on the wire:
/// "H:MM:SS" plus ".ffffff" when there are microseconds, preceded by "N day(s), " from one day on.
std::string python_timedelta_text(std::chrono::microseconds duration);

/// The Python SDK's user-error rule (doc/protocol.md#telemetry): a failed future of category user, or an HTTP status in
/// 400-499 other than 408.
bool is_user_error(boost::system::error_code ec, const diagnostics& diag) noexcept;

/// The name a failure reports as `error_type`: "tinker::errc::<enumerator>" (tinker-cpp has no exception classes
/// to name).
std::string error_type_name(boost::system::error_code ec);

/// `text` with every credential the holder knows (API key, current JWT) and anything shaped like an API key, JWT or
/// Hugging Face token replaced by "***", and made valid UTF-8.
std::string scrub_secrets(const detail::ClientHolder& holder, std::string_view text);

/// Queues what Python's `capture_exceptions(fatal=True)` queues when a public call fails: the user_error event
/// (WARNING) or UNHANDLED_EXCEPTION (ERROR), then SESSION_END when the holder has a session and `session_end`; and
/// flushes at once. Cancellation by the caller is not a failure and sends nothing. io thread.
void report_failure(detail::ClientHolder& holder, boost::system::error_code ec, const diagnostics& diag,
                    bool session_end);

/// Queues SESSION_END (INFO, with the session's duration) when the holder has a session. io thread.
void report_session_end(detail::ClientHolder& holder);

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
