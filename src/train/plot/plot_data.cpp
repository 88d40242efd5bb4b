// What a plot shows: the runs loaded from their directories, the metrics chosen, and each metric's
// series per run.
#include "train/plot/plot_format.hpp"

#include <tinker/error.hpp>
#include <tinker/train/plot.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <system_error>

namespace tinker::train {
// Named, so that these helpers cannot clash with another file's in a unity batch.
namespace plot_data_impl {
namespace {

std::optional<double> finite_extreme(const PlotSeries& series, bool want_max) {
  std::optional<double> best;
  for (const auto& point : series.points) {
    if (!std::isfinite(point.value)) continue;
    if (!best || (want_max ? point.value > *best : point.value < *best)) best = point.value;
  }
  return best;
}

// The directory's own name, also for "runs/a/" and ".".
std::string directory_label(const std::filesystem::path& run_dir) {
  std::error_code ignored;
  const std::filesystem::path absolute = std::filesystem::weakly_canonical(std::filesystem::absolute(run_dir), ignored);
  std::string name = absolute.filename().string();
  return name.empty() ? run_dir.generic_string() : name;
}

// Every key of every run, in first-seen order (runs in order, lines in order, keys in order).
std::vector<std::string> keys_in_order(const std::vector<PlotRun>& runs) {
  std::vector<std::string> keys;
  std::set<std::string, std::less<>> seen;
  for (const auto& run : runs) {
    for (const auto& line : run.metrics) {
      for (const auto& entry : line.values) {
        if (seen.insert(entry.first).second) keys.push_back(entry.first);
      }
    }
  }
  return keys;
}

bool is_bookkeeping(std::string_view key) {
  return key.starts_with("time/") || key.starts_with("progress/");
}

// The default panel order: what a person looks at first comes first.
int metric_rank(std::string_view key) {
  if (key.find("loss") != std::string_view::npos || key.find("nll") != std::string_view::npos) return 0;
  if (key.find("reward") != std::string_view::npos) return 1;
  if (key == "lr" || key.ends_with("/lr") || key.find("learning_rate") != std::string_view::npos) return 2;
  return 3;
}

std::string joined_keys(const std::vector<std::string>& keys) {
  std::string text;
  for (const auto& key : keys) text += (text.empty() ? "" : ", ") + key;
  return text.empty() ? "none" : text;
}

std::vector<std::string> chosen_by_user(const std::vector<std::string>& requested,
                                        const std::vector<std::string>& keys) {
  std::vector<std::string> chosen;
  const auto add = [&chosen](const std::string& key) {
    if (std::find(chosen.begin(), chosen.end(), key) == chosen.end()) chosen.push_back(key);
  };
  for (const auto& wanted : requested) {
    bool found = false;
    for (const auto& key : keys) {
      if (wanted.find('*') != std::string::npos ? plot_detail::matches_pattern(wanted, key) : key == wanted) {
        add(key);
        found = true;
      }
    }
    if (!found) {
      throw error(errc::invalid_argument,
                  "PlotOptions::metrics: no run has a metric '" + wanted + "' (metrics: " + joined_keys(keys) + ")");
    }
  }
  return chosen;
}

}  // namespace
}  // namespace plot_data_impl

std::optional<double> PlotSeries::min() const {
  return plot_data_impl::finite_extreme(*this, false);
}
std::optional<double> PlotSeries::max() const {
  return plot_data_impl::finite_extreme(*this, true);
}

std::optional<double> PlotSeries::first() const {
  const auto found = std::find_if(points.begin(), points.end(), [](const Point& p) { return std::isfinite(p.value); });
  if (found == points.end()) return std::nullopt;
  return found->value;
}

std::optional<double> PlotSeries::last() const {
  const auto found =
      std::find_if(points.rbegin(), points.rend(), [](const Point& p) { return std::isfinite(p.value); });
  if (found == points.rend()) return std::nullopt;
  return found->value;
}

PlotRun load_plot_run(const std::filesystem::path& run_dir) {
  const std::string shown = run_dir.generic_string();
  std::error_code ec;
  if (!std::filesystem::exists(run_dir, ec)) {
    throw error(errc::invalid_argument, "run directory '" + shown + "' does not exist");
  }
  if (!std::filesystem::is_directory(run_dir, ec)) {
    throw error(errc::invalid_argument, "'" + shown + "' is not a run directory (not a directory)");
  }
  const std::filesystem::path metrics_file = run_dir / "metrics.jsonl";
  if (!std::filesystem::is_regular_file(metrics_file, ec)) {
    throw error(errc::invalid_argument, "run directory '" + shown + "' has no metrics.jsonl");
  }
  if (!std::ifstream(metrics_file).is_open()) {
    throw error(errc::invalid_argument, "run directory '" + shown + "': cannot read metrics.jsonl");
  }
  try {
    // The checks above keep RunDirectory from creating anything: the directory exists.
    return PlotRun(plot_data_impl::directory_label(run_dir), RunDirectory(run_dir).read_metrics());
  } catch (const error& e) {
    throw error(errc::invalid_argument, "run directory '" + shown + "': " + e.diag().message);
  }
}

std::vector<PlotRun> load_plot_runs(const std::vector<std::filesystem::path>& run_dirs) {
  std::vector<PlotRun> runs;
  runs.reserve(run_dirs.size());
  std::vector<std::string> names;
  for (const auto& dir : run_dirs) {
    runs.push_back(load_plot_run(dir));
    names.push_back(runs.back().label);
  }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (std::count(names.begin(), names.end(), names[i]) > 1) runs[i].label = run_dirs[i].generic_string();
  }
  return runs;
}

std::vector<std::string> choose_plot_metrics(const std::vector<PlotRun>& runs, const PlotOptions& options) {
  const std::vector<std::string> keys = plot_data_impl::keys_in_order(runs);
  if (!options.metrics.empty()) return plot_data_impl::chosen_by_user(options.metrics, keys);
  std::vector<std::string> chosen;
  std::copy_if(keys.begin(), keys.end(), std::back_inserter(chosen),
               [](const std::string& k) { return !plot_data_impl::is_bookkeeping(k); });
  std::stable_sort(chosen.begin(), chosen.end(), [](const std::string& a, const std::string& b) {
    return plot_data_impl::metric_rank(a) < plot_data_impl::metric_rank(b);
  });
  if (chosen.size() > options.max_default_metrics) chosen.resize(options.max_default_metrics);
  return chosen;
}

PlotSeries plot_series(const PlotRun& run, const std::string& metric) {
  PlotSeries series;
  series.run = run.label;
  series.metric = metric;
  for (const auto& line : run.metrics) {
    if (const auto value = line.get(metric)) series.points.push_back({line.step, *value});
  }
  // A run resumed without truncation repeats steps: the later line is the one that counts.
  std::stable_sort(series.points.begin(), series.points.end(),
                   [](const PlotSeries::Point& a, const PlotSeries::Point& b) { return a.step < b.step; });
  std::vector<PlotSeries::Point> unique;
  for (const auto& point : series.points) {
    if (!unique.empty() && unique.back().step == point.step) {
      unique.back() = point;
    } else {
      unique.push_back(point);
    }
  }
  series.points = std::move(unique);
  return series;
}

}  // namespace tinker::train
