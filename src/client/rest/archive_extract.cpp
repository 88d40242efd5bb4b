// Safe extraction with libarchive: every entry is checked before anything of it is written, and
// files are written by us (never by archive_read_extract) into a directory we created, which
// therefore holds no links to follow.
#include "client/rest/archive_extract.hpp"

#include <tinker/error.hpp>

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace tinker::client::rest {
namespace {

namespace fs = std::filesystem;

// Entry names come from the archive: shown with control characters replaced.
std::string printable(std::string_view name) {
  std::string out;
  for (const char c : name.substr(0, 200)) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  if (name.size() > 200) out += "...";
  return out;
}

[[noreturn]] void refuse(std::string_view name, const std::string& why) {
  throw error(errc::invalid_argument, "checkpoint archive refused: entry '" + printable(name) + "' " + why);
}

class ArchiveReader {
 public:
  explicit ArchiveReader(const fs::path& path) : archive_(archive_read_new()) {
    if (!archive_) throw error(errc::invalid_argument, "cannot read " + path.string() + ": out of memory");
    // Plain tar (what the service sends, doc/rest.md#checkpoint-downloads) or gzip, both in-process: filter_all
    // would also run external programs (lrzip, lzop, ...) on untrusted input.
    archive_read_support_filter_none(get());
    archive_read_support_filter_gzip(get());
    archive_read_support_format_tar(get());
    if (archive_read_open_filename(get(), path.c_str(), 64 * 1024) != ARCHIVE_OK) fail(path);
  }
  ArchiveReader(const ArchiveReader&) = delete;
  ArchiveReader& operator=(const ArchiveReader&) = delete;

  struct archive* get() const noexcept {
    return archive_.get();
  }
  [[noreturn]] void fail(const fs::path& path) const {
    const char* why = archive_error_string(get());
    throw error(errc::invalid_argument, "cannot read the checkpoint archive " + path.string() + ": " +
                                            (why != nullptr ? why : "unknown error"));
  }

 private:
  class Free {
   public:
    void operator()(struct archive* archive) const noexcept { archive_read_free(archive); }
  };
  // Owned by a unique_ptr, not freed in a destructor: the constructor throws when the file
  // cannot be opened, and a destructor would not run then (LeakSanitizer found the leak).
  std::unique_ptr<struct archive, Free> archive_;
};

class FileCloser {
 public:
  void operator()(std::FILE* file) const noexcept { std::fclose(file); }
};

void write_entry_data(const ArchiveReader& reader, const fs::path& archive, std::string_view name,
                      const fs::path& destination) {
  // "x": exclusive creation, so an entry that appears twice (or names a directory) is refused.
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(destination.c_str(), "wbx"));
  if (!file) {
    if (errno == EEXIST || errno == EISDIR) refuse(name, "appears twice in the archive");
    throw error(errc::invalid_argument, "cannot write " + destination.string() + ": " + std::strerror(errno));
  }
  for (;;) {
    const void* data = nullptr;
    std::size_t size = 0;
    la_int64_t offset = 0;
    const int status = archive_read_data_block(reader.get(), &data, &size, &offset);
    if (status == ARCHIVE_EOF) break;
    if (status != ARCHIVE_OK) reader.fail(archive);
    // Sparse entries come in blocks at offsets: the holes read back as zeros.
    if (std::fseek(file.get(), static_cast<long>(offset), SEEK_SET) != 0 ||
        std::fwrite(data, 1, size, file.get()) != size) {
      throw error(errc::invalid_argument, "cannot write " + destination.string() + ": " + std::strerror(errno));
    }
  }
  if (std::fflush(file.get()) != 0) {
    throw error(errc::invalid_argument, "cannot write " + destination.string() + ": " + std::strerror(errno));
  }
}

}  // namespace

std::optional<std::string> safe_relative_path(std::string_view name) {
  if (name.starts_with('/')) return std::nullopt;
  std::string out;
  while (!name.empty()) {
    const std::size_t slash = name.find('/');
    const std::string_view component = name.substr(0, slash);
    name = slash == std::string_view::npos ? std::string_view() : name.substr(slash + 1);
    if (component == "..") return std::nullopt;
    if (component.empty() || component == ".") continue;
    if (!out.empty()) out += '/';
    out += component;
  }
  return out;
}

std::vector<std::string> extract_archive(const fs::path& archive, const fs::path& directory) try {
  ArchiveReader reader(archive);
  if (!fs::create_directory(directory)) {
    throw error(errc::invalid_argument, "cannot extract into " + directory.string() + ": it already exists");
  }
  std::vector<std::string> files;
  for (;;) {
    struct archive_entry* entry = nullptr;
    const int status = archive_read_next_header(reader.get(), &entry);
    if (status == ARCHIVE_EOF) break;
    if (status != ARCHIVE_OK) reader.fail(archive);  // ARCHIVE_WARN included: be strict
    const char* raw_name = archive_entry_pathname(entry);
    if (raw_name == nullptr) throw error(errc::invalid_argument, "checkpoint archive refused: an entry has no name");
    const std::string_view name(raw_name);
    if (archive_entry_hardlink(entry) != nullptr) refuse(name, "is a hard link");
    const auto type = archive_entry_filetype(entry);
    if (type == AE_IFLNK) refuse(name, "is a symbolic link");
    if (type != AE_IFREG && type != AE_IFDIR) refuse(name, "is a device, fifo or socket");
    const std::optional<std::string> relative = safe_relative_path(name);
    if (!relative) refuse(name, "leaves the target directory (absolute path or '..')");
    if (type == AE_IFDIR) {
      if (!relative->empty()) fs::create_directories(directory / *relative);
      continue;
    }
    if (relative->empty()) refuse(name, "is a file without a name");
    const fs::path destination = directory / *relative;
    fs::create_directories(destination.parent_path());
    write_entry_data(reader, archive, name, destination);
    files.push_back(*relative);
  }
  std::sort(files.begin(), files.end());
  return files;
} catch (const fs::filesystem_error& e) {
  throw error(errc::invalid_argument, std::string("cannot extract the checkpoint archive: ") + e.what());
}

}  // namespace tinker::client::rest
