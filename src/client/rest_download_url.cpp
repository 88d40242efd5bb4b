// RestClient::async_download_url: one file from a signed URL (a checkpoint archive, a session's
// trace), GET without credentials into a hidden part file beside the target, size check, rename
// into place (doc/rest.md#checkpoint-downloads describes the transfer).
#include <tinker/rest_client.hpp>

#include "client/complete.hpp"
#include "client/holder.hpp"
#include "http/download.hpp"

#include <filesystem>
#include <system_error>

namespace tinker::detail {
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

error_code size_error(diagnostics& diag, std::uint64_t on_disk, std::uint64_t expected) {
  diag.clear();
  diag.message = "the downloaded file has " + std::to_string(on_disk) + " bytes, but the server announced " +
                 std::to_string(expected);
  return make_error_code(errc::request_failed);
}

asio::awaitable<OperationResult<DownloadResult>> download_url_op(RestHolder holder, std::string url, fs::path file,
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
  const auto* progress = &options.on_progress;
  if (*progress) {
    request.on_progress = [progress](const http::DownloadState& state) {
      (*progress)(DownloadProgress(state.bytes_done, state.total, state.resumes));
    };
  }
  http::DownloadState state;
  const http::DownloadOutcome outcome =
      co_await http::download_to_file(transport, holder->http().clock(), request, state);
  if (outcome.error) {
    diag = outcome.diag();
    co_return Result(outcome.error, DownloadResult());
  }
  std::error_code ec;
  const std::uint64_t on_disk = fs::file_size(part.path(), ec);
  if (ec) throw error(errc::invalid_argument, "cannot read " + part.path().string());
  if (state.total && on_disk != *state.total)
    co_return Result(size_error(diag, on_disk, *state.total), DownloadResult());
  if (on_disk != state.bytes_done) co_return Result(size_error(diag, on_disk, state.bytes_done), DownloadResult());
  if (*progress) (*progress)(DownloadProgress(on_disk, state.total, state.resumes));

  check_destination(file, options.force);  // again: time has passed since the first check
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

void rest_download_url(RestHolder h, std::string url, std::filesystem::path file, UrlDownloadOptions o, diagnostics* d,
                       Handler<DownloadResult> c) {
  const asio::any_io_executor executor = h->executor();
  spawn_and_complete<DownloadResult>(executor, d, std::move(c), &download_url_op, std::move(h), std::move(url),
                                     std::move(file), std::move(o));
}

}  // namespace tinker::detail
