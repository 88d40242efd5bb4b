// The safe extractor of checkpoint archives: regular files and directories come out byte for
// byte; absolute paths, "..", links and special files refuse the whole archive, naming the entry.
#include "client/rest/archive_extract.hpp"

#include "support/tar_builder.hpp"
#include "support/temp_files.hpp"

#include <tinker/error.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace tinker::client::rest {
namespace {

namespace fs = std::filesystem;
using test::TarBuilder;
using test::TempDir;

class ArchiveExtract : public ::testing::Test {
 protected:
  fs::path write_archive(const std::string& bytes) {
    const fs::path path = dir / "archive.tar";
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  static std::string read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
  }
  // Extraction must fail with invalid_argument naming `entry`.
  void expect_refused(const std::string& tar, const std::string& entry, const std::string& why) {
    const fs::path archive = write_archive(tar);
    try {
      extract_archive(archive, dir / "out");
      ADD_FAILURE() << "the archive with " << entry << " was extracted";
    } catch (const error& e) {
      EXPECT_EQ(e.code(), errc::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("'" + entry + "'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }

  const TempDir scratch{"tinker-extract-test"};
  const fs::path dir = scratch.path();
};

TEST_F(ArchiveExtract, RegularFilesAndDirectoriesComeOutByteForByte) {
  std::string binary(70'000, '\0');
  for (std::size_t i = 0; i < binary.size(); ++i) binary[i] = static_cast<char>(i * 31 % 251);
  const std::string tar = TarBuilder()
                              .add("./", "", '5')
                              .add("adapter_config.json", R"({"r": 4})")
                              .add("sub/", "", '5')
                              .add("./sub//weights.bin", binary)
                              .add("checkpoint_complete", "")
                              .finish();
  const auto files = extract_archive(write_archive(tar), dir / "out");
  const std::vector<std::string> expected{"adapter_config.json", "checkpoint_complete", "sub/weights.bin"};
  EXPECT_EQ(files, expected);
  EXPECT_EQ(read(dir / "out" / "adapter_config.json"), R"({"r": 4})");
  EXPECT_EQ(read(dir / "out" / "sub" / "weights.bin"), binary);
  EXPECT_EQ(fs::file_size(dir / "out" / "checkpoint_complete"), 0u);
}

TEST_F(ArchiveExtract, AbsolutePathsAreRefused) {
  expect_refused(TarBuilder().add("ok", "x").add("/etc/evil", "x").finish(), "/etc/evil", "leaves the target");
}

TEST_F(ArchiveExtract, DotDotComponentsAreRefused) {
  expect_refused(TarBuilder().add("a/../../evil", "x").finish(), "a/../../evil", "leaves the target");
  fs::remove_all(dir / "out");
  expect_refused(TarBuilder().add("..", "", '5').finish(), "..", "leaves the target");
}

TEST_F(ArchiveExtract, LinksAreRefused) {
  expect_refused(TarBuilder().add("link", "", '2', "/etc/passwd").finish(), "link", "symbolic link");
  fs::remove_all(dir / "out");
  expect_refused(TarBuilder().add("a", "x").add("hard", "", '1', "a").finish(), "hard", "hard link");
}

TEST_F(ArchiveExtract, DevicesAndFifosAreRefused) {
  expect_refused(TarBuilder().add("dev", "", '3').finish(), "dev", "device, fifo or socket");
  fs::remove_all(dir / "out");
  expect_refused(TarBuilder().add("pipe", "", '6').finish(), "pipe", "device, fifo or socket");
}

TEST_F(ArchiveExtract, AnEntryTwiceIsRefused) {
  expect_refused(TarBuilder().add("a", "1").add("./a", "2").finish(), "./a", "appears twice");
}

TEST_F(ArchiveExtract, NotAnArchiveIsAClearError) {
  try {
    extract_archive(write_archive(std::string(3000, 'x')), dir / "out");
    ADD_FAILURE() << "garbage was extracted";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("archive.tar"), std::string::npos) << e.what();
  }
}

TEST_F(ArchiveExtract, AnExistingDirectoryIsNotExtractedInto) {
  fs::create_directories(dir / "out");
  EXPECT_THROW(extract_archive(write_archive(TarBuilder().add("a", "1").finish()), dir / "out"), error);
}

TEST(SafeRelativePath, NormalisesAndRejects) {
  EXPECT_EQ(safe_relative_path("./a//b/"), "a/b");
  EXPECT_EQ(safe_relative_path("./"), "");
  EXPECT_EQ(safe_relative_path("a/./b"), "a/b");
  EXPECT_EQ(safe_relative_path("a..b/c.."), "a..b/c..");
  EXPECT_FALSE(safe_relative_path("/a"));
  EXPECT_FALSE(safe_relative_path("a/.."));
  EXPECT_FALSE(safe_relative_path("../a"));
}

}  // namespace
}  // namespace tinker::client::rest
