// `tinker session list|info|export-trace` (doc/cli.md): the REST session endpoints and the trace
// export (doc/rest.md).
#include "programs/cli/context.hpp"
#include "programs/cli/output.hpp"
#include "programs/cli/transfer.hpp"

#include <tinker/async.hpp>

#include <CLI/CLI.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <memory>
#include <ostream>

namespace tinker::cli {
namespace {
namespace asio = boost::asio;

asio::awaitable<void> session_list(Context& context, std::int64_t limit) {
  const RestClient& rest = context.rest();
  std::vector<std::string> sessions;
  if (limit == 0) {
    const ListAllOptions options;
    sessions = co_await rest.async_list_all_sessions(options, use_awaitable);
  } else {
    const ListSessionsOptions options(limit);
    sessions = (co_await rest.async_list_sessions(options, use_awaitable)).sessions;
  }
  if (context.json()) {
    boost::json::array array;
    for (const std::string& id : sessions) array.emplace_back(id);
    boost::json::object object;
    object["sessions"] = std::move(array);
    print_json(context.out, object);
  } else {
    Table table({"Session ID"});
    for (const std::string& id : sessions) table.add_row({id});
    print_listing(context, table, "No sessions found");
  }
}

asio::awaitable<void> session_info(Context& context, std::string session_id) {
  const GetSessionResponse session =
      co_await context.rest().async_get_session(session_id, AccessScope::owned, use_awaitable);
  if (context.json()) {
    boost::json::value value = json_of(session);
    value.as_object()["session_id"] = session_id;
    print_json(context.out, value);
    co_return;
  }
  Table table({"Kind", "ID"});
  for (const std::string& id : session.training_run_ids) table.add_row({"training run", id});
  for (const std::string& id : session.sampler_ids) table.add_row({"sampler", id});
  context.out << "Session " << session_id << '\n';
  table.print(context.out);
}

class ExportOptions {
 public:
  ExportOptions() = default;
  std::string session_id;
  std::string output;  // empty: ./<id>.pftrace
  bool url_only = false;
};

asio::awaitable<void> session_export_trace(Context& context, ExportOptions options) {
  const TraceExportResponse trace =
      co_await context.rest().async_export_session_trace(options.session_id, use_awaitable);
  if (!trace.url) throw CliError("the server reported the trace of " + options.session_id + " ready without a URL");
  boost::json::object object;
  object["session_id"] = options.session_id;
  object["url"] = *trace.url;
  if (options.url_only) {
    if (context.json()) {
      print_json(context.out, object);
    } else {
      context.out << *trace.url << '\n';
    }
    co_return;
  }
  const std::filesystem::path file = options.output.empty() ? options.session_id + ".pftrace" : options.output;
  const std::uint64_t size = co_await fetch_to_file(context, *trace.url, file);
  if (context.json()) {
    object["output"] = file.string();
    object["size_bytes"] = size;
    print_json(context.out, object);
  } else {
    context.out << "Saved the trace of session " << options.session_id << " to " << file.string() << " ("
                << display_size(static_cast<std::int64_t>(size)) << ")\n";
  }
}

}  // namespace

void add_session_commands(CLI::App& app, Action& action) {
  CLI::App& group = add_group(app, "session", "Sessions");

  auto limit = std::make_shared<std::int64_t>(20);
  CLI::App& list_cmd = add_command(group, "list", "List your session ids, newest first", action, limit, session_list);
  add_limit_option(list_cmd, *limit, "How many sessions to show (0: all)");

  auto session_id = std::make_shared<std::string>();
  CLI::App& info_cmd =
      add_command(group, "info", "Show the training runs and samplers of a session", action, session_id, session_info);
  info_cmd.add_option("SESSION_ID", *session_id, "The session id")->required();

  auto exporting = std::make_shared<ExportOptions>();
  CLI::App& export_cmd =
      add_command(group, "export-trace", "Export a session's Perfetto trace", action, exporting, session_export_trace);
  export_cmd.add_option("SESSION_ID", exporting->session_id, "The session id")->required();
  export_cmd.add_option("-o,--output", exporting->output, "Where to save it (default: ./<SESSION_ID>.pftrace)");
  export_cmd.add_flag("--url-only", exporting->url_only, "Only print the download URL");
}

}  // namespace tinker::cli
