// Downloading a model repository snapshot into the hub cache (hub_download.hpp): the Hub's file
// listing through the API calls' machinery (hub_call.hpp: token, retries, the Hub's error words),
// each file through the SDK's streaming download (http/download.hpp: constant memory, resumption,
// redirects to a CDN without the token), into the cache layout the tokenizer download writes
// (text/hub_layout.hpp). Blocking, on a private io_context, as the other Hub calls.
#include "hub/hub_call.hpp"
#include "hub/snapshot_listing.hpp"

#include "http/clock.hpp"
#include "http/download.hpp"
#include "text/hub_layout.hpp"
#include "tokenizer/repo_id.hpp"

#include <tinker/error.hpp>
#include <tinker/hub_download.hpp>
#include <tinker/hub_upload.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <utility>

namespace tinker {
namespace hub_detail {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using tokenizer_detail::HubRepoWriter;

constexpr int snapshot_max_redirects = 5;  // the Hub sends LFS files to a CDN: one hop, sometimes two
constexpr int snapshot_max_resumes = 5;
constexpr std::size_t max_listing_bytes = 32u << 20;  // a repo of tens of thousands of files

// An exclusive flock(2) on `path` while it lives. huggingface_hub locks the same file
// (.locks/<repo folder>/<etag>.lock, through filelock's flock), so a Python download and this
// one never write one blob at the same time.
class BlobLock {
 public:
  explicit BlobLock(const fs::path& path) {
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      throw error(errc::io_error,
                  "hub cache " + path.string() + ": cannot open the lock file: " + std::strerror(errno));
    }
    if (::flock(fd_, LOCK_EX) != 0) {
      const int failure = errno;
      ::close(fd_);
      // EINTR: Ctrl-C while another process holds the lock (SIGINT is installed without SA_RESTART).
      if (failure == EINTR) throw error(errc::cancelled, "interrupted while waiting for " + path.string());
      throw error(errc::io_error, "hub cache " + path.string() + ": cannot lock: " + std::strerror(failure));
    }
  }
  ~BlobLock() { ::close(fd_); }  // closing releases the lock
  BlobLock(const BlobLock&) = delete;
  BlobLock& operator=(const BlobLock&) = delete;

 private:
  int fd_ = -1;
};

// huggingface_hub's normalisation of an ETag: a weak validator's "W/" and the quotes go.
std::string bare_etag(std::string etag) {
  if (etag.starts_with("W/")) etag.erase(0, 2);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') etag = etag.substr(1, etag.size() - 2);
  return etag;
}

void remove_quietly(const fs::path& path) {
  std::error_code ignored;
  fs::remove(path, ignored);
}

std::uint64_t size_of(const fs::path& path) {
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  return ec ? 0 : static_cast<std::uint64_t>(size);
}

bool blob_in_cache(const fs::path& blob, const ListedFile& file) {
  std::error_code ec;
  if (!fs::is_regular_file(blob, ec)) return false;
  return !file.size || size_of(blob) == *file.size;
}

std::string patterns_text(const std::vector<std::string>& patterns) {
  std::string text;
  for (const std::string& pattern : patterns) text += (text.empty() ? "" : ", ") + pattern;
  return text;
}

// One blob placed in the cache: the name it has there and its size.
class PlacedBlob {
 public:
  std::string etag;
  std::uint64_t bytes = 0;
};

// Everything one snapshot download needs, on the caller's stack while its io_context runs.
class SnapshotFetch {
 public:
  SnapshotFetch(std::string_view repo_id, const HubOptions& options, const HubSnapshotProgressCallback& progress_,
                const EnvLookup& env)
      : call(options, env),
        writer(*options.cache_dir, repo_id),
        repo(repo_id),
        locks(*options.cache_dir / ".locks" / tokenizer_detail::hub_repo_folder(repo_id)),
        progress(progress_) {}

  fs::path blob(std::string_view etag) const { return writer.folder() / "blobs" / std::string(etag); }

  // {endpoint}/{repo}/resolve/{commit}/{path}, each part of the path percent-encoded.
  std::string resolve_url(const std::string& commit, std::string_view path) const {
    std::string url = call.url(repo + "/resolve/" + commit + "/");
    std::size_t start = 0;
    while (start <= path.size()) {
      const std::size_t end = std::min(path.find('/', start), path.size());
      url += (start == 0 ? "" : "/") + quote_segment(path.substr(start, end - start));
      start = end + 1;
    }
    return url;
  }

  void report(std::string_view file) {
    state.file = file;
    if (progress) progress(state);
  }

  HubCall call;
  HubRepoWriter writer;
  std::string repo;
  fs::path locks;
  const HubSnapshotProgressCallback& progress;
  HubSnapshotProgress state;
  std::shared_ptr<http::Clock> clock;
};

[[noreturn]] void fail_file(const SnapshotFetch& fetch, const http::DownloadOutcome& outcome, const std::string& url,
                            std::string_view path) {
  diagnostics diag = outcome.diag();
  const int status = outcome.http_status;
  if (status == 401 || status == 403) {
    diag.message = "the Hugging Face Hub answered HTTP " + std::to_string(status) + " for " + url + ": " +
                   (fetch.call.options.token.empty()
                        ? "HF_TOKEN is not set; a gated or private repo needs a token with access to it (set HF_TOKEN)"
                        : "the token in HF_TOKEN was refused or has no access to this repo");
  } else if (status == 404) {
    diag.message =
        "the Hugging Face Hub lists " + std::string(path) + " in " + fetch.repo + " but answered HTTP 404 for " + url;
  } else {
    diag.message = "downloading " + url + " failed: " + outcome.reason;
  }
  throw error(outcome.error, std::move(diag));
}

// The name of a blob whose listing gave none: the answer's X-Linked-Etag (LFS) or ETag.
std::string etag_of_answer(const http::DownloadOutcome& outcome, const std::string& url) {
  auto etag = outcome.header("x-linked-etag");
  if (!etag) etag = outcome.header("etag");
  std::string problem = etag ? tokenizer_detail::path_component_problem(bare_etag(*etag)) : "is missing";
  if (!problem.empty()) {
    throw error(errc::protocol_error,
                url + ": the answer's ETag " + problem + " and the listing named no blob (is HF_ENDPOINT a Hub?)");
  }
  return bare_etag(*etag);
}

// Bytes of an earlier, cut-off download of `file` to continue from (0: start over).
std::uint64_t resumable_bytes(const fs::path& partial, const ListedFile& file) {
  const std::uint64_t have = size_of(partial);
  if (file.size && have > *file.size) return 0;  // not this file's bytes: truncated and fetched again
  return have;
}

// Downloads one file into its blob. Known blobs go to blobs/<etag>.incomplete under the lock and
// stay there when the download fails, for the next call to continue; unnamed ones to a temporary
// file that never outlives the call.
asio::awaitable<PlacedBlob> fetch_file(SnapshotFetch* fetch, std::string commit, const ListedFile* file,
                                       std::uint64_t done_before) {
  const bool named = !file->etag.empty();
  std::optional<BlobLock> lock;
  fs::path partial;
  http::DownloadState state;
  if (named) {
    lock.emplace(fetch->locks / (file->etag + ".lock"));
    // Another process may have finished it while this one waited for the lock.
    if (blob_in_cache(fetch->blob(file->etag), *file))
      co_return PlacedBlob{file->etag, size_of(fetch->blob(file->etag))};
    partial = fetch->blob(file->etag + ".incomplete");
    std::error_code ec;
    fs::create_directories(partial.parent_path(), ec);
    if (ec) throw error(errc::io_error, "hub cache " + partial.parent_path().string() + ": " + ec.message());
    state.bytes_done = resumable_bytes(partial, *file);
  } else {
    partial = fetch->writer.new_temporary_blob();
  }
  http::DownloadRequest request(fetch->resolve_url(commit, file->path), partial);
  const std::string url = request.url;
  if (!fetch->call.options.token.empty()) {
    request.authorization = Secret("Bearer " + fetch->call.options.token.reveal());
  }
  request.max_redirects = snapshot_max_redirects;
  request.max_resumes = snapshot_max_resumes;
  request.keep_headers = {"x-linked-etag", "etag"};
  request.on_progress = [fetch, file, done_before](const http::DownloadState& progress) {
    fetch->state.bytes_done = done_before + progress.bytes_done;
    fetch->report(file->path);
  };
  // A download that ended with every byte but not its rename needs no request.
  const bool complete = named && file->size && state.bytes_done == *file->size && *file->size > 0;
  http::DownloadOutcome outcome;
  if (!complete) {
    try {
      outcome = co_await http::download_to_file(fetch->call.transport, *fetch->clock, request, state);
      // 416: the part kept from before is not a prefix the server can continue (a listing
      // without sizes, a part as long as the file): start over once.
      if (outcome.http_status == 416 && state.bytes_done > 0) {
        state = http::DownloadState();
        outcome = co_await http::download_to_file(fetch->call.transport, *fetch->clock, request, state);
      }
    } catch (...) {
      if (!named) remove_quietly(partial);
      throw;
    }
  }
  if (outcome.error) {
    if (!named) remove_quietly(partial);
    fail_file(*fetch, outcome, url, file->path);
  }
  const std::uint64_t bytes = size_of(partial);
  if (file->size && bytes != *file->size) {
    remove_quietly(partial);
    throw error(errc::protocol_error, url + ": received " + std::to_string(bytes) + " bytes, the Hub's listing says " +
                                          std::to_string(*file->size));
  }
  std::string etag = file->etag;
  if (!named) {
    try {
      etag = etag_of_answer(outcome, url);
    } catch (...) {
      remove_quietly(partial);
      throw;
    }
  }
  fetch->writer.commit_blob(partial, etag);
  co_return PlacedBlob{etag, bytes};
}

asio::awaitable<RepoListing> list_files(SnapshotFetch* fetch, std::string revision) {
  http::SingleRequest request(
      "GET", fetch->call.url("api/models/" + fetch->repo + "/revision/" + quote_segment(revision) + "?blobs=true"));
  request.max_response = max_listing_bytes;
  const http::SingleResponse response = co_await fetch->call.send(request, Send());
  const std::string what = "listing the files of " + fetch->repo + " at revision " + revision;
  if (response.status / 100 != 2) fetch->call.fail(response, what);
  co_return parse_repo_listing(fetch->call.json_of(response, what), what);
}

// The listed files the patterns keep, their paths checked before they become file names.
std::vector<ListedFile> wanted_files(const RepoListing& listing, const std::vector<std::string>& allow,
                                     const std::string& repo, const std::string& revision) {
  std::vector<std::string> paths;
  for (const ListedFile& file : listing.files) paths.push_back(file.path);
  const std::vector<std::string> kept = hub_filter_paths(paths, allow, {});
  std::vector<ListedFile> wanted;
  std::size_t next = 0;  // hub_filter_paths keeps the order
  for (const ListedFile& file : listing.files) {
    if (next < kept.size() && kept[next] == file.path) {
      if (auto problem = snapshot_path_problem(file.path); !problem.empty()) {
        throw error(errc::protocol_error,
                    "the Hub's listing of " + repo + " has a file path that " + problem + ": \"" + file.path + "\"");
      }
      wanted.push_back(file);
      ++next;
    }
  }
  if (wanted.empty()) {
    std::string message = "the Hugging Face Hub repo " + repo + " at revision " + revision + " has no file";
    if (!allow.empty()) message += " matching " + patterns_text(allow);
    throw error(errc::not_found, message);
  }
  return wanted;
}

asio::awaitable<fs::path> download_snapshot(SnapshotFetch* fetch, std::string revision,
                                            std::vector<std::string> allow) {
  const RepoListing listing = co_await list_files(fetch, revision);
  const std::vector<ListedFile> wanted = wanted_files(listing, allow, fetch->repo, revision);
  HubSnapshotProgress& state = fetch->state;
  state.files_total = wanted.size();
  std::vector<std::string> etags(wanted.size());
  std::vector<std::size_t> missing;
  bool sizes_known = true;
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    const ListedFile& file = wanted[i];
    if (!file.etag.empty() && blob_in_cache(fetch->blob(file.etag), file)) {
      etags[i] = file.etag;
      ++state.files_reused;
      ++state.files_done;
      continue;
    }
    missing.push_back(i);
    sizes_known = sizes_known && file.size.has_value();
    state.bytes_total += file.size.value_or(0);
  }
  if (!sizes_known) state.bytes_total = 0;
  fetch->report("");
  std::uint64_t done = 0;
  for (const std::size_t i : missing) {
    const PlacedBlob placed = co_await fetch_file(fetch, listing.commit, &wanted[i], done);
    etags[i] = placed.etag;
    done += placed.bytes;
    state.bytes_done = done;
    ++state.files_done;
    fetch->report(wanted[i].path);
  }
  // The links once every blob is in place, the ref last of all: an interrupted download leaves
  // no snapshot that looks complete.
  for (std::size_t i = 0; i < wanted.size(); ++i)
    fetch->writer.link_snapshot_file(listing.commit, wanted[i].path, etags[i]);
  if (revision != listing.commit) fetch->writer.write_ref(revision, listing.commit);
  fetch->report("");
  co_return fetch->writer.folder() / "snapshots" / listing.commit;
}

bool is_commit_id(std::string_view revision) {
  return revision.size() == 40 && revision.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

std::string read_ref(const fs::path& ref) {
  std::ifstream in(ref, std::ios::binary);
  std::string commit;
  std::getline(in, commit);
  return commit;
}

// HF_HUB_OFFLINE: the snapshot the cache has for `revision`, if it holds a file the patterns keep.
fs::path cached_snapshot(const HubRepoWriter& writer, std::string_view repo_id, std::string_view revision,
                         const std::vector<std::string>& allow) {
  const std::string what = "HF_HUB_OFFLINE is set and the hub cache has no snapshot of " + std::string(repo_id) +
                           " at revision " + std::string(revision);
  std::string commit(revision);
  if (!is_commit_id(revision)) {
    const fs::path ref = writer.folder() / "refs" / std::string(revision);
    commit = read_ref(ref);
    if (!tokenizer_detail::path_component_problem(commit).empty()) {
      throw error(errc::invalid_configuration, what + " (looked at " + ref.string() + ")");
    }
  }
  const fs::path snapshot = writer.folder() / "snapshots" / commit;
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(snapshot, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_directory()) files.push_back(it->path().lexically_relative(snapshot).generic_string());
  }
  if (hub_filter_paths(files, allow, {}).empty()) {
    std::string message = what + " (looked at " + snapshot.string();
    if (!allow.empty()) message += " for " + patterns_text(allow);
    throw error(errc::invalid_configuration, message + ")");
  }
  return snapshot;
}

}  // namespace
}  // namespace hub_detail

std::filesystem::path download_model_snapshot(std::string_view repo_id, std::string_view revision,
                                              const HubOptions& options, const std::vector<std::string>& allow_patterns,
                                              const HubSnapshotProgressCallback& progress, const EnvLookup& env) {
  hub_detail::check_repo_id(repo_id);
  if (auto problem = tokenizer_detail::revision_problem(revision); !problem.empty()) {
    throw error(errc::invalid_argument, "the revision '" + std::string(revision) + "' " + problem);
  }
  if (!options.cache_dir) {
    throw error(errc::invalid_configuration,
                "no Hugging Face hub cache to download into: none of HF_HUB_CACHE, HF_HOME, XDG_CACHE_HOME, HOME is "
                "set");
  }
  if (options.offline) {
    const tokenizer_detail::HubRepoWriter writer(*options.cache_dir, repo_id);
    return hub_detail::cached_snapshot(writer, repo_id, revision, allow_patterns);
  }
  hub_detail::SnapshotFetch fetch(repo_id, options, progress, env);
  boost::asio::io_context io;
  fetch.clock = http::make_system_clock(io.get_executor());
  return hub_detail::run_blocking(io, hub_detail::download_snapshot(&fetch, std::string(revision), allow_patterns));
}

}  // namespace tinker
