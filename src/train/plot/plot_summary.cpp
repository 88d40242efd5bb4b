// render_plot_summary: the terminal view of a plot, a sparkline per metric and run with its first,
// last, min and max values, for a glance at a run without opening the SVG.
#include "train/plot/plot_format.hpp"

#include <tinker/error.hpp>
#include <tinker/train/plot.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace tinker::train {
// Named, so that these helpers cannot clash with another file's in a unity batch.
namespace plot_summary_impl {
namespace {

// The eight block heights, lowest first (UTF-8).
constexpr std::array<const char*, 8> spark_levels = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};

// The values of at most `width` buckets of consecutive points: each the mean of its finite values,
// NaN when it has none (shown as a space).
std::vector<double> bucket_means(const PlotSeries& series, std::size_t width) {
  const std::size_t count = series.points.size();
  const std::size_t buckets = std::min(count, width);
  std::vector<double> means;
  for (std::size_t b = 0; b < buckets; ++b) {
    double sum = 0;
    std::size_t finite = 0;
    for (std::size_t i = b * count / buckets; i < (b + 1) * count / buckets; ++i) {
      const double value = series.points[i].value;
      if (!std::isfinite(value)) continue;
      sum += value;
      ++finite;
    }
    means.push_back(finite == 0 ? std::numeric_limits<double>::quiet_NaN() : sum / static_cast<double>(finite));
  }
  return means;
}

// Returns the sparkline and its length in characters.
std::pair<std::string, std::size_t> sparkline(const PlotSeries& series, std::size_t width) {
  const std::vector<double> means = bucket_means(series, width);
  double low = std::numeric_limits<double>::infinity();
  double high = -low;
  for (const double v : means) {
    if (!std::isfinite(v)) continue;
    low = std::min(low, v);
    high = std::max(high, v);
  }
  std::string line;
  for (const double v : means) {
    if (!std::isfinite(v)) {
      line += ' ';
    } else if (high - low <= std::abs(high) * 1e-12) {
      line += spark_levels[3];  // a flat series sits in the middle
    } else {
      line += spark_levels[static_cast<std::size_t>(std::lround((v - low) / (high - low) * 7))];
    }
  }
  return {line, means.size()};
}

// Characters, not bytes, so UTF-8 labels still line up.
std::size_t display_width(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string padded(std::string text, std::size_t width) {
  const std::size_t shown = display_width(text);
  if (shown < width) text.append(width - shown, ' ');
  return text;
}

std::string statistics(const PlotSeries& series) {
  const auto number = [](std::optional<double> v) { return plot_detail::format_number(*v, 4); };
  return "first " + number(series.first()) + "  last " + number(series.last()) + "  min " + number(series.min()) +
         "  max " + number(series.max()) + "  steps " + std::to_string(series.points.front().step) + "-" +
         std::to_string(series.points.back().step);
}

void write_metric(std::string& text, const std::vector<PlotRun>& runs, const std::string& metric,
                  std::size_t label_width, std::size_t spark_width) {
  text += metric + "\n";
  std::vector<PlotSeries> all;
  std::size_t line_width = 0;
  for (const auto& run : runs) {
    all.push_back(plot_series(run, metric));
    line_width = std::max(line_width, std::min(all.back().points.size(), spark_width));
  }
  for (const auto& series : all) {
    text += "  " + padded(series.run, label_width) + "  ";
    if (series.points.empty()) {
      text += "(not logged)\n";
    } else if (!series.min()) {
      text += padded(sparkline(series, spark_width).first, line_width) + "  (no finite values)\n";
    } else {
      text += padded(sparkline(series, spark_width).first, line_width) + "  " + statistics(series) + "\n";
    }
  }
}

std::string summary_text(const std::vector<PlotRun>& runs, const PlotOptions& options) {
  if (runs.empty()) throw error(errc::invalid_argument, "render_plot_summary: no runs to summarize");
  if (options.sparkline_width < 1)
    throw error(errc::invalid_argument, "PlotOptions::sparkline_width must be >= 1, got 0");
  const std::vector<std::string> metrics = choose_plot_metrics(runs, options);
  std::size_t label_width = 0;
  for (const auto& run : runs) label_width = std::max(label_width, display_width(run.label));
  std::string text;
  for (const auto& metric : metrics) write_metric(text, runs, metric, label_width, options.sparkline_width);
  if (metrics.empty()) text += "no metrics to plot\n";
  if (options.metrics.empty()) {
    // Say what the default choice left out, so nobody wonders where a metric went.
    PlotOptions everything = options;
    everything.max_default_metrics = std::numeric_limits<std::size_t>::max();
    const std::vector<std::string> all = choose_plot_metrics(runs, everything);
    if (all.size() > metrics.size()) {
      std::string left_out;
      for (std::size_t i = metrics.size(); i < all.size(); ++i) left_out += (left_out.empty() ? "" : ", ") + all[i];
      text += std::to_string(all.size() - metrics.size()) + " more metrics not shown: " + left_out + "\n";
    }
  }
  return text;
}

}  // namespace
}  // namespace plot_summary_impl

std::string render_plot_summary(const std::vector<PlotRun>& runs, const PlotOptions& options) {
  return plot_summary_impl::summary_text(runs, options);
}

}  // namespace tinker::train
