/// \file
/// Uploading files to the Hugging Face Hub over its HTTP API, as huggingface_hub's `HfApi` does
/// (`doc/cli.md#checkpoint-push-hf`): what `tinker checkpoint push-hf` is made of.
///
///     GET  {HF_ENDPOINT}/api/whoami-v2                                     who the token belongs to
///     POST {HF_ENDPOINT}/api/repos/create                                  {"name","organization","visibility","type"}
///     POST {HF_ENDPOINT}/api/models/{repo}/branch/{branch}                 a branch from main
///     POST {HF_ENDPOINT}/api/models/{repo}/preupload/{revision}            which files go through LFS
///     POST {HF_ENDPOINT}/{repo}.git/info/lfs/objects/batch                 where to PUT them
///     PUT  <upload href> (or one PUT per part and a completion POST)       the bytes, no token sent
///     POST <verify href>                                                   the server checked them
///     POST {HF_ENDPOINT}/api/models/{repo}/commit/{revision}[?create_pr=1] NDJSON: header, files, lfsFiles
///
/// Every call sends "Authorization: Bearer <HF_TOKEN>" to the endpoint (never to an upload URL of
/// another origin) and never puts the token in a message. Transient answers (429, 5xx) and
/// dropped connections are retried (three tries, 250 ms doubling) except for the commit itself,
/// which huggingface_hub does not retry either (a lost answer would commit twice).
#pragma once

#include <tinker/config.hpp>
#include <tinker/tokenizer_hub.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tinker {

/// One file of a commit: where its bytes are and its path in the repo.
class HubUploadFile {
 public:
  HubUploadFile() = default;
  /// The file at `local_path_`, committed as `path_in_repo_`.
  HubUploadFile(std::string path_in_repo_, std::filesystem::path local_path_)
      : path_in_repo(std::move(path_in_repo_)), local_path(std::move(local_path_)) {}

  std::string path_in_repo;          ///< "adapter_config.json", "sub/dir/file"
  std::filesystem::path local_path;  ///< the bytes to upload, read when the commit runs
};

/// What hub_commit commits.
class HubCommitRequest {
 public:
  HubCommitRequest() = default;

  std::string repo_id;               ///< "namespace/name"
  std::string revision = "main";     ///< the branch committed to (or the PR's base with create_pr)
  std::string summary;               ///< the commit message's first line
  std::string description;           ///< the rest of the message
  bool create_pr = false;            ///< open a pull request instead of committing to `revision`
  std::vector<HubUploadFile> files;  ///< what the commit adds or replaces
  /// Called as LFS bytes are sent (done, total of the LFS files): on the calling thread.
  std::function<void(std::uint64_t done, std::uint64_t total)> on_progress;
};

/// What the Hub answered to a commit.
class HubCommitInfo {
 public:
  HubCommitInfo() = default;

  std::string commit_url;                  ///< commitUrl
  std::string commit_oid;                  ///< commitOid
  std::optional<std::string> pr_url;       ///< pullRequestUrl, with create_pr
  std::vector<std::string> lfs_files;      ///< committed as LFS pointers, in request order
  std::vector<std::string> regular_files;  ///< committed inline (base64), in request order
  std::uint64_t lfs_bytes_sent = 0;        ///< 0 when the Hub already had every LFS object
};

/// GET /api/models/{repo}[/revision/{revision}].
class HubRepoInfo {
 public:
  HubRepoInfo() = default;

  std::string id;           ///< "namespace/name"
  bool is_private = false;  ///< only its owner (and the token's organisations) can see it
  std::string sha;          ///< the commit of the revision asked (main by default)
};

/// Why `repo_id` is not a Hub repo id ("name" or "namespace/name": letters, digits, '-', '_',
/// '.', at most 96 characters a part, no "--" or "..", not starting or ending with '-' or '.',
/// not ending with ".git"), or "" when it is one.
std::string hub_repo_id_problem(std::string_view repo_id);

/// Whether `path` matches the glob `pattern` as huggingface_hub's allow/ignore patterns do
/// (Python's fnmatchcase: '*' and '?' also match '/', "[...]" sets; a pattern ending in '/'
/// gets a '*').
bool hub_pattern_matches(std::string_view pattern, std::string_view path);

/// The paths kept by huggingface_hub's filter: matching one of `allow` (when not empty) and none
/// of `ignore`; order kept.
std::vector<std::string> hub_filter_paths(const std::vector<std::string>& paths, const std::vector<std::string>& allow,
                                          const std::vector<std::string>& ignore);

/// The account name of the token in `options` (GET /api/whoami-v2). Throws tinker::error:
/// invalid_configuration when HF_TOKEN is not set; the status's class (401: "the token in
/// HF_TOKEN was refused") otherwise.
std::string hub_whoami(const HubOptions& options, const EnvLookup& env = process_environment());

/// Creates the model repo `repo_id` (private or public; ignored when it exists and `exist_ok`).
/// Returns its id as the Hub names it ("namespace/name"; a bare name is put in the token's
/// namespace). Throws tinker::error with the Hub's status, X-Error-Message and request id.
std::string hub_create_repo(const HubOptions& options, std::string_view repo_id, bool private_repo, bool exist_ok,
                            const EnvLookup& env = process_environment());

/// Creates `branch` from main; an existing branch is fine when `exist_ok`.
void hub_create_branch(const HubOptions& options, std::string_view repo_id, std::string_view branch, bool exist_ok,
                       const EnvLookup& env = process_environment());

/// The model repo `repo_id` at `revision`: its id, visibility and commit. Throws tinker::error with
/// the Hub's status and request id (404 for a repo or revision the token cannot see).
HubRepoInfo hub_repo_info(const HubOptions& options, std::string_view repo_id, std::string_view revision = "main",
                          const EnvLookup& env = process_environment());

/// The bytes of `path` at `revision` (GET /{repo}/resolve/{revision}/{path}, the token sent when
/// set); nullopt when the Hub answers 404 (no such repo, revision or file). Files up to 64 MiB.
std::optional<std::string> hub_read_file(const HubOptions& options, std::string_view repo_id, std::string_view revision,
                                         std::string_view path, const EnvLookup& env = process_environment());

/// Uploads and commits `request.files` (preupload, LFS batch and uploads, commit). Throws
/// tinker::error naming the step, with the Hub's status, error message and request id.
HubCommitInfo hub_commit(const HubOptions& options, const HubCommitRequest& request,
                         const EnvLookup& env = process_environment());

}  // namespace tinker
