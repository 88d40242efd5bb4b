// StagedDirectory: an export is written under a sibling name and renamed to its final name only
// when complete, so a reader (or a user after a crash) never takes a half-written directory for a
// model. The sibling lives in the same parent, hence on the same file system, so the rename is
// atomic.
#include <tinker/error.hpp>
#include <tinker/safetensors.hpp>

#include <fcntl.h>
#include <stdio.h>  // renameat2

#include <cerrno>
#include <cstring>
#include <random>
#include <system_error>

namespace tinker::safetensors {
namespace {

void refuse_existing(const std::filesystem::path& final_path) {
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::symlink_status(final_path, ec))) {
    throw error(errc::invalid_argument, final_path.string() + ": already exists (choose a new output directory)");
  }
}

std::string random_hex() {
  std::random_device device;
  const std::uint64_t value = (std::uint64_t{device()} << 32) | device();
  static constexpr char digits[] = "0123456789abcdef";
  std::string hex(16, '0');
  for (std::size_t i = 0; i < hex.size(); ++i) hex[i] = digits[(value >> (4 * i)) & 0xfU];
  return hex;
}

// Renames without replacing: plain rename() would quietly replace an empty directory that
// appeared at the final path since the check.
int rename_no_replace(const std::filesystem::path& from, const std::filesystem::path& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return -1;
  return ::rename(from.c_str(), to.c_str());  // a file system without RENAME_NOREPLACE
}

}  // namespace

StagedDirectory::StagedDirectory(std::filesystem::path final_path) : final_(std::move(final_path)) {
  refuse_existing(final_);
  std::error_code ec;
  if (final_.has_parent_path()) std::filesystem::create_directories(final_.parent_path(), ec);
  if (ec) throw error(errc::io_error, final_.parent_path().string() + ": cannot create: " + ec.message());
  for (int attempt = 0; attempt < 16; ++attempt) {
    std::filesystem::path candidate = final_;
    candidate += ".partial-" + random_hex();
    if (std::filesystem::create_directory(candidate, ec)) {
      staging_ = std::move(candidate);
      return;
    }
    if (ec) throw error(errc::io_error, candidate.string() + ": cannot create: " + ec.message());
  }
  throw error(errc::io_error, final_.string() + ": no free staging directory name");
}

StagedDirectory::StagedDirectory(StagedDirectory&& other) noexcept
    : final_(std::move(other.final_)), staging_(std::move(other.staging_)), committed_(other.committed_) {
  other.staging_.clear();
  other.committed_ = true;
}

StagedDirectory& StagedDirectory::operator=(StagedDirectory&& other) noexcept {
  if (this != &other) {
    StagedDirectory discarded(std::move(*this));  // removes our own uncommitted staging directory
    final_ = std::move(other.final_);
    staging_ = std::move(other.staging_);
    committed_ = other.committed_;
    other.staging_.clear();
    other.committed_ = true;
  }
  return *this;
}

StagedDirectory::~StagedDirectory() {
  if (committed_ || staging_.empty()) return;
  std::error_code ignored;  // cleanup of a failed export: nothing better to do with an error here
  std::filesystem::remove_all(staging_, ignored);
}

const std::filesystem::path& StagedDirectory::staging_path() const noexcept {
  return staging_;
}
const std::filesystem::path& StagedDirectory::final_path() const noexcept {
  return final_;
}

void StagedDirectory::commit() {
  if (committed_) throw error(errc::invalid_argument, final_.string() + ": already committed");
  refuse_existing(final_);
  if (rename_no_replace(staging_, final_) != 0) {
    const int error_number = errno;
    if (error_number == EEXIST || error_number == ENOTEMPTY) refuse_existing(final_);
    throw error(errc::io_error, final_.string() + ": cannot rename " + staging_.string() +
                                    " into place: " + std::strerror(error_number));
  }
  committed_ = true;
}

}  // namespace tinker::safetensors
