// The fetch of a signed URL to a file for `session export-trace`: the SDK's streaming GET (no
// credentials sent, Range resumption), into a hidden part file renamed into place at the end.
#include "cli/transfer.hpp"
#include "http/clock.hpp"
#include "http/download.hpp"

#include <tinker/error.hpp>

#include <filesystem>
#include <memory>
#include <system_error>

namespace tinker::cli {
namespace fs = std::filesystem;

namespace {

// Removes the part file unless the download succeeded.
class PartFile {
 public:
  explicit PartFile(fs::path path) : path_(std::move(path)) {}
  ~PartFile() {
    std::error_code ignored;
    if (!kept_) fs::remove(path_, ignored);
  }
  PartFile(const PartFile&) = delete;
  PartFile& operator=(const PartFile&) = delete;
  void keep() { kept_ = true; }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
  bool kept_ = false;
};

}  // namespace

boost::asio::awaitable<std::uint64_t> fetch_to_file(Context& context, std::string url, fs::path file) {
  const fs::path parent = file.parent_path().empty() ? fs::path(".") : file.parent_path();
  std::error_code ec;
  if (fs::is_directory(file, ec)) throw CliError(file.string() + " is a directory; give a file name with -o");
  if (!fs::is_directory(parent, ec)) throw CliError("no such directory: " + parent.string());
  PartFile part(parent / ("." + file.filename().string() + ".part"));

  http::DownloadTransport transport(context.client_options());
  const std::shared_ptr<http::Clock> clock = http::make_system_clock(context.executor);
  http::DownloadRequest request(std::move(url), part.path());
  auto bar = std::make_shared<ProgressBar>(context.err, context.env.error_is_terminal, "Downloading");
  request.on_progress = [bar](const http::DownloadState& state) { bar->update(state.bytes_done, state.total); };
  http::DownloadState state;
  const http::DownloadOutcome outcome = co_await http::download_to_file(transport, *clock, request, state);
  bar->finish();
  if (outcome.error) throw error(outcome.error, outcome.diag());
  fs::rename(part.path(), file, ec);
  if (ec) throw CliError("cannot write " + file.string() + ": " + ec.message());
  part.keep();
  co_return state.bytes_done;
}

}  // namespace tinker::cli
