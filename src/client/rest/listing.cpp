// RestClient's calls that make several requests (doc/rest.md#calls): listing every page, polling
// the session trace export, and the checkpoint archive URL with its "still building" wait.
#include <tinker/rest_client.hpp>

#include "api/endpoints_rest.hpp"
#include "client/rest/operation.hpp"
#include "http/clock.hpp"

#include <iterator>

namespace tinker::client::rest {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

// Throws tinker::error (invalid_argument) for a page size below 1.
std::int64_t page_size_of(const ListAllOptions& options, std::int64_t default_size) {
  const std::int64_t size = options.page_size.value_or(default_size);
  if (size < 1) throw error(errc::invalid_argument, "page_size: must be at least 1, got " + std::to_string(size));
  return size;
}

template <class T>
void append(std::vector<T>& all, std::vector<T>& page) {
  all.insert(all.end(), std::make_move_iterator(page.begin()), std::make_move_iterator(page.end()));
}

// doc/protocol.md#core-types, doc/rest.md#paging: more pages exist while the page was full and offset + items <
// total_count. (Items created or deleted while paging can shift the offsets: a listing is not a snapshot.)
bool has_more(std::size_t got, std::int64_t requested, std::int64_t next_offset, std::optional<Cursor> cursor) {
  if (static_cast<std::int64_t>(got) < requested) return false;
  return !cursor || next_offset < cursor->total_count;
}

Op<std::vector<TrainingRun>> list_all_training_runs_op(HolderPtr holder, ListAllOptions options, diagnostics& diag) {
  const std::int64_t page = page_size_of(options, ListAllOptions::default_runs_page);
  std::vector<TrainingRun> all;
  for (std::int64_t offset = 0;;) {
    if (auto ec = co_await holder->ensure_config(diag)) {
      co_return OperationResult<std::vector<TrainingRun>>(ec, std::vector<TrainingRun>());
    }
    const ListTrainingRunsOptions request(page, offset, options.access_scope, options.project_id);
    TrainingRunsResponse response;
    const error_code ec =
        co_await api::list_training_runs(holder->http(), request, response, diag, holder->retry_call());
    if (ec) co_return OperationResult<std::vector<TrainingRun>>(ec, std::vector<TrainingRun>());
    const std::size_t got = response.training_runs.size();
    offset += static_cast<std::int64_t>(got);
    append(all, response.training_runs);
    if (!has_more(got, page, offset, response.cursor)) break;
  }
  co_return OperationResult<std::vector<TrainingRun>>(error_code(), std::move(all));
}

Op<std::vector<Checkpoint>> list_all_user_checkpoints_op(HolderPtr holder, ListAllOptions options, diagnostics& diag) {
  const std::int64_t page = page_size_of(options, ListAllOptions::default_checkpoints_page);
  std::vector<Checkpoint> all;
  for (std::int64_t offset = 0;;) {
    if (auto ec = co_await holder->ensure_config(diag)) {
      co_return OperationResult<std::vector<Checkpoint>>(ec, std::vector<Checkpoint>());
    }
    const ListUserCheckpointsOptions request(page, offset);
    CheckpointsListResponse response;
    const error_code ec =
        co_await api::list_user_checkpoints(holder->http(), request, response, diag, holder->retry_call());
    if (ec) co_return OperationResult<std::vector<Checkpoint>>(ec, std::vector<Checkpoint>());
    const std::size_t got = response.checkpoints.size();
    offset += static_cast<std::int64_t>(got);
    append(all, response.checkpoints);
    if (!has_more(got, page, offset, response.cursor)) break;
  }
  co_return OperationResult<std::vector<Checkpoint>>(error_code(), std::move(all));
}

// Sessions have no cursor (doc/rest.md#calls): only a short page ends the listing.
Op<std::vector<std::string>> list_all_sessions_op(HolderPtr holder, ListAllOptions options, diagnostics& diag) {
  const std::int64_t page = page_size_of(options, ListAllOptions::default_sessions_page);
  std::vector<std::string> all;
  for (std::int64_t offset = 0;;) {
    if (auto ec = co_await holder->ensure_config(diag)) {
      co_return OperationResult<std::vector<std::string>>(ec, std::vector<std::string>());
    }
    const ListSessionsOptions request(page, offset, options.access_scope);
    ListSessionsResponse response;
    const error_code ec = co_await api::list_sessions(holder->http(), request, response, diag, holder->retry_call());
    if (ec) co_return OperationResult<std::vector<std::string>>(ec, std::vector<std::string>());
    const std::size_t got = response.sessions.size();
    // Without a cursor, a server that ignores `offset` would send the same full page forever.
    if (got > 0 && offset > 0 && response.sessions.front() == all[static_cast<std::size_t>(offset - page)]) {
      diag.clear();
      diag.message = "GET /api/v1/sessions answered offset " + std::to_string(offset) + " with the previous page again";
      co_return OperationResult<std::vector<std::string>>(make_error_code(errc::protocol_error),
                                                          std::vector<std::string>());
    }
    offset += static_cast<std::int64_t>(got);
    append(all, response.sessions);
    if (!has_more(got, page, offset, std::nullopt)) break;
  }
  co_return OperationResult<std::vector<std::string>>(error_code(), std::move(all));
}

// doc/rest.md#calls: poll until ready (a URL is then required) or failed.
Op<TraceExportResponse> export_session_trace_op(HolderPtr holder, std::string session_id, diagnostics& diag) {
  if (session_id.empty()) throw error(errc::invalid_argument, "session_id: must not be empty");
  for (;;) {
    TraceExportResponse status;
    if (auto ec = co_await holder->ensure_config(diag)) co_return OperationResult<TraceExportResponse>(ec, status);
    const error_code ec = co_await api::trace_export(holder->http(), session_id, status, diag, holder->retry_call());
    if (ec) co_return OperationResult<TraceExportResponse>(ec, status);
    if (status.status == TraceExportStatus::ready) {
      if (status.url && !status.url->empty()) co_return OperationResult<TraceExportResponse>(ec, std::move(status));
      diag.clear();
      diag.message = "the trace export of session " + session_id + " is ready but has no url";
      co_return OperationResult<TraceExportResponse>(make_error_code(errc::protocol_error), std::move(status));
    }
    if (status.status == TraceExportStatus::failed) {
      diag.clear();
      diag.category = RequestErrorCategory::unknown;
      diag.message =
          "the trace export of session " + session_id + " failed: " + status.error.value_or("no reason given");
      co_return OperationResult<TraceExportResponse>(make_error_code(errc::request_failed), std::move(status));
    }
    if (co_await http::sleep_for(holder->http().clock(), holder->timing().trace_export_poll_interval)) {
      co_return OperationResult<TraceExportResponse>(make_error_code(errc::cancelled), std::move(status));
    }
  }
}

Op<CheckpointArchiveUrlResponse> archive_url_op(HolderPtr holder, CheckpointRef ref, diagnostics& diag) {
  resolve_checkpoint(ref);
  CheckpointArchiveUrlResponse out;
  if (auto ec = co_await holder->ensure_config(diag)) co_return OperationResult<CheckpointArchiveUrlResponse>(ec, out);
  const error_code ec = co_await fetch_archive_url(*holder, ref, out, diag);
  co_return OperationResult<CheckpointArchiveUrlResponse>(ec, std::move(out));
}

}  // namespace

asio::awaitable<error_code> fetch_archive_url(ClientHolder& holder, const CheckpointRef& ref,
                                              CheckpointArchiveUrlResponse& out, diagnostics& diag) {
  api::ArchiveWait wait;
  wait.interval = holder.timing().archive_build_wait;
  wait.attempts = holder.timing().archive_build_attempts;
  wait.still_running_after = 6 * wait.interval;  // 180 s with the protocol's 30 s
  ClientHolder* logger = &holder;                // the caller keeps the holder alive
  wait.warn = [logger](const std::string& line) { logger->log(LogLevel::warning, line); };
  co_return co_await api::checkpoint_archive_url(holder.http(), ref.run_id, ref.checkpoint_id, wait, out, diag,
                                                 holder.retry_call());
}

}  // namespace tinker::client::rest

namespace tinker::detail {

using namespace client::rest;  // the operations above

void rest_list_all_training_runs(HolderPtr h, ListAllOptions o, diagnostics* d, Handler<std::vector<TrainingRun>> c) {
  spawn_rest_call(std::move(h), d, std::move(c), &list_all_training_runs_op, std::move(o));
}

void rest_list_all_user_checkpoints(HolderPtr h, ListAllOptions o, diagnostics* d, Handler<std::vector<Checkpoint>> c) {
  spawn_rest_call(std::move(h), d, std::move(c), &list_all_user_checkpoints_op, std::move(o));
}

void rest_list_all_sessions(HolderPtr h, ListAllOptions o, diagnostics* d, Handler<std::vector<std::string>> c) {
  spawn_rest_call(std::move(h), d, std::move(c), &list_all_sessions_op, std::move(o));
}

void rest_export_session_trace(HolderPtr h, std::string session_id, diagnostics* d, Handler<TraceExportResponse> c) {
  spawn_rest_call(std::move(h), d, std::move(c), &export_session_trace_op, std::move(session_id));
}

void rest_get_checkpoint_archive_url(HolderPtr h, CheckpointRef ref, diagnostics* d,
                                     Handler<CheckpointArchiveUrlResponse> c) {
  spawn_rest_call(std::move(h), d, std::move(c), &archive_url_op, std::move(ref));
}

}  // namespace tinker::detail
