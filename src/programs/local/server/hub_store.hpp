// The model repos pushed to tinker-local's Hugging Face Hub emulation (doc/local.md#hub-uploads):
// repos with owners and visibility, branches, pull-request refs and commits (each a full
// snapshot of path -> file), the LFS objects uploaded for them and the uploads under way. Plain
// data and rules, no HTTP: hub_upload.cpp maps requests onto it, hub.cpp serves its files.
#pragma once

#include "programs/local/tokenizer/hub_repos.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::local {

/// A refusal in the Hub's terms: HTTP status, X-Error-Code (may be empty) and message.
class HubRefusal : public std::runtime_error {
 public:
  HubRefusal(int status, std::string code, const std::string& message)
      : std::runtime_error(message), status_(status), code_(std::move(code)) {}
  int status() const noexcept { return status_; }
  const std::string& code() const noexcept { return code_; }

 private:
  int status_;
  std::string code_;
};

using HubSnapshot = std::map<std::string, HubFile, std::less<>>;

class HubCommit {
 public:
  std::string id;  ///< 40 hex digits
  std::string summary;
  HubSnapshot files;
};

class PushedRepo {
 public:
  std::string id;     ///< "namespace/name"
  std::string owner;  ///< the account (whoami name) that created it
  bool is_private = true;
  std::map<std::string, std::string, std::less<>> refs;  ///< "main", other branches, "refs/pr/N" -> commit
  std::map<std::string, HubCommit, std::less<>> commits;
  int pull_requests = 0;

  /// The commit a revision names (a branch, "refs/pr/N" or a commit id); null if none.
  const HubCommit* resolve(std::string_view revision) const;
};

/// One file of a commit request: inline bytes, or an LFS object named by its SHA-256.
class HubCommitFile {
 public:
  std::string path;
  std::optional<std::string> content;  ///< regular file
  std::string lfs_oid;                 ///< LFS file: 64 hex digits
  std::uint64_t lfs_size = 0;
};

/// An LFS upload the batch endpoint handed out: the object expected and, for multipart, the parts.
class PendingLfsUpload {
 public:
  std::string oid;
  std::uint64_t size = 0;
  std::uint64_t chunk_size = 0;  ///< 0: one PUT of the whole object
  std::map<int, std::string> parts;
};

class HubStore {
 public:
  /// The account name of a user id of the authenticator ("user-<first 12 of its hash>").
  static std::string account_for(std::string_view user_id);

  /// Creates `namespace/name` owned by `account` with an initial commit holding .gitattributes
  /// (the Hub's LFS patterns). Throws HubRefusal: 403 for another namespace, 409 when it exists.
  const PushedRepo& create_repo(const std::string& account, const std::string& space, const std::string& name,
                                bool is_private);
  /// The repo `id`, visible to `account` (the owner, or anyone for a public repo); empty
  /// `account`: anonymous. Throws HubRefusal 404 RepoNotFound (401 for anonymous callers, as the
  /// Hub answers them) otherwise.
  PushedRepo& visible_repo(std::string_view id, std::string_view account);
  /// The repo `id` if it exists (whoever may see it).
  const PushedRepo* find(std::string_view id) const;

  /// Creates `branch` at main's commit. Throws HubRefusal 409 when it exists, 400 for refs/...
  void create_branch(PushedRepo& repo, const std::string& branch);

  /// "lfs" or "regular" for a file of `size` starting with `sample`, as the Hub decides: LFS for
  /// the .gitattributes patterns (weights, archives), binary samples and files of 10 MiB or more.
  static std::string upload_mode(std::string_view path, std::uint64_t size, std::string_view sample);

  bool has_lfs_object(std::string_view oid) const { return lfs_objects_.find(std::string(oid)) != lfs_objects_.end(); }
  /// A token for uploading `oid` (parts of `chunk_size` when not 0).
  std::string begin_upload(const std::string& oid, std::uint64_t size, std::uint64_t chunk_size);
  /// A whole object (part 0) or part N of the upload `token`; returns the part's ETag. Throws
  /// HubRefusal 404 for an unknown token, 400 when a whole object's hash or size is wrong.
  std::string put(const std::string& token, int part, std::string bytes);
  /// Joins the parts of a multipart upload; throws HubRefusal 400 for missing parts or a wrong hash.
  void complete(const std::string& token);

  /// Commits `files` onto `revision` (a branch) or, with `create_pr`, onto a new refs/pr/N from
  /// it. Returns the commit id and sets `pr` to N. Throws HubRefusal: 404 RevisionNotFound, 422
  /// for an LFS file whose object was not uploaded (or whose size differs), 400 for a bad path.
  std::string commit(PushedRepo& repo, const std::string& revision, bool create_pr, const std::string& summary,
                     const std::vector<HubCommitFile>& files, int& pr);

 private:
  std::map<std::string, PushedRepo, std::less<>> repos_;
  std::map<std::string, std::shared_ptr<const std::string>> lfs_objects_;  ///< SHA-256 -> bytes
  std::map<std::string, PendingLfsUpload> uploads_;
  std::uint64_t counter_ = 0;
};

}  // namespace tinker::local
