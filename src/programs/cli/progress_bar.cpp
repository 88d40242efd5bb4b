// The progress display of the CLI (progress_bar.hpp).
#include "programs/cli/progress_bar.hpp"

#include "programs/cli/output.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

namespace tinker::cli {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int bar_width = 30;
// A terminal redraw at most this often: an export reports per tensor, thousands a second.
constexpr std::chrono::milliseconds redraw_interval{100};
// A rate measured over less than this is noise.
constexpr std::chrono::milliseconds min_rate_window{1'000};

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

std::string size_text(std::uint64_t bytes) {
  return display_size(static_cast<std::int64_t>(std::min<std::uint64_t>(bytes, INT64_MAX)));
}

}  // namespace

std::string rate_text(double bytes_per_second) {
  return size_text(static_cast<std::uint64_t>(std::max(0.0, bytes_per_second))) + "/s";
}

std::string eta_text(double seconds) {
  const auto total = static_cast<long long>(std::ceil(std::max(0.0, seconds)));
  char text[32];
  if (total >= 3600) {
    std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", total / 3600, total / 60 % 60, total % 60);
  } else {
    std::snprintf(text, sizeof text, "%lld:%02lld", total / 60, total % 60);
  }
  return text;
}

ProgressBar::ProgressBar(std::ostream& err, bool enabled, std::string label)
    : ProgressBar(err, enabled ? Style::bar : Style::hidden, std::move(label)) {}

ProgressBar::ProgressBar(std::ostream& err, Style style, std::string label, Now now)
    : err_(err), style_(style), label_(std::move(label)), now_(std::move(now)), rate_start_(now_()) {
  if (style_ == Style::lines) last_draw_ = rate_start_;  // the first line after one interval
}

void ProgressBar::restart_rate(std::uint64_t done) {
  rate_start_ = now_();
  rate_start_done_ = done;
}

void ProgressBar::set_label(std::string label) {
  label_ = std::move(label);
  restart_rate(0);
  last_done_ = 0;
}

std::string ProgressBar::figures(std::uint64_t done, std::optional<std::uint64_t> total) const {
  std::string text;
  if (total && *total > 0) {
    text = size_text(done) + " / " + size_text(*total);
  } else {
    text = size_text(done);
  }
  const double elapsed = seconds_between(rate_start_, now_());
  if (elapsed * 1000.0 < static_cast<double>(min_rate_window.count()) || done <= rate_start_done_) return text;
  const double rate = static_cast<double>(done - rate_start_done_) / elapsed;
  text += "  " + rate_text(rate);
  if (total && *total > done && rate > 0) text += "  ETA " + eta_text(static_cast<double>(*total - done) / rate);
  return text;
}

void ProgressBar::update(std::uint64_t done, std::optional<std::uint64_t> total) {
  if (style_ == Style::hidden) return;
  if (done < last_done_) restart_rate(done);  // the count started over (a retried download)
  last_done_ = done;
  const Clock::time_point now = now_();
  const bool complete = total && done >= *total;
  const double fraction =
      total && *total > 0 ? std::min(1.0, static_cast<double>(done) / static_cast<double>(*total)) : -1.0;
  if (style_ == Style::lines) {
    if (now - *last_draw_ < line_interval) return;
    std::string line = label_ + ": ";
    if (fraction >= 0) line += std::to_string(static_cast<int>(fraction * 100.0)) + "%  ";
    err_ << line << figures(done, total) << '\n' << std::flush;
    last_draw_ = now;
    return;
  }
  if (last_draw_ && now - *last_draw_ < redraw_interval && !complete) return;
  std::string line = "\r" + label_ + "  ";
  if (fraction >= 0) {
    const int filled = static_cast<int>(fraction * bar_width);
    line += "[" + std::string(static_cast<std::size_t>(filled), '#') +
            std::string(static_cast<std::size_t>(bar_width - filled), '-') + "]";
    char percent[16];
    std::snprintf(percent, sizeof percent, " %3d%%  ", static_cast<int>(fraction * 100.0));
    line += percent;
  }
  line += figures(done, total);
  line += "   ";  // wipes the tail of a longer previous line
  err_ << line << std::flush;
  drawn_ = true;
  last_draw_ = now;
}

void ProgressBar::finish() {
  if (drawn_) err_ << '\n' << std::flush;
  drawn_ = false;
  last_draw_.reset();
  if (style_ == Style::lines) last_draw_ = now_();
}

}  // namespace tinker::cli
