// Progress of the CLI's long operations (downloads, uploads, exports) on the error stream: a bar
// redrawn in place on a terminal, plain lines now and then otherwise (a log keeps them), nothing
// when asked for nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>

namespace tinker::cli {

/// "8.1 MiB/s".
std::string rate_text(double bytes_per_second);
/// "0:07", "12:34", "1:02:03".
std::string eta_text(double seconds);

class ProgressBar {
 public:
  enum class Style {
    hidden,  ///< draws nothing
    bar,     ///< `Label  [#####-----]  45%  12.3 MiB / 27.0 MiB  8.1 MiB/s  ETA 0:02`, redrawn in place
    lines,   ///< `Label: 45%  12.3 MiB / 27.0 MiB  8.1 MiB/s  ETA 0:02`, one line every `line_interval`
  };
  using Now = std::function<std::chrono::steady_clock::time_point()>;

  /// A bar when `enabled` (the error stream is a terminal), else nothing.
  ProgressBar(std::ostream& err, bool enabled, std::string label);
  ProgressBar(std::ostream& err, Style style, std::string label, Now now = std::chrono::steady_clock::now);

  void update(std::uint64_t done, std::optional<std::uint64_t> total);
  /// A new stage: its label shown, its rate measured afresh.
  void set_label(std::string label);
  /// Ends the bar's line (when something was drawn).
  void finish();

  /// How often the lines style writes a line.
  std::chrono::milliseconds line_interval{10'000};

 private:
  std::string figures(std::uint64_t done, std::optional<std::uint64_t> total) const;
  void restart_rate(std::uint64_t done);

  std::ostream& err_;
  Style style_;
  std::string label_;
  Now now_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point rate_start_;
  std::uint64_t rate_start_done_ = 0;
  std::uint64_t last_done_ = 0;
  std::optional<std::chrono::steady_clock::time_point> last_draw_;
};

}  // namespace tinker::cli
