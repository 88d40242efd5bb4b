// SafetensorsWriter and the small writers around it. The layout is fixed before any data: the
// header is the reference implementation's (compact JSON, "__metadata__" first, padded with
// spaces to a multiple of 8) and the tensors follow each other with no gap, as the reference
// reader requires. Data then goes to its place with pwrite, so pieces may come in any order
// and from several threads; the file keeps a temporary name until every byte has been written.
#include "core/wire/json_writer.hpp"

#include <tinker/error.hpp>
#include <tinker/safetensors.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <mutex>
#include <set>
#include <utility>

namespace tinker::safetensors {
namespace {

[[noreturn]] void throw_write_io_error(const std::filesystem::path& path, const char* what, int error_number) {
  throw error(errc::io_error, path.string() + ": " + what + ": " + std::strerror(error_number));
}

// The declared tensor's byte length, refusing negative dimensions and sizes past 64 bits.
std::uint64_t declared_bytes(const TensorDecl& tensor, const std::filesystem::path& path) {
  std::uint64_t bytes = dtype_size(tensor.dtype);
  for (const auto dim : tensor.shape) {
    if (dim < 0) {
      throw error(errc::invalid_argument, path.string() + ": tensor '" + tensor.name + "': negative dimension");
    }
    const auto size = static_cast<std::uint64_t>(dim);
    if (size != 0 && bytes > std::numeric_limits<std::uint64_t>::max() / size) {
      throw error(errc::invalid_argument, path.string() + ": tensor '" + tensor.name + "': shape too large");
    }
    bytes *= size;
  }
  return bytes;
}

void check_declarations(const std::vector<TensorDecl>& tensors, const std::map<std::string, std::string>& metadata,
                        const std::filesystem::path& path) {
  std::set<std::string_view> names;
  for (const auto& tensor : tensors) {
    if (tensor.name == "__metadata__" || !wire::is_valid_utf8(tensor.name)) {
      throw error(errc::invalid_argument, path.string() + ": '" + tensor.name + "' cannot name a tensor");
    }
    if (!names.insert(tensor.name).second) {
      throw error(errc::invalid_argument, path.string() + ": tensor '" + tensor.name + "' declared twice");
    }
  }
  for (const auto& [key, value] : metadata) {
    if (!wire::is_valid_utf8(key) || !wire::is_valid_utf8(value)) {
      throw error(errc::invalid_argument, path.string() + ": metadata '" + key + "' is not UTF-8");
    }
  }
}

// The JSON header as the reference writes it: {"__metadata__":{...},"name":{"dtype":"F32",
// "shape":[2,3],"data_offsets":[0,24]},...}, then spaces up to a multiple of 8 bytes so the data
// section starts aligned.
std::string header_json(const std::vector<TensorDecl>& tensors, const std::vector<std::uint64_t>& begins,
                        const std::vector<std::uint64_t>& sizes, const std::map<std::string, std::string>& metadata) {
  std::string out = "{";
  if (!metadata.empty()) {
    out += "\"__metadata__\":{";
    for (auto it = metadata.begin(); it != metadata.end(); ++it) {
      if (it != metadata.begin()) out += ',';
      wire::append_json_string(out, it->first);
      out += ':';
      wire::append_json_string(out, it->second);
    }
    out += '}';
  }
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    if (i > 0 || !metadata.empty()) out += ',';
    wire::append_json_string(out, tensors[i].name);
    out += ":{\"dtype\":\"";
    out += to_string(tensors[i].dtype);
    out += "\",\"shape\":[";
    for (std::size_t d = 0; d < tensors[i].shape.size(); ++d) {
      if (d > 0) out += ',';
      out += std::to_string(tensors[i].shape[d]);
    }
    out += "],\"data_offsets\":[" + std::to_string(begins[i]) + "," + std::to_string(begins[i] + sizes[i]) + "]}";
  }
  out += '}';
  out.append((8 - out.size() % 8) % 8, ' ');
  return out;
}

void write_all_at(int fd, const std::byte* data, std::uint64_t size, std::uint64_t offset,
                  const std::filesystem::path& path) {
  while (size > 0) {
    const auto chunk = static_cast<std::size_t>(std::min<std::uint64_t>(size, std::uint64_t{1} << 30));
    const ssize_t written = ::pwrite(fd, data, chunk, static_cast<off_t>(offset));
    if (written < 0) {
      if (errno == EINTR) continue;
      throw_write_io_error(path, "cannot write", errno);
    }
    data += written;
    size -= static_cast<std::uint64_t>(written);
    offset += static_cast<std::uint64_t>(written);
  }
}

// The byte ranges of one tensor written so far, kept merged: [begin -> end).
using WrittenRanges = std::map<std::uint64_t, std::uint64_t>;

void add_written_range(WrittenRanges& ranges, std::uint64_t begin, std::uint64_t end) {
  if (begin == end) return;
  auto next = ranges.upper_bound(begin);
  if (next != ranges.begin()) {
    const auto previous = std::prev(next);
    if (previous->second >= begin) {
      begin = previous->first;
      end = std::max(end, previous->second);
      next = ranges.erase(previous);
    }
  }
  while (next != ranges.end() && next->first <= end) {
    end = std::max(end, next->second);
    next = ranges.erase(next);
  }
  ranges.emplace(begin, end);
}

std::uint64_t written_bytes(const WrittenRanges& ranges) {
  std::uint64_t total = 0;
  for (const auto& [begin, end] : ranges) total += end - begin;
  return total;
}

// Makes a rename inside `file`'s directory durable. Best effort: some file systems refuse to
// sync a directory, and the data itself is already on disk.
void sync_directory_of(const std::filesystem::path& file) {
  const auto parent = file.parent_path().empty() ? std::filesystem::path(".") : file.parent_path();
  const int fd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

struct SafetensorsWriter::Impl {
  std::filesystem::path path;
  std::filesystem::path partial;
  std::vector<TensorDecl> tensors;
  std::vector<std::uint64_t> begins;  // within the data section
  std::vector<std::uint64_t> sizes;
  std::uint64_t data_offset = 0;
  std::uint64_t file_size = 0;
  int fd = -1;
  bool finished = false;
  std::mutex written_mutex;  // guards `written`; the pwrites themselves run unlocked
  std::vector<WrittenRanges> written;

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    if (fd >= 0) ::close(fd);
    if (!finished && !partial.empty()) ::unlink(partial.c_str());
  }

  void lay_out(const std::map<std::string, std::string>& metadata) {
    std::uint64_t offset = 0;
    for (const auto& tensor : tensors) {
      begins.push_back(offset);
      sizes.push_back(declared_bytes(tensor, path));
      if (offset > std::numeric_limits<std::uint64_t>::max() - sizes.back()) {
        throw error(errc::invalid_argument, path.string() + ": the tensors are too large for one file");
      }
      offset += sizes.back();
    }
    const std::string header = header_json(tensors, begins, sizes, metadata);
    data_offset = 8 + header.size();
    file_size = data_offset + offset;
    written.resize(tensors.size());
    create(header);
  }

  void create(const std::string& header) {
    partial = path;
    partial += ".partial";
    fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      const int error_number = errno;
      partial.clear();  // nothing of ours to remove
      throw_write_io_error(path.string() + ".partial", "cannot create", error_number);
    }
    // Sized at once: pieces land anywhere, and a full disk shows now rather than mid-export.
    if (::ftruncate(fd, static_cast<off_t>(file_size)) != 0) throw_write_io_error(partial, "cannot size", errno);
    std::uint64_t length = header.size();
    std::byte prefix[8];
    std::memcpy(prefix, &length, sizeof prefix);  // little-endian
    write_all_at(fd, prefix, sizeof prefix, 0, partial);
    write_all_at(fd, reinterpret_cast<const std::byte*>(header.data()), header.size(), 8, partial);
  }

  void check_complete() {
    const std::lock_guard lock(written_mutex);
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      const std::uint64_t done = written_bytes(written[i]);
      if (done != sizes[i]) {
        throw error(errc::invalid_argument, path.string() + ": tensor '" + tensors[i].name +
                                                "': " + std::to_string(done) + " of " + std::to_string(sizes[i]) +
                                                " bytes written");
      }
    }
  }
};

SafetensorsWriter::SafetensorsWriter(std::filesystem::path path, std::vector<TensorDecl> tensors,
                                     std::map<std::string, std::string> metadata)
    : impl_(std::make_unique<Impl>()) {
  check_declarations(tensors, metadata, path);
  impl_->path = std::move(path);
  impl_->tensors = std::move(tensors);
  impl_->lay_out(metadata);
}

SafetensorsWriter::SafetensorsWriter(SafetensorsWriter&&) noexcept = default;
SafetensorsWriter& SafetensorsWriter::operator=(SafetensorsWriter&&) noexcept = default;
SafetensorsWriter::~SafetensorsWriter() = default;

const std::vector<TensorDecl>& SafetensorsWriter::tensors() const noexcept {
  return impl_->tensors;
}
std::uint64_t SafetensorsWriter::file_size() const noexcept {
  return impl_->file_size;
}

std::uint64_t SafetensorsWriter::byte_size(std::size_t index) const {
  if (index >= impl_->sizes.size()) {
    throw error(errc::invalid_argument, impl_->path.string() + ": no tensor number " + std::to_string(index));
  }
  return impl_->sizes[index];
}

void SafetensorsWriter::write(std::size_t index, std::span<const std::byte> bytes, std::uint64_t offset) {
  const std::uint64_t size = byte_size(index);
  if (impl_->finished) throw error(errc::invalid_argument, impl_->path.string() + ": written after finish()");
  if (offset > size || bytes.size() > size - offset) {
    throw error(errc::invalid_argument, impl_->path.string() + ": tensor '" + impl_->tensors[index].name +
                                            "': " + std::to_string(bytes.size()) + " bytes at offset " +
                                            std::to_string(offset) + " do not fit its " + std::to_string(size));
  }
  const std::uint64_t at = impl_->data_offset + impl_->begins[index] + offset;
  write_all_at(impl_->fd, bytes.data(), bytes.size(), at, impl_->partial);
  // The piece goes to the disk now rather than at finish()'s fsync (or whenever the kernel's
  // dirty-page limits force it): a large file's flush then overlaps with writing the rest of it.
  // Only a start: it does not wait for the writes to complete, and an error shows again at the fsync.
  ::sync_file_range(impl_->fd, static_cast<off_t>(at), static_cast<off_t>(bytes.size()), SYNC_FILE_RANGE_WRITE);
  const std::lock_guard lock(impl_->written_mutex);
  add_written_range(impl_->written[index], offset, offset + bytes.size());
}

void SafetensorsWriter::finish() {
  if (impl_->finished) throw error(errc::invalid_argument, impl_->path.string() + ": finish() called twice");
  impl_->check_complete();
  if (::fsync(impl_->fd) != 0) throw_write_io_error(impl_->partial, "cannot flush", errno);
  const int fd = std::exchange(impl_->fd, -1);
  if (::close(fd) != 0) throw_write_io_error(impl_->partial, "cannot close", errno);
  if (::rename(impl_->partial.c_str(), impl_->path.c_str()) != 0) {
    throw_write_io_error(impl_->path, "cannot rename the finished file into place", errno);
  }
  impl_->finished = true;
  sync_directory_of(impl_->path);
}

void write_file(const std::filesystem::path& path, const std::vector<OwnedTensor>& tensors,
                const std::map<std::string, std::string>& metadata) {
  std::vector<TensorDecl> declarations;
  declarations.reserve(tensors.size());
  for (const auto& tensor : tensors) declarations.push_back({tensor.name, tensor.dtype, tensor.shape});
  SafetensorsWriter writer(path, std::move(declarations), metadata);
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].bytes.size() != writer.byte_size(i)) {
      throw error(errc::invalid_argument, path.string() + ": tensor '" + tensors[i].name +
                                              "': " + std::to_string(tensors[i].bytes.size()) + " bytes for " +
                                              std::to_string(writer.byte_size(i)));
    }
    writer.write(i, tensors[i].bytes);
  }
  writer.finish();
}

std::string make_index_json(std::uint64_t total_size, const std::map<std::string, std::string>& weight_map) {
  // As transformers writes it: json.dumps(index, indent=2, sort_keys=True) + "\n" (std::map
  // sorts the keys as Python does for ASCII names).
  std::string out =
      "{\n  \"metadata\": {\n    \"total_size\": " + std::to_string(total_size) + "\n  },\n  \"weight_map\": {";
  for (auto it = weight_map.begin(); it != weight_map.end(); ++it) {
    out += it == weight_map.begin() ? "\n    " : ",\n    ";
    wire::append_json_string(out, it->first);
    out += ": ";
    wire::append_json_string(out, it->second);
  }
  out += weight_map.empty() ? "}\n}\n" : "\n  }\n}\n";
  return out;
}

OwnedTensor make_tensor(std::string name, std::vector<std::int64_t> shape, std::span<const float> values, Dtype dtype) {
  std::uint64_t count = 1;
  for (const auto dim : shape) count *= dim < 0 ? 0 : static_cast<std::uint64_t>(dim);
  if (count != values.size()) {
    throw error(errc::invalid_argument, "make_tensor '" + name + "': " + std::to_string(values.size()) +
                                            " values for " + std::to_string(count) + " elements");
  }
  OwnedTensor tensor{std::move(name), dtype, std::move(shape), {}};
  tensor.bytes.resize(values.size() * dtype_size(dtype));
  from_f32(dtype, values, tensor.bytes);
  return tensor;
}

}  // namespace tinker::safetensors
