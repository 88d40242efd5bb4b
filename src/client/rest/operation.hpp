// What the RestClient operations (src/client/rest/*.cpp) share: starting one, and resolving the
// checkpoint it names.
#pragma once

#include "client/async/complete.hpp"
#include "client/handles.hpp"
#include "client/session/holder.hpp"
#include "client/session/operation_launch.hpp"

#include <tinker/rest_client.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>

#include <string>
#include <utility>

namespace tinker::client::rest {

using async::OperationResult;
using detail::CheckpointAction;
using detail::CheckpointRef;
using detail::Done;

/// What a RestClient operation coroutine returns: its error code and its value.
template <class T>
using Op = boost::asio::awaitable<OperationResult<T>>;

/// The body of every RestClient entry point: runs `operation(holder, args..., diagnostics&)` on
/// the holder's executor and completes `handler` with its result (never inside the caller; see
/// client/async/complete.hpp for the guarantees). A failure is reported to telemetry as the Python
/// SDK's session-less REST client reports it: the error event, no SESSION_END (doc/protocol.md#telemetry).
template <class T, class Function, class... Args>
void spawn_rest_call(HolderPtr holder, diagnostics* diag, Handler<T> handler, Function* operation, Args&&... args) {
  HolderPtr reporter = holder;
  session::spawn_reported<T>(std::move(reporter), /*session_end=*/false, diag, std::move(handler), operation,
                             std::move(holder), std::forward<Args>(args)...);
}

/// Fills run_id and checkpoint_id from a `tinker://` path when one was given, and checks that
/// they are set. Throws tinker::error (invalid_argument) naming the problem; the operation's
/// wrapper (client/async/complete.hpp) turns that into the operation's error.
void resolve_checkpoint(CheckpointRef& ref);
/// As resolve_checkpoint, for calls that need only the run id.
void resolve_run(CheckpointRef& ref);

/// The archive URL of a resolved checkpoint (doc/rest.md#checkpoint-downloads) with the holder's
/// "still building" wait and retry layers; the caller has done ensure_config.
boost::asio::awaitable<boost::system::error_code> fetch_archive_url(ClientHolder& holder, const CheckpointRef& ref,
                                                                    CheckpointArchiveUrlResponse& out,
                                                                    diagnostics& diag);

}  // namespace tinker::client::rest
