// `tinker plot` run in-process (tinker::cli::run with string streams): the SVG file written where
// it should be, the sparkline summary, several runs, --metric, JSON output, and the errors naming
// the run directory. It reads local files only, so no server and no API key are involved.
#include "programs/cli/cli.hpp"
#include "support/temp_files.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tinker::test {
namespace {

class PlotCliResult {
 public:
  int code = -1;
  std::string out;
  std::string err;
};

PlotCliResult run_plot_cli(std::vector<std::string> args) {
  args.insert(args.begin(), "plot");
  std::ostringstream out;
  std::ostringstream err;
  PlotCliResult result;
  result.code = cli::run(std::move(args), out, err, cli::CliEnvironment());
  result.out = out.str();
  result.err = err.str();
  return result;
}

// A run directory with a falling loss, an lr and an eval metric every 5 steps.
std::filesystem::path make_plot_run_dir(const TempDir& dir, const std::string& name, int steps) {
  const std::filesystem::path run = dir / name;
  std::filesystem::create_directories(run);
  std::ofstream metrics(run / "metrics.jsonl");
  for (int step = 0; step < steps; ++step) {
    metrics << "{\"step\": " << step << ", \"loss\": " << 2.0 * std::exp(-step / 8.0) + 0.3 << ", \"lr\": 0.0001";
    if (step % 5 == 0) metrics << ", \"test/nll\": " << 2.2 * std::exp(-step / 10.0) + 0.4;
    metrics << "}\n";
  }
  return run;
}

int count_plot_series_in(const std::filesystem::path& svg_file) {
  boost::property_tree::ptree tree;
  boost::property_tree::read_xml(svg_file.string(), tree);  // throws when not XML
  int paths = 0;
  for (const auto& [name, panel] : tree.get_child("svg")) {
    if (name != "g" || panel.get("<xmlattr>.class", "") != "panel") continue;
    for (const auto& [child_name, child] : panel) {
      if (child_name == "path" && child.get("<xmlattr>.class", "") == "series") ++paths;
    }
  }
  return paths;
}

TEST(CliPlot, WritesPlotSvgIntoTheRunAndPrintsSparklines) {
  TempDir dir("cli-plot");
  const auto run = make_plot_run_dir(dir, "sft", 30);
  const PlotCliResult result = run_plot_cli({run.string()});
  ASSERT_EQ(result.code, cli::exit_ok) << result.err;
  EXPECT_EQ(count_plot_series_in(run / "plot.svg"), 3);
  EXPECT_EQ(result.out.substr(0, 5), "loss\n");
  EXPECT_NE(result.out.find("  sft  █"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("Wrote the plot to " + (run / "plot.svg").string()), std::string::npos);
}

TEST(CliPlot, OverlaysSeveralRunsIntoTheGivenFileWithPickedMetrics) {
  TempDir dir("cli-plot");
  const auto a = make_plot_run_dir(dir, "a", 20);
  const auto b = make_plot_run_dir(dir, "b", 12);
  const auto svg = dir / "compare.svg";
  const PlotCliResult result = run_plot_cli({"--metric", "loss", a.string(), b.string(), "-o", svg.string()});
  ASSERT_EQ(result.code, cli::exit_ok) << result.err;
  EXPECT_EQ(count_plot_series_in(svg), 2);  // one metric, two runs
  EXPECT_NE(result.out.find("  a  "), std::string::npos);
  EXPECT_NE(result.out.find("  b  "), std::string::npos);
  EXPECT_EQ(result.out.find("lr\n"), std::string::npos) << "only the picked metric";
}

TEST(CliPlot, JsonOutputGivesTheStatistics) {
  TempDir dir("cli-plot");
  const auto run = make_plot_run_dir(dir, "sft", 10);
  const PlotCliResult result = run_plot_cli({run.string(), "--metric", "test/*", "-f", "json"});
  ASSERT_EQ(result.code, cli::exit_ok) << result.err;
  const boost::json::value json = boost::json::parse(result.out);
  EXPECT_EQ(json.at("svg").as_string(), (run / "plot.svg").string());
  const auto& metric = json.at("metrics").as_array().at(0);
  EXPECT_EQ(metric.at("metric").as_string(), "test/nll");
  const auto& stats = metric.at("runs").as_array().at(0);
  EXPECT_EQ(stats.at("points").to_number<int>(), 2);  // steps 0 and 5
  EXPECT_NEAR(stats.at("first").as_double(), 2.6, 1e-9);
}

TEST(CliPlot, ErrorsNameTheDirectoryOrTheMetric) {
  TempDir dir("cli-plot");
  const PlotCliResult missing = run_plot_cli({(dir / "nope").string()});
  EXPECT_EQ(missing.code, cli::exit_failure);
  EXPECT_NE(missing.err.find("nope' does not exist"), std::string::npos) << missing.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "nope"));

  std::filesystem::create_directories(dir / "not-a-run");
  const PlotCliResult no_file = run_plot_cli({(dir / "not-a-run").string()});
  EXPECT_EQ(no_file.code, cli::exit_failure);
  EXPECT_NE(no_file.err.find("not-a-run' has no metrics.jsonl"), std::string::npos) << no_file.err;

  const auto run = make_plot_run_dir(dir, "sft", 3);
  const PlotCliResult unknown = run_plot_cli({run.string(), "--metric", "reward"});
  EXPECT_EQ(unknown.code, cli::exit_failure);
  EXPECT_NE(unknown.err.find("'reward'"), std::string::npos) << unknown.err;
  EXPECT_FALSE(std::filesystem::exists(run / "plot.svg")) << "nothing written on failure";

  const PlotCliResult two_without_output = run_plot_cli({run.string(), run.string()});
  EXPECT_EQ(two_without_output.code, cli::exit_usage);
  EXPECT_NE(two_without_output.err.find("-o FILE.svg"), std::string::npos);
  EXPECT_EQ(run_plot_cli({}).code, cli::exit_usage);
}

}  // namespace
}  // namespace tinker::test
