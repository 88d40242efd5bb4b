// Helpers shared by the libFuzzer targets of test/fuzz/ (doc/fuzzing.md).
#pragma once

#include <tinker/error.hpp>

#include <unistd.h>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

namespace tinker::fuzz {

/// The input as text (the parsers under test take string_views).
inline std::string_view as_text(const std::uint8_t* data, std::size_t size) noexcept {
  return {reinterpret_cast<const char*>(data), size};
}

/// Many targets fuzz several parsers: the first input byte chooses one, the rest is its input. A
/// corpus file therefore starts with its parser's number; new parsers are appended to a target's list
/// so that the numbers of the existing corpus stay valid.
class Selected {
 public:
  Selected(const std::uint8_t* data, std::size_t size, std::size_t choices)
      : choice_(size == 0 ? 0 : data[0] % choices),
        rest_(size == 0 ? std::string_view() : as_text(data + 1, size - 1)) {}
  std::size_t choice() const noexcept { return choice_; }
  std::string_view rest() const noexcept { return rest_; }

 private:
  std::size_t choice_;
  std::string_view rest_;
};

/// Aborts (a finding) with a message: for broken properties, as opposed to expected parse errors.
[[noreturn]] inline void property_failed(std::string_view what) {
  std::fprintf(stderr, "fuzz property failed: %.*s\n", static_cast<int>(what.size()), what.data());
  std::abort();
}

/// A fresh empty directory under the system temporary directory, removed with everything in it when
/// the object dies (one per input, so no input sees another's files).
class TempDir {
 public:
  TempDir() {
    static std::atomic<unsigned> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("tinker-fuzz-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace tinker::fuzz
