/// @file
/// Plots of training runs (`doc/training-loops.md#plots`): an SVG with one panel per metric over the
/// steps of one or more runs' `metrics.jsonl` (several runs overlaid in distinct colours), and a
/// terminal summary with a Unicode sparkline per metric and run. `tinker plot RUN_DIR...` is the
/// command line for both.
///
/// Output is deterministic: the same metrics and options give the same bytes.
#pragma once

#include <tinker/train/run_dir.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tinker::train {

/// One run to plot: its label in the legend and its `metrics.jsonl` lines.
class PlotRun {
 public:
  /// An unlabelled run without metrics.
  PlotRun() = default;
  /// The run `label_` with `metrics_`.
  PlotRun(std::string label_, std::vector<StepMetrics> metrics_)
      : label(std::move(label_)), metrics(std::move(metrics_)) {}

  std::string label;                 ///< shown in the legend and the summary
  std::vector<StepMetrics> metrics;  ///< the run's lines, in file order
};

/// What to plot and how large.
class PlotOptions {
 public:
  /// Defaults: every curve-like metric (see choose_plot_metrics), 960 pixels wide.
  PlotOptions() = default;

  /// The metric keys to plot, in this order. A key may hold `*` (any characters, `/` included):
  /// `env/*` picks every key under `env/`. Empty: chosen as choose_plot_metrics says.
  std::vector<std::string> metrics;
  int width = 960;                       ///< SVG width in pixels (at least 320)
  int panel_height = 240;                ///< height of one panel in pixels (at least 120)
  std::size_t max_default_metrics = 12;  ///< with `metrics` empty, at most this many panels
  std::size_t sparkline_width = 40;      ///< characters of a sparkline at most (at least 1)
  std::string title;                     ///< a heading above the panels; empty: none
};

/// The values of one metric in one run, by step, as plotted.
class PlotSeries {
 public:
  /// One point: a step and its value (NaN or infinite: a gap in the line).
  class Point {
   public:
    std::int64_t step = 0;  ///< the `step` of the line the value comes from
    double value = 0;       ///< the value; not finite: the line breaks here
    /// Equal when step and value are equal (NaN never is).
    friend bool operator==(const Point&, const Point&) = default;
  };

  std::string run;            ///< the run's label
  std::string metric;         ///< the metric key
  std::vector<Point> points;  ///< sorted by step, one per step (a repeated step keeps its last value)

  /// The finite values' minimum, maximum, first and last, when there is one.
  std::optional<double> min() const;
  /// See min().
  std::optional<double> max() const;
  /// See min().
  std::optional<double> first() const;
  /// See min().
  std::optional<double> last() const;
};

/// Loads `run_dir`'s `metrics.jsonl`, labelled with the directory's name. Throws tinker::error
/// (invalid_argument) naming the directory when it does not exist, has no `metrics.jsonl` or the
/// file cannot be read or parsed. Never creates anything.
PlotRun load_plot_run(const std::filesystem::path& run_dir);

/// Loads several run directories (load_plot_run each); runs whose directory names repeat are
/// labelled with their paths as given instead, so every legend entry differs.
std::vector<PlotRun> load_plot_runs(const std::vector<std::filesystem::path>& run_dirs);

/// The metric keys to plot. With `options.metrics` set: each of them (a `*` pattern expanded to the
/// matching keys in first-seen order); a key or pattern no run has is a tinker::error
/// (invalid_argument) naming it and listing the keys there are. Otherwise every key of any run
/// except bookkeeping (`time/...`, `progress/...`): keys holding `loss` or `nll` first, then those
/// holding `reward`, then learning rates (`lr`, `.../lr`, `learning_rate`), then the rest, each
/// group in first-seen order, at most `options.max_default_metrics` of them.
std::vector<std::string> choose_plot_metrics(const std::vector<PlotRun>& runs, const PlotOptions& options);

/// The series of `metric` in `run`: the lines that have the key (a line without it is no point,
/// so metrics logged every N steps draw one line through their points).
PlotSeries plot_series(const PlotRun& run, const std::string& metric);

/// The SVG document: a legend of the runs, then one panel per chosen metric with step on x, ticks,
/// axis labels, and one `<path class="series">` per run that has the metric (NaN values break the
/// line; a lone point is drawn as a dot). Throws as choose_plot_metrics does, and tinker::error
/// (invalid_argument) for no runs or options out of range.
std::string render_plot_svg(const std::vector<PlotRun>& runs, const PlotOptions& options = {});

/// The terminal summary: per chosen metric, one line per run with a sparkline (▁▂▃▄▅▆▇█, scaled to
/// that run's range; a space where every value is NaN) and its first, last, min and max values.
/// UTF-8, ending in a newline. Throws as render_plot_svg does.
std::string render_plot_summary(const std::vector<PlotRun>& runs, const PlotOptions& options = {});

}  // namespace tinker::train
