// Locale-independent numbers (std::to_chars), round-number axis ticks, XML escaping and `*`
// patterns for the plot's SVG and summary.
#include "train/plot/plot_format.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>

namespace tinker::train::plot_detail {
namespace {

std::string chars_of(double value, std::chars_format format, int precision) {
  std::array<char, 64> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value, format, precision);
  return std::string(buffer.data(), result.ptr);
}

// Floor of log10 for a positive value, robust to 0.1 coming out as -0.99999...
int decade_of(double positive) {
  return static_cast<int>(std::floor(std::log10(positive) + 1e-9));
}

}  // namespace

std::string format_number(double value, int significant) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (value == 0) return "0";  // also turns -0 into 0
  return chars_of(value, std::chars_format::general, std::max(1, significant));
}

std::string AxisScale::label(double tick) const {
  if (tick == 0 || std::abs(tick) < step * 1e-9) return "0";
  const double magnitude = std::max(std::abs(low), std::abs(high));
  if (magnitude >= 1e5 || step < 1e-3) {
    // Scientific with the fewest mantissa digits that still say the tick exactly: 2e-05, 1.2e-04.
    for (int decimals = 0; decimals < 6; ++decimals) {
      std::string text = chars_of(tick, std::chars_format::scientific, decimals);
      double read_back = 0;
      std::from_chars(text.data(), text.data() + text.size(), read_back);
      if (std::abs(read_back - tick) <= step * 1e-6) return text;
    }
    return chars_of(tick, std::chars_format::scientific, 6);
  }
  const int decimals = std::max(0, -decade_of(step));
  return chars_of(tick, std::chars_format::fixed, decimals);
}

AxisScale nice_scale(double data_low, double data_high, int target_ticks, bool integer_steps) {
  double low = data_low;
  double high = data_high;
  if (!std::isfinite(low) || !std::isfinite(high) || low > high) {
    low = 0;
    high = 1;
  }
  if (high - low <= std::abs(high) * 1e-12) {
    // A flat series still gets an axis: widen it around the value.
    const double delta = integer_steps ? 1.0 : (low == 0 ? 1.0 : std::abs(low) * 0.1);
    low = (integer_steps && low >= 0) ? std::max(0.0, low - delta) : low - delta;
    high += delta;
  }
  const double raw_step = (high - low) / std::max(1, target_ticks);
  const double power = std::pow(10.0, decade_of(raw_step));
  const double normalized = raw_step / power;
  double step = (normalized < 1.5 ? 1.0 : normalized < 3 ? 2.0 : normalized < 7 ? 5.0 : 10.0) * power;
  if (integer_steps) step = std::max(1.0, std::round(step));
  AxisScale scale;
  scale.step = step;
  scale.low = std::floor(low / step + 1e-9) * step;
  scale.high = std::ceil(high / step - 1e-9) * step;
  const auto count = static_cast<long>(std::llround((scale.high - scale.low) / step));
  for (long i = 0; i <= count; ++i) {
    double tick = scale.low + static_cast<double>(i) * step;  // no accumulated error
    if (std::abs(tick) < step * 1e-9) tick = 0;
    scale.ticks.push_back(tick);
  }
  return scale;
}

std::string xml_escape(std::string_view text) {
  std::string escaped;
  escaped.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': escaped += "&amp;"; break;
      case '<': escaped += "&lt;"; break;
      case '>': escaped += "&gt;"; break;
      case '"': escaped += "&quot;"; break;
      case '\'': escaped += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') {
          escaped += "\xEF\xBF\xBD";  // U+FFFD: XML 1.0 has no way to write these
        } else {
          escaped += c;
        }
    }
  }
  return escaped;
}

bool matches_pattern(std::string_view pattern, std::string_view key) {
  // Greedy wildcard matching with backtracking to the last `*`.
  std::size_t p = 0;
  std::size_t k = 0;
  std::size_t star = std::string_view::npos;
  std::size_t star_key = 0;
  while (k < key.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      star_key = k;
    } else if (p < pattern.size() && pattern[p] == key[k]) {
      ++p;
      ++k;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      k = ++star_key;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace tinker::train::plot_detail
