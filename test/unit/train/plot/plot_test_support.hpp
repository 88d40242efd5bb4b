// Runs with realistic curves for the plot tests, and the SVG read back through a real XML parser
// (Boost.PropertyTree) as a flat list of elements.
#pragma once

#include <tinker/train/plot.hpp>

#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace tinker::test {

/// A NaN metric value (a diverged step; `null` in metrics.jsonl).
inline constexpr double plot_nan = std::numeric_limits<double>::quiet_NaN();

/// One SVG element: its name, attributes and text.
class SvgElement {
 public:
  std::string name;
  std::map<std::string, std::string> attributes;
  std::string text;

  std::string attribute(const std::string& key) const {
    const auto found = attributes.find(key);
    return found == attributes.end() ? std::string() : found->second;
  }
};

inline void collect_svg_elements(const std::string& name, const boost::property_tree::ptree& node,
                                 std::vector<SvgElement>& out) {
  SvgElement element;
  element.name = name;
  element.text = node.data();
  if (const auto attributes = node.get_child_optional("<xmlattr>")) {
    for (const auto& [key, value] : *attributes) element.attributes[key] = value.data();
  }
  out.push_back(element);
  for (const auto& [child_name, child] : node) {
    if (child_name != "<xmlattr>" && child_name != "<xmlcomment>") collect_svg_elements(child_name, child, out);
  }
}

/// Every element of `svg` in document order; throws when it is not well-formed XML.
inline std::vector<SvgElement> parse_svg(const std::string& svg) {
  std::istringstream in(svg);
  boost::property_tree::ptree tree;
  boost::property_tree::read_xml(in, tree);
  std::vector<SvgElement> elements;
  for (const auto& [name, node] : tree) collect_svg_elements(name, node, elements);
  return elements;
}

/// The elements named `name` whose class is `css_class` (any class when empty).
inline std::vector<SvgElement> svg_elements_of(const std::vector<SvgElement>& all, const std::string& name,
                                               const std::string& css_class = {}) {
  std::vector<SvgElement> found;
  for (const auto& element : all) {
    if (element.name == name && (css_class.empty() || element.attribute("class") == css_class))
      found.push_back(element);
  }
  return found;
}

/// A supervised run of `steps` steps: a falling loss, a warmup-then-linear-decay lr, a timing key,
/// and test/nll every 10 steps.
inline train::PlotRun supervised_plot_run(const std::string& label, int steps, double loss_scale = 1.0) {
  train::PlotRun run;
  run.label = label;
  for (int step = 0; step < steps; ++step) {
    train::StepMetrics line(step);
    line.set("loss", loss_scale * (0.4 + 2.0 * std::exp(-step / 15.0)));
    line.set("lr", step < 5 ? 1e-4 * (step + 1) / 5 : 1e-4 * (steps - step) / (steps - 5));
    line.set("time/step", 0.25);
    if (step % 10 == 0) line.set("test/nll", loss_scale * (0.5 + 2.0 * std::exp(-step / 20.0)));
    run.metrics.push_back(line);
  }
  return run;
}

/// A run with one metric `key` holding `values` at steps 0, 1, 2... (nullopt: the key is absent).
inline train::PlotRun plot_run_of(const std::string& label, const std::string& key,
                                  const std::vector<std::optional<double>>& values) {
  train::PlotRun run;
  run.label = label;
  for (std::size_t i = 0; i < values.size(); ++i) {
    train::StepMetrics line(static_cast<std::int64_t>(i));
    if (values[i]) line.set(key, *values[i]);
    run.metrics.push_back(line);
  }
  return run;
}

/// The numbers of a path's `d` attribute as (x, y) pairs per subpath ("M x y L x y ... [h0]").
inline std::vector<std::vector<std::pair<double, double>>> svg_subpaths(const std::string& d) {
  std::vector<std::vector<std::pair<double, double>>> result;
  std::istringstream in(d);
  std::string word;
  while (in >> word) {
    if (word == "h0") continue;
    const char command = word[0];
    const double x = std::stod(word.substr(1));
    double y = 0;
    in >> y;
    if (command == 'M') result.emplace_back();
    result.back().emplace_back(x, y);
  }
  return result;
}

}  // namespace tinker::test
