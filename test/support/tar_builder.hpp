// Hand-made ustar archives for the download tests, including the malicious kinds a safe
// extractor must refuse (absolute paths, "..", symbolic and hard links, devices, fifos), and a
// reader of the regular files of a ustar archive.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <string_view>

namespace tinker::test {

class TarBuilder {
 public:
  /// type: '0' regular file, '5' directory, '2' symbolic link, '1' hard link, '3' char device,
  /// '6' fifo. `link` is the link target of '1' and '2'.
  TarBuilder& add(std::string_view name, std::string_view data, char type = '0', std::string_view link = {}) {
    char header[512] = {};
    std::memcpy(header, name.data(), std::min<std::size_t>(name.size(), 100));
    std::snprintf(header + 100, 8, "%07o", type == '5' ? 0755u : 0644u);
    std::snprintf(header + 108, 8, "%07o", 0u);
    std::snprintf(header + 116, 8, "%07o", 0u);
    std::snprintf(header + 124, 12, "%011llo", static_cast<unsigned long long>(type == '0' ? data.size() : 0));
    std::snprintf(header + 136, 12, "%011o", 0u);
    header[156] = type;
    if (!link.empty()) std::memcpy(header + 157, link.data(), std::min<std::size_t>(link.size(), 100));
    std::memcpy(header + 257, "ustar", 6);
    std::memcpy(header + 263, "00", 2);
    std::memset(header + 148, ' ', 8);
    unsigned sum = 0;
    for (const char c : header) sum += static_cast<unsigned char>(c);
    std::snprintf(header + 148, 8, "%06o", sum);
    bytes_.append(header, sizeof header);
    if (type == '0') {
      bytes_.append(data);
      bytes_.append((512 - data.size() % 512) % 512, '\0');
    }
    return *this;
  }
  std::string finish() const { return bytes_ + std::string(1024, '\0'); }

 private:
  std::string bytes_;
};

/// The regular files of a ustar archive by name (what the server put in it).
inline std::map<std::string, std::string> tar_files(std::string_view tar) {
  std::map<std::string, std::string> files;
  std::size_t at = 0;
  while (at + 512 <= tar.size() && tar[at] != '\0') {
    const std::string_view header = tar.substr(at, 512);
    const std::string name(header.data(), strnlen(header.data(), 100));
    const std::uint64_t size = std::stoull(std::string(header.substr(124, 12)), nullptr, 8);
    at += 512;
    if (header[156] == '0' || header[156] == '\0') files[name] = std::string(tar.substr(at, size));
    at += (size + 511) / 512 * 512;
  }
  return files;
}

}  // namespace tinker::test
