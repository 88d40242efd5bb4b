// `tinker model list [SUBSTRING]` (doc/cli.md#model-list): the base models the server offers
// (get_server_capabilities), filtered by a case-insensitive substring.
#include "programs/cli/context.hpp"
#include "programs/cli/output.hpp"

#include <tinker/async.hpp>

#include <CLI/CLI.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <algorithm>
#include <cctype>
#include <memory>
#include <ostream>

namespace tinker::cli {
namespace {
namespace asio = boost::asio;

std::string lower_ascii(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// Case-insensitive (ASCII) substring match; an empty filter matches every name.
bool model_matches(std::string_view model_name, const std::string& lowered_filter) {
  return lower_ascii(model_name).find(lowered_filter) != std::string::npos;
}

asio::awaitable<void> model_list(Context& context, std::string filter) {
  const GetServerCapabilitiesResponse capabilities =
      co_await context.service().async_get_server_capabilities(use_awaitable);
  const std::string lowered = lower_ascii(filter);
  std::vector<SupportedModel> models;
  for (const SupportedModel& model : capabilities.supported_models) {
    if (model.model_name && model_matches(*model.model_name, lowered)) models.push_back(model);
  }
  if (context.json()) {
    boost::json::array array;
    for (const SupportedModel& model : models) array.push_back(json_of(model));
    boost::json::object object;
    object["models"] = std::move(array);
    print_json(context.out, object);
    co_return;
  }
  Table table({"Model", "Context Length"});
  for (const SupportedModel& model : models) {
    table.add_row({*model.model_name, model.max_context_length ? std::to_string(*model.max_context_length) : "-"});
  }
  print_listing(context, table, filter.empty() ? "No models offered" : "No model matches '" + filter + "'");
}

}  // namespace

void add_model_commands(CLI::App& app, Action& action) {
  CLI::App& group = add_group(app, "model", "Base models");
  auto filter = std::make_shared<std::string>();
  CLI::App& list_cmd = add_command(group, "list", "List the base models the server offers (the names base_model takes)",
                                   action, filter, model_list);
  list_cmd.add_option("SUBSTRING", *filter, "Only models whose name contains this (case-insensitive)");
}

}  // namespace tinker::cli
