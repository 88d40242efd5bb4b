// What a plot reads and shows: run directories loaded (and never created), labels, series in step
// order, and the number formatting, ticks, escaping and patterns the SVG and summary share.
#include "support/expect_error.hpp"
#include "support/temp_files.hpp"
#include "train/plot/plot_format.hpp"
#include "unit/train/plot/plot_test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

namespace tinker::test {
namespace {

namespace plot_fmt = train::plot_detail;

void write_plot_metrics_file(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

TEST(PlotLoad, ReadsMetricsJsonlWithNullAsNan) {
  TempDir dir("plot-load");
  write_plot_metrics_file(dir / "sft" / "metrics.jsonl",
                          "{\"step\": 0, \"loss\": 2.5, \"lr\": 0.0001}\n{\"step\": 1, \"loss\": null}\n");
  const train::PlotRun run = train::load_plot_run(dir / "sft");
  EXPECT_EQ(run.label, "sft");
  ASSERT_EQ(run.metrics.size(), 2u);
  const train::PlotSeries loss = train::plot_series(run, "loss");
  ASSERT_EQ(loss.points.size(), 2u);
  EXPECT_EQ(loss.points[0].value, 2.5);
  EXPECT_TRUE(std::isnan(loss.points[1].value));
  EXPECT_EQ(train::plot_series(run, "lr").points.size(), 1u);
}

TEST(PlotLoad, AMissingDirectoryOrFileIsAnErrorNamingTheDirectoryAndNothingIsCreated) {
  TempDir dir("plot-load");
  const auto missing = dir / "no-such-run";
  expect_tinker_error(errc::invalid_argument, "no-such-run' does not exist",
                      [&] { (void)train::load_plot_run(missing); });
  EXPECT_FALSE(std::filesystem::exists(missing));
  std::filesystem::create_directories(dir / "empty-run");
  expect_tinker_error(errc::invalid_argument, "empty-run' has no metrics.jsonl",
                      [&] { (void)train::load_plot_run(dir / "empty-run"); });
  write_plot_metrics_file(dir / "bad-run" / "metrics.jsonl", "{\"step\": 0, \"loss\": 1}\nnot json\n{\"step\": 2}\n");
  expect_tinker_error(errc::invalid_argument, "bad-run", [&] { (void)train::load_plot_run(dir / "bad-run"); });
}

TEST(PlotLoad, RunsWithTheSameDirectoryNameAreLabelledByPath) {
  TempDir dir("plot-load");
  write_plot_metrics_file(dir / "a" / "run" / "metrics.jsonl", "{\"step\": 0, \"loss\": 1}\n");
  write_plot_metrics_file(dir / "b" / "run" / "metrics.jsonl", "{\"step\": 0, \"loss\": 2}\n");
  write_plot_metrics_file(dir / "c" / "metrics.jsonl", "{\"step\": 0, \"loss\": 3}\n");
  const auto runs = train::load_plot_runs({dir / "a" / "run", dir / "b" / "run", dir / "c"});
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].label, (dir / "a" / "run").generic_string());
  EXPECT_EQ(runs[1].label, (dir / "b" / "run").generic_string());
  EXPECT_EQ(runs[2].label, "c");
}

TEST(PlotSeriesOrder, SortedByStepAndARepeatedStepKeepsItsLastValue) {
  train::PlotRun run("r", {});
  for (const auto& [step, value] : std::vector<std::pair<int, double>>{{0, 5}, {2, 3}, {1, 4}, {2, 9}}) {
    train::StepMetrics line(step);
    line.set("loss", value);
    run.metrics.push_back(line);
  }
  const auto series = train::plot_series(run, "loss");
  ASSERT_EQ(series.points.size(), 3u);
  EXPECT_EQ(series.points[1], (train::PlotSeries::Point{1, 4}));
  EXPECT_EQ(series.points[2], (train::PlotSeries::Point{2, 9}));
  EXPECT_EQ(series.first(), 5);
  EXPECT_EQ(series.last(), 9);
  EXPECT_EQ(series.min(), 4);
  EXPECT_EQ(series.max(), 9);
}

TEST(PlotFormat, NumbersAreShortAndLocaleFree) {
  EXPECT_EQ(plot_fmt::format_number(0.041234, 4), "0.04123");
  EXPECT_EQ(plot_fmt::format_number(1.5e-5, 4), "1.5e-05");
  EXPECT_EQ(plot_fmt::format_number(312, 4), "312");
  EXPECT_EQ(plot_fmt::format_number(-0.0, 4), "0");
  EXPECT_EQ(plot_fmt::format_number(std::nan(""), 4), "nan");
}

TEST(PlotFormat, TicksFallOnRoundNumbersCoveringTheData) {
  const auto loss = plot_fmt::nice_scale(0.41, 2.38, 5, false);
  EXPECT_DOUBLE_EQ(loss.step, 0.5);
  EXPECT_EQ(loss.ticks, (std::vector<double>{0, 0.5, 1, 1.5, 2, 2.5}));
  EXPECT_EQ(loss.label(1.5), "1.5");
  EXPECT_EQ(loss.label(2), "2.0");
  const auto steps = plot_fmt::nice_scale(0, 99, 6, true);
  EXPECT_EQ(steps.ticks, (std::vector<double>{0, 20, 40, 60, 80, 100}));
  EXPECT_EQ(steps.label(40), "40");
  const auto lr = plot_fmt::nice_scale(2e-5, 1e-4, 4, false);
  EXPECT_DOUBLE_EQ(lr.step, 2e-5);
  EXPECT_EQ(lr.label(4e-5), "4e-05");
  EXPECT_EQ(lr.label(1.2e-4), "1.2e-04");
  const auto few = plot_fmt::nice_scale(0, 2, 6, true);
  EXPECT_EQ(few.step, 1) << "steps are whole numbers";
  const auto flat = plot_fmt::nice_scale(3, 3, 5, false);
  EXPECT_LT(flat.low, 3);
  EXPECT_GT(flat.high, 3);
  const auto one_step = plot_fmt::nice_scale(0, 0, 5, true);
  EXPECT_EQ(one_step.low, 0) << "no negative steps for a run of one step";
  EXPECT_GE(one_step.high, 1);
}

TEST(PlotFormat, EscapingAndPatterns) {
  EXPECT_EQ(plot_fmt::xml_escape("a<b>&\"c'\x02"), "a&lt;b&gt;&amp;&quot;c&apos;\xEF\xBF\xBD");
  EXPECT_TRUE(plot_fmt::matches_pattern("env/*", "env/reward/mean"));
  EXPECT_TRUE(plot_fmt::matches_pattern("*/nll", "test/nll"));
  EXPECT_TRUE(plot_fmt::matches_pattern("*reward*", "env/all/reward/total"));
  EXPECT_FALSE(plot_fmt::matches_pattern("env/*", "test/env/x"));
  EXPECT_FALSE(plot_fmt::matches_pattern("loss", "loss2"));
}

}  // namespace
}  // namespace tinker::test
