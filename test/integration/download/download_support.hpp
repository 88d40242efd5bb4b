// What the download tests look at on disk: a file's bytes (read_file, support/temp_files.hpp) and a
// directory's entries.
#pragma once

#include "support/temp_files.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tinker::test {

/// The names directly in `dir`, sorted: what a download left behind.
inline std::vector<std::string> entries_of(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace tinker::test
