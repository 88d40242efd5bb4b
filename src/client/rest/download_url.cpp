// RestClient::async_download_url: one file from a signed URL (a checkpoint archive, a session's
// trace), GET without credentials into a hidden part file beside the target, size check, rename
// into place (doc/rest.md#checkpoint-downloads describes the transfer).
#include <tinker/rest_client.hpp>

#include "client/rest/download.hpp"
#include "client/rest/operation.hpp"
#include "http/download.hpp"

#include <filesystem>
#include <system_error>

namespace tinker::client::rest {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using boost::system::error_code;

// Removes the part file unless the download was renamed into place.
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

void check_destination(const fs::path& file, bool force) {
  if (file.empty() || !file.has_filename()) throw error(errc::invalid_argument, "file: a file name is required");
  std::error_code ec;
  const fs::path parent = file.parent_path().empty() ? fs::path(".") : file.parent_path();
  if (!fs::is_directory(parent, ec)) throw error(errc::invalid_argument, "file: no such directory: " + parent.string());
  const fs::file_status status = fs::symlink_status(file, ec);
  if (fs::is_directory(status)) throw error(errc::invalid_argument, "file: " + file.string() + " is a directory");
  if (fs::exists(status) && !force) {
    throw error(errc::conflict, file.string() + " already exists (pass force to replace it)");
  }
}

asio::awaitable<OperationResult<DownloadResult>> download_url_op(HolderPtr holder, std::string url, fs::path file,
                                                                 UrlDownloadOptions options, diagnostics& diag) {
  using Result = OperationResult<DownloadResult>;
  if (url.empty()) throw error(errc::invalid_argument, "url: must not be empty");
  if (options.max_resumes < 0) throw error(errc::invalid_argument, "max_resumes: must not be negative");
  check_destination(file, options.force);
  const fs::path parent = file.parent_path().empty() ? fs::path(".") : file.parent_path();
  PartFile part(parent / ("." + file.filename().string() + ".part"));

  http::DownloadTransport transport(holder->http().options());
  http::DownloadRequest request(std::move(url), part.path());
  request.max_resumes = options.max_resumes;
  const ProgressCallback* progress = &options.on_progress;
  report_progress(request, progress);
  http::DownloadState state;
  const http::DownloadOutcome outcome =
      co_await http::download_to_file(transport, holder->http().clock(), request, state);
  if (outcome.error) {
    diag = outcome.diag();
    co_return Result(outcome.error, DownloadResult());
  }
  std::uint64_t on_disk = 0;
  if (error_code size_ec = check_downloaded_size(part.path(), state, "file", on_disk, diag)) {
    co_return Result(size_ec, DownloadResult());
  }
  if (*progress) (*progress)(DownloadProgress(on_disk, state.total, state.resumes));

  check_destination(file, options.force);  // again: time has passed since the first check
  std::error_code ec;
  fs::rename(part.path(), file, ec);
  if (ec) throw error(errc::invalid_argument, "file: cannot write " + file.string() + ": " + ec.message());
  part.keep();
  DownloadResult result;
  result.path = std::move(file);
  result.archive_bytes = on_disk;
  result.resumes = state.resumes;
  co_return Result(error_code(), std::move(result));
}

}  // namespace

}  // namespace tinker::client::rest

namespace tinker::detail {

using namespace client::rest;  // the operation above

void rest_download_url(HolderPtr h, std::string url, std::filesystem::path file, UrlDownloadOptions o, diagnostics* d,
                       Handler<DownloadResult> c) {
  spawn_rest_call(std::move(h), d, std::move(c), &download_url_op, std::move(url), std::move(file), std::move(o));
}

}  // namespace tinker::detail
