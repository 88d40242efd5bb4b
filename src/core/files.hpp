// Reading a whole local file, for the layers that load small files (configs, adapters, manifests).
#pragma once

#include <filesystem>
#include <string>

namespace tinker::detail {

/// The bytes of `path`. Throws tinker::error(errc::io_error) naming the file and the system's
/// reason when it cannot be opened or read.
std::string read_whole_file(const std::filesystem::path& path);

}  // namespace tinker::detail
