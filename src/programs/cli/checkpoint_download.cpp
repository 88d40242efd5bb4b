// `tinker checkpoint download PATH [-o DIR] [--force]` (doc/cli.md): the SDK's download (archive URL,
// streamed GET with resumption, size check, safe extraction) with a progress bar on a terminal; an
// external_weights/ path downloads its files (RestClient::async_download_external_weights) instead.
#include "programs/cli/checkpoint_support.hpp"
#include "programs/cli/context.hpp"
#include "programs/cli/output.hpp"
#include "programs/cli/transfer.hpp"

#include <tinker/async.hpp>
#include <tinker/download.hpp>
#include <tinker/error.hpp>
#include <tinker/types/checkpoint.hpp>

#include <CLI/CLI.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <memory>
#include <ostream>

namespace tinker::cli {
namespace {
namespace asio = boost::asio;

class DownloadCommandOptions {
 public:
  DownloadCommandOptions() = default;
  std::string path;
  std::string output_dir;  // empty: the current directory
  bool force = false;
};

asio::awaitable<void> checkpoint_download(Context& context, DownloadCommandOptions command) {
  DownloadOptions options{std::filesystem::path(command.output_dir)};
  options.force = command.force;
  auto bar = std::make_shared<ProgressBar>(context.err, context.env.error_is_terminal, "Downloading");
  options.on_progress = [bar](const DownloadProgress& progress) {
    bar->update(progress.bytes_done, progress.bytes_total);
  };
  const bool external = TinkerPath::parse(command.path).type == CheckpointType::external;
  DownloadResult result;
  try {
    // External (Hugging Face format) checkpoints are separate files, fetched one by one.
    if (external) {
      result = co_await context.rest().async_download_external_weights(command.path, options, use_awaitable);
    } else {
      result = co_await context.rest().async_download_checkpoint(command.path, options, use_awaitable);
    }
  } catch (const error& e) {
    bar->finish();
    // The SDK's "already exists" (no request made), in the command line's terms.
    if (e.code() != errc::conflict || e.diag().http_status != 0) throw;
    const std::filesystem::path target = std::filesystem::path(command.output_dir) / download_target_name(command.path);
    throw CliError(target.string() + " already exists; pass --force to replace it");
  } catch (...) {
    bar->finish();
    throw;
  }
  bar->finish();
  if (context.json()) {
    boost::json::object object;
    object["checkpoint_path"] = command.path;
    object["destination"] = result.path.string();
    object["archive_bytes"] = result.archive_bytes;
    object["resumes"] = result.resumes;
    boost::json::array files;
    for (const std::string& file : result.files) files.emplace_back(file);
    object["files"] = std::move(files);
    print_json(context.out, object);
    co_return;
  }
  const Properties rows = {
      {"Checkpoint Path", command.path},
      {external ? "Downloaded To" : "Extracted To", result.path.string()},
      {external ? "Total Size" : "Archive Size", display_size(static_cast<std::int64_t>(result.archive_bytes))},
      {"Files", std::to_string(result.files.size())},
      {"Resumes", std::to_string(result.resumes)}};
  print_properties(context.out, rows);
}

}  // namespace

void add_checkpoint_download_command(CLI::App& group, Action& action) {
  auto options = std::make_shared<DownloadCommandOptions>();
  CLI::App& cmd =
      add_command(group, "download", "Download and extract a checkpoint", action, options, checkpoint_download);
  add_tinker_path_argument(cmd, options->path);
  cmd.add_option("-o,--output", options->output_dir,
                 "Parent directory (default: the current one); the checkpoint goes to <DIR>/<run>_<kind>_<name>");
  cmd.add_flag("--force", options->force, "Replace an existing download");
}

}  // namespace tinker::cli
