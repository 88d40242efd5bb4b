// Helpers shared by the libFuzzer targets of test/fuzz/ (doc/fuzzing.md).
#pragma once

#include "support/temp_files.hpp"

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
/// the object dies (one per input, so no input sees another's files): the helper every test program shares.
using test::TempDir;

}  // namespace tinker::fuzz
