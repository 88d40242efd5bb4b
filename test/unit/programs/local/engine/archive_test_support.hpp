// Reads a tar archive with the system `tar`, so the engine's archives are checked by an
// independent reader.
#pragma once

#include "engine_test_support.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>

namespace tinker::local::test {

class TarContents {
 public:
  /// Writes `archive` under `scratch` and extracts it there.
  TarContents(const std::string& archive, const std::filesystem::path& scratch) : root_(scratch / "tar-check") {
    std::filesystem::create_directories(root_ / "out");
    {
      std::ofstream out(root_ / "archive.tar", std::ios::binary);
      out.write(archive.data(), static_cast<std::streamsize>(archive.size()));
    }
    std::string listing = run("tar -tf '" + (root_ / "archive.tar").string() + "'");
    std::istringstream lines(listing);
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty()) names_.push_back(line);
    }
    run("tar -xf '" + (root_ / "archive.tar").string() + "' -C '" + (root_ / "out").string() + "'");
  }

  const std::vector<std::string>& names() const { return names_; }

  std::string file(const std::string& name) const {
    std::ifstream in(root_ / "out" / name, std::ios::binary);
    EXPECT_TRUE(in.good()) << name << " was not extracted";
    std::ostringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
  }

 private:
  static std::string run(const std::string& command) {
    std::string output;
    FILE* pipe = popen((command + " 2>&1").c_str(), "r");
    if (pipe == nullptr) {
      ADD_FAILURE() << "cannot run " << command;
      return output;
    }
    char buffer[4096];
    while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
    EXPECT_EQ(pclose(pipe), 0) << command << ": " << output;
    return output;
  }

  std::filesystem::path root_;
  std::vector<std::string> names_;
};

}  // namespace tinker::local::test
