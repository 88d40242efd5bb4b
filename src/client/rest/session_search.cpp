// RestClient::async_search_sessions and async_search_all_sessions (doc/rest.md#search-sessions):
// the request is checked before anything is sent, then POST /api/v1/sessions/search page by page;
// and RestClient::async_finish_session, which finishes any of the caller's sessions by id.
#include <tinker/rest_client.hpp>

#include "api/endpoints.hpp"
#include "api/endpoints_rest.hpp"
#include "client/rest/operation.hpp"
#include "client/rest/search_paging.hpp"

#include <iterator>
#include <utility>

namespace tinker::client::rest {
namespace {

using boost::system::error_code;

// Throws tinker::error (invalid_argument) naming the field of a request the service would refuse.
void check_session_search(const SessionSearchRequest& request) {
  check_search_limit_and_owner("search_sessions", request.limit, request.owner);
  if (request.statuses) {
    for (const SessionStatusQuery& status : *request.statuses) {
      if (status.reasons && status.kind != SessionStatusQuery::Kind::client_finished) {
        throw error(errc::invalid_argument, "search_sessions: statuses[].reasons is only allowed for client_finished");
      }
    }
  }
}

Op<SessionSearchResponse> search_sessions_op(HolderPtr holder, SessionSearchRequest request, diagnostics& diag) {
  check_session_search(request);
  SessionSearchResponse out;
  if (auto ec = co_await holder->ensure_config(diag)) co_return OperationResult<SessionSearchResponse>(ec, out);
  const error_code ec = co_await api::search_sessions(holder->http(), request, out, diag, holder->retry_call());
  co_return OperationResult<SessionSearchResponse>(ec, std::move(out));
}

OperationResult<std::vector<SessionSummary>> paging_failure(std::string message, diagnostics& diag) {
  diag.clear();
  diag.message = std::move(message);
  return OperationResult<std::vector<SessionSummary>>(make_error_code(errc::protocol_error),
                                                      std::vector<SessionSummary>());
}

// Follows next_cursor until a page has none, guarded by PageWalk.
Op<std::vector<SessionSummary>> search_all_sessions_op(HolderPtr holder, SessionSearchRequest request,
                                                       std::int64_t max_pages, diagnostics& diag) {
  check_session_search(request);
  PageWalk walk("search_all_sessions", max_pages);
  std::vector<SessionSummary> all;
  for (;;) {
    if (auto ec = co_await holder->ensure_config(diag)) {
      co_return OperationResult<std::vector<SessionSummary>>(ec, std::vector<SessionSummary>());
    }
    SessionSearchResponse response;
    const error_code ec = co_await api::search_sessions(holder->http(), request, response, diag, holder->retry_call());
    if (ec) co_return OperationResult<std::vector<SessionSummary>>(ec, std::vector<SessionSummary>());
    all.insert(all.end(), std::make_move_iterator(response.sessions.begin()),
               std::make_move_iterator(response.sessions.end()));
    if (!response.next_cursor) break;
    const SessionSearchCursor& next = *response.next_cursor;
    const std::string key = format_timestamp(next.last_created_at) + '\n' + next.last_session_id;
    if (auto stop = walk.next(key, "last_session_id \"" + next.last_session_id + "\"")) {
      co_return paging_failure(std::move(*stop), diag);
    }
    request.cursor = std::move(response.next_cursor);
  }
  co_return OperationResult<std::vector<SessionSummary>>(error_code(), std::move(all));
}

Op<Done> finish_session_by_id_op(HolderPtr holder, FinishSessionRequest request, diagnostics& diag) {
  if (request.session_id.empty()) throw error(errc::invalid_argument, "finish_session: session_id must not be empty");
  if (request.reason.kind == ClientSessionFinishReason::Kind::unknown) {
    throw error(errc::invalid_argument, "finish_session: reason must be success, errored or interrupted, got \"" +
                                            request.reason.type_name + "\"");
  }
  if (auto ec = co_await holder->ensure_config(diag)) co_return OperationResult<Done>(ec, Done());
  const error_code ec = co_await api::finish_session(holder->http(), request, diag, holder->retry_call());
  co_return OperationResult<Done>(ec, Done());
}

}  // namespace
}  // namespace tinker::client::rest

namespace tinker::detail {

void rest_search_sessions(HolderPtr h, SessionSearchRequest r, diagnostics* d, Handler<SessionSearchResponse> c) {
  client::rest::spawn_rest_call(std::move(h), d, std::move(c), &client::rest::search_sessions_op, std::move(r));
}

void rest_finish_session(HolderPtr h, FinishSessionRequest r, diagnostics* d, Handler<Done> c) {
  client::rest::spawn_rest_call(std::move(h), d, std::move(c), &client::rest::finish_session_by_id_op, std::move(r));
}

void rest_search_all_sessions(HolderPtr h, SessionSearchRequest r, std::int64_t max_pages, diagnostics* d,
                              Handler<std::vector<SessionSummary>> c) {
  client::rest::spawn_rest_call(std::move(h), d, std::move(c), &client::rest::search_all_sessions_op, std::move(r),
                                max_pages);
}

}  // namespace tinker::detail
