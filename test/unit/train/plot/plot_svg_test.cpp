// render_plot_svg read back as XML: one path per series, ticks and axis labels, overlays, escaping,
// gaps, tiny series, and coordinates that land inside their panel the right way up.
#include "unit/train/plot/plot_test_support.hpp"

#include <tinker/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <set>

namespace tinker::test {
namespace {

std::vector<SvgElement> svg_series_paths(const std::vector<SvgElement>& all) {
  return svg_elements_of(all, "path", "series");
}

TEST(PlotSvg, IsXmlWithOnePathPerMetricOfTheRun) {
  const std::string svg = train::render_plot_svg({supervised_plot_run("sft", 60)});
  const auto all = parse_svg(svg);
  ASSERT_EQ(all.front().name, "svg");
  EXPECT_EQ(all.front().attribute("xmlns"), "http://www.w3.org/2000/svg");
  const auto paths = svg_series_paths(all);
  ASSERT_EQ(paths.size(), 3u);  // loss, test/nll, lr; time/step is bookkeeping
  EXPECT_EQ(paths[0].attribute("data-metric"), "loss");
  EXPECT_EQ(paths[1].attribute("data-metric"), "test/nll");
  EXPECT_EQ(paths[2].attribute("data-metric"), "lr");
  for (const auto& path : paths) EXPECT_EQ(path.attribute("data-run"), "sft");
  EXPECT_EQ(svg_elements_of(all, "g", "panel").size(), 3u);
}

TEST(PlotSvg, EveryPanelHasAxisLabelsAndRoundTicks) {
  const auto all = parse_svg(train::render_plot_svg({supervised_plot_run("sft", 60)}));
  std::multiset<std::string> axis_labels;
  for (const auto& label : svg_elements_of(all, "text", "axis-label")) axis_labels.insert(label.text);
  EXPECT_EQ(axis_labels.count("step"), 3u);
  EXPECT_EQ(axis_labels.count("loss"), 1u);
  EXPECT_EQ(axis_labels.count("lr"), 1u);
  EXPECT_EQ(axis_labels.count("test/nll"), 1u);
  std::set<std::string> ticks;
  for (const auto& tick : svg_elements_of(all, "text", "tick-label")) ticks.insert(tick.text);
  EXPECT_TRUE(ticks.count("0"));
  EXPECT_TRUE(ticks.count("60")) << "the step axis ends at a round number covering step 59";
  EXPECT_TRUE(ticks.count("1e-04") || ticks.count("1.0e-04")) << "the lr axis is in scientific notation";
  for (const auto& tick : ticks) EXPECT_EQ(tick.find("nan"), std::string::npos) << tick;
}

TEST(PlotSvg, TwoRunsOverlayInDistinctColoursWithALegend) {
  const auto all =
      parse_svg(train::render_plot_svg({supervised_plot_run("lr-1e-4", 40), supervised_plot_run("lr-3e-4", 30, 0.8)}));
  const auto paths = svg_series_paths(all);
  ASSERT_EQ(paths.size(), 6u);  // 3 metrics x 2 runs
  std::set<std::string> colours;
  for (const auto& path : paths) colours.insert(path.attribute("stroke"));
  EXPECT_EQ(colours.size(), 2u);
  EXPECT_NE(paths[0].attribute("stroke"), paths[1].attribute("stroke"));
  EXPECT_EQ(paths[0].attribute("data-metric"), paths[1].attribute("data-metric")) << "runs overlay in one panel";
  std::vector<std::string> legend;
  for (const auto& text : svg_elements_of(all, "text")) {
    if (text.text == "lr-1e-4" || text.text == "lr-3e-4") legend.push_back(text.text);
  }
  EXPECT_EQ(legend, (std::vector<std::string>{"lr-1e-4", "lr-3e-4"}));
  EXPECT_EQ(svg_elements_of(all, "g", "legend-entry").size(), 2u);
}

TEST(PlotSvg, TextIsEscapedForXml) {
  const std::string label = "a<b>&\"c'\x01";
  const std::string key = "eval/<acc>&'x'";
  const std::string svg = train::render_plot_svg({plot_run_of(label, key, {1.0, 2.0})});
  EXPECT_EQ(svg.find("a<b>"), std::string::npos);
  const auto all = parse_svg(svg);  // throws when the escaping broke the XML
  const auto paths = svg_series_paths(all);
  ASSERT_EQ(paths.size(), 1u);
  EXPECT_EQ(paths[0].attribute("data-run"), "a<b>&\"c'\xEF\xBF\xBD");
  EXPECT_EQ(paths[0].attribute("data-metric"), key);
  EXPECT_EQ(svg_elements_of(all, "text", "panel-title").at(0).text, key);
}

TEST(PlotSvg, NanBreaksTheLineAndALonePointIsADot) {
  const auto all =
      parse_svg(train::render_plot_svg({plot_run_of("r", "reward", {0.1, 0.2, plot_nan, 0.4, plot_nan, 0.5, 0.6})}));
  const auto paths = svg_series_paths(all);
  ASSERT_EQ(paths.size(), 1u);
  const auto parts = svg_subpaths(paths[0].attribute("d"));
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].size(), 2u);
  EXPECT_EQ(parts[1].size(), 1u);
  EXPECT_EQ(parts[2].size(), 2u);
  EXPECT_NE(paths[0].attribute("d").find(" h0"), std::string::npos) << "the lone point is drawn";
}

TEST(PlotSvg, AMissingKeyIsNoPointAndDoesNotBreakTheLine) {
  // test/nll is logged every 10 steps: one line through its points.
  const auto all = parse_svg(train::render_plot_svg({supervised_plot_run("sft", 60)}));
  const auto paths = svg_series_paths(all);
  const auto nll =
      std::find_if(paths.begin(), paths.end(), [](const auto& p) { return p.attribute("data-metric") == "test/nll"; });
  ASSERT_NE(nll, paths.end());
  const auto parts = svg_subpaths(nll->attribute("d"));
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].size(), 6u);
}

TEST(PlotSvg, PointsLandInsideTheFrameAndAFallingLossGoesDown) {
  const auto all = parse_svg(train::render_plot_svg({supervised_plot_run("sft", 50)}));
  const auto frames = svg_elements_of(all, "rect", "frame");
  const auto paths = svg_series_paths(all);
  ASSERT_EQ(frames.size(), paths.size());
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const double x = std::stod(frames[i].attribute("x"));
    const double y = std::stod(frames[i].attribute("y"));
    const double right = x + std::stod(frames[i].attribute("width"));
    const double bottom = y + std::stod(frames[i].attribute("height"));
    const auto parts = svg_subpaths(paths[i].attribute("d"));
    ASSERT_EQ(parts.size(), 1u);
    for (const auto& [px, py] : parts[0]) {
      EXPECT_GE(px, x);
      EXPECT_LE(px, right);
      EXPECT_GE(py, y);
      EXPECT_LE(py, bottom);
    }
  }
  const auto loss = svg_subpaths(paths[0].attribute("d")).at(0);
  ASSERT_EQ(paths[0].attribute("data-metric"), "loss");
  EXPECT_LT(loss.front().first, loss.back().first) << "steps go right";
  EXPECT_LT(loss.front().second, loss.back().second) << "a falling loss goes down the page (SVG y grows downward)";
}

TEST(PlotSvg, OnePointEmptyAndAllNanSeriesStillMakeAValidDocument) {
  const auto one = parse_svg(train::render_plot_svg({plot_run_of("one", "loss", {1.5})}));
  const auto parts = svg_subpaths(svg_series_paths(one).at(0).attribute("d"));
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].size(), 1u);
  EXPECT_EQ(svg_elements_of(one, "circle", "point").size(), 1u);

  const auto empty = parse_svg(train::render_plot_svg({train::PlotRun("empty", {})}));
  EXPECT_TRUE(svg_series_paths(empty).empty());
  EXPECT_EQ(svg_elements_of(empty, "text", "no-data").at(0).text, "no metrics to plot");

  const auto all_nan = parse_svg(train::render_plot_svg({plot_run_of("nan", "loss", {plot_nan, plot_nan})}));
  EXPECT_EQ(svg_series_paths(all_nan).at(0).attribute("d"), "");
  EXPECT_EQ(svg_elements_of(all_nan, "text", "no-data").at(0).text, "no values");
}

TEST(PlotSvg, SameInputSameBytes) {
  const std::vector<train::PlotRun> runs = {supervised_plot_run("a", 80), supervised_plot_run("b", 70, 1.2)};
  EXPECT_EQ(train::render_plot_svg(runs), train::render_plot_svg(runs));
  EXPECT_EQ(train::render_plot_svg(runs).find("nan"), std::string::npos);
}

TEST(PlotSvg, PickedMetricsComeInTheirOrderAndPatternsExpand) {
  train::PlotRun run = supervised_plot_run("sft", 20);
  run.metrics[3].set("env/reward/mean", 0.5);
  run.metrics[4].set("env/turns", 2);
  train::PlotOptions options;
  options.metrics = {"lr", "env/*", "time/step"};
  const auto paths = svg_series_paths(parse_svg(train::render_plot_svg({run}, options)));
  std::vector<std::string> metrics;
  for (const auto& path : paths) metrics.push_back(path.attribute("data-metric"));
  EXPECT_EQ(metrics, (std::vector<std::string>{"lr", "env/reward/mean", "env/turns", "time/step"}));
}

TEST(PlotSvg, AnUnknownMetricOrBadOptionIsAnErrorNamingIt) {
  train::PlotOptions options;
  options.metrics = {"los"};
  try {
    (void)train::render_plot_svg({supervised_plot_run("sft", 5)}, options);
    FAIL() << "no error";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("'los'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("loss"), std::string::npos) << "lists the metrics there are: " << e.what();
  }
  options.metrics.clear();
  options.width = 100;
  EXPECT_THROW((void)train::render_plot_svg({supervised_plot_run("sft", 5)}, options), error);
  EXPECT_THROW((void)train::render_plot_svg({}, {}), error);
}

}  // namespace
}  // namespace tinker::test
