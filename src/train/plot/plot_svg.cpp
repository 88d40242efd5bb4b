// render_plot_svg: the SVG of one or more runs, one panel per metric. Hand-written SVG (no
// library): a legend, then a grid of panels, each with its frame, grid lines, ticks, axis labels
// and one <path class="series"> per run. Every number goes through std::to_chars, so the bytes
// depend on the input only.
#include "train/plot/plot_format.hpp"

#include <tinker/error.hpp>
#include <tinker/train/plot.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>

namespace tinker::train {
// Named, so that these helpers cannot clash with another file's in a unity batch.
namespace plot_svg_impl {
namespace {

using plot_detail::AxisScale;
using plot_detail::xml_escape;

// Colours that stay apart on white (and, for the first ones, for colour-blind readers); past
// them the colours repeat with a dash pattern.
constexpr std::array<const char*, 10> series_colours = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                                        "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};
constexpr std::array<const char*, 3> series_dashes = {"", "7 4", "2 3"};

constexpr int svg_margin = 16;  // around everything
constexpr int panel_gap = 20;   // between panels
constexpr int legend_row_height = 20;
constexpr int plot_left_inset = 76;  // room for the y tick labels and the rotated y label
constexpr int plot_right_inset = 14;
constexpr int plot_top_inset = 30;      // the panel title
constexpr int plot_bottom_inset = 44;   // x tick labels and the "step" label
constexpr double char_width = 6.8;      // average glyph width of the 12px sans-serif, for layout
constexpr std::size_t dots_up_to = 30;  // series with at most this many points get a dot per point

std::string coordinate(double value) {
  std::array<char, 32> buffer{};
  const double rounded = std::round(value * 10) / 10;
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), rounded == 0 ? 0.0 : rounded,
                                    std::chars_format::fixed, 1);
  return std::string(buffer.data(), result.ptr);
}

std::string colour_of(std::size_t run) {
  return series_colours[run % series_colours.size()];
}
std::string dash_of(std::size_t run) {
  return series_dashes[(run / series_colours.size()) % series_dashes.size()];
}

class Rect {
 public:
  double x = 0;
  double y = 0;
  double width = 0;
  double height = 0;
};

// Maps steps and values into a panel's plot area.
class PanelMapping {
 public:
  Rect area;
  AxisScale x_scale;
  AxisScale y_scale;

  double x(double step) const { return area.x + (step - x_scale.low) / (x_scale.high - x_scale.low) * area.width; }
  double y(double value) const {
    return area.y + area.height - (value - y_scale.low) / (y_scale.high - y_scale.low) * area.height;
  }
};

class SvgLayout {
 public:
  int width = 0;
  int columns = 1;
  double panel_width = 0;
  int panel_height = 0;
  double legend_top = 0;
  int legend_rows = 0;
  double panels_top = 0;
  int height = 0;
};

// Legend entries flow left to right and wrap; returns the number of rows, filling `positions`.
int place_legend(const std::vector<PlotRun>& runs, int width, std::vector<std::pair<double, int>>& positions) {
  double x = svg_margin;
  int row = 0;
  for (const auto& run : runs) {
    const double entry_width = 34 + char_width * static_cast<double>(run.label.size()) + 18;
    if (x + entry_width > width - svg_margin && x > svg_margin) {
      ++row;
      x = svg_margin;
    }
    positions.emplace_back(x, row);
    x += entry_width;
  }
  return row + 1;
}

SvgLayout layout_for(const std::vector<PlotRun>& runs, std::size_t panels, const PlotOptions& options,
                     std::vector<std::pair<double, int>>& legend_positions) {
  SvgLayout layout;
  layout.width = options.width;
  layout.columns = panels <= 3 ? 1 : 2;  // a few panels read best full width, more side by side
  layout.panel_width = (options.width - 2.0 * svg_margin - panel_gap * (layout.columns - 1)) / layout.columns;
  layout.panel_height = options.panel_height;
  layout.legend_top = svg_margin + (options.title.empty() ? 0 : 28);
  layout.legend_rows = place_legend(runs, options.width, legend_positions);
  layout.panels_top = layout.legend_top + layout.legend_rows * legend_row_height + 8;
  const auto rows = static_cast<int>((std::max<std::size_t>(panels, 1) + layout.columns - 1) / layout.columns);
  layout.height = static_cast<int>(
      std::ceil(layout.panels_top + rows * (options.panel_height + panel_gap) - panel_gap + svg_margin));
  return layout;
}

void write_legend(std::string& svg, const std::vector<PlotRun>& runs, const SvgLayout& layout,
                  const std::vector<std::pair<double, int>>& positions) {
  svg += "<g class=\"legend\">\n";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const double x = positions[i].first;
    const double y = layout.legend_top + positions[i].second * legend_row_height + 10;
    const std::string dash = dash_of(i);
    svg += "<g class=\"legend-entry\"><line x1=\"" + coordinate(x) + "\" y1=\"" + coordinate(y) + "\" x2=\"" +
           coordinate(x + 26) + "\" y2=\"" + coordinate(y) + "\" stroke=\"" + colour_of(i) + "\" stroke-width=\"3\"" +
           (dash.empty() ? "" : " stroke-dasharray=\"" + dash + "\"") + "/><text x=\"" + coordinate(x + 32) +
           "\" y=\"" + coordinate(y + 4) + "\">" + xml_escape(runs[i].label) + "</text></g>\n";
  }
  svg += "</g>\n";
}

void write_axes(std::string& svg, const PanelMapping& map, const std::string& metric) {
  const Rect& a = map.area;
  const std::string left = coordinate(a.x);
  const std::string right = coordinate(a.x + a.width);
  const std::string top = coordinate(a.y);
  const std::string bottom = coordinate(a.y + a.height);
  for (const double tick : map.y_scale.ticks) {
    const std::string y = coordinate(map.y(tick));
    svg += "<line class=\"grid\" x1=\"" + left + "\" y1=\"" + y + "\" x2=\"" + right + "\" y2=\"" + y +
           "\" stroke=\"#e6e6e6\"/>\n<text class=\"tick-label\" x=\"" + coordinate(a.x - 6) + "\" y=\"" +
           coordinate(map.y(tick) + 4) + "\" text-anchor=\"end\">" + xml_escape(map.y_scale.label(tick)) + "</text>\n";
  }
  for (const double tick : map.x_scale.ticks) {
    const std::string x = coordinate(map.x(tick));
    svg += "<line class=\"grid\" x1=\"" + x + "\" y1=\"" + top + "\" x2=\"" + x + "\" y2=\"" + bottom +
           "\" stroke=\"#e6e6e6\"/>\n<text class=\"tick-label\" x=\"" + x + "\" y=\"" +
           coordinate(a.y + a.height + 16) + "\" text-anchor=\"middle\">" + xml_escape(map.x_scale.label(tick)) +
           "</text>\n";
  }
  svg += "<rect class=\"frame\" x=\"" + left + "\" y=\"" + top + "\" width=\"" + coordinate(a.width) + "\" height=\"" +
         coordinate(a.height) + "\" fill=\"none\" stroke=\"#888888\"/>\n";
  svg += "<text class=\"axis-label\" x=\"" + coordinate(a.x + a.width / 2) + "\" y=\"" +
         coordinate(a.y + a.height + 34) + "\" text-anchor=\"middle\" fill=\"#444444\">step</text>\n";
  const std::string label_x = coordinate(a.x - plot_left_inset + 14);
  const std::string label_y = coordinate(a.y + a.height / 2);
  svg += "<text class=\"axis-label\" x=\"" + label_x + "\" y=\"" + label_y + "\" transform=\"rotate(-90 " + label_x +
         " " + label_y + ")\" text-anchor=\"middle\" fill=\"#444444\">" + xml_escape(metric) + "</text>\n";
}

// The path data of a series: a new subpath after every non-finite value; a lone point becomes a
// zero-length subpath (a dot with round caps) and also gets a circle, which every renderer shows.
void write_series(std::string& svg, const PlotSeries& series, const PanelMapping& map, std::size_t run_index) {
  std::string data;
  std::string dots;
  std::size_t finite_points = 0;
  for (const auto& point : series.points) finite_points += std::isfinite(point.value) ? 1 : 0;
  const auto& points = series.points;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!std::isfinite(points[i].value)) continue;
    const bool starts = i == 0 || !std::isfinite(points[i - 1].value);
    const bool ends = i + 1 == points.size() || !std::isfinite(points[i + 1].value);
    const std::string x = coordinate(map.x(static_cast<double>(points[i].step)));
    const std::string y = coordinate(map.y(points[i].value));
    data += (data.empty() ? "" : " ") + std::string(starts ? "M" : "L") + x + " " + y + (starts && ends ? " h0" : "");
    if ((starts && ends) || finite_points <= dots_up_to) {
      dots += "<circle class=\"point\" cx=\"" + x + "\" cy=\"" + y + "\" r=\"2.5\" fill=\"" + colour_of(run_index) +
              "\"/>\n";
    }
  }
  const std::string dash = dash_of(run_index);
  svg += "<path class=\"series\" data-run=\"" + xml_escape(series.run) + "\" data-metric=\"" +
         xml_escape(series.metric) + "\" fill=\"none\" stroke=\"" + colour_of(run_index) +
         "\" stroke-width=\"1.8\" stroke-linejoin=\"round\" " + "stroke-linecap=\"round\"" +
         (dash.empty() ? "" : " stroke-dasharray=\"" + dash + "\"") + " d=\"" + data + "\"/>\n" + dots;
}

AxisScale value_scale(const std::vector<PlotSeries>& all, double plot_height) {
  double low = std::numeric_limits<double>::infinity();
  double high = -low;
  for (const auto& series : all) {
    if (const auto m = series.min()) low = std::min(low, *m);
    if (const auto m = series.max()) high = std::max(high, *m);
  }
  return plot_detail::nice_scale(low, high, std::max(2, static_cast<int>(plot_height / 40)), false);
}

void write_panel(std::string& svg, const std::vector<PlotRun>& runs, const std::string& metric, const Rect& panel,
                 const AxisScale& x_scale) {
  std::vector<PlotSeries> all;
  for (const auto& run : runs) all.push_back(plot_series(run, metric));
  PanelMapping map;
  map.area = Rect{panel.x + plot_left_inset, panel.y + plot_top_inset, panel.width - plot_left_inset - plot_right_inset,
                  panel.height - plot_top_inset - plot_bottom_inset};
  map.x_scale = x_scale;
  map.y_scale = value_scale(all, map.area.height);
  svg += "<g class=\"panel\" data-metric=\"" + xml_escape(metric) + "\">\n";
  svg += "<text class=\"panel-title\" x=\"" + coordinate(map.area.x) + "\" y=\"" + coordinate(panel.y + 18) +
         "\" font-size=\"14\" font-weight=\"bold\">" + xml_escape(metric) + "</text>\n";
  write_axes(svg, map, metric);
  bool any_value = false;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].points.empty()) continue;  // this run does not log the metric
    any_value = any_value || all[i].min().has_value();
    write_series(svg, all[i], map, i);
  }
  if (!any_value) {
    svg += "<text class=\"no-data\" x=\"" + coordinate(map.area.x + map.area.width / 2) + "\" y=\"" +
           coordinate(map.area.y + map.area.height / 2) +
           "\" text-anchor=\"middle\" fill=\"#888888\">no values</text>\n";
  }
  svg += "</g>\n";
}

// One x axis for every panel, so a step lines up across them.
AxisScale step_scale(const std::vector<PlotRun>& runs, const std::vector<std::string>& metrics, double plot_width) {
  double low = std::numeric_limits<double>::infinity();
  double high = -low;
  for (const auto& run : runs) {
    for (const auto& line : run.metrics) {
      const bool shown = std::any_of(metrics.begin(), metrics.end(), [&](const std::string& m) { return line.get(m); });
      if (!shown) continue;
      low = std::min(low, static_cast<double>(line.step));
      high = std::max(high, static_cast<double>(line.step));
    }
  }
  return plot_detail::nice_scale(low, high, std::max(2, static_cast<int>(plot_width / 80)), true);
}

void check_options(const std::vector<PlotRun>& runs, const PlotOptions& options) {
  if (runs.empty()) throw error(errc::invalid_argument, "render_plot_svg: no runs to plot");
  if (options.width < 320) {
    throw error(errc::invalid_argument, "PlotOptions::width must be >= 320, got " + std::to_string(options.width));
  }
  if (options.panel_height < 120) {
    throw error(errc::invalid_argument,
                "PlotOptions::panel_height must be >= 120, got " + std::to_string(options.panel_height));
  }
}

// The XML declaration, the <svg> element, a <title> for screen readers, a white page, the heading.
std::string svg_header(const std::vector<PlotRun>& runs, const SvgLayout& layout, const PlotOptions& options) {
  std::string svg = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(layout.width) + "\" height=\"" +
         std::to_string(layout.height) + "\" viewBox=\"0 0 " + std::to_string(layout.width) + " " +
         std::to_string(layout.height) +
         "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"12\">\n";
  std::string run_list;
  for (const auto& run : runs) run_list += (run_list.empty() ? "" : ", ") + run.label;
  svg += "<title>" + xml_escape(options.title.empty() ? "Training curves: " + run_list : options.title) + "</title>\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  if (!options.title.empty()) {
    svg += "<text class=\"title\" x=\"" + std::to_string(svg_margin) + "\" y=\"" + std::to_string(svg_margin + 16) +
           "\" font-size=\"18\" font-weight=\"bold\">" + xml_escape(options.title) + "</text>\n";
  }
  return svg;
}

std::string svg_document(const std::vector<PlotRun>& runs, const PlotOptions& options) {
  check_options(runs, options);
  const std::vector<std::string> metrics = choose_plot_metrics(runs, options);
  std::vector<std::pair<double, int>> legend_positions;
  const SvgLayout layout = layout_for(runs, metrics.size(), options, legend_positions);
  const double plot_width = layout.panel_width - plot_left_inset - plot_right_inset;
  const AxisScale x_scale = step_scale(runs, metrics, plot_width);

  std::string svg = svg_header(runs, layout, options);
  write_legend(svg, runs, layout, legend_positions);
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    const auto column = static_cast<double>(i % static_cast<std::size_t>(layout.columns));
    const auto row = static_cast<double>(i / static_cast<std::size_t>(layout.columns));
    const Rect panel{svg_margin + column * (layout.panel_width + panel_gap),
                     layout.panels_top + row * (layout.panel_height + panel_gap), layout.panel_width,
                     static_cast<double>(layout.panel_height)};
    write_panel(svg, runs, metrics[i], panel, x_scale);
  }
  if (metrics.empty()) {
    svg += "<text class=\"no-data\" x=\"" + std::to_string(layout.width / 2) + "\" y=\"" +
           coordinate(layout.panels_top + layout.panel_height / 2.0) +
           "\" text-anchor=\"middle\" fill=\"#888888\">no metrics to plot</text>\n";
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace
}  // namespace plot_svg_impl

std::string render_plot_svg(const std::vector<PlotRun>& runs, const PlotOptions& options) {
  return plot_svg_impl::svg_document(runs, options);
}

}  // namespace tinker::train
