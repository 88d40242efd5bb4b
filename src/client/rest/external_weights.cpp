// RestClient's external-weights downloads (doc/rest.md#external-weights): the signed URL of each
// file of an external checkpoint, then every file fetched as async_download_url fetches one, into a
// hidden staging directory that is renamed into place only when all of them arrived.
//
// Files beside the target `<output_dir>/<name>` while it runs (removed on every failure):
//   .<name>.downloading   the staging directory
//   .<name>.replaced      the previous target while `force` swaps it out
#include <tinker/rest_client.hpp>

#include "api/endpoints_external.hpp"
#include "client/async/off_io_thread.hpp"
#include "client/rest/download.hpp"
#include "client/rest/operation.hpp"
#include "http/download.hpp"

#include <tinker/types/checkpoint.hpp>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <string_view>
#include <system_error>

namespace tinker::client::rest {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using boost::system::error_code;

// The run and name of an external checkpoint path; anything else is refused before sending.
TinkerPath external_path_of(const std::string& tinker_path, std::string_view call) {
  TinkerPath parsed;
  try {
    parsed = TinkerPath::parse(tinker_path);
  } catch (const error& e) {
    throw error(errc::invalid_argument, std::string(call) + ": " + e.what());
  }
  if (parsed.type != CheckpointType::external) {
    throw error(errc::invalid_argument,
                std::string(call) + ": expected a tinker://<run>/external_weights/<name> path, got " + tinker_path);
  }
  return parsed;
}

Op<ExternalWeightsUrlsResponse> get_external_weights_urls_op(HolderPtr holder, std::string tinker_path,
                                                             diagnostics& diag) {
  const TinkerPath path = external_path_of(tinker_path, "get_external_weights_urls");
  ExternalWeightsUrlsResponse out;
  if (auto ec = co_await holder->ensure_config(diag)) co_return OperationResult<ExternalWeightsUrlsResponse>(ec, out);
  const error_code ec = co_await api::external_weights_urls(holder->http(), path.training_run_id, path.name, out, diag,
                                                            holder->retry_call());
  co_return OperationResult<ExternalWeightsUrlsResponse>(ec, std::move(out));
}

// A file path the server named, relative to the checkpoint: it must stay inside the download
// directory whatever the server says, so only plain relative segments are taken.
std::string relative_file_problem(const std::string& file) {
  if (file.empty()) return "an empty file name";
  if (file.find('\0') != std::string::npos || file.find('\\') != std::string::npos) {
    return "a NUL or backslash in the file name";
  }
  if (file.front() == '/') return "an absolute path";
  std::string_view rest = file;
  while (true) {
    const std::size_t slash = rest.find('/');
    const std::string_view segment = rest.substr(0, slash);
    if (segment.empty() || segment == "." || segment == "..") return "an empty, '.' or '..' path segment";
    if (slash == std::string_view::npos) return {};
    rest.remove_prefix(slash + 1);
  }
}

error_code check_relative_files(const ExternalWeightsUrlsResponse& urls, diagnostics& diag) {
  if (urls.urls.empty()) {
    diag.clear();
    diag.message = "the server listed no files for the external checkpoint";
    return make_error_code(errc::protocol_error);
  }
  for (const auto& [file, url] : urls.urls) {
    const std::string problem = relative_file_problem(file);
    if (problem.empty()) continue;
    diag.clear();
    diag.message = "the server named the file '" + file + "' (" + problem +
                   "), which would be written outside the download directory; nothing was downloaded";
    return make_error_code(errc::protocol_error);
  }
  return {};
}

class ExternalDownloadPaths {
 public:
  fs::path target;
  fs::path staging;
  fs::path replaced;
};

ExternalDownloadPaths external_paths_for(const DownloadOptions& options, const std::string& name) {
  std::error_code ec;
  const fs::path dir = options.output_dir.empty() ? fs::current_path(ec) : fs::absolute(options.output_dir, ec);
  if (ec) throw error(errc::invalid_argument, "output_dir: " + ec.message());
  ExternalDownloadPaths paths;
  paths.target = dir / name;
  paths.staging = dir / ("." + name + ".downloading");
  paths.replaced = dir / ("." + name + ".replaced");
  return paths;
}

bool external_target_exists(const fs::path& path) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(path, ec));
}

void check_external_target_free(const fs::path& target, bool force) {
  if (!force && external_target_exists(target)) {
    throw error(errc::conflict, target.string() + " already exists (pass force to replace it)");
  }
}

// Removes the staging directory unless it was renamed into place.
class StagingCleanup {
 public:
  explicit StagingCleanup(fs::path staging) : staging_(std::move(staging)) {}
  ~StagingCleanup() {
    std::error_code ignored;
    fs::remove_all(staging_, ignored);
  }
  StagingCleanup(const StagingCleanup&) = delete;
  StagingCleanup& operator=(const StagingCleanup&) = delete;

 private:
  fs::path staging_;
};

// The staging directory renamed to the target; an existing target (with force) is swapped out and
// removed only once the new one is in place.
void move_external_into_place(const ExternalDownloadPaths& paths, bool force) {
  try {
    if (!external_target_exists(paths.target)) {
      fs::rename(paths.staging, paths.target);
      return;
    }
    check_external_target_free(paths.target, force);
    fs::remove_all(paths.replaced);
    fs::rename(paths.target, paths.replaced);
    std::error_code failed;
    fs::rename(paths.staging, paths.target, failed);
    if (failed) {
      std::error_code ignored;
      fs::rename(paths.replaced, paths.target, ignored);
      throw fs::filesystem_error("cannot rename the download into place", paths.target, failed);
    }
    fs::remove_all(paths.replaced);
  } catch (const fs::filesystem_error& e) {
    throw error(errc::invalid_argument, std::string("output_dir: ") + e.what());
  }
}

// What the files of one download add up to, for progress and the result.
class ExternalTotals {
 public:
  std::uint64_t bytes_before = 0;  ///< of the files already complete
  int resumes = 0;
};

Op<DownloadResult> download_external_weights_op(HolderPtr holder, std::string tinker_path, DownloadOptions options,
                                                diagnostics& diag) {
  using Result = OperationResult<DownloadResult>;
  const TinkerPath path = external_path_of(tinker_path, "download_external_weights");
  if (options.keep_archive_only) {
    throw error(errc::invalid_argument, "keep_archive_only: external weights are separate files, not an archive");
  }
  if (options.max_resumes < 0) throw error(errc::invalid_argument, "max_resumes: must not be negative");
  const ExternalDownloadPaths paths = external_paths_for(options, download_target_name(tinker_path));
  check_external_target_free(paths.target, options.force);  // before any transfer; checked again at the end

  if (auto ec = co_await holder->ensure_config(diag)) co_return Result(ec, DownloadResult());
  ExternalWeightsUrlsResponse urls;
  const auto fetch_urls = [&holder, &path, &urls, &diag]() {
    return api::external_weights_urls(holder->http(), path.training_run_id, path.name, urls, diag,
                                      holder->retry_call());
  };
  if (auto ec = co_await fetch_urls()) co_return Result(ec, DownloadResult());
  if (auto ec = check_relative_files(urls, diag)) co_return Result(ec, DownloadResult());

  std::error_code dir_error;
  fs::remove_all(paths.staging, dir_error);  // left by a crashed run
  fs::create_directories(paths.staging, dir_error);
  if (dir_error) throw error(errc::invalid_argument, "output_dir: cannot create " + paths.staging.string());
  const StagingCleanup cleanup(paths.staging);

  http::DownloadTransport transport(holder->http().options());
  const ProgressCallback* progress = &options.on_progress;
  ExternalTotals totals;
  DownloadResult result;
  bool fresh_urls_taken = false;
  // A copy of the names: a refresh of the URLs replaces `urls`.
  std::vector<std::string> files;
  for (const auto& entry : urls.urls) files.push_back(entry.first);
  for (const std::string& file : files) {
    const fs::path local = paths.staging / fs::path(file);
    fs::create_directories(local.parent_path(), dir_error);
    if (dir_error) throw error(errc::invalid_argument, "output_dir: cannot create " + local.parent_path().string());
    http::DownloadRequest request(urls.urls.at(file), local);
    request.max_resumes = options.max_resumes;
    const ExternalTotals* done_so_far = &totals;
    if (*progress) {
      request.on_progress = [progress, done_so_far](const http::DownloadState& state) {
        (*progress)(DownloadProgress(done_so_far->bytes_before + state.bytes_done, std::nullopt,
                                     done_so_far->resumes + state.resumes));
      };
    }
    http::DownloadState state;
    for (;;) {
      const http::DownloadOutcome outcome =
          co_await http::download_to_file(transport, holder->http().clock(), request, state);
      if (!outcome.error) break;
      if (outcome.url_rejected && !fresh_urls_taken) {  // the signed URLs expired: ask for new ones, once
        fresh_urls_taken = true;
        holder->log(LogLevel::info, outcome.reason + "; asking for fresh external weights URLs");
        if (auto ec = co_await fetch_urls()) co_return Result(ec, DownloadResult());
        if (auto ec = check_relative_files(urls, diag)) co_return Result(ec, DownloadResult());
        const auto fresh = urls.urls.find(file);
        if (fresh == urls.urls.end()) {
          diag.clear();
          diag.message = "the fresh external weights URLs no longer list " + file;
          co_return Result(make_error_code(errc::protocol_error), DownloadResult());
        }
        request.url = fresh->second;
        continue;
      }
      diag = outcome.diag();
      diag.message = file + ": " + diag.message;
      co_return Result(outcome.error, DownloadResult());
    }
    std::uint64_t on_disk = 0;
    if (error_code ec = check_downloaded_size(local, state, "file " + file, on_disk, diag)) {
      co_return Result(ec, DownloadResult());
    }
    totals.bytes_before += on_disk;
    totals.resumes += state.resumes;
    result.files.push_back(file);
  }
  if (*progress) (*progress)(DownloadProgress(totals.bytes_before, totals.bytes_before, totals.resumes));

  std::sort(result.files.begin(), result.files.end());
  result.path = paths.target;
  result.archive_bytes = totals.bytes_before;
  result.resumes = totals.resumes;
  const bool force = options.force;
  // By reference: this frame waits for the job.
  std::function<void()> finish = [&paths, force] { move_external_into_place(paths, force); };
  co_await async::off_io_thread(std::move(finish));
  co_return Result(error_code(), std::move(result));
}

}  // namespace

}  // namespace tinker::client::rest

namespace tinker::detail {

using namespace client::rest;  // the operations above

void rest_get_external_weights_urls(HolderPtr h, std::string tinker_path, diagnostics* d,
                                    Handler<ExternalWeightsUrlsResponse> c) {
  spawn_rest_call(std::move(h), d, std::move(c), &get_external_weights_urls_op, std::move(tinker_path));
}

void rest_download_external_weights(HolderPtr h, std::string tinker_path, DownloadOptions o, diagnostics* d,
                                    Handler<DownloadResult> c) {
  spawn_rest_call(std::move(h), d, std::move(c), &download_external_weights_op, std::move(tinker_path), std::move(o));
}

}  // namespace tinker::detail
