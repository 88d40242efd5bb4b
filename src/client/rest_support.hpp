// Shared pieces of the RestClient operations (src/client/rest_*.cpp).
#pragma once

#include <tinker/rest_client.hpp>

#include <string>

namespace tinker::detail {

/// Fills run_id and checkpoint_id from a `tinker://` path when one was given, and checks that
/// they are set. Throws tinker::error (invalid_argument) naming the problem; the operation's
/// wrapper (client/complete.hpp) turns that into the operation's error.
void resolve_checkpoint(CheckpointRef& ref);
/// As resolve_checkpoint, for calls that need only the run id.
void resolve_run(CheckpointRef& ref);

}  // namespace tinker::detail
