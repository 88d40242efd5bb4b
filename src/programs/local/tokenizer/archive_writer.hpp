// Writers for checkpoint archives: safetensors files and flat ustar tar archives.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tinker::local {

struct SafetensorsTensor {
  std::string name;
  std::vector<std::int64_t> shape;
  std::vector<float> values;  ///< written as F32, little-endian
};

/// A valid safetensors file (8-byte header length, JSON header with sorted names, data).
std::string write_safetensors(const std::vector<SafetensorsTensor>& tensors);

struct TarEntry {
  std::string name;  ///< flat file name, no directories
  std::string data;
};

/// A POSIX ustar archive of regular files (mode 0644), ending with the two zero blocks.
std::string write_tar(const std::vector<TarEntry>& entries);

}  // namespace tinker::local
