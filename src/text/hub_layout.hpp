// The Hugging Face hub cache layout, as huggingface_hub writes it, so Python tools and this SDK
// share one cache:
//
//   <hub>/models--<org>--<name>/blobs/<etag>                    the bytes, named by the Hub's ETag
//   <hub>/models--<org>--<name>/snapshots/<commit>/<file>       relative symlink ../../blobs/<etag>
//   <hub>/models--<org>--<name>/refs/<revision>                 the commit a branch or tag names
//
// Writes are atomic: bytes go to a temporary file in blobs/ that is renamed to its ETag, a link
// is made under a temporary name and renamed over its place, and a ref is written the same way.
// A writer that dies part-way leaves temporary files (never a name that looks complete).
#pragma once

#include <tinker/tokenizer.hpp>

#include <array>
#include <filesystem>
#include <string>
#include <string_view>

namespace tinker::tokenizer_detail {

class TokenizerFileName {
 public:
  constexpr TokenizerFileName(std::string_view name_, TokenizerFormat format_) : name(name_), format(format_) {}

  std::string_view name;
  TokenizerFormat format;
};

/// The tokenizer files a directory or a Hub repo is searched for, in the order tried.
/// tokenizer.json first, as transformers' AutoTokenizer takes the fast tokenizer of a repo that
/// also has a SentencePiece model (Gemma, Llama 2).
inline constexpr std::array<TokenizerFileName, 3> tokenizer_file_names{{
    {"tokenizer.json", TokenizerFormat::tokenizer_json},
    {"tokenizer.model", TokenizerFormat::sentencepiece},
    {"tiktoken.model", TokenizerFormat::tiktoken},
}};

/// "org/name" -> "models--org--name".
std::string hub_repo_folder(std::string_view repo_id);

/// Why `name` cannot be one path component (an ETag or a commit from a server: empty, ".", "..",
/// a character outside [A-Za-z0-9._-], longer than 128), or "" if it can.
std::string path_component_problem(std::string_view name);

/// One repo's folder in a hub cache. Throws tinker::error (invalid_configuration) naming the path
/// when the file system refuses a write.
class HubRepoWriter {
 public:
  HubRepoWriter(const std::filesystem::path& hub, std::string_view repo_id);

  const std::filesystem::path& folder() const noexcept { return folder_; }

  /// A fresh temporary file name in blobs/ (created with its directory; unique per call).
  std::filesystem::path new_temporary_blob() const;
  /// Renames `temporary` to blobs/<etag> (replacing an existing one: same ETag, same bytes); a
  /// refused ETag removes `temporary`.
  std::filesystem::path commit_blob(const std::filesystem::path& temporary, std::string_view etag) const;
  /// snapshots/<commit>/<file_name> -> ../../blobs/<etag>, replacing an existing link. A
  /// `file_name` with '/' (checked by the caller) gets its folders and a link one level further up
  /// per folder.
  std::filesystem::path link_snapshot_file(std::string_view commit, std::string_view file_name,
                                           std::string_view etag) const;
  /// refs/<revision> holding `commit` (no newline, as huggingface_hub writes it). A revision
  /// with '/' ("refs/pr/1") makes subdirectories, as there.
  void write_ref(std::string_view revision, std::string_view commit) const;

 private:
  std::filesystem::path folder_;
};

}  // namespace tinker::tokenizer_detail
