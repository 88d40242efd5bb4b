// The Hub's answer to GET /api/models/{repo}/revision/{revision}?blobs=true as the snapshot download
// (hub_download.hpp) uses it: the commit, and per file its path, size and the name of its blob.
// Everything in it comes from a server and becomes file names in the cache: checked here.
#pragma once

#include <boost/json/value.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::hub_detail {

class ListedFile {
 public:
  ListedFile() = default;

  std::string path;                   ///< "config.json", "original/params.json"
  std::optional<std::uint64_t> size;  ///< of the file (an LFS file's, not its pointer's)
  /// The blob's name in the cache: an LFS file's SHA-256, else its git blob id; empty when the
  /// listing gave neither (the download's ETag names it then).
  std::string etag;
};

class RepoListing {
 public:
  RepoListing() = default;

  std::string commit;  ///< "sha"
  std::vector<ListedFile> files;
};

/// Why `path` cannot be a file of a snapshot directory: empty, absolute, an empty, "." or ".."
/// part, a backslash or a control character, a part over 255 bytes; or "" when it can.
std::string snapshot_path_problem(std::string_view path);

/// Reads the listing. Throws tinker::error (protocol_error, naming `what`) when it has no usable
/// "sha", when "siblings" is not a list of objects with an "rfilename", or when a commit or blob
/// name cannot be a file name. File paths are checked by the caller, for the files it keeps only.
RepoListing parse_repo_listing(const boost::json::value& body, std::string_view what);

}  // namespace tinker::hub_detail
