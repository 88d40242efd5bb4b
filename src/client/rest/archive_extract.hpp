// Safe extraction of a downloaded checkpoint archive (doc/rest.md: the CLI rejects archives with
// links or paths escaping the target). libarchive stays inside archive_extract.cpp.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::client::rest {

/// Extracts the tar (plain or gzip-compressed) at `archive` into `directory`, which must not exist yet
/// (it is created). Only regular files and directories are accepted; the whole archive is
/// refused with tinker::error (invalid_argument, naming the entry) for an absolute path, a `..`
/// component, a symbolic or hard link, a device, fifo or socket, an entry that appears twice, or
/// an unreadable archive. On failure `directory` may hold part of the archive: the caller
/// removes it. Returns the regular files, relative to `directory` ('/'-separated), sorted.
std::vector<std::string> extract_archive(const std::filesystem::path& archive, const std::filesystem::path& directory);

/// An entry name as a relative path without "." or empty components ("./a//b/" -> "a/b"; "./"
/// -> ""), or nullopt when it is absolute or has a `..` component.
std::optional<std::string> safe_relative_path(std::string_view name);

}  // namespace tinker::client::rest
