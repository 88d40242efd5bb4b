// `tinker checkpoint search` and `tinker checkpoint copy` (doc/cli.md), and `tinker billing
// storage`: the checkpoint search, copy_weights and storage usage calls of the public API.
#include "programs/cli/checkpoint_support.hpp"
#include "programs/cli/context.hpp"
#include "programs/cli/output.hpp"

#include <tinker/async.hpp>
#include <tinker/console.hpp>
#include <tinker/rest_client.hpp>
#include <tinker/service_client.hpp>

#include <CLI/CLI.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <cstdio>
#include <memory>
#include <ostream>

namespace tinker::cli {
namespace {
namespace asio = boost::asio;

class SearchOptions {
 public:
  SearchOptions() = default;
  std::vector<std::string> projects;
  std::vector<std::string> metadata;  // KEY=VALUE
  std::string type;                   // training | sampler | external; empty: any
  std::string owner = "own";          // own | accessible | user
  std::vector<std::string> owner_urns;
  std::vector<std::string> base_models;
  std::int64_t limit = 50;
  bool all = false;
  std::int64_t max_pages = RestClient::default_search_max_pages;
  CheckpointSearchRequest request;  // built by prepare_search
};

CheckpointType checkpoint_type_option(const std::string& text) {
  if (text == "training") return CheckpointType::training;
  if (text == "sampler") return CheckpointType::sampler;
  if (text == "external") return CheckpointType::external;
  throw UsageError("--type must be training, sampler or external, got \"" + text + "\"");
}

// Turns the flags into the request, refusing what the API would refuse (usage errors).
void prepare_search(SearchOptions& o) {
  CheckpointSearchRequest& request = o.request;
  if (!o.projects.empty()) request.project_ids = o.projects;
  for (const std::string& pair : o.metadata) {
    const std::size_t equals = pair.find('=');
    if (equals == std::string::npos || equals == 0)
      throw UsageError("--metadata takes KEY=VALUE, got \"" + pair + "\"");
    request.user_metadata[pair.substr(0, equals)] = pair.substr(equals + 1);
  }
  if (!o.type.empty()) request.checkpoint_type = checkpoint_type_option(o.type);
  if (o.owner == "accessible") {
    request.owner = SearchOwner::accessible();
  } else if (o.owner == "user" || !o.owner_urns.empty()) {
    if (o.owner_urns.empty() || o.owner_urns.size() > 10) throw UsageError("--owner-urn: give 1 to 10 of them");
    request.owner = SearchOwner::users(o.owner_urns);
  } else if (o.owner != "own") {
    throw UsageError("--owner must be own, accessible or user, got \"" + o.owner + "\"");
  }
  if (!o.base_models.empty()) request.base_models = o.base_models;
  if (o.limit < 1 || o.limit > 200) throw UsageError("--limit must be 1..200 (a page), got " + std::to_string(o.limit));
  request.limit = o.limit;
  if (o.max_pages < 1) throw UsageError("--max-pages must be at least 1");
}

std::string metadata_text(const Checkpoint& checkpoint) {
  if (!checkpoint.user_metadata || checkpoint.user_metadata->empty()) return "-";
  std::string text;
  for (const auto& [key, value] : *checkpoint.user_metadata) text += (text.empty() ? "" : ",") + key + "=" + value;
  return text;
}

asio::awaitable<void> checkpoint_search(Context& context, SearchOptions options) {
  std::vector<Checkpoint> checkpoints;
  std::optional<CheckpointSearchCursor> next;
  if (options.all) {
    checkpoints =
        co_await context.rest().async_search_all_checkpoints(options.request, options.max_pages, use_awaitable);
  } else {
    CheckpointSearchResponse page = co_await context.rest().async_search_checkpoints(options.request, use_awaitable);
    checkpoints = std::move(page.checkpoints);
    next = std::move(page.next_cursor);
  }
  if (context.json()) {
    boost::json::object object;
    boost::json::array array;
    for (const Checkpoint& checkpoint : checkpoints) array.push_back(json_of(checkpoint));
    object["checkpoints"] = std::move(array);
    object["next_cursor"] = next ? json_of(*next) : boost::json::value(nullptr);
    print_json(context.out, object);
    co_return;
  }
  Table table({"Tinker Path", "Type", "Base Model", "Created", "Metadata"});
  for (const Checkpoint& c : checkpoints) {
    table.add_row({c.tinker_path, to_string(c.checkpoint_type), c.base_model.value_or("-"), display_time(c.time),
                   metadata_text(c)});
  }
  print_listing(context, table, "No checkpoints found");
  if (next) context.err << "More checkpoints match; use --all to list every page\n";
}

class CopyOptions {
 public:
  CopyOptions() = default;
  std::string path;
  std::optional<std::int64_t> ttl_seconds;
};

asio::awaitable<void> checkpoint_copy(Context& context, CopyOptions options) {
  const std::string copy = co_await context.service().async_copy_weights(
      options.path, CopyWeightsOptions(options.ttl_seconds), use_awaitable);
  if (context.json()) {
    boost::json::object object;
    object["source_path"] = options.path;
    object["tinker_path"] = copy;
    object["console_url"] = console::console_url(copy);
    print_json(context.out, object);
  } else {
    context.out << "Copied " << options.path << " to " << copy << '\n';
  }
}

std::string money(std::optional<double> usd) {
  if (!usd) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "$%.2f", *usd);
  return text;
}

asio::awaitable<void> billing_storage(Context& context, std::optional<std::string> project) {
  const CheckpointStorageUsageResponse usage =
      co_await context.rest().async_get_checkpoint_storage_usage(std::move(project), use_awaitable);
  if (context.json()) {
    print_json(context.out, json_of(usage));
    co_return;
  }
  Table table({"Project", "User", "Checkpoints", "Size", "Monthly Cost"});
  for (const CheckpointStorageUsageItem& row : usage.data) {
    table.add_row({row.project_id.value_or("-"), row.user_email.value_or(row.org_user_urn.value_or("-")),
                   std::to_string(row.checkpoint_count), display_size(row.size_bytes),
                   money(row.estimated_monthly_cost_usd)});
  }
  print_listing(context, table, "No checkpoints stored");
  if (usage.effective_rate_usd_per_gigabyte_month) {
    context.out << "Rate: " << money(usage.effective_rate_usd_per_gigabyte_month) << " per GB-month\n";
  }
}

}  // namespace

void add_checkpoint_search_commands(CLI::App& checkpoint, Action& action) {
  auto search = std::make_shared<SearchOptions>();
  CLI::App& cmd = add_command(checkpoint, "search", "Search checkpoints by project, metadata, type, owner, base model",
                              action, search, checkpoint_search, prepare_search);
  cmd.add_option("--project", search->projects, "Only this project (repeatable)");
  cmd.add_option("--metadata", search->metadata, "KEY=VALUE that must be in the user_metadata (repeatable)");
  cmd.add_option("--type", search->type, "training, sampler or external");
  cmd.add_option("--owner", search->owner, "own (default), accessible, or user (with --owner-urn)");
  cmd.add_option("--owner-urn", search->owner_urns, "An owner's URN (repeatable, 1 to 10; implies --owner user)");
  cmd.add_option("--base-model", search->base_models, "Only this base model (repeatable)");
  cmd.add_option("--limit", search->limit, "Checkpoints per page (1..200)")->capture_default_str();
  cmd.add_flag("--all", search->all, "Follow the cursor through every page");
  cmd.add_option("--max-pages", search->max_pages, "With --all: stop with an error after this many pages")
      ->capture_default_str();

  auto copy = std::make_shared<CopyOptions>();
  CLI::App& copy_cmd = add_command(checkpoint, "copy",
                                   "Copy a checkpoint into a new run of your project (no bytes "
                                   "duplicated; the copy cannot be trained on)",
                                   action, copy, checkpoint_copy);
  add_tinker_path_argument(copy_cmd, copy->path);
  copy_cmd.add_option("--ttl", copy->ttl_seconds, "The copy expires after this many seconds (3600 .. 10 years)");
}

void add_billing_storage_command(CLI::App& billing, Action& action) {
  auto project = std::make_shared<std::optional<std::string>>();
  CLI::App& cmd = add_command(billing, "storage", "Checkpoints stored now: count, size and monthly cost", action,
                              project, billing_storage);
  cmd.add_option("--project", *project, "Only this project (default: the whole organization)");
}

}  // namespace tinker::cli
