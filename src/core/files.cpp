#include "core/files.hpp"

#include <tinker/error.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tinker::detail {

std::string read_whole_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error(errc::io_error, path.string() + ": cannot be read: " + std::strerror(errno));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) throw error(errc::io_error, path.string() + ": read error: " + std::strerror(errno));
  return std::move(bytes).str();
}

}  // namespace tinker::detail
