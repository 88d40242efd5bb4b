// `tinker checkpoint delete [PATH...] | --run-id ID [--type T] [--before D] [--after D] [-y]`
// (doc/cli.md): up to 32 deletions at once, a summary `{deleted_count, failed:[{tinker_path, error}]}`.
#include "programs/cli/checkpoint_support.hpp"
#include "programs/cli/context.hpp"
#include "programs/cli/output.hpp"

#include <tinker/async.hpp>
#include <tinker/error.hpp>

#include <CLI/CLI.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <algorithm>
#include <memory>
#include <ostream>
#include <set>

namespace tinker::cli {
namespace {
namespace asio = boost::asio;

constexpr std::size_t max_concurrent_deletes = 32;

class DeleteOptions {
 public:
  DeleteOptions() = default;
  std::vector<std::string> paths;
  std::string run_id;
  std::string type;  // weights|sampler_weights|training|sampler; empty: both
  std::string before_text;
  std::string after_text;
  std::optional<Timestamp> before;  // strictly earlier than
  std::optional<Timestamp> after;   // strictly later than
  bool yes = false;
};

// Shared by the deletion workers, all on the io thread.
class DeleteState {
 public:
  DeleteState(const asio::any_io_executor& executor, std::vector<std::string> targets_, std::size_t workers)
      : targets(std::move(targets_)), all_done(executor), running(workers) {
    all_done.expires_at(asio::steady_timer::time_point::max());
  }
  std::vector<std::string> targets;
  std::size_t next = 0;
  bool stop = false;  // Ctrl-C: start no further deletion
  std::size_t deleted = 0;
  std::vector<std::pair<std::string, std::string>> failed;  // path, error
  asio::steady_timer all_done;
  std::size_t running;
};

asio::awaitable<void> delete_worker(RestClient rest, std::shared_ptr<DeleteState> state) {
  while (!state->stop && state->next < state->targets.size()) {
    const std::string path = state->targets[state->next++];
    std::string failure;
    try {
      co_await rest.async_delete_checkpoint_from_tinker_path(path, use_awaitable);
      ++state->deleted;
    } catch (const std::exception& e) {
      failure = e.what();
    }
    if (!failure.empty()) state->failed.emplace_back(path, std::move(failure));
  }
}

class WorkerDone {
 public:
  explicit WorkerDone(std::shared_ptr<DeleteState> state) : state_(std::move(state)) {}
  void operator()(const std::exception_ptr&) const {
    if (--state_->running == 0) state_->all_done.cancel();
  }

 private:
  std::shared_ptr<DeleteState> state_;
};

// Runs the deletions; on cancellation (Ctrl-C) starts no new one and waits for those under way.
asio::awaitable<void> delete_all(const RestClient& rest, std::shared_ptr<DeleteState> state) {
  const asio::any_io_executor executor = co_await asio::this_coro::executor;
  for (std::size_t i = 0; i < state->running; ++i)
    asio::co_spawn(executor, delete_worker(rest, state), WorkerDone(state));
  co_await asio::this_coro::throw_if_cancelled(false);
  while (state->running != 0) {
    auto [ec] = co_await state->all_done.async_wait(asio::as_tuple(asio::use_awaitable));
    (void)ec;
    const asio::cancellation_state cancellation = co_await asio::this_coro::cancellation_state;
    if (cancellation.cancelled() != asio::cancellation_type::none) {
      state->stop = true;
      co_await asio::this_coro::reset_cancellation_state();
    }
  }
}

// The checkpoints of the run that pass the filters.
asio::awaitable<std::vector<std::string>> select_from_run(Context& context, const DeleteOptions& options) {
  const CheckpointsListResponse list = co_await context.rest().async_list_checkpoints(options.run_id, use_awaitable);
  std::vector<std::string> paths;
  for (const Checkpoint& c : list.checkpoints) {
    const bool training = c.checkpoint_type == CheckpointType::training;
    if ((options.type == "weights" || options.type == "training") && !training) continue;
    if ((options.type == "sampler_weights" || options.type == "sampler") && training) continue;
    if (options.before && !(c.time < *options.before)) continue;
    if (options.after && !(c.time > *options.after)) continue;
    paths.push_back(c.tinker_path);
  }
  co_return paths;
}

void print_summary(Context& context, const DeleteState& state) {
  if (context.json()) {
    boost::json::object object;
    object["deleted_count"] = state.deleted;
    boost::json::array failed;
    for (const auto& [path, message] : state.failed) {
      boost::json::object entry;
      entry["tinker_path"] = path;
      entry["error"] = message;
      failed.push_back(std::move(entry));
    }
    object["failed"] = std::move(failed);
    print_json(context.out, object);
    return;
  }
  context.out << "Deleted " << state.deleted << " checkpoint" << (state.deleted == 1 ? "" : "s") << '\n';
  if (!state.failed.empty()) {
    Table table({"Failed Path", "Error"});
    for (const auto& [path, message] : state.failed) table.add_row({path, message});
    table.print(context.out);
  }
}

asio::awaitable<void> checkpoint_delete(Context& context, DeleteOptions options) {
  if (!options.yes && !context.env.input_is_terminal) {
    throw UsageError("checkpoint delete asks for confirmation, but the input is not a terminal; pass -y/--yes");
  }
  std::vector<std::string> targets;
  if (!options.run_id.empty()) {
    targets = co_await select_from_run(context, options);
  } else {
    std::set<std::string> seen;
    for (const std::string& path : options.paths) {
      if (seen.insert(path).second) targets.push_back(path);
    }
  }
  if (!targets.empty() && !options.yes) {
    for (const std::string& path : targets) context.err << "  " << path << '\n';
    const std::string question = "Delete these " + std::to_string(targets.size()) + " checkpoint(s)?";
    if (!context.confirm(question)) {
      context.err << "Cancelled; nothing was deleted.\n";
      co_return;
    }
  }
  const std::size_t workers = std::min(max_concurrent_deletes, targets.size());
  auto state = std::make_shared<DeleteState>(context.executor, std::move(targets), workers);
  co_await delete_all(context.rest(), state);
  std::sort(state->failed.begin(), state->failed.end());
  print_summary(context, *state);
  if (!state->failed.empty() && !context.interrupted()) {
    throw CliError(std::to_string(state->failed.size()) + " of " + std::to_string(state->targets.size()) +
                   " deletions failed");
  }
}

}  // namespace

void add_checkpoint_delete_command(CLI::App& group, Action& action) {
  auto options = std::make_shared<DeleteOptions>();
  CLI::App& cmd =
      add_command(group, "delete", "Delete checkpoints, by path or by run with filters", action, options,
                  checkpoint_delete, [](DeleteOptions& o) {
                    if (o.paths.empty() == o.run_id.empty()) {
                      throw UsageError("checkpoint delete needs either checkpoint paths or --run-id (not both)");
                    }
                    if (!o.before_text.empty()) o.before = parse_cli_time(o.before_text, "--before");
                    if (!o.after_text.empty()) o.after = parse_cli_time(o.after_text, "--after");
                  });
  cmd.add_option("PATH", options->paths, "Checkpoint paths (tinker://...)")
      ->check(CLI::Validator(check_tinker_path, "TINKER_PATH", "tinker path"));
  CLI::Option* run_id = cmd.add_option("--run-id", options->run_id, "Delete the checkpoints of this run");
  CLI::Option* type = cmd.add_option("--type", options->type, "Only this kind (with --run-id)")
                          ->check(CLI::IsMember({"weights", "sampler_weights", "training", "sampler"}));
  CLI::Option* before =
      cmd.add_option("--before", options->before_text, "Only those saved before DATE (ISO-8601, UTC if no zone)");
  CLI::Option* after =
      cmd.add_option("--after", options->after_text, "Only those saved after DATE (ISO-8601, UTC if no zone)");
  cmd.add_flag("-y,--yes", options->yes, "Do not ask for confirmation");
  type->needs(run_id);
  before->needs(run_id);
  after->needs(run_id);
}

}  // namespace tinker::cli
