// Pieces shared by the checkpoint commands: the PATH argument (checked as a tinker path while
// parsing, so a malformed one is a usage error), finding one checkpoint, the checkpoint table.
#pragma once

#include "programs/cli/context.hpp"
#include "programs/cli/output.hpp"

#include <tinker/types/checkpoint.hpp>

#include <boost/asio/awaitable.hpp>

#include <string>
#include <vector>

namespace tinker::cli {

/// Adds the required positional PATH (`tinker://<run-id>/<weights|sampler_weights>/<name>`).
void add_tinker_path_argument(CLI::App& command, std::string& path);
/// The same check for option values and repeated arguments.
std::string check_tinker_path(const std::string& path);

/// The checkpoint at `path`, from its run's checkpoint list. Throws CliError when the run has no
/// such checkpoint (and tinker::error when the run itself is not found).
boost::asio::awaitable<Checkpoint> find_checkpoint(Context& context, std::string path);

/// The table of `checkpoints`: Checkpoint ID, Type, Size, Public, Created, Expires, Path.
Table checkpoint_table(const std::vector<Checkpoint>& checkpoints);

}  // namespace tinker::cli
