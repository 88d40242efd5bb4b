// Temporary files and directories for tests, and reading a whole file: the one definition every
// test binary uses (header-only, so tinker-local's own test binary needs no support library).
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace tinker::test {

/// A fresh directory "<system temp>/<prefix>-XXXXXX", removed with everything in it on destruction.
class TempDir {
 public:
  explicit TempDir(std::string_view prefix = "tinker-test") {
    std::string pattern = (std::filesystem::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("TempDir: mkdtemp failed for " + pattern);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const noexcept { return path_; }
  std::filesystem::path operator/(const std::filesystem::path& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

/// A new file "<system temp>/tinker-test-XXXXXX<suffix>" holding `contents`, deleted on destruction.
class TempFile {
 public:
  explicit TempFile(std::string_view contents = {}, std::string_view suffix = {}) {
    std::string pattern = (std::filesystem::temp_directory_path() / "tinker-test-XXXXXX").string();
    pattern.append(suffix);
    const int fd = ::mkstemps(pattern.data(), static_cast<int>(suffix.size()));
    if (fd < 0) throw std::runtime_error("TempFile: mkstemps failed for " + pattern);
    path_ = pattern;
    std::size_t done = 0;
    while (done < contents.size()) {
      const ssize_t written = ::write(fd, contents.data() + done, contents.size() - done);
      if (written <= 0) {
        ::close(fd);
        std::filesystem::remove(path_);
        throw std::runtime_error("TempFile: cannot write " + path_.string());
      }
      done += static_cast<std::size_t>(written);
    }
    ::close(fd);
  }
  ~TempFile() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
};

/// The whole of `file`, byte for byte; throws std::runtime_error naming the file when it cannot be read.
inline std::string read_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace tinker::test
