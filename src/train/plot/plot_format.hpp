// What the SVG and the terminal summary of a plot share: number formatting that does not depend
// on the locale (so the output is the same bytes everywhere), axis ticks at round numbers, XML
// escaping and the `*` patterns of PlotOptions::metrics.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tinker::train::plot_detail {

/// `value` with at most `significant` significant digits, shortest form ("0.0412", "1.5e-05", "312").
std::string format_number(double value, int significant);

/// An axis from `low` to `high` at round numbers (1, 2 or 5 times a power of ten).
class AxisScale {
 public:
  double low = 0;
  double high = 1;
  double step = 1;
  std::vector<double> ticks;

  /// The label of `tick`, with as many decimals as the step needs and nothing more.
  std::string label(double tick) const;
};

/// A scale covering [data_low, data_high] with about `target_ticks` ticks. A flat range is widened
/// around its value; `integer_steps` keeps the step at 1 or more (the x axis counts steps).
AxisScale nice_scale(double data_low, double data_high, int target_ticks, bool integer_steps);

/// `text` with &, <, >, " and ' escaped, and characters XML 1.0 forbids (control characters other
/// than tab and newline) replaced by U+FFFD.
std::string xml_escape(std::string_view text);

/// True when `key` matches `pattern`, where `*` stands for any run of characters.
bool matches_pattern(std::string_view pattern, std::string_view key);

}  // namespace tinker::train::plot_detail
