// `tinker run list|info` (doc/cli.md): training runs, paged 100 at a time.
#include "programs/cli/context.hpp"
#include "programs/cli/output.hpp"

#include <tinker/async.hpp>

#include <CLI/CLI.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <ostream>

namespace tinker::cli {
namespace {
namespace asio = boost::asio;

class RunListOptions {
 public:
  RunListOptions() = default;
  std::int64_t limit = 20;  // 0: all
  std::vector<std::string> columns;
};

// A column of `run list --columns`: its header and how a run shows in it.
class RunColumn {
 public:
  RunColumn(std::string header_, std::string (*cell_)(const TrainingRun&)) : header(std::move(header_)), cell(cell_) {}
  std::string header;
  std::string (*cell)(const TrainingRun&);
};

const std::map<std::string, RunColumn>& run_columns() {
  static const std::map<std::string, RunColumn> columns = {
      {"id", RunColumn("Run ID", [](const TrainingRun& r) { return r.training_run_id; })},
      {"model", RunColumn("Base Model", [](const TrainingRun& r) { return r.base_model; })},
      {"owner", RunColumn("Owner", [](const TrainingRun& r) { return r.model_owner; })},
      {"lora", RunColumn("LoRA", [](const TrainingRun& r) { return display_lora(r.is_lora, r.lora_rank); })},
      {"updated", RunColumn("Last Update", [](const TrainingRun& r) { return display_time(r.last_request_time); })},
      {"status",
       RunColumn("Status", [](const TrainingRun& r) { return std::string(r.corrupted ? "Failed" : "Active"); })},
      {"checkpoint", RunColumn("Last Checkpoint",
                               [](const TrainingRun& r) {
                                 return r.last_checkpoint ? r.last_checkpoint->checkpoint_id : std::string("-");
                               })},
      {"checkpoint_time", RunColumn("Checkpoint Time",
                                    [](const TrainingRun& r) {
                                      return r.last_checkpoint ? display_time(r.last_checkpoint->time)
                                                               : std::string("-");
                                    })},
  };
  return columns;
}

// The first `limit` runs (every run when 0), and the server's total count.
asio::awaitable<std::vector<TrainingRun>> fetch_runs(Context& context, std::int64_t limit, std::int64_t& total) {
  const RestClient& rest = context.rest();
  std::vector<TrainingRun> runs;
  constexpr std::int64_t page = ListAllOptions::default_runs_page;
  while (limit == 0 || static_cast<std::int64_t>(runs.size()) < limit) {
    const std::int64_t offset = static_cast<std::int64_t>(runs.size());
    const std::int64_t want = limit == 0 ? page : std::min(page, limit - offset);
    const ListTrainingRunsOptions options(want, offset);
    TrainingRunsResponse response = co_await rest.async_list_training_runs(options, use_awaitable);
    total = response.cursor.total_count;
    const std::size_t got = response.training_runs.size();
    std::move(response.training_runs.begin(), response.training_runs.end(), std::back_inserter(runs));
    if (static_cast<std::int64_t>(got) < want || static_cast<std::int64_t>(runs.size()) >= total) break;
  }
  co_return runs;
}

asio::awaitable<void> run_list(Context& context, RunListOptions options) {
  std::int64_t total = 0;
  const std::vector<TrainingRun> runs = co_await fetch_runs(context, options.limit, total);
  if (context.json()) {
    boost::json::array array;
    for (const TrainingRun& run : runs) array.push_back(json_of(run));
    boost::json::object object;
    object["runs"] = std::move(array);
    object["total_count"] = total;
    print_json(context.out, object);
    co_return;
  }
  std::vector<std::string> headers;
  for (const std::string& name : options.columns) headers.push_back(run_columns().at(name).header);
  Table table(headers);
  for (const TrainingRun& run : runs) {
    std::vector<std::string> row;
    for (const std::string& name : options.columns) row.push_back(run_columns().at(name).cell(run));
    table.add_row(std::move(row));
  }
  print_listing(context, table, "No training runs found", total);
}

void add_checkpoint_rows(Properties& rows, const char* label, const std::optional<Checkpoint>& checkpoint) {
  if (!checkpoint) return;
  rows.emplace_back(label, checkpoint->checkpoint_id);
  rows.emplace_back("  - Time", display_time(checkpoint->time));
  rows.emplace_back("  - Path", checkpoint->tinker_path);
}

asio::awaitable<void> run_info(Context& context, std::string run_id) {
  const TrainingRun run = co_await context.rest().async_get_training_run(run_id, AccessScope::owned, use_awaitable);
  if (context.json()) {
    print_json(context.out, json_of(run));
    co_return;
  }
  Properties rows = {{"Run ID", run.training_run_id},
                     {"Base Model", run.base_model},
                     {"Owner", run.model_owner},
                     {"LoRA", display_lora(run.is_lora, run.lora_rank)},
                     {"Last Update", display_time(run.last_request_time)},
                     {"Status", run.corrupted ? "Failed" : "Active"}};
  add_checkpoint_rows(rows, "Last Training Checkpoint", run.last_checkpoint);
  add_checkpoint_rows(rows, "Last Sampler Checkpoint", run.last_sampler_checkpoint);
  if (run.user_metadata) {
    for (const auto& [key, value] : *run.user_metadata) rows.emplace_back("Metadata: " + key, value);
  }
  print_properties(context.out, rows);
}

}  // namespace

void add_run_commands(CLI::App& app, Action& action) {
  CLI::App& group = add_group(app, "run", "Training runs");

  auto list = std::make_shared<RunListOptions>();
  CLI::App& list_cmd = add_command(group, "list", "List your training runs, newest first", action, list, run_list,
                                   [](RunListOptions& o) {
                                     if (o.columns.empty()) o.columns = {"id", "model", "lora", "updated", "status"};
                                   });
  add_limit_option(list_cmd, list->limit, "How many runs to show (0: all)");
  std::vector<std::string> names;
  for (const auto& [name, column] : run_columns()) names.push_back(name);
  list_cmd
      .add_option("-c,--columns", list->columns,
                  "Columns to show, comma separated: id,model,owner,lora,updated,status,checkpoint,checkpoint_time")
      ->delimiter(',')
      ->check(CLI::IsMember(names))
      ->default_str("id,model,lora,updated,status");

  auto run_id = std::make_shared<std::string>();
  CLI::App& info_cmd = add_command(group, "info", "Show one training run", action, run_id, run_info);
  info_cmd.add_option("RUN_ID", *run_id, "The training run id")->required();
}

}  // namespace tinker::cli
