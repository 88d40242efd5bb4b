/// \file
/// Checkpoint download (`doc/rest.md#checkpoint-downloads`): archive URL -> unauthenticated GET
/// of the signed URL, streamed to disk in constant memory -> size check -> safe extraction. The
/// types here are used by RestClient::async_download_checkpoint and its blocking form.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tinker {

/// Where a download stands; passed to DownloadOptions::on_progress.
class DownloadProgress {
 public:
  /// Nothing downloaded yet.
  DownloadProgress() = default;
  /// `bytes_done_` of `bytes_total_` on disk after `resumes_` resumptions.
  DownloadProgress(std::uint64_t bytes_done_, std::optional<std::uint64_t> bytes_total_, int resumes_)
      : bytes_done(bytes_done_), bytes_total(bytes_total_), resumes(resumes_) {}

  std::uint64_t bytes_done = 0;              ///< archive bytes on disk so far
  std::optional<std::uint64_t> bytes_total;  ///< from Content-Length / Content-Range; empty when unknown
  int resumes = 0;                           ///< GETs re-issued after a dropped connection so far
};

/// Options of RestClient::async_download_checkpoint.
class DownloadOptions {
 public:
  /// Into the current directory, no overwriting, extracted, up to 5 resumptions.
  DownloadOptions() = default;
  /// Into `output_dir_`, the other defaults as above.
  explicit DownloadOptions(std::filesystem::path output_dir_) : output_dir(std::move(output_dir_)) {}

  /// Parent directory. The checkpoint lands in `output_dir / download_target_name(tinker_path)`
  /// ("tinker://run/weights/x" -> "run_weights_x", as `tinker checkpoint download` names it).
  /// Empty: the current directory.
  std::filesystem::path output_dir;
  /// Replace an existing target directory. Without it an existing target is an error
  /// (errc::conflict) and nothing is touched.
  bool force = false;
  /// Keep the downloaded `.tar` beside the target instead of extracting it.
  bool keep_archive_only = false;
  /// Range resumptions allowed after the connection drops mid-body (0: none). A dropped
  /// connection or timed-out read (ClientOptions::timeouts.request per 64 KiB read) with none
  /// left fails: errc::request_failed naming the sizes when the total is known.
  int max_resumes = 5;
  /// Called on the client's io thread whenever bytes arrive (at most every 64 KiB or 100 ms),
  /// and once at the end. Must not block. bytes_done never decreases, except back to 0 when a
  /// server ignores a Range request and the download restarts.
  std::function<void(const DownloadProgress&)> on_progress;
};

/// What RestClient::async_download_checkpoint wrote.
class DownloadResult {
 public:
  /// Nothing written.
  DownloadResult() = default;

  std::filesystem::path path;       ///< the extracted directory (or the .tar with keep_archive_only)
  std::uint64_t archive_bytes = 0;  ///< size of the archive, verified against the server's length
  int resumes = 0;                  ///< GETs re-issued after a dropped connection (Range when bytes were on disk)
  std::vector<std::string> files;   ///< extracted regular files, relative to `path`, sorted
};

/// Options of RestClient::async_download_url: one file from a signed URL.
class UrlDownloadOptions {
 public:
  /// Defaults: no replacing, 5 resumptions, no progress callback.
  UrlDownloadOptions() = default;

  /// Replace an existing file. Without it an existing file is an error (errc::conflict) and
  /// nothing is transferred.
  bool force = false;
  /// Range resumptions allowed after the connection drops mid-body (0: none), as
  /// DownloadOptions::max_resumes.
  int max_resumes = 5;
  /// Called on the client's io thread as bytes arrive, as DownloadOptions::on_progress.
  std::function<void(const DownloadProgress&)> on_progress;
};

/// "tinker://run/weights/x" -> "run_weights_x": the directory name `tinker checkpoint download`
/// (`doc/cli.md`) gives a download.
/// Throws tinker::error (invalid_argument) for a string that is not a tinker path.
std::string download_target_name(const std::string& tinker_path);

}  // namespace tinker
