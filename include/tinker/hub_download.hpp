/// \file
/// Downloading a model repository from the Hugging Face Hub into the hub cache, as
/// huggingface_hub's `snapshot_download` does (`doc/export.md`): the base model a LoRA adapter is
/// exported against.
///
///     GET {HF_ENDPOINT}/api/models/{repo}/revision/{revision}?blobs=true   the commit and its files
///     GET {HF_ENDPOINT}/{repo}/resolve/{commit}/{file}                      each wanted file
///
/// The listing names the commit ("sha") and every file ("siblings": path, size, git blob id, LFS
/// SHA-256). The files kept by the allow patterns are fetched at that commit, so a branch that
/// moves meanwhile cannot mix two commits. The cache is the tokenizer download's
/// (`tokenizer_hub.hpp`), shared with Python tools:
///
///     <hub>/models--<org>--<name>/blobs/<etag>                   the bytes (LFS: their SHA-256)
///     <hub>/models--<org>--<name>/blobs/<etag>.incomplete        a download under way or cut off
///     <hub>/models--<org>--<name>/snapshots/<commit>/<file>      -> ../../blobs/<etag>
///     <hub>/models--<org>--<name>/refs/<revision>                the commit
///     <hub>/.locks/models--<org>--<name>/<etag>.lock             held while a blob downloads
///
/// A blob already in the cache is not requested again. A download cut off (a dropped connection,
/// Ctrl-C, a crash) leaves its `.incomplete` file, which the next call continues with a Range
/// request. The snapshot links are made once every blob is in place, the ref last: a failure
/// part-way leaves nothing that looks like a complete snapshot.
///
/// HF_TOKEN (HubOptions::token) goes to the endpoint only, never to a CDN a file redirects to,
/// and never into a message. With HF_HUB_OFFLINE (HubOptions::offline) nothing is requested: the
/// snapshot the cache already has for the revision is returned.
#pragma once

#include <tinker/config.hpp>
#include <tinker/tokenizer_hub.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace tinker {

/// How far a snapshot download got, reported from the calling thread.
class HubSnapshotProgress {
 public:
  HubSnapshotProgress() = default;

  std::string_view file;          ///< the file being downloaded ("" once every file is in place)
  std::uint64_t bytes_done = 0;   ///< of the files that need downloading (partial ones count what they have)
  std::uint64_t bytes_total = 0;  ///< 0 when the Hub gave no sizes
  std::size_t files_done = 0;     ///< of files_total, the reused ones included
  std::size_t files_total = 0;    ///< the files kept by the allow patterns
  std::size_t files_reused = 0;   ///< found in the cache, not requested
};
/// May throw (e.g. tinker::error(errc::cancelled) on Ctrl-C): the download stops there, keeping
/// what it fetched for the next call.
using HubSnapshotProgressCallback = std::function<void(const HubSnapshotProgress&)>;

/// Downloads the files of the model repo `repo_id` at `revision` (a branch, tag or commit) kept
/// by `allow_patterns` (huggingface_hub's globs, `hub_pattern_matches`; empty: every file) into
/// `options.cache_dir`, and returns the snapshot directory `snapshots/<commit>`.
///
/// Throws tinker::error: invalid_argument for a malformed repo id or revision;
/// invalid_configuration when no cache dir is known, or when offline and the cache has no
/// snapshot for the revision (naming the path looked at); not_found when no file of the repo
/// matches the patterns; the status's class for the Hub's answers ("... the Hugging Face Hub
/// answered HTTP 404 (RepoNotFound): ..."; 401/403 saying whether HF_TOKEN is set, never its
/// value); protocol_error for a listing or answer that is not a Hub's (a file path escaping the
/// snapshot, a size that does not match); the transport's error otherwise.
std::filesystem::path download_model_snapshot(std::string_view repo_id, std::string_view revision,
                                              const HubOptions& options,
                                              const std::vector<std::string>& allow_patterns = {},
                                              const HubSnapshotProgressCallback& progress = {},
                                              const EnvLookup& env = process_environment());

}  // namespace tinker
