/// @file
/// The progress line a training run prints per step (`doc/training-loops.md#run-directory`): steps
/// done of the total, rate, time left and a few of the step's metrics. On a terminal it is one
/// line redrawn in place; anywhere else (a log file, a pipe) one plain line per step.
#pragma once

#include <tinker/train/run_dir.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>

namespace tinker::train {

/// One progress line per step, e.g.
/// `step 12/100 (12%) | 2.50 steps/s | ETA 35s | loss 0.4123 | lr 0.0001`.
///
/// The rate comes from the steps' `time/step` values (what TrainingRun::log_step adds), so the
/// text depends only on the metrics given; a step without `time/step` is timed with the clock.
/// The metrics shown are the first few present of the cookbook's main keys (`loss`,
/// `train_mean_nll`, `env/all/reward/total`, `dpo_loss`, `accuracy`...), or else the step's first
/// values that are not timings.
class ProgressLine {
 public:
  /// A line for a run of `total_steps` steps (0 when unknown: no percentage or ETA), written to
  /// `out`; `in_place` redraws one line with a carriage return (pass `isatty(STDERR_FILENO)` for stderr).
  ProgressLine(std::int64_t total_steps, std::ostream& out, bool in_place);

  /// Prints the line for step `metrics.step` (done: `metrics.step + 1` steps).
  void update(const StepMetrics& metrics);
  /// Ends the line on a terminal (a newline after the last redraw); plain output needs nothing.
  void finish();

  /// The text update() would print for `metrics` after `seconds` of stepping over `steps_timed`
  /// steps (without the carriage return or newline): the format, for tests and other front ends.
  std::string format(const StepMetrics& metrics, double seconds, std::int64_t steps_timed) const;

 private:
  std::int64_t total_steps_;
  std::ostream* out_;
  bool in_place_;
  bool drawn_ = false;
  std::size_t last_width_ = 0;
  double seconds_ = 0.0;
  std::int64_t steps_timed_ = 0;
  std::chrono::steady_clock::time_point last_update_;
};

}  // namespace tinker::train
