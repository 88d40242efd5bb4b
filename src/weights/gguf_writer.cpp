// GGUF v3 serialization (see gguf_writer.hpp for the layout). The file is written sequentially
// through a file descriptor: header, metadata and tensor infos on the first tensor write, then the
// data in declaration order, which is the order llama.cpp's loader checks the offsets in.
#include "weights/gguf_writer.hpp"

#include <tinker/error.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <type_traits>
#include <utility>

namespace tinker::weights::detail {
namespace {

namespace fs = std::filesystem;

constexpr std::uint32_t gguf_version = 3;
constexpr std::size_t ggml_max_name = 64;  // ggml's GGML_MAX_NAME, terminating NUL included
constexpr std::size_t ggml_max_dims = 4;   // GGML_MAX_DIMS

[[noreturn]] void fail_argument(const fs::path& path, const std::string& message) {
  throw error(errc::invalid_argument, path.string() + ": " + message);
}

[[noreturn]] void fail_io(const fs::path& path, const std::string& what, int saved_errno) {
  throw error(errc::io_error, path.string() + ": " + what + ": " + std::strerror(saved_errno));
}

std::uint64_t pad_to(std::uint64_t size, std::uint64_t alignment) noexcept {
  return (size + alignment - 1) / alignment * alignment;
}

void append_raw(std::string& out, const void* data, std::size_t size) {
  out.append(static_cast<const char*>(data), size);  // little-endian hosts only, as ggml itself
}

void append_u32(std::string& out, std::uint32_t value) {
  append_raw(out, &value, sizeof value);
}

void append_u64(std::string& out, std::uint64_t value) {
  append_raw(out, &value, sizeof value);
}

void append_string(std::string& out, const std::string& value) {
  append_u64(out, value.size());
  out += value;
}

template <class T>
void append_scalar(std::string& out, T value) {
  append_raw(out, &value, sizeof value);
}

void append_type(std::string& out, GgufValueType type) {
  append_u32(out, static_cast<std::uint32_t>(type));
}

template <class T>
void append_array(std::string& out, GgufValueType element_type, const std::vector<T>& values) {
  append_type(out, GgufValueType::array);
  append_type(out, element_type);
  append_u64(out, values.size());
  for (const T& value : values) {
    if constexpr (std::is_same_v<T, std::string>) {
      append_string(out, value);
    } else {
      append_scalar(out, value);
    }
  }
}

// The value's type tag followed by its encoding.
template <class T>
void append_tagged(std::string& out, GgufValueType type, const T& value) {
  append_type(out, type);
  if constexpr (std::is_same_v<T, std::string>) {
    append_string(out, value);
  } else if constexpr (std::is_same_v<T, bool>) {
    out.push_back(value ? '\1' : '\0');  // one byte, as the format and numpy's '?' store it
  } else {
    append_scalar(out, value);
  }
}

void append_value(std::string& out, const GgufValue& value) {
  struct Encoder {
    std::string& out;
    void operator()(std::uint32_t v) const { append_tagged(out, GgufValueType::u32, v); }
    void operator()(std::int32_t v) const { append_tagged(out, GgufValueType::i32, v); }
    void operator()(std::uint64_t v) const { append_tagged(out, GgufValueType::u64, v); }
    void operator()(float v) const { append_tagged(out, GgufValueType::f32, v); }
    void operator()(bool v) const { append_tagged(out, GgufValueType::boolean, v); }
    void operator()(const std::string& v) const { append_tagged(out, GgufValueType::string, v); }
    void operator()(const std::vector<std::uint32_t>& v) const { append_array(out, GgufValueType::u32, v); }
    void operator()(const std::vector<std::int32_t>& v) const { append_array(out, GgufValueType::i32, v); }
    void operator()(const std::vector<float>& v) const { append_array(out, GgufValueType::f32, v); }
    void operator()(const std::vector<std::string>& v) const { append_array(out, GgufValueType::string, v); }
  };
  std::visit(Encoder{out}, value);
}

struct TensorEntry {
  std::string name;
  std::vector<std::uint64_t> ggml_dims;  // contiguous dimension first
  GgmlType type = GgmlType::f32;
  std::uint64_t bytes = 0;
  std::uint64_t offset = 0;  // within the data section
};

// "<path>.partial-<16 hex digits>", created exclusively so two exports never share a file.
std::pair<fs::path, int> create_temporary(const fs::path& path) {
  std::random_device device;
  for (int attempt = 0; attempt < 16; ++attempt) {
    const std::uint64_t tag = (std::uint64_t{device()} << 32) | device();
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, ".partial-%016llx", static_cast<unsigned long long>(tag));
    fs::path candidate = path;
    candidate += suffix;
    const int fd = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return {candidate, fd};
    if (errno != EEXIST) fail_io(candidate, "cannot create", errno);
  }
  fail_io(path, "cannot create a temporary file next to it", EEXIST);
}

// Renames without replacing: an output that appeared while we wrote is never overwritten.
void rename_no_replace(const fs::path& from, const fs::path& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return;
  if (errno == EEXIST) fail_argument(to, "the output already exists");
  if (errno != EINVAL && errno != ENOSYS) fail_io(to, "cannot rename " + from.string() + " to it", errno);
  // A file system without RENAME_NOREPLACE: check, then rename (a narrow race, as every tool has).
  if (fs::exists(to)) fail_argument(to, "the output already exists");
  if (::rename(from.c_str(), to.c_str()) != 0) fail_io(to, "cannot rename " + from.string() + " to it", errno);
}

}  // namespace

std::size_t ggml_type_size(GgmlType type) noexcept {
  switch (type) {
    case GgmlType::f32: return 4;
    case GgmlType::f16:
    case GgmlType::bf16: return 2;
  }
  return 0;
}

struct GgufWriter::Impl {
  fs::path path;
  std::uint32_t alignment = gguf_default_alignment;
  std::vector<std::pair<std::string, GgufValue>> metadata;
  std::set<std::string> keys;
  std::vector<TensorEntry> tensors;
  std::set<std::string> tensor_names;
  std::uint64_t data_size = 0;  // padded

  fs::path temporary;
  int fd = -1;
  bool started = false;  // header written
  bool finished = false;
  std::size_t current = 0;         // the tensor being written
  std::uint64_t current_done = 0;  // its bytes written so far

  ~Impl() {
    if (fd >= 0) ::close(fd);
    if (!finished && !temporary.empty()) {
      std::error_code ignored;
      fs::remove(temporary, ignored);
    }
  }

  void require_not_started(const char* what) const {
    if (started) fail_argument(path, std::string(what) + " after tensor data was written");
  }

  void write_all(const void* data, std::size_t size) {
    const auto* bytes = static_cast<const char*>(data);
    while (size > 0) {
      const ssize_t written = ::write(fd, bytes, size);
      if (written < 0) {
        if (errno == EINTR) continue;
        fail_io(temporary, "write failed", errno);
      }
      bytes += written;
      size -= static_cast<std::size_t>(written);
    }
  }

  void write_zeros(std::uint64_t count) {
    static constexpr char zeros[64] = {};
    while (count > 0) {
      const std::size_t piece = count < sizeof zeros ? static_cast<std::size_t>(count) : sizeof zeros;
      write_all(zeros, piece);
      count -= piece;
    }
  }

  void start() {
    if (started) return;
    auto [name, descriptor] = create_temporary(path);
    temporary = std::move(name);
    fd = descriptor;
    started = true;
    const std::string header = header_bytes();
    write_all(header.data(), header.size());
  }

  // Moves past complete tensors (zero-byte ones included), padding each.
  void advance() {
    while (current < tensors.size() && current_done == tensors[current].bytes) {
      write_zeros(pad_to(tensors[current].bytes, alignment) - tensors[current].bytes);
      ++current;
      current_done = 0;
    }
  }

  std::string header_bytes() const {
    std::string out;
    out += "GGUF";
    append_u32(out, gguf_version);
    append_u64(out, tensors.size());
    append_u64(out, metadata.size());
    for (const auto& [key, value] : metadata) {
      append_string(out, key);
      append_value(out, value);
    }
    for (const TensorEntry& tensor : tensors) {
      append_string(out, tensor.name);
      append_u32(out, static_cast<std::uint32_t>(tensor.ggml_dims.size()));
      for (std::uint64_t dim : tensor.ggml_dims) append_u64(out, dim);
      append_u32(out, static_cast<std::uint32_t>(tensor.type));
      append_u64(out, tensor.offset);
    }
    out.resize(pad_to(out.size(), alignment), '\0');
    return out;
  }
};

GgufWriter::GgufWriter(fs::path path, std::uint32_t alignment) : impl_(std::make_unique<Impl>()) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    fail_argument(path, "GGUF alignment " + std::to_string(alignment) + " is not a power of two");
  }
  if (fs::exists(fs::symlink_status(path))) fail_argument(path, "the output already exists");
  impl_->path = std::move(path);
  impl_->alignment = alignment;
  if (alignment != gguf_default_alignment) add("general.alignment", alignment);
}

GgufWriter::GgufWriter(GgufWriter&&) noexcept = default;
GgufWriter& GgufWriter::operator=(GgufWriter&&) noexcept = default;
GgufWriter::~GgufWriter() = default;

void GgufWriter::add(std::string key, GgufValue value) {
  impl_->require_not_started("metadata added");
  if (key.empty()) fail_argument(impl_->path, "a GGUF metadata key is empty");
  if (!impl_->keys.insert(key).second) fail_argument(impl_->path, "GGUF metadata key '" + key + "' added twice");
  impl_->metadata.emplace_back(std::move(key), std::move(value));
}

std::size_t GgufWriter::add_tensor(std::string name, std::span<const std::int64_t> shape, GgmlType type) {
  Impl& impl = *impl_;
  impl.require_not_started("a tensor declared");
  if (name.empty() || name.size() >= ggml_max_name) {
    fail_argument(impl.path, "GGUF tensor name '" + name + "' is empty or longer than 63 bytes");
  }
  if (shape.empty() || shape.size() > ggml_max_dims) {
    fail_argument(impl.path, "GGUF tensor '" + name + "' has " + std::to_string(shape.size()) +
                                 " dimensions (1 to 4 are allowed)");
  }
  TensorEntry entry{name, {}, type, ggml_type_size(type), impl.data_size};
  for (auto dim = shape.rbegin(); dim != shape.rend(); ++dim) {
    if (*dim < 0) fail_argument(impl.path, "GGUF tensor '" + name + "' has a negative dimension");
    const auto size = static_cast<std::uint64_t>(*dim);
    if (size != 0 && entry.bytes > std::numeric_limits<std::int64_t>::max() / size) {
      fail_argument(impl.path, "GGUF tensor '" + name + "' is too large");
    }
    entry.bytes *= size;
    entry.ggml_dims.push_back(size);
  }
  if (!impl.tensor_names.insert(name).second) fail_argument(impl.path, "GGUF tensor '" + name + "' declared twice");
  impl.data_size += pad_to(entry.bytes, impl.alignment);
  impl.tensors.push_back(std::move(entry));
  return impl.tensors.size() - 1;
}

std::size_t GgufWriter::tensor_count() const noexcept {
  return impl_->tensors.size();
}

std::uint64_t GgufWriter::byte_size(std::size_t index) const {
  if (index >= impl_->tensors.size()) fail_argument(impl_->path, "no GGUF tensor " + std::to_string(index));
  return impl_->tensors[index].bytes;
}

std::uint64_t GgufWriter::file_size() const {
  return impl_->header_bytes().size() + impl_->data_size;
}

void GgufWriter::write(std::size_t index, std::span<const std::byte> bytes) {
  Impl& impl = *impl_;
  if (impl.finished) fail_argument(impl.path, "GGUF data written after finish()");
  impl.start();
  impl.advance();
  if (index >= impl.tensors.size() || index != impl.current) {
    fail_argument(impl.path, "GGUF tensor " + std::to_string(index) + " written out of order (expected " +
                                 std::to_string(impl.current) + ")");
  }
  const TensorEntry& tensor = impl.tensors[index];
  if (bytes.size() > tensor.bytes - impl.current_done) {
    fail_argument(impl.path, "GGUF tensor '" + tensor.name + "': " + std::to_string(bytes.size()) +
                                 " bytes do not fit its remaining " + std::to_string(tensor.bytes - impl.current_done));
  }
  impl.write_all(bytes.data(), bytes.size());
  impl.current_done += bytes.size();
  impl.advance();
}

void GgufWriter::finish() {
  Impl& impl = *impl_;
  if (impl.finished) return;
  impl.start();
  impl.advance();
  if (impl.current < impl.tensors.size()) {
    fail_argument(impl.path, "GGUF tensor '" + impl.tensors[impl.current].name + "' was not completely written");
  }
  if (::fsync(impl.fd) != 0) fail_io(impl.temporary, "fsync failed", errno);
  const int fd = std::exchange(impl.fd, -1);
  if (::close(fd) != 0) fail_io(impl.temporary, "close failed", errno);
  rename_no_replace(impl.temporary, impl.path);
  impl.finished = true;
}

std::string GgufWriter::header_bytes() const {
  return impl_->header_bytes();
}

}  // namespace tinker::weights::detail
