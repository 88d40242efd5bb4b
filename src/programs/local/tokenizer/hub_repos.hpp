// The tokenizer repos tinker-local serves through its Hugging Face Hub-compatible `resolve`
// endpoint: each installed snapshot read back from the hub cache, with the commit that refs/main
// names and, per file, the ETag the Hub would send (the git blob id, as for files kept in git).
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace tinker::local {

class HubFile {
 public:
  std::shared_ptr<const std::string> bytes;
  std::string etag;  ///< SHA-1 of "blob <size>\0<bytes>", 40 hex digits
};

class HubRepo {
 public:
  std::string id;      ///< "org/name"
  std::string commit;  ///< what refs/main names
  std::map<std::string, HubFile, std::less<>> files;
};

using HubRepos = std::map<std::string, HubRepo, std::less<>>;

/// Reads <hub_cache>/models--<org>--<name>/refs/main and every regular file of the snapshot it
/// names. Throws tinker::error (invalid_configuration) naming the path when it is missing.
HubRepo read_installed_repo(const std::filesystem::path& hub_cache, std::string_view repo_id);

/// The git blob id of `bytes`: what the Hub sends as the ETag of a file kept in git.
std::string git_blob_id(std::string_view bytes);

}  // namespace tinker::local
