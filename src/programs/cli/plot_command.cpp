// `tinker plot RUN_DIR... [-o FILE.svg] [--metric KEY]...`: training curves of one or more run
// directories (their metrics.jsonl) as an SVG, several runs overlaid, and a sparkline summary on
// standard output. Reads local files only: no API key, no request.
//
// Table output: the summary (per metric, a sparkline and first/last/min/max per run), then
// "Wrote the plot to FILE". JSON output (-f json): {"svg": FILE, "metrics": [{"metric": KEY,
// "runs": [{"run", "points", "first", "last", "min", "max"}]}]}, null for a value a run lacks.
#include "programs/cli/context.hpp"
#include "programs/cli/output.hpp"

#include <tinker/error.hpp>
#include <tinker/train/plot.hpp>

#include <CLI/CLI.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace tinker::cli {
namespace {
namespace asio = boost::asio;

class PlotCommandOptions {
 public:
  PlotCommandOptions() = default;
  std::vector<std::string> run_dirs;
  std::string output;  // default: RUN_DIR/plot.svg for one run
  std::vector<std::string> metrics;
  std::string title;
};

void check_plot_options(PlotCommandOptions& options) {
  if (options.output.empty()) {
    // Choice: a comparison belongs to no single run, so it is not written into one unasked.
    if (options.run_dirs.size() > 1) throw UsageError("plotting several run directories needs -o FILE.svg");
    options.output = (std::filesystem::path(options.run_dirs.front()) / "plot.svg").string();
  }
}

boost::json::value json_number(std::optional<double> value) {
  if (!value) return nullptr;
  return *value;
}

void print_plot_json(Context& context, const std::vector<train::PlotRun>& runs, const train::PlotOptions& options,
                     const std::string& output) {
  boost::json::object result;
  result["svg"] = output;
  boost::json::array& metrics = result["metrics"].emplace_array();
  for (const std::string& metric : train::choose_plot_metrics(runs, options)) {
    boost::json::object entry;
    entry["metric"] = metric;
    boost::json::array& per_run = entry["runs"].emplace_array();
    for (const auto& run : runs) {
      const train::PlotSeries series = train::plot_series(run, metric);
      per_run.push_back(boost::json::object{{"run", series.run},
                                            {"points", series.points.size()},
                                            {"first", json_number(series.first())},
                                            {"last", json_number(series.last())},
                                            {"min", json_number(series.min())},
                                            {"max", json_number(series.max())}});
    }
    metrics.push_back(std::move(entry));
  }
  print_json(context.out, result);
}

void write_svg_file(const std::string& output, const std::string& svg) {
  std::ofstream file(output, std::ios::binary | std::ios::trunc);
  if (file) file.write(svg.data(), static_cast<std::streamsize>(svg.size()));
  file.close();
  if (!file) throw CliError("cannot write the plot to '" + output + "'");
}

asio::awaitable<void> plot_command(Context& context, PlotCommandOptions options) {
  train::PlotOptions plot_options;
  plot_options.metrics = options.metrics;
  plot_options.title = options.title;
  std::vector<train::PlotRun> runs;
  std::string svg;
  try {
    runs = train::load_plot_runs(std::vector<std::filesystem::path>(options.run_dirs.begin(), options.run_dirs.end()));
    svg = train::render_plot_svg(runs, plot_options);
  } catch (const error& e) {
    // The message names the run directory or the metric; a metric was given as --metric here.
    std::string message = e.diag().message;
    const std::string library_field = "PlotOptions::metrics";
    if (message.starts_with(library_field)) message.replace(0, library_field.size(), "--metric");
    throw CliError(message);
  }
  write_svg_file(options.output, svg);
  if (context.json()) {
    print_plot_json(context, runs, plot_options, options.output);
  } else {
    context.out << train::render_plot_summary(runs, plot_options) << "Wrote the plot to " << options.output << '\n';
  }
  co_return;
}

}  // namespace

void add_plot_command(CLI::App& app, Action& action) {
  auto options = std::make_shared<PlotCommandOptions>();
  CLI::App& command = add_command(app, "plot",
                                  "Plot the training curves of run directories (their metrics.jsonl) as an SVG, "
                                  "several runs overlaid, with a sparkline summary",
                                  action, options, plot_command, check_plot_options);
  command.add_option("run_dirs", options->run_dirs, "Run directories holding metrics.jsonl")->required();
  command.add_option("-o,--output", options->output, "SVG file to write (default: RUN_DIR/plot.svg for one run)");
  command
      .add_option("--metric", options->metrics,
                  "Metric key to plot, repeatable, `*` matches any characters (default: losses, rewards, "
                  "learning rate and evaluator metrics)")
      ->expected(1)
      ->allow_extra_args(false)  // one key per --metric: a run directory after it stays positional
      ->take_all();
  command.add_option("--title", options->title, "Heading above the panels");
}

}  // namespace tinker::cli
