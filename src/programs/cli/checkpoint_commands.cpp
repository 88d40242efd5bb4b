// `tinker checkpoint list|info|publish|unpublish|set-ttl` (doc/cli.md). `delete`, `download` and
// `push-hf` are in their own files.
#include "programs/cli/checkpoint_support.hpp"
#include "programs/cli/context.hpp"
#include "programs/cli/output.hpp"

#include <tinker/async.hpp>
#include <tinker/console.hpp>

#include <CLI/CLI.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <algorithm>
#include <memory>
#include <ostream>

namespace tinker::cli {
namespace {
namespace asio = boost::asio;

class ListOptions {
 public:
  ListOptions() = default;
  std::string run_id;       // empty: every run, newest first
  std::int64_t limit = 20;  // all runs only; 0: all
};

// The caller's checkpoints across runs: one page of up to 1000, or every page with limit 0.
asio::awaitable<std::vector<Checkpoint>> fetch_user_checkpoints(Context& context, std::int64_t limit,
                                                                std::int64_t& total) {
  const RestClient& rest = context.rest();
  std::vector<Checkpoint> checkpoints;
  constexpr std::int64_t page = ListAllOptions::default_checkpoints_page;
  while (limit == 0 || static_cast<std::int64_t>(checkpoints.size()) < limit) {
    const std::int64_t offset = static_cast<std::int64_t>(checkpoints.size());
    const std::int64_t want = limit == 0 ? page : std::min(page, limit - offset);
    const ListUserCheckpointsOptions options(want, offset);
    CheckpointsListResponse response = co_await rest.async_list_user_checkpoints(options, use_awaitable);
    const std::size_t got = response.checkpoints.size();
    total = response.cursor ? response.cursor->total_count : offset + static_cast<std::int64_t>(got);
    std::move(response.checkpoints.begin(), response.checkpoints.end(), std::back_inserter(checkpoints));
    if (static_cast<std::int64_t>(got) < want || static_cast<std::int64_t>(checkpoints.size()) >= total) break;
  }
  co_return checkpoints;
}

asio::awaitable<void> checkpoint_list(Context& context, ListOptions options) {
  std::vector<Checkpoint> checkpoints;
  std::int64_t total = 0;
  if (!options.run_id.empty()) {
    CheckpointsListResponse response = co_await context.rest().async_list_checkpoints(options.run_id, use_awaitable);
    checkpoints = std::move(response.checkpoints);
    total = static_cast<std::int64_t>(checkpoints.size());
  } else {
    checkpoints = co_await fetch_user_checkpoints(context, options.limit, total);
  }
  if (context.json()) {
    boost::json::object object;
    if (!options.run_id.empty()) object["run_id"] = options.run_id;
    boost::json::array array;
    for (const Checkpoint& checkpoint : checkpoints) array.push_back(json_of(checkpoint));
    object["checkpoints"] = std::move(array);
    object["total_count"] = total;
    print_json(context.out, object);
    co_return;
  }
  print_listing(context, checkpoint_table(checkpoints), "No checkpoints found", total);
}

asio::awaitable<void> checkpoint_info(Context& context, std::string path) {
  const Checkpoint checkpoint = co_await find_checkpoint(context, path);
  const TinkerPath parsed = TinkerPath::parse(path);
  const TrainingRun run =
      co_await context.rest().async_get_training_run(parsed.training_run_id, AccessScope::owned, use_awaitable);
  if (context.json()) {
    boost::json::value value = json_of(checkpoint);
    value.as_object()["training_run_id"] = run.training_run_id;
    value.as_object()["base_model"] = run.base_model;
    value.as_object()["is_lora"] = run.is_lora;
    if (run.lora_rank) value.as_object()["lora_rank"] = *run.lora_rank;
    value.as_object()["console_url"] = console::console_url(checkpoint.tinker_path);
    print_json(context.out, value);
    co_return;
  }
  const Properties rows = {{"Checkpoint ID", checkpoint.checkpoint_id},
                           {"Type", to_string(checkpoint.checkpoint_type)},
                           {"Tinker Path", checkpoint.tinker_path},
                           {"Size", display_size(checkpoint.size_bytes)},
                           {"Public", yes_no(checkpoint.public_)},
                           {"Created", display_time(checkpoint.time)},
                           {"Expires", checkpoint.expires_at ? display_time(*checkpoint.expires_at) : "Never"},
                           {"Training Run ID", run.training_run_id},
                           {"Base Model", run.base_model},
                           {"LoRA", display_lora(run.is_lora, run.lora_rank)},
                           {"Console", console::console_url(checkpoint.tinker_path)}};
  print_properties(context.out, rows);
}

asio::awaitable<void> checkpoint_publish(Context& context, std::string path, bool publish) {
  const RestClient& rest = context.rest();
  if (publish) {
    co_await rest.async_publish_checkpoint_from_tinker_path(path, use_awaitable);
  } else {
    co_await rest.async_unpublish_checkpoint_from_tinker_path(path, use_awaitable);
  }
  if (context.json()) {
    boost::json::object object;
    object["tinker_path"] = path;
    object["public"] = publish;
    print_json(context.out, object);
  } else {
    context.out << (publish ? "Published " : "Unpublished ") << path << '\n';
  }
}

class TtlOptions {
 public:
  TtlOptions() = default;
  std::string path;
  std::optional<std::int64_t> ttl_seconds;
  bool remove = false;
};

asio::awaitable<void> checkpoint_set_ttl(Context& context, TtlOptions options) {
  const std::optional<std::int64_t> ttl = options.remove ? std::nullopt : options.ttl_seconds;
  co_await context.rest().async_set_checkpoint_ttl_from_tinker_path(options.path, ttl, use_awaitable);
  if (context.json()) {
    boost::json::object object;
    object["tinker_path"] = options.path;
    if (ttl) {
      object["ttl_seconds"] = *ttl;
    } else {
      object["ttl_seconds"] = nullptr;
    }
    print_json(context.out, object);
  } else if (ttl) {
    context.out << "Set " << options.path << " to expire in " << *ttl << " s\n";
  } else {
    context.out << "Removed the expiry of " << options.path << '\n';
  }
}

// Registers `checkpoint publish|unpublish PATH`.
void add_publish_command(CLI::App& group, Action& action, bool publish) {
  auto path = std::make_shared<std::string>();
  auto command = [publish](Context& context, std::string chosen) {
    return checkpoint_publish(context, std::move(chosen), publish);
  };
  CLI::App& cmd =
      add_command(group, publish ? "publish" : "unpublish",
                  publish ? "Make a checkpoint public" : "Make a checkpoint private again", action, path, command);
  add_tinker_path_argument(cmd, *path);
}

}  // namespace

void add_checkpoint_commands(CLI::App& app, Action& action) {
  CLI::App& group = add_group(app, "checkpoint", "Checkpoints of your training runs");

  auto list = std::make_shared<ListOptions>();
  CLI::App& list_cmd = add_command(group, "list", "List checkpoints (of one run, or of every run, newest first)",
                                   action, list, checkpoint_list);
  list_cmd.add_option("--run-id", list->run_id, "Only this training run (every checkpoint, unpaginated)");
  add_limit_option(list_cmd, list->limit, "How many checkpoints to show across runs (0: all)");

  auto info_path = std::make_shared<std::string>();
  CLI::App& info_cmd =
      add_command(group, "info", "Show one checkpoint and its training run", action, info_path, checkpoint_info);
  add_tinker_path_argument(info_cmd, *info_path);

  add_publish_command(group, action, true);
  add_publish_command(group, action, false);

  auto ttl = std::make_shared<TtlOptions>();
  CLI::App& ttl_cmd = add_command(group, "set-ttl", "Set or remove a checkpoint's expiry", action, ttl,
                                  checkpoint_set_ttl, [](TtlOptions& o) {
                                    if (!o.ttl_seconds && !o.remove) {
                                      throw UsageError("set-ttl needs --ttl SECONDS or --remove");
                                    }
                                  });
  add_tinker_path_argument(ttl_cmd, ttl->path);
  CLI::Option* ttl_option =
      ttl_cmd.add_option("--ttl", ttl->ttl_seconds, "Expire this many seconds from now")->check(CLI::PositiveNumber);
  CLI::Option* remove_option = ttl_cmd.add_flag("--remove", ttl->remove, "Never expire");
  ttl_option->excludes(remove_option);

  add_checkpoint_delete_command(group, action);
  add_checkpoint_download_command(group, action);
  add_checkpoint_upload_command(group, action);
  add_checkpoint_push_hf_command(group, action);
  add_checkpoint_export_command(group, action);
  add_checkpoint_search_commands(group, action);
}

}  // namespace tinker::cli
