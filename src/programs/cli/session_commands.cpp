// `tinker session list|info|search|finish|export-trace` (doc/cli.md): the REST session endpoints,
// session search and finish, and the trace export (doc/rest.md).
#include "programs/cli/context.hpp"
#include "programs/cli/output.hpp"
#include "programs/cli/transfer.hpp"

#include <tinker/async.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <CLI/CLI.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <ostream>
#include <vector>

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

// The session's search summary (display name, status), or nothing from a server without session
// search: `info` shows what it can.
asio::awaitable<std::optional<SessionSummary>> session_summary(Context& context, std::string session_id) {
  SessionSearchRequest request;
  request.session_id = session_id;
  request.limit = 1;
  diagnostics diag;
  auto as_tuple_token = asio::as_tuple(asio::use_awaitable);  // named: GCC 12 rule 1
  auto [ec, found] = co_await context.rest().async_search_sessions(std::move(request), diag, as_tuple_token);
  if (ec || found.sessions.empty() || found.sessions.front().session_id != session_id) co_return std::nullopt;
  co_return std::move(found.sessions.front());
}

std::string status_text(const std::optional<SessionStatus>& status) {
  return status ? describe(*status) : std::string("-");
}

asio::awaitable<void> session_info(Context& context, std::string session_id) {
  const GetSessionResponse session =
      co_await context.rest().async_get_session(session_id, AccessScope::owned, use_awaitable);
  const std::optional<SessionSummary> summary = co_await session_summary(context, session_id);
  if (context.json()) {
    boost::json::value value = json_of(session);
    value.as_object()["session_id"] = session_id;
    if (summary) {
      if (summary->display_name) value.as_object()["display_name"] = *summary->display_name;
      if (summary->status) value.as_object()["status"] = json_of(*summary->status);
    }
    print_json(context.out, value);
    co_return;
  }
  Table table({"Kind", "ID"});
  for (const std::string& id : session.training_run_ids) table.add_row({"training run", id});
  for (const std::string& id : session.sampler_ids) table.add_row({"sampler", id});
  context.out << "Session " << session_id << '\n';
  if (summary) {
    if (summary->display_name) context.out << "Display name: " << *summary->display_name << '\n';
    context.out << "Status: " << status_text(summary->status) << '\n';
  }
  table.print(context.out);
}

class SearchOptions {
 public:
  SearchOptions() = default;
  std::string session_id;
  std::vector<std::string> project_ids;
  std::vector<std::string> metadata;  // KEY=VALUE
  std::string display_name;
  std::string owner = "own";
  std::vector<std::string> owner_urns;
  std::vector<std::string> statuses;
  std::vector<std::string> reasons;
  std::int64_t limit = 20;
  bool all = false;
};

SessionStatusQuery status_query(const std::string& name, const std::vector<std::string>& reasons) {
  using Kind = SessionStatusQuery::Kind;
  if (name == "active") return SessionStatusQuery(Kind::active);
  if (name == "failed") return SessionStatusQuery(Kind::failed);
  if (name == "cancelled") return SessionStatusQuery(Kind::cancelled);
  SessionStatusQuery query(Kind::client_finished);
  if (!reasons.empty()) {
    query.reasons.emplace();
    for (const std::string& reason : reasons) query.reasons->push_back(parse_finish_reason(reason).kind);
  }
  return query;
}

SessionSearchRequest search_request(const SearchOptions& options) {
  SessionSearchRequest request;
  if (!options.session_id.empty()) request.session_id = options.session_id;
  if (!options.project_ids.empty()) request.project_ids = options.project_ids;
  for (const std::string& pair : options.metadata) {
    const std::size_t equals = pair.find('=');
    if (equals == std::string::npos || equals == 0) {
      throw UsageError("--metadata: expected KEY=VALUE, got \"" + pair + "\"");
    }
    request.user_metadata[pair.substr(0, equals)] = pair.substr(equals + 1);
  }
  if (!options.display_name.empty()) request.display_name = options.display_name;
  if (!options.owner_urns.empty() || options.owner == "user") {
    request.owner = SearchOwner::users(options.owner_urns);
  } else if (options.owner == "accessible") {
    request.owner = SearchOwner::accessible();
  }
  if (!options.reasons.empty() &&
      std::find(options.statuses.begin(), options.statuses.end(), "client_finished") == options.statuses.end()) {
    throw UsageError("--reason: needs --status client_finished");
  }
  if (!options.statuses.empty()) {
    request.statuses.emplace();
    for (const std::string& status : options.statuses)
      request.statuses->push_back(status_query(status, options.reasons));
  }
  request.limit = options.limit;
  return request;
}

asio::awaitable<void> session_search(Context& context, SearchOptions options) {
  const SessionSearchRequest request = search_request(options);
  const RestClient& rest = context.rest();
  SessionSearchResponse found;
  if (options.all) {
    found.sessions =
        co_await rest.async_search_all_sessions(request, RestClient::default_search_max_pages, use_awaitable);
  } else {
    found = co_await rest.async_search_sessions(request, use_awaitable);
  }
  if (context.json()) {
    print_json(context.out, json_of(found));
    co_return;
  }
  Table table({"Session ID", "Created", "Display name", "Status", "Checkpoints", "Storage"});
  for (const SessionSummary& session : found.sessions) {
    table.add_row({session.session_id, display_time(session.created_at), session.display_name.value_or("-"),
                   status_text(session.status), std::to_string(session.checkpoints_count),
                   display_size(session.checkpoint_storage_bytes)});
  }
  print_listing(context, table, "No sessions found");
  if (found.next_cursor) context.out << "More sessions match: use --all, or --limit up to 200\n";
}

class FinishOptions {
 public:
  FinishOptions() = default;
  std::string session_id;
  std::string reason;
  std::string detail;
};

asio::awaitable<void> session_finish(Context& context, FinishOptions options) {
  FinishSessionRequest request(options.session_id, parse_finish_reason(options.reason));
  if (!options.detail.empty()) request.detail = options.detail;
  co_await context.rest().async_finish_session(request, use_awaitable);
  if (context.json()) {
    boost::json::object object;
    object["session_id"] = options.session_id;
    object["reason"] = options.reason;
    print_json(context.out, object);
  } else {
    context.out << "Finished session " << options.session_id << " (" << options.reason << ")\n";
  }
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

  auto searching = std::make_shared<SearchOptions>();
  CLI::App& search_cmd =
      add_command(group, "search", "Search sessions by id, name, project, metadata, owner or status, newest first",
                  action, searching, session_search);
  search_cmd.add_option("--id", searching->session_id, "Exact session id (with --name: either matches)");
  search_cmd.add_option("--project", searching->project_ids, "Only sessions of this project (repeatable)");
  search_cmd.add_option("--metadata", searching->metadata, "KEY=VALUE that must hold (repeatable)");
  search_cmd.add_option("--name", searching->display_name, "Words that must all appear in the display name (any case)");
  search_cmd.add_option("--owner", searching->owner, "Whose sessions: own, accessible or user")
      ->check(CLI::IsMember({"own", "accessible", "user"}))
      ->capture_default_str();
  search_cmd.add_option("--owner-urn", searching->owner_urns, "A user whose sessions to search (repeatable, 1-10)");
  search_cmd.add_option("--status", searching->statuses, "active, failed, cancelled or client_finished (repeatable)")
      ->check(CLI::IsMember({"active", "failed", "cancelled", "client_finished"}));
  search_cmd
      .add_option("--reason", searching->reasons,
                  "With --status client_finished: success, errored or interrupted (repeatable)")
      ->check(CLI::IsMember({"success", "errored", "interrupted"}));
  search_cmd.add_option("--limit", searching->limit, "Sessions per page (1-200)")
      ->check(CLI::Range(1, 200))
      ->capture_default_str();
  search_cmd.add_flag("--all", searching->all, "Every page");

  auto finishing = std::make_shared<FinishOptions>();
  CLI::App& finish_cmd = add_command(group, "finish", "Finish a session with a reason (e.g. one left running)", action,
                                     finishing, session_finish);
  finish_cmd.add_option("SESSION_ID", finishing->session_id, "The session id")->required();
  finish_cmd.add_option("--reason", finishing->reason, "success, errored or interrupted")
      ->required()
      ->check(CLI::IsMember({"success", "errored", "interrupted"}));
  finish_cmd.add_option("--detail", finishing->detail, "Free text shown with the status");

  auto exporting = std::make_shared<ExportOptions>();
  CLI::App& export_cmd =
      add_command(group, "export-trace", "Export a session's Perfetto trace", action, exporting, session_export_trace);
  export_cmd.add_option("SESSION_ID", exporting->session_id, "The session id")->required();
  export_cmd.add_option("-o,--output", exporting->output, "Where to save it (default: ./<SESSION_ID>.pftrace)");
  export_cmd.add_flag("--url-only", exporting->url_only, "Only print the download URL");
}

}  // namespace tinker::cli
