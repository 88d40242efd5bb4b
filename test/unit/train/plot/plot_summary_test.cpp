// render_plot_summary: sparklines (scaled per run, bucketed to the width, NaN as a space) and the
// first/last/min/max of each metric per run.
#include "unit/train/plot/plot_test_support.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace tinker::test {
namespace {

TEST(PlotSummary, ARisingRewardClimbsEveryLevel) {
  const std::string text =
      train::render_plot_summary({plot_run_of("grpo", "env/reward/mean", {0, 1, 2, 3, 4, 5, 6, 7})});
  EXPECT_EQ(text,
            "env/reward/mean\n"
            "  grpo  ▁▂▃▄▅▆▇█  first 0  last 7  min 0  max 7  steps 0-7\n");
}

TEST(PlotSummary, RunsAlignAndAMissingMetricIsSaid) {
  train::PlotRun short_run = plot_run_of("a", "loss", {3.0, 2.0, 1.0});
  train::PlotRun other = plot_run_of("longer-name", "reward", {0.5});
  const std::string text = train::render_plot_summary({short_run, other});
  EXPECT_EQ(text,
            "loss\n"
            "  a            █▅▁  first 3  last 1  min 1  max 3  steps 0-2\n"
            "  longer-name  (not logged)\n"
            "reward\n"
            "  a            (not logged)\n"
            "  longer-name  ▄  first 0.5  last 0.5  min 0.5  max 0.5  steps 0-0\n");
}

TEST(PlotSummary, NanIsASpaceAndStatisticsSkipIt) {
  const std::string text = train::render_plot_summary({plot_run_of("r", "loss", {plot_nan, 2.0, plot_nan, 1.0})});
  EXPECT_EQ(text, "loss\n  r   █ ▁  first 2  last 1  min 1  max 2  steps 0-3\n");
  const std::string all_nan = train::render_plot_summary({plot_run_of("r", "loss", {plot_nan})});
  EXPECT_EQ(all_nan, "loss\n  r     (no finite values)\n");
}

TEST(PlotSummary, LongSeriesAreBucketedToTheWidth) {
  train::PlotOptions options;
  options.sparkline_width = 10;
  std::vector<std::optional<double>> values;
  for (int i = 0; i < 1000; ++i) values.emplace_back(1000.0 - i);
  const std::string text = train::render_plot_summary({plot_run_of("r", "loss", values)}, options);
  EXPECT_EQ(text, "loss\n  r  █▇▆▆▅▄▃▃▂▁  first 1000  last 1  min 1  max 1000  steps 0-999\n");
}

TEST(PlotSummary, SaysWhichMetricsTheDefaultLeftOut) {
  train::PlotOptions options;
  options.max_default_metrics = 2;
  const std::string text = train::render_plot_summary({supervised_plot_run("sft", 30)}, options);
  EXPECT_EQ(text.substr(0, 5), "loss\n");
  EXPECT_NE(text.find("1 more metrics not shown: lr\n"), std::string::npos) << text;
}

TEST(PlotSummary, DefaultOrderPutsLossRewardAndLrFirstAndSkipsBookkeeping) {
  train::PlotRun run("r", {});
  train::StepMetrics line(0);
  line.set("time/step", 1);
  line.set("accuracy", 0.1);
  line.set("lr", 1e-4);
  line.set("env/reward/mean", 0.2);
  line.set("progress/done_frac", 0.1);
  line.set("train/loss", 2.0);
  run.metrics.push_back(line);
  EXPECT_EQ(train::choose_plot_metrics({run}, {}),
            (std::vector<std::string>{"train/loss", "env/reward/mean", "lr", "accuracy"}));
}

}  // namespace
}  // namespace tinker::test
