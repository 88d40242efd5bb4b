// Checkpoint archive extraction through the SDK's safe extractor (client::rest::extract_archive), into a
// fresh temporary directory per input. The first byte chooses how the rest is used: 0 as the archive
// file; 1 as a tar whose header checksums the harness repairs first (libarchive is not instrumented, so
// without this almost every mutation of a header only exercises the checksum check); 2 the same, then
// gzip-compressed. Besides the sanitizers: nothing is ever written outside the target directory, it holds
// no links, and the files reported are exactly the regular files in it.
#include "fuzz_support.hpp"

#include "client/rest/archive_extract.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace tinker::fuzz {
namespace {

namespace fs = std::filesystem;

std::uint64_t octal_field(std::string_view field) {
  std::uint64_t value = 0;
  for (const char c : field) {
    if (c < '0' || c > '7') break;
    value = value * 8 + static_cast<std::uint64_t>(c - '0');
  }
  return value;
}

// Writes a valid checksum into every ustar header, walking the archive by the sizes the headers give.
void repair_tar_checksums(std::string& tar) {
  std::size_t at = 0;
  while (at + 512 <= tar.size()) {
    char* header = tar.data() + at;
    if (std::all_of(header, header + 512, [](char c) { return c == '\0'; })) break;
    std::memset(header + 148, ' ', 8);
    unsigned sum = 0;
    for (int i = 0; i < 512; ++i) sum += static_cast<unsigned char>(header[i]);
    std::snprintf(header + 148, 8, "%06o", sum);
    const std::uint64_t size = octal_field(std::string_view(header + 124, 12));
    if (size > tar.size()) break;
    at += 512 + (size + 511) / 512 * 512;
  }
}

std::string gzip(std::string_view data) {
  z_stream stream{};
  if (deflateInit2(&stream, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) std::abort();
  std::string out(deflateBound(&stream, static_cast<uLong>(data.size())) + 32, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  if (deflate(&stream, Z_FINISH) != Z_STREAM_END) std::abort();
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

void check_target(const fs::path& root, const fs::path& target, const std::vector<std::string>* reported) {
  for (const auto& entry : fs::directory_iterator(root)) {
    const std::string name = entry.path().filename().string();
    if (name != "archive" && name != "out") property_failed("extraction wrote outside its directory: " + name);
  }
  if (!fs::exists(target)) return;
  std::set<std::string> regular;
  for (const auto& entry : fs::recursive_directory_iterator(target)) {
    const fs::file_status status = entry.symlink_status();
    if (fs::is_symlink(status)) property_failed("extraction left a symbolic link");
    if (fs::is_regular_file(status)) {
      if (entry.hard_link_count() != 1) property_failed("extraction left a hard link");
      regular.insert(entry.path().lexically_relative(target).generic_string());
    } else if (!fs::is_directory(status)) {
      property_failed("extraction left something that is neither a file nor a directory");
    }
  }
  if (reported && std::set<std::string>(reported->begin(), reported->end()) != regular) {
    property_failed("the files reported are not the regular files extracted");
  }
}

}  // namespace
}  // namespace tinker::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tinker;
  const fuzz::Selected input(data, size, 3);
  std::string archive(input.rest());
  if (input.choice() >= 1) fuzz::repair_tar_checksums(archive);
  if (input.choice() == 2) archive = fuzz::gzip(archive);

  const fuzz::TempDir dir;
  const auto archive_path = dir.path() / "archive";
  std::ofstream(archive_path, std::ios::binary).write(archive.data(), static_cast<std::streamsize>(archive.size()));
  const auto target = dir.path() / "out";
  try {
    const std::vector<std::string> files = client::rest::extract_archive(archive_path, target);
    fuzz::check_target(dir.path(), target, &files);
  } catch (const error& e) {
    if (e.code() != errc::invalid_argument) fuzz::property_failed("extraction failed with an unexpected code");
    fuzz::check_target(dir.path(), target, nullptr);
  }
  return 0;
}
