// Downloads of the `tinker` CLI: the progress bar (progress_bar.hpp, drawn on a terminal only) and
// the fetch of a session's trace file from its signed URL.
#pragma once

#include "programs/cli/context.hpp"
#include "programs/cli/progress_bar.hpp"

#include <tinker/download.hpp>

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>

namespace tinker::cli {

/// GETs `url` (a signed URL: no credentials are sent) into `file`, resuming after a dropped
/// connection; returns the size. A partial file is removed on failure.
boost::asio::awaitable<std::uint64_t> fetch_to_file(Context& context, std::string url, std::filesystem::path file);

}  // namespace tinker::cli
