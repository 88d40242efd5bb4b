// SafetensorsFile: a file mapped read-only (MAP_PRIVATE, so nothing can write through it), checked
// by detail::parse_header before any tensor is handed out. A merge reads base models far larger
// than memory through this mapping; release() lets it drop the pages of tensors it is done with.
#include "weights/safetensors_header.hpp"

#include <tinker/error.hpp>
#include <tinker/safetensors.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>

namespace tinker::safetensors {

struct SafetensorsFile::Impl {
  std::filesystem::path path;
  std::vector<TensorInfo> tensors;
  std::map<std::string, std::size_t, std::less<>> index_by_name;
  std::map<std::string, std::string> metadata;
  std::uint64_t data_offset = 0;
  std::uint64_t file_size = 0;
  const std::byte* bytes = nullptr;  // the whole file: the mapping, or `owned`
  void* mapping = nullptr;
  std::size_t mapping_size = 0;
  std::string owned;  // from_bytes

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    if (mapping != nullptr) ::munmap(mapping, mapping_size);
  }

  void take_header(detail::ParsedHeader parsed) {
    tensors = std::move(parsed.tensors);
    metadata = std::move(parsed.metadata);
    data_offset = parsed.data_offset;
    for (std::size_t i = 0; i < tensors.size(); ++i) index_by_name.emplace(tensors[i].name, i);
  }

  bool owns(const TensorInfo& tensor) const noexcept {
    const std::less<const TensorInfo*> before;
    return !tensors.empty() && !before(&tensor, tensors.data()) && before(&tensor, tensors.data() + tensors.size());
  }
};

namespace {

[[noreturn]] void throw_file_io_error(const std::filesystem::path& path, const char* what, int error_number) {
  throw error(errc::io_error, path.string() + ": " + what + ": " + std::strerror(error_number));
}

// Closes the descriptor when open() leaves, mapped or not (the mapping keeps its own reference).
struct FileDescriptor {
  int fd = -1;
  FileDescriptor() = default;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

SafetensorsFile::SafetensorsFile(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SafetensorsFile::SafetensorsFile(SafetensorsFile&&) noexcept = default;
SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&&) noexcept = default;
SafetensorsFile::~SafetensorsFile() = default;

SafetensorsFile SafetensorsFile::open(const std::filesystem::path& path) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  FileDescriptor file;
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (file.fd < 0) throw_file_io_error(path, "cannot open", errno);
  struct stat info {};
  if (::fstat(file.fd, &info) != 0) throw_file_io_error(path, "cannot stat", errno);
  if (!S_ISREG(info.st_mode)) throw error(errc::io_error, path.string() + ": not a regular file");
  impl->file_size = static_cast<std::uint64_t>(info.st_size);
  if (impl->file_size > 0) {  // an empty file cannot be mapped; parse_header refuses it below
    impl->mapping_size = static_cast<std::size_t>(impl->file_size);
    void* mapping = ::mmap(nullptr, impl->mapping_size, PROT_READ, MAP_PRIVATE, file.fd, 0);
    if (mapping == MAP_FAILED) throw_file_io_error(path, "cannot map", errno);
    impl->mapping = mapping;
    impl->bytes = static_cast<const std::byte*>(mapping);
  }
  impl->take_header(detail::parse_header({impl->bytes, impl->mapping_size}, path.string()));
  return SafetensorsFile(std::move(impl));
}

SafetensorsFile SafetensorsFile::from_bytes(std::string bytes, std::string label) {
  auto impl = std::make_unique<Impl>();
  impl->path = std::move(label);
  impl->owned = std::move(bytes);
  impl->bytes = reinterpret_cast<const std::byte*>(impl->owned.data());
  impl->file_size = impl->owned.size();
  impl->take_header(detail::parse_header({impl->bytes, impl->owned.size()}, impl->path.string()));
  return SafetensorsFile(std::move(impl));
}

const std::filesystem::path& SafetensorsFile::path() const noexcept {
  return impl_->path;
}
const std::vector<TensorInfo>& SafetensorsFile::tensors() const noexcept {
  return impl_->tensors;
}
const std::map<std::string, std::string>& SafetensorsFile::metadata() const noexcept {
  return impl_->metadata;
}
std::uint64_t SafetensorsFile::data_offset() const noexcept {
  return impl_->data_offset;
}
std::uint64_t SafetensorsFile::file_size() const noexcept {
  return impl_->file_size;
}

const TensorInfo* SafetensorsFile::find(std::string_view name) const noexcept {
  const auto found = impl_->index_by_name.find(name);
  return found == impl_->index_by_name.end() ? nullptr : &impl_->tensors[found->second];
}

const TensorInfo& SafetensorsFile::at(std::string_view name) const {
  const TensorInfo* tensor = find(name);
  if (tensor == nullptr) {
    throw error(errc::invalid_argument, impl_->path.string() + ": no tensor '" + std::string(name) + "'");
  }
  return *tensor;
}

std::span<const std::byte> SafetensorsFile::data(const TensorInfo& tensor) const {
  if (!impl_->owns(tensor)) {
    throw error(errc::invalid_argument,
                impl_->path.string() + ": tensor '" + tensor.name + "' is not one of this file's");
  }
  // The header check put [begin, end) inside the data section, so this cannot overflow.
  return {impl_->bytes + impl_->data_offset + tensor.begin, static_cast<std::size_t>(tensor.byte_size())};
}

std::vector<float> SafetensorsFile::read_f32(const TensorInfo& tensor) const {
  const auto bytes = data(tensor);
  if (!is_float(tensor.dtype)) {
    throw error(errc::invalid_argument, impl_->path.string() + ": tensor '" + tensor.name +
                                            "': " + std::string(to_string(tensor.dtype)) + " cannot be read as float");
  }
  std::vector<float> values(static_cast<std::size_t>(tensor.element_count()));
  to_f32(tensor.dtype, bytes, values);
  return values;
}

void SafetensorsFile::release(const TensorInfo& tensor) const noexcept {
  if (impl_->mapping == nullptr || !impl_->owns(tensor) || tensor.begin == tensor.end) return;
  // Every page the tensor touches: a neighbour sharing an edge page just reads it in again.
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  const std::uint64_t first = (impl_->data_offset + tensor.begin) / page * page;
  const std::uint64_t last =
      std::min<std::uint64_t>((impl_->data_offset + tensor.end + page - 1) / page * page, impl_->mapping_size);
  ::madvise(static_cast<std::byte*>(impl_->mapping) + first, static_cast<std::size_t>(last - first), MADV_DONTNEED);
}

}  // namespace tinker::safetensors
