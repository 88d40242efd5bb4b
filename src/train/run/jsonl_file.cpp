// POSIX file calls behind the run directory: every write is followed by fsync, so a line that
// append_line returned from survives a SIGKILL (and a power loss) of the writer.
#include "train/run/jsonl_file.hpp"

#include <tinker/error.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tinker::train::jsonl {
namespace {

[[noreturn]] void throw_io_error(const std::filesystem::path& file, const char* what) {
  const int saved = errno;
  throw error(errc::io_error, file.string() + ": " + what + " failed (" + std::strerror(saved) + ")");
}

// Closes the descriptor on every path out of a function.
class FileDescriptor {
 public:
  FileDescriptor(const std::filesystem::path& file, int flags, mode_t mode = 0644)
      : fd_(::open(file.c_str(), flags | O_CLOEXEC, mode)) {
    if (fd_ < 0) throw_io_error(file, "open");
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() { ::close(fd_); }
  int get() const noexcept { return fd_; }

 private:
  int fd_;
};

void write_all(int fd, std::string_view text, const std::filesystem::path& file) {
  // One write() for the whole line in practice (a regular file writes it all); the loop only
  // covers a signal interrupting it.
  while (!text.empty()) {
    const auto written = ::write(fd, text.data(), text.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      throw_io_error(file, "write");
    }
    text.remove_prefix(static_cast<std::size_t>(written));
  }
}

void sync_directory(const std::filesystem::path& directory) {
  const FileDescriptor dir(directory.empty() ? std::filesystem::path(".") : directory, O_RDONLY | O_DIRECTORY);
  if (::fsync(dir.get()) != 0) throw_io_error(directory, "fsync");
}

// The size the file should have: everything up to and including its last '\n'.
off_t complete_size(int fd, off_t size, const std::filesystem::path& file) {
  char buffer[4096];
  off_t end = size;
  while (end > 0) {
    const off_t start = end > static_cast<off_t>(sizeof buffer) ? end - static_cast<off_t>(sizeof buffer) : 0;
    const auto count = static_cast<std::size_t>(end - start);
    if (::pread(fd, buffer, count, start) != static_cast<ssize_t>(count)) throw_io_error(file, "read");
    for (std::size_t i = count; i > 0; --i) {
      if (buffer[i - 1] == '\n') return start + static_cast<off_t>(i);
    }
    end = start;
  }
  return 0;
}

}  // namespace

void append_line(const std::filesystem::path& file, std::string_view line) {
  const bool created = !std::filesystem::exists(file);
  const FileDescriptor out(file, O_RDWR | O_APPEND | O_CREAT);
  struct stat status {};
  if (::fstat(out.get(), &status) != 0) throw_io_error(file, "fstat");
  if (status.st_size > 0) {
    const off_t keep = complete_size(out.get(), status.st_size, file);
    if (keep != status.st_size && ::ftruncate(out.get(), keep) != 0) throw_io_error(file, "ftruncate");
  }
  write_all(out.get(), line, file);
  if (::fsync(out.get()) != 0) throw_io_error(file, "fsync");
  if (created) sync_directory(file.parent_path());
}

std::optional<std::string> read_file_if_present(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    if (!std::filesystem::exists(file)) return std::nullopt;
    throw error(errc::io_error, file.string() + ": cannot be opened for reading");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return std::move(text).str();
}

std::vector<Line> complete_lines(const std::filesystem::path& file) {
  std::vector<Line> lines;
  const auto text = read_file_if_present(file);
  if (!text) return lines;
  std::size_t start = 0;
  std::size_t number = 0;
  for (auto end = text->find('\n'); end != std::string::npos; end = text->find('\n', start)) {
    ++number;
    std::string_view content(text->data() + start, end - start);
    if (!content.empty() && content.back() == '\r') content.remove_suffix(1);
    if (content.find_first_not_of(" \t") != std::string_view::npos) lines.push_back({number, std::string(content)});
    start = end + 1;
  }
  return lines;  // text after the last '\n' is a torn write: skipped
}

void replace_file(const std::filesystem::path& file, std::string_view text) {
  auto temporary = file;
  temporary += ".tmp." + std::to_string(::getpid());
  {
    const FileDescriptor out(temporary, O_WRONLY | O_CREAT | O_TRUNC);
    write_all(out.get(), text, temporary);
    if (::fsync(out.get()) != 0) throw_io_error(temporary, "fsync");
  }
  if (::rename(temporary.c_str(), file.c_str()) != 0) {
    const int saved = errno;
    ::unlink(temporary.c_str());
    errno = saved;
    throw_io_error(file, "rename");
  }
  sync_directory(file.parent_path());
}

}  // namespace tinker::train::jsonl
