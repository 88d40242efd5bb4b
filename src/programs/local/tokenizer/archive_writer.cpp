// Safetensors and ustar writers. Both outputs are deterministic (sorted tensor names, fixed tar
// metadata), so the same checkpoint always gives the same bytes and archives can be compared.
#include "programs/local/tokenizer/archive_writer.hpp"

#include "core/wire/json_writer.hpp"

#include <tinker/error.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cstring>
#include <limits>
#include <set>

namespace tinker::local {
namespace {

using wire::append_json_string;

[[noreturn]] void refuse(std::string message) {
  throw tinker::error(errc::invalid_argument, std::move(message));
}

// ---- safetensors ---------------------------------------------------------------------------------

void append_number(std::string& out, std::uint64_t value) {
  std::array<char, 24> digits{};
  const auto result = std::to_chars(digits.data(), digits.data() + digits.size(), value);
  out.append(digits.data(), result.ptr);
}

// The element count `shape` promises, or an error naming the tensor when it does not match.
std::uint64_t checked_element_count(const SafetensorsTensor& tensor) {
  std::uint64_t count = 1;
  for (const std::int64_t dim : tensor.shape) {
    if (dim < 0) refuse("safetensors tensor '" + tensor.name + "': negative dimension " + std::to_string(dim));
    const auto udim = static_cast<std::uint64_t>(dim);
    if (udim != 0 && count > std::numeric_limits<std::uint64_t>::max() / udim) {
      refuse("safetensors tensor '" + tensor.name + "': shape overflows");
    }
    count *= udim;
  }
  if (count != tensor.values.size()) {
    refuse("safetensors tensor '" + tensor.name + "': shape holds " + std::to_string(count) + " elements but " +
           std::to_string(tensor.values.size()) + " values were given");
  }
  return count;
}

void validate_tensor_names(const std::vector<const SafetensorsTensor*>& sorted) {
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const std::string& name = sorted[i]->name;
    if (name.empty()) refuse("safetensors tensor name is empty");
    if (name == "__metadata__") refuse("safetensors tensor name '__metadata__' is reserved");
    if (i > 0 && sorted[i - 1]->name == name) refuse("safetensors tensor name '" + name + "' is used twice");
  }
}

void append_f32_little_endian(std::string& out, const std::vector<float>& values) {
  const std::size_t start = out.size();
  out.resize(start + values.size() * sizeof(float));
  char* dst = out.data() + start;
  for (const float value : values) {
    auto bits = std::bit_cast<std::uint32_t>(value);
    for (int byte = 0; byte < 4; ++byte) {  // explicit byte order: correct on any host
      *dst++ = static_cast<char>(bits & 0xFFu);
      bits >>= 8;
    }
  }
}

// ---- ustar ---------------------------------------------------------------------------------------

constexpr std::size_t tar_block = 512;

void validate_tar_names(const std::vector<TarEntry>& entries) {
  std::set<std::string_view> seen;
  for (const TarEntry& entry : entries) {
    const std::string& name = entry.name;
    if (name.empty()) refuse("tar entry name is empty");
    if (name.size() > 100) refuse("tar entry name '" + name + "' is longer than 100 bytes");
    if (name.find('/') != std::string::npos) refuse("tar entry name '" + name + "' contains '/'");
    if (name.find('\0') != std::string::npos) refuse("tar entry name contains a NUL byte");
    if (name == "." || name == "..") refuse("tar entry name '" + name + "' is not a file name");
    if (!seen.insert(name).second) refuse("tar entry name '" + name + "' is used twice");
  }
}

// Writes `value` as zero-padded octal filling `width - 1` digits plus a terminating NUL.
void put_octal(char* field, std::size_t width, std::uint64_t value) {
  std::memset(field, '0', width - 1);
  field[width - 1] = '\0';
  for (std::size_t i = width - 1; i > 0 && value != 0; --i) {
    field[i - 1] = static_cast<char>('0' + (value & 7u));
    value >>= 3;
  }
}

std::array<char, tar_block> ustar_header(const TarEntry& entry) {
  // POSIX ustar field offsets.
  constexpr std::size_t name_at = 0, mode_at = 100, uid_at = 108, gid_at = 116, size_at = 124, mtime_at = 136,
                        checksum_at = 148, type_at = 156, magic_at = 257, version_at = 263;
  constexpr std::uint64_t max_size = (std::uint64_t{1} << 33) - 1;  // 11 octal digits
  if (entry.data.size() > max_size) refuse("tar entry '" + entry.name + "' is larger than 8 GiB");

  std::array<char, tar_block> header{};
  std::memcpy(header.data() + name_at, entry.name.data(), entry.name.size());
  put_octal(header.data() + mode_at, 8, 0644);
  put_octal(header.data() + uid_at, 8, 0);
  put_octal(header.data() + gid_at, 8, 0);
  put_octal(header.data() + size_at, 12, entry.data.size());
  put_octal(header.data() + mtime_at, 12, 0);  // fixed time: identical checkpoints give identical archives
  header[type_at] = '0';                       // regular file
  std::memcpy(header.data() + magic_at, "ustar", 6);
  std::memcpy(header.data() + version_at, "00", 2);

  // The checksum is computed with its own field read as eight spaces, then stored as six octal
  // digits, NUL, space.
  std::memset(header.data() + checksum_at, ' ', 8);
  std::uint64_t checksum = 0;
  for (const char c : header) checksum += static_cast<unsigned char>(c);
  put_octal(header.data() + checksum_at, 7, checksum);
  header[checksum_at + 7] = ' ';
  return header;
}

}  // namespace

std::string write_safetensors(const std::vector<SafetensorsTensor>& tensors) {
  std::vector<const SafetensorsTensor*> sorted;
  sorted.reserve(tensors.size());
  for (const SafetensorsTensor& tensor : tensors) sorted.push_back(&tensor);
  std::sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) { return a->name < b->name; });
  validate_tensor_names(sorted);

  std::string header = "{";
  std::uint64_t offset = 0;
  for (const SafetensorsTensor* tensor : sorted) {
    const std::uint64_t bytes = checked_element_count(*tensor) * sizeof(float);
    append_json_string(header, tensor->name);
    header += R"(:{"dtype":"F32","shape":[)";
    for (std::size_t i = 0; i < tensor->shape.size(); ++i) {
      if (i > 0) header += ',';
      append_number(header, static_cast<std::uint64_t>(tensor->shape[i]));
    }
    header += R"(],"data_offsets":[)";
    append_number(header, offset);
    header += ',';
    append_number(header, offset + bytes);
    header += "]},";
    offset += bytes;
  }
  header += R"("__metadata__":{"format":"pt"}})";
  // Padding the header with spaces to a multiple of 8 keeps the data 8-byte aligned.
  header.append((8 - header.size() % 8) % 8, ' ');

  std::string file;
  file.reserve(8 + header.size() + offset);
  std::uint64_t header_size = header.size();
  for (int byte = 0; byte < 8; ++byte) {
    file += static_cast<char>(header_size & 0xFFu);
    header_size >>= 8;
  }
  file += header;
  for (const SafetensorsTensor* tensor : sorted) append_f32_little_endian(file, tensor->values);
  return file;
}

std::string write_tar(const std::vector<TarEntry>& entries) {
  validate_tar_names(entries);
  std::string archive;
  for (const TarEntry& entry : entries) {
    const auto header = ustar_header(entry);
    archive.append(header.data(), header.size());
    archive += entry.data;
    archive.append((tar_block - entry.data.size() % tar_block) % tar_block, '\0');
  }
  archive.append(2 * tar_block, '\0');  // end-of-archive marker
  return archive;
}

}  // namespace tinker::local
