// Shared pieces of the RestClient operations (src/client/rest_*.cpp).
#pragma once

#include <tinker/rest_client.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>

#include <string>

namespace tinker::detail {

/// Fills run_id and checkpoint_id from a `tinker://` path when one was given, and checks that
/// they are set. Throws tinker::error (invalid_argument) naming the problem; the operation's
/// wrapper (client/complete.hpp) turns that into the operation's error.
void resolve_checkpoint(CheckpointRef& ref);
/// As resolve_checkpoint, for calls that need only the run id.
void resolve_run(CheckpointRef& ref);

/// The archive URL of a resolved checkpoint (spec 8.12.5) with the holder's "still building"
/// wait and retry layers; the caller has done ensure_config.
boost::asio::awaitable<boost::system::error_code> fetch_archive_url(ClientHolder& holder, const CheckpointRef& ref,
                                                                    CheckpointArchiveUrlResponse& out,
                                                                    diagnostics& diag);

}  // namespace tinker::detail
