// Crash-safe file primitives of the run directory (src/train/run/run_dir.cpp): appending one
// line with one write() and an fsync, reading the complete lines of a JSONL file, and replacing a
// whole file through a temporary file and a rename.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::train::jsonl {

/// One complete line of a JSONL file: its 1-based number and its text without the newline.
struct Line {
  std::size_t number = 0;  ///< 1-based line number in the file
  std::string text;        ///< the line without its '\n'
};

/// Appends `line` (ending in '\n') to `file` with one write() and flushes it to disk. A torn
/// last line left by a killed writer (text after the last '\n') is cut off first, so the new line
/// never joins it. Creates the file (and syncs its directory) when missing. tinker::error
/// (io_error) naming the file when a call fails.
void append_line(const std::filesystem::path& file, std::string_view line);

/// The non-blank lines of `file` that end in '\n' (text after the last '\n' is a torn write and
/// is skipped); empty when the file does not exist. tinker::error (io_error) when it cannot be read.
std::vector<Line> complete_lines(const std::filesystem::path& file);

/// The whole text of `file`, or none when it does not exist.
std::optional<std::string> read_file_if_present(const std::filesystem::path& file);

/// Replaces `file` with `text` atomically: a temporary file in the same directory is written and
/// synced, renamed over `file`, and the directory is synced.
void replace_file(const std::filesystem::path& file, std::string_view text);

}  // namespace tinker::train::jsonl
