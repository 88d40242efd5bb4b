// What the two downloads of the RestClient (a checkpoint's archive, a file at a signed URL) share:
// progress reports and the size check of the file they wrote.
#pragma once

#include "http/download.hpp"

#include <tinker/download.hpp>
#include <tinker/error.hpp>

#include <boost/system/error_code.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string_view>

namespace tinker::client::rest {

using ProgressCallback = std::function<void(const DownloadProgress&)>;

/// Makes `request` report its progress to `*callback` (nothing when the callback is empty). The
/// callback must outlive the download.
void report_progress(http::DownloadRequest& request, const ProgressCallback* callback);

/// The size of the downloaded file `part` in `on_disk`; an error naming `what` ("file",
/// "checkpoint archive") when it is not what the server announced or what arrived. Throws
/// tinker::error when the file cannot be read.
boost::system::error_code check_downloaded_size(const std::filesystem::path& part, const http::DownloadState& state,
                                                std::string_view what, std::uint64_t& on_disk, diagnostics& diag);

}  // namespace tinker::client::rest
