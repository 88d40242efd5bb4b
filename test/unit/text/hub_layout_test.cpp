// The hub cache layout writer: blobs named by ETag, relative snapshot links, refs without a
// newline, atomic replacement, names from a server checked before they become paths; and what
// the search on disk finds in what it wrote.
#include "text/hub_layout.hpp"
#include "support/tokenizer_test_support.hpp"

#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;
using tinker::test::TempDir;
using tinker::test::write_file;
using tinker::tokenizer_detail::HubRepoWriter;

constexpr std::string_view commit = "0123456789abcdef0123456789abcdef01234567";
constexpr std::string_view etag = "5e1f0f4c9c7a7d3b2a5f9e0b8c6d4e2f1a3b5c7d9e0f1a2b3c4d5e6f7a8b9c0d";

std::string read(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

fs::path blob_with(const HubRepoWriter& writer, std::string_view bytes, std::string_view name) {
  const fs::path temporary = writer.new_temporary_blob();
  write_file(temporary, bytes);
  return writer.commit_blob(temporary, name);
}

TEST(HubLayout, RepoFolderIsNamedAsHuggingFaceHubNamesIt) {
  EXPECT_EQ(tinker::tokenizer_detail::hub_repo_folder("Qwen/Qwen3-8B"), "models--Qwen--Qwen3-8B");
  EXPECT_EQ(tinker::tokenizer_detail::hub_repo_folder("gpt2"), "models--gpt2");
}

TEST(HubLayout, WritesBlobsSnapshotLinksAndRefs) {
  TempDir hub;
  const HubRepoWriter writer(hub.path(), "org/tok");
  const fs::path blob = blob_with(writer, "{\"model\":{}}", etag);
  EXPECT_EQ(blob, hub.path() / "models--org--tok/blobs" / etag);
  const fs::path link = writer.link_snapshot_file(commit, "tokenizer.json", etag);
  writer.write_ref("main", commit);

  EXPECT_EQ(link, hub.path() / "models--org--tok/snapshots" / commit / "tokenizer.json");
  ASSERT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(fs::read_symlink(link), fs::path("../../blobs") / etag);  // relative, as huggingface_hub makes it
  EXPECT_EQ(read(link), "{\"model\":{}}");
  EXPECT_EQ(read(hub.path() / "models--org--tok/refs/main"), commit);  // no newline

  // Nothing temporary is left, and the search finds exactly this file.
  for (const auto& entry : fs::recursive_directory_iterator(hub.path())) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos) << entry.path();
  }
  const auto found = tinker::find_tokenizer_file(tinker::TokenizerRef("org/tok"),
                                                 tinker::test::environment({{"HF_HUB_CACHE", hub.path()}}));
  EXPECT_EQ(found.path, link);
  EXPECT_EQ(found.format, tinker::TokenizerFormat::tokenizer_json);
}

TEST(HubLayout, ReplacesAnExistingBlobLinkAndRef) {
  TempDir hub;
  const HubRepoWriter writer(hub.path(), "org/tok");
  blob_with(writer, "old", "etag-a");
  blob_with(writer, "new", "etag-b");
  writer.link_snapshot_file(commit, "tokenizer.model", "etag-a");
  const fs::path link = writer.link_snapshot_file(commit, "tokenizer.model", "etag-b");
  EXPECT_EQ(read(link), "new");
  writer.write_ref("main", "aaaa");
  writer.write_ref("main", commit);
  EXPECT_EQ(read(hub.path() / "models--org--tok/refs/main"), commit);
  blob_with(writer, "new", "etag-b");  // the same blob again (another writer won the race)
  EXPECT_EQ(read(link), "new");
}

TEST(HubLayout, RevisionsWithSlashesMakeSubdirectoriesOfRefs) {
  TempDir hub;
  const HubRepoWriter writer(hub.path(), "org/tok");
  writer.write_ref("refs/pr/1", commit);
  EXPECT_EQ(read(hub.path() / "models--org--tok/refs/refs/pr/1"), commit);
}

TEST(HubLayout, TemporaryBlobsAreUniqueAndLookIncomplete) {
  TempDir hub;
  const HubRepoWriter writer(hub.path(), "org/tok");
  const fs::path a = writer.new_temporary_blob();
  const fs::path b = writer.new_temporary_blob();
  EXPECT_NE(a, b);
  EXPECT_EQ(a.parent_path(), hub.path() / "models--org--tok/blobs");
  EXPECT_EQ(a.extension(), ".incomplete");
}

TEST(HubLayout, RefusesServerNamesThatAreNotOnePathComponent) {
  TempDir hub;
  const HubRepoWriter writer(hub.path(), "org/tok");
  for (const std::string_view bad : {"", ".", "..", "../../x", "a/b", "a\\b", "sp ace"}) {
    const fs::path temporary = writer.new_temporary_blob();
    write_file(temporary, "x");
    EXPECT_THROW(writer.commit_blob(temporary, bad), tinker::error) << bad;
    EXPECT_FALSE(fs::exists(temporary)) << bad;  // the refused temporary file is gone
    EXPECT_THROW(writer.link_snapshot_file(bad, "tokenizer.json", etag), tinker::error) << bad;
    EXPECT_THROW(writer.link_snapshot_file(commit, "tokenizer.json", bad), tinker::error) << bad;
  }
  EXPECT_THROW(writer.commit_blob(writer.new_temporary_blob(), std::string(129, 'a')), tinker::error);
  EXPECT_FALSE(fs::exists(hub.path() / "models--org--tok/snapshots" / commit / "tokenizer.json"));
}

}  // namespace
