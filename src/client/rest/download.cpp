// RestClient::async_download_checkpoint (doc/rest.md#checkpoint-downloads, doc/rest.md, doc/cli.md): archive URL -> GET
// of the signed URL without credentials, streamed to a hidden part file beside the target -> size check -> safe
// extraction into a hidden staging directory off the io thread -> rename into place.
//
// Files beside the target `<output_dir>/<name>` while it runs (removed on every failure):
//   .<name>.tar.part      the archive being downloaded
//   .<name>.extracting    the staging directory of the extraction
//   .<name>.replaced      the previous target while `force` swaps it out
#include <tinker/rest_client.hpp>

#include "client/async/off_io_thread.hpp"
#include "client/rest/download.hpp"

#include "client/rest/archive_extract.hpp"
#include "client/rest/operation.hpp"
#include "http/download.hpp"

#include <tinker/types/checkpoint.hpp>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <functional>
#include <optional>
#include <system_error>

namespace tinker {

std::string download_target_name(const std::string& tinker_path) {
  const TinkerPath parsed = TinkerPath::parse(tinker_path);
  std::string name = parsed.to_string().substr(std::string_view("tinker://").size());
  std::replace(name.begin(), name.end(), '/', '_');
  return name;
}

}  // namespace tinker

namespace tinker::client::rest {

void report_progress(http::DownloadRequest& request, const ProgressCallback* callback) {
  if (!*callback) return;
  request.on_progress = [callback](const http::DownloadState& state) {
    (*callback)(DownloadProgress(state.bytes_done, state.total, state.resumes));
  };
}

boost::system::error_code check_downloaded_size(const std::filesystem::path& part, const http::DownloadState& state,
                                                std::string_view what, std::uint64_t& on_disk, diagnostics& diag) {
  std::error_code size_failure;
  on_disk = std::filesystem::file_size(part, size_failure);
  if (size_failure) throw error(errc::invalid_argument, "cannot read " + part.string());
  std::optional<std::uint64_t> announced;
  if (state.total && on_disk != *state.total) {
    announced = *state.total;
  } else if (on_disk != state.bytes_done) {
    announced = state.bytes_done;
  }
  if (!announced) return {};
  diag.clear();
  diag.message = "the downloaded " + std::string(what) + " has " + std::to_string(on_disk) +
                 " bytes, but the server announced " + std::to_string(*announced);
  return make_error_code(errc::request_failed);
}

using async::off_io_thread;
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using boost::system::error_code;

class DownloadPaths {
 public:
  fs::path target;   ///< the extracted directory, or the .tar with keep_archive_only
  fs::path part;     ///< the archive while it downloads
  fs::path staging;  ///< the extraction before it is renamed into place
  fs::path replaced;
};

DownloadPaths paths_for(const DownloadOptions& options, const std::string& name) {
  std::error_code ec;
  fs::path dir = options.output_dir.empty() ? fs::current_path(ec) : fs::absolute(options.output_dir, ec);
  if (ec) throw error(errc::invalid_argument, "output_dir: " + ec.message());
  DownloadPaths paths;
  paths.target = dir / (options.keep_archive_only ? name + ".tar" : name);
  paths.part = dir / ("." + name + ".tar.part");
  paths.staging = dir / ("." + name + ".extracting");
  paths.replaced = dir / ("." + name + ".replaced");
  return paths;
}

bool exists_at_all(const fs::path& path) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(path, ec));
}

void check_target_free(const fs::path& target, bool force) {
  if (!force && exists_at_all(target)) {
    throw error(errc::conflict, target.string() + " already exists (pass force to replace it)");
  }
}

// Removes the part file and the staging directory when the download does not finish.
class ScratchCleanup {
 public:
  explicit ScratchCleanup(const DownloadPaths& paths) : paths_(paths) {}
  ~ScratchCleanup() {
    std::error_code ignored;
    fs::remove(paths_.part, ignored);
    fs::remove_all(paths_.staging, ignored);
  }
  ScratchCleanup(const ScratchCleanup&) = delete;
  ScratchCleanup& operator=(const ScratchCleanup&) = delete;

 private:
  const DownloadPaths& paths_;
};

// Puts `from` at `target`; an existing target is an error without `force`, else swapped out
// and removed only once the new one is in place.
void move_into_place(const fs::path& from, const DownloadPaths& paths, bool force) {
  if (!exists_at_all(paths.target)) {
    fs::rename(from, paths.target);
    return;
  }
  check_target_free(paths.target, force);
  fs::remove_all(paths.replaced);
  fs::rename(paths.target, paths.replaced);
  try {
    fs::rename(from, paths.target);
  } catch (...) {
    std::error_code ignored;
    fs::rename(paths.replaced, paths.target, ignored);
    throw;
  }
  fs::remove_all(paths.replaced);
}

// The blocking end of the download: extraction (or keeping the tar) and the rename into place.
std::vector<std::string> finish_on_disk(const DownloadPaths& paths, const DownloadOptions& options) {
  try {
    if (options.keep_archive_only) {
      move_into_place(paths.part, paths, options.force);
      return {};
    }
    fs::remove_all(paths.staging);  // left by a crashed run
    std::vector<std::string> files = extract_archive(paths.part, paths.staging);
    move_into_place(paths.staging, paths, options.force);
    return files;
  } catch (const fs::filesystem_error& e) {
    throw error(errc::invalid_argument, std::string("output_dir: ") + e.what());
  }
}

asio::awaitable<OperationResult<DownloadResult>> download_checkpoint_op(HolderPtr holder, std::string tinker_path,
                                                                        DownloadOptions options, diagnostics& diag) {
  using Result = OperationResult<DownloadResult>;
  CheckpointRef ref = CheckpointRef::from_tinker_path(tinker_path);
  resolve_checkpoint(ref);
  if (options.max_resumes < 0) throw error(errc::invalid_argument, "max_resumes: must not be negative");
  const DownloadPaths paths = paths_for(options, download_target_name(tinker_path));
  check_target_free(paths.target, options.force);  // before any transfer; checked again at the end
  std::error_code dir_error;
  fs::create_directories(paths.target.parent_path(), dir_error);
  if (dir_error)
    throw error(errc::invalid_argument, "output_dir: cannot create " + paths.target.parent_path().string());
  const ScratchCleanup cleanup(paths);

  if (auto ec = co_await holder->ensure_config(diag)) co_return Result(ec, DownloadResult());
  CheckpointArchiveUrlResponse location;
  if (auto ec = co_await fetch_archive_url(*holder, ref, location, diag)) co_return Result(ec, DownloadResult());

  http::DownloadTransport transport(holder->http().options());
  http::DownloadRequest request(location.url, paths.part);
  request.max_resumes = options.max_resumes;
  const ProgressCallback* progress = &options.on_progress;
  report_progress(request, progress);
  http::DownloadState state;
  for (bool fresh_url_taken = false;;) {
    const http::DownloadOutcome outcome =
        co_await http::download_to_file(transport, holder->http().clock(), request, state);
    if (!outcome.error) break;
    if (outcome.url_rejected && !fresh_url_taken) {  // the signed URL expired: ask for a new one, once
      fresh_url_taken = true;
      holder->log(LogLevel::info, outcome.reason + "; asking for a fresh archive URL");
      if (auto ec = co_await fetch_archive_url(*holder, ref, location, diag)) co_return Result(ec, DownloadResult());
      request.url = location.url;
      continue;
    }
    diag = outcome.diag();
    co_return Result(outcome.error, DownloadResult());
  }

  std::uint64_t on_disk = 0;
  if (error_code ec = check_downloaded_size(paths.part, state, "checkpoint archive", on_disk, diag)) {
    co_return Result(ec, DownloadResult());
  }
  if (*progress) (*progress)(DownloadProgress(on_disk, state.total, state.resumes));

  DownloadResult result;
  result.path = paths.target;
  result.archive_bytes = on_disk;
  result.resumes = state.resumes;
  // By reference: this frame waits for the job.
  std::function<void()> finish = [&result, &paths, &options] { result.files = finish_on_disk(paths, options); };
  co_await off_io_thread(std::move(finish));
  co_return Result(error_code(), std::move(result));
}

}  // namespace

}  // namespace tinker::client::rest

namespace tinker::detail {

using namespace client::rest;  // the operation above

void rest_download_checkpoint(HolderPtr h, std::string tinker_path, DownloadOptions o, diagnostics* d,
                              Handler<DownloadResult> c) {
  spawn_rest_call(std::move(h), d, std::move(c), &download_checkpoint_op, std::move(tinker_path), std::move(o));
}

}  // namespace tinker::detail
