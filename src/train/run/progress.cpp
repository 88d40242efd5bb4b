// ProgressLine: a per-step status line with rate and ETA, redrawn in place on a terminal.
#include <tinker/train/progress.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string_view>

namespace tinker::train {
namespace {
namespace progress_text {

// The keys worth a glance, in the order shown: the losses and rewards of the cookbook's
// trainers first, then the learning rate.
constexpr std::array<std::string_view, 11> preferred_keys = {
    "loss",   "train_mean_nll", "env/all/reward/total", "reward", "dpo_loss",     "accuracy",
    "margin", "test/nll",       "test/accuracy",        "lr",     "learning_rate"};
constexpr std::size_t max_shown = 4;

std::string significant(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4g", value);
  return buffer;
}

std::string duration(double seconds) {
  const auto total = static_cast<long long>(std::llround(seconds));
  char buffer[32];
  if (total >= 3600) {
    std::snprintf(buffer, sizeof buffer, "%lldh%02lldm", total / 3600, total % 3600 / 60);
  } else if (total >= 60) {
    std::snprintf(buffer, sizeof buffer, "%lldm%02llds", total / 60, total % 60);
  } else {
    std::snprintf(buffer, sizeof buffer, "%llds", total);
  }
  return buffer;
}

std::string rate_text(double steps_per_second) {
  char buffer[32];
  if (steps_per_second >= 1.0) {
    std::snprintf(buffer, sizeof buffer, "%.2f steps/s", steps_per_second);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.1f s/step", 1.0 / steps_per_second);
  }
  return buffer;
}

bool is_timing(std::string_view key) {
  return key.substr(0, 5) == "time/";
}

std::string shown_metrics(const StepMetrics& metrics) {
  std::string text;
  std::size_t shown = 0;
  const auto show = [&](std::string_view key, double value) {
    text += " | ";
    text += key;
    text += ' ';
    text += significant(value);
    ++shown;
  };
  for (const auto key : preferred_keys) {
    if (shown == max_shown) break;
    if (const auto value = metrics.get(key)) show(key, *value);
  }
  if (shown > 0) return text;
  for (const auto& [key, value] : metrics.values) {
    if (shown == max_shown - 1) break;
    if (!is_timing(key)) show(key, value);
  }
  return text;
}

}  // namespace progress_text
}  // namespace

ProgressLine::ProgressLine(std::int64_t total_steps, std::ostream& out, bool in_place)
    : total_steps_(total_steps), out_(&out), in_place_(in_place), last_update_(std::chrono::steady_clock::now()) {}

std::string ProgressLine::format(const StepMetrics& metrics, double seconds, std::int64_t steps_timed) const {
  const std::int64_t done = metrics.step + 1;
  std::string text = "step " + std::to_string(done);
  if (total_steps_ > 0) {
    text += "/" + std::to_string(total_steps_) + " (" + std::to_string(done * 100 / total_steps_) + "%)";
  }
  if (steps_timed > 0 && seconds > 0.0) {
    const double steps_per_second = static_cast<double>(steps_timed) / seconds;
    text += " | " + progress_text::rate_text(steps_per_second);
    if (total_steps_ > 0 && done < total_steps_) {
      text += " | ETA " + progress_text::duration(static_cast<double>(total_steps_ - done) / steps_per_second);
    }
  }
  return text + progress_text::shown_metrics(metrics);
}

void ProgressLine::update(const StepMetrics& metrics) {
  const auto now = std::chrono::steady_clock::now();
  const auto step_time = metrics.get("time/step");
  seconds_ +=
      step_time && std::isfinite(*step_time) ? *step_time : std::chrono::duration<double>(now - last_update_).count();
  last_update_ = now;
  ++steps_timed_;
  const auto text = format(metrics, seconds_, steps_timed_);
  if (!in_place_) {
    *out_ << text << '\n' << std::flush;
    return;
  }
  // Spaces over what is left of a longer previous line: no terminal escape codes needed.
  const auto padding = last_width_ > text.size() ? last_width_ - text.size() : 0;
  *out_ << '\r' << text << std::string(padding, ' ') << std::flush;
  last_width_ = text.size();
  drawn_ = true;
}

void ProgressLine::finish() {
  if (in_place_ && drawn_) *out_ << '\n' << std::flush;
  drawn_ = false;
  last_width_ = 0;
}

}  // namespace tinker::train
