// Helpers of the tokenizer tests: whole-file reads and writes, an environment variable override
// restored on destruction, and the bundled corpus as lines (and the shared TempDir).
#pragma once

#include "programs/local/tokenizer/tokenizer_store.hpp"
#include "unit/programs/local/support/temp_dir.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::local::test {

inline std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return std::move(bytes).str();
}

inline void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

/// Sets (or, with nullopt, unsets) an environment variable until destruction.
class EnvOverride {
 public:
  EnvOverride(std::string name, const std::optional<std::string>& value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = old;
    apply(value);
  }
  ~EnvOverride() { apply(old_); }
  EnvOverride(const EnvOverride&) = delete;
  EnvOverride& operator=(const EnvOverride&) = delete;

 private:
  void apply(const std::optional<std::string>& value) {
    if (value) {
      ::setenv(name_.c_str(), value->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  std::string name_;
  std::optional<std::string> old_;
};

/// The lines of the bundled corpus (the tokenizers' training text).
inline std::vector<std::string> corpus_lines() {
  std::vector<std::string> lines;
  std::string_view rest = bundled_corpus();
  while (!rest.empty()) {
    const auto end = rest.find('\n');
    lines.emplace_back(rest.substr(0, end));
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
  }
  return lines;
}

}  // namespace tinker::local::test
