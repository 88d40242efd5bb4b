#include "programs/cli/checkpoint_support.hpp"

#include "programs/cli/output.hpp"

#include <tinker/async.hpp>
#include <tinker/error.hpp>

#include <CLI/CLI.hpp>

namespace tinker::cli {

std::string check_tinker_path(const std::string& path) {
  try {
    TinkerPath::parse(path);
    return "";
  } catch (const error& e) {
    return e.diag().message.empty() ? std::string(e.what()) : e.diag().message;
  }
}

void add_tinker_path_argument(CLI::App& command, std::string& path) {
  command
      .add_option("PATH", path, "Checkpoint path: tinker://<run-id>/<weights|sampler_weights|external_weights>/<name>")
      ->required()
      ->check(CLI::Validator(check_tinker_path, "TINKER_PATH", "tinker path"));
}

boost::asio::awaitable<Checkpoint> find_checkpoint(Context& context, std::string path) {
  const TinkerPath parsed = TinkerPath::parse(path);
  const CheckpointsListResponse list =
      co_await context.rest().async_list_checkpoints(parsed.training_run_id, use_awaitable);
  for (const Checkpoint& checkpoint : list.checkpoints) {
    if (checkpoint.tinker_path == path) co_return checkpoint;
  }
  throw CliError("checkpoint not found: " + path);
}

Table checkpoint_table(const std::vector<Checkpoint>& checkpoints) {
  Table table({"Checkpoint ID", "Type", "Size", "Public", "Created", "Expires", "Path"});
  for (const Checkpoint& c : checkpoints) {
    table.add_row({c.checkpoint_id, to_string(c.checkpoint_type), display_size(c.size_bytes), yes_no(c.public_),
                   display_time(c.time), c.expires_at ? display_time(*c.expires_at) : "Never", c.tinker_path});
  }
  return table;
}

}  // namespace tinker::cli
