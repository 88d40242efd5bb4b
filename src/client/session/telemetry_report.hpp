// The telemetry events the SDK sends of its own accord (doc/protocol.md#telemetry): SESSION_END, and for a public call
// that fails, Python's UNHANDLED_EXCEPTION or its GENERIC_EVENT "user_error", with the same fields and severities.
#pragma once

#include "client/session/holder.hpp"

#include <tinker/types/telemetry.hpp>

#include <chrono>
#include <string>
#include <string_view>

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

}  // namespace tinker::client::session
