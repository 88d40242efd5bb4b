// Downloads of the `tinker` CLI: the progress bar (drawn on a terminal only) and the fetch of a
// session's trace file from its signed URL.
#pragma once

#include "programs/cli/context.hpp"

#include <tinker/download.hpp>

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>

namespace tinker::cli {

/// One line redrawn in place: `[#####-----]  45%  12.3 MiB / 27.0 MiB`. Draws nothing when
/// disabled (the error stream is not a terminal).
class ProgressBar {
 public:
  ProgressBar(std::ostream& err, bool enabled, std::string label);
  void update(std::uint64_t done, std::optional<std::uint64_t> total);
  /// Ends the line (when something was drawn).
  void finish();

 private:
  std::ostream& err_;
  bool enabled_;
  bool drawn_ = false;
  std::string label_;
};

/// GETs `url` (a signed URL: no credentials are sent) into `file`, resuming after a dropped
/// connection; returns the size. A partial file is removed on failure.
boost::asio::awaitable<std::uint64_t> fetch_to_file(Context& context, std::string url, std::filesystem::path file);

}  // namespace tinker::cli
