// safetensors files built by hand for the weights tests: the format's 8-byte little-endian header
// length, the header JSON text exactly as given, then the data bytes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

namespace tinker::safetensors::test_files {

/// The file with `header` as its JSON text (not padded) and `data` after it.
inline std::string safetensors_bytes(std::string_view header, std::string_view data = {}) {
  std::string file;
  std::uint64_t length = header.size();
  for (int i = 0; i < 8; ++i) file.push_back(static_cast<char>((length >> (8 * i)) & 0xff));
  file.append(header);
  file.append(data);
  return file;
}

/// The little-endian bytes of float values, as the data of an F32 tensor.
template <class... Floats>
std::string f32_bytes(Floats... values) {
  std::string bytes;
  for (const float value : {static_cast<float>(values)...}) {
    bytes.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  return bytes;
}

/// Writes `bytes` to `path` as they are.
inline void write_bytes_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// The whole content of `path`.
inline std::string read_bytes_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace tinker::safetensors::test_files
