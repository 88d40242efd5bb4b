// The fetch of a signed URL to a file for `session export-trace`: the SDK's
// RestClient::async_download_url (no credentials sent, Range resumption, a hidden part file
// renamed into place at the end), with the CLI's progress bar and its error wording.
#include "programs/cli/transfer.hpp"

#include <tinker/async.hpp>
#include <tinker/error.hpp>
#include <tinker/rest_client.hpp>

#include <filesystem>
#include <memory>
#include <system_error>

namespace tinker::cli {
namespace fs = std::filesystem;

boost::asio::awaitable<std::uint64_t> fetch_to_file(Context& context, std::string url, fs::path file) {
  const fs::path parent = file.parent_path().empty() ? fs::path(".") : file.parent_path();
  std::error_code ec;
  if (fs::is_directory(file, ec)) throw CliError(file.string() + " is a directory; give a file name with -o");
  if (!fs::is_directory(parent, ec)) throw CliError("no such directory: " + parent.string());
  auto bar = std::make_shared<ProgressBar>(context.err, context.env.error_is_terminal, "Downloading");
  UrlDownloadOptions options;
  options.force = true;  // a trace file from an earlier export is replaced
  options.on_progress = [bar](const DownloadProgress& progress) {
    bar->update(progress.bytes_done, progress.bytes_total);
  };
  const DownloadResult result =
      co_await context.rest().async_download_url(std::move(url), file, std::move(options), use_awaitable);
  bar->finish();
  co_return result.archive_bytes;
}

}  // namespace tinker::cli
