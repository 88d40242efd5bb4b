// The REST management endpoints (doc/rest.md#calls): paths, queries, pools, retry layers, and the
// archive endpoint's redirect / JSON / "still building" answers.
#include "api/endpoints_rest.hpp"

#include "core/wire/endpoint_paths.hpp"

#include "api/response.hpp"
#include "http/headers.hpp"
#include "http/retry_policy.hpp"

#include <tinker/codec.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdio>
#include <utility>

namespace tinker {

const char* to_string(AccessScope scope) noexcept {
  return scope == AccessScope::accessible ? "accessible" : "owned";
}

const char* to_string(AuditEventType type) noexcept {
  return type == AuditEventType::checkpoints ? "checkpoints" : "all";
}

}  // namespace tinker

namespace tinker::api {
namespace {

namespace asio = boost::asio;
using http::Method;
using http::PoolKind;
using std::chrono::milliseconds;

namespace paths = wire::paths;
constexpr std::chrono::minutes default_archive_url_lifetime{15};  // doc/rest.md#checkpoint-downloads

void append_segment(std::string& path, std::string_view segment) {
  path += '/';
  path += segment;
}

// "<collection>/<item>", then "/<segment>" when one is given.
std::string item_path(const paths::EndpointPath& collection, const std::string& item, std::string_view segment = {}) {
  std::string path(collection.full());
  append_segment(path, item);
  if (!segment.empty()) append_segment(path, segment);
  return path;
}

// training_runs/<run>/checkpoints/<checkpoint id>[/<action>]; the id ("weights/<name>") is sent
// verbatim, its slash unescaped (doc/protocol.md#endpoints).
std::string checkpoint_path(const std::string& run_id, const std::string& checkpoint_id, std::string_view action) {
  std::string path = item_path(paths::training_runs, run_id, paths::segment::checkpoints);
  append_segment(path, checkpoint_id);
  if (!action.empty()) append_segment(path, action);
  return path;
}

http::Request json_request(Method method, std::string path, std::string body) {
  http::Request request(method, std::move(path), PoolKind::training);
  request.body = std::move(body);
  request.content_type = "application/json";
  return request;
}

awaitable<CallOutcome> send_once(http::HttpClient& client, const http::Request& request, diagnostics& diag) {
  http::Request copy = request;
  auto [ec, response] = co_await client.async_send(std::move(copy), diag, asio::as_tuple(asio::use_awaitable));
  co_return CallOutcome{ec, std::move(response)};
}

bool still_building(const CallOutcome& outcome) {
  return std::get<0>(outcome) == errc::server_error && std::get<1>(outcome).status == 503;
}

// doc/rest.md#checkpoint-downloads: 503 means the archive is being built; wait and ask again.
awaitable<CallOutcome> archive_attempts(http::HttpClient& client, const http::Request& request, diagnostics& diag,
                                        const ArchiveWait& wait) {
  http::Clock& clock = client.clock();
  const auto start = clock.now();
  for (int attempt = 1;; ++attempt) {
    CallOutcome outcome = co_await send_once(client, request, diag);
    if (!still_building(outcome) || attempt >= wait.attempts) co_return outcome;
    if (wait.warn && attempt == 1) {
      wait.warn("the checkpoint archive for " + request.path.str() + " is still being built; waiting for it");
    } else if (wait.warn && clock.now() - start >= wait.still_running_after) {
      wait.warn("waiting for the checkpoint archive for " + request.path.str() + " ... still running");
    }
    if (co_await http::sleep_for(clock, wait.interval)) {
      co_return CallOutcome{make_error_code(errc::cancelled), http::Response()};
    }
  }
}

// Decodes inside the retry loop: an answer that cannot be read is asked for again
// (doc/protocol.md#call-retries).
template <class Out>
awaitable<error_code> call_json(http::HttpClient& client, http::Request request, Out& out, diagnostics& diag,
                                CallRetrySettings call_retry) {
  call_retry.accept = [&out](const http::Response& response, diagnostics& decode_diag) {
    return decode_json_response(response, out, decode_diag);
  };
  auto [ec, response] = co_await execute_with_retries(client, std::move(request), diag, std::move(call_retry));
  co_return ec;
}

// Calls answered with an empty (or ignored) body: only the status counts (doc/rest.md#calls).
awaitable<error_code> call_ignoring_body(http::HttpClient& client, http::Request request, diagnostics& diag,
                                         CallRetrySettings call_retry) {
  auto [ec, response] = co_await execute_with_retries(client, std::move(request), diag, std::move(call_retry));
  co_return ec;
}

// Publish (POST) or unpublish (DELETE): a 409 means "already so" and is the answer, at once
// (no transport retries, and the call retries do not retry it), doc/rest.md#calls.
awaitable<error_code> set_publication(http::HttpClient& client, Method method, const std::string& run_id,
                                      const std::string& checkpoint_id, diagnostics& diag,
                                      CallRetrySettings call_retry) {
  http::Request request(method, checkpoint_path(run_id, checkpoint_id, paths::segment::publish), PoolKind::training);
  request.max_retries = 0;
  call_retry.conflict_is_final = true;
  co_return co_await call_ignoring_body(client, std::move(request), diag, std::move(call_retry));
}

http::Request get_request(std::string path, const QueryString& query, PoolKind pool = PoolKind::training) {
  http::Request request(Method::get, std::move(path) + query.text(), pool);
  return request;
}

}  // namespace

QueryString& QueryString::add(std::string_view name, std::string_view value) {
  static constexpr char hex[] = "0123456789ABCDEF";
  text_ += text_.empty() ? '?' : '&';
  text_ += name;
  text_ += '=';
  for (const char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    const bool unreserved = (byte >= 'A' && byte <= 'Z') || (byte >= 'a' && byte <= 'z') ||
                            (byte >= '0' && byte <= '9') || c == '-' || c == '.' || c == '_' || c == '~' || c == ':';
    if (unreserved) {
      text_ += c;
    } else {
      text_ += '%';
      text_ += hex[byte >> 4];
      text_ += hex[byte & 0xF];
    }
  }
  return *this;
}

QueryString& QueryString::add(std::string_view name, std::int64_t value) {
  return add(name, std::to_string(value));
}

std::string format_day(std::chrono::year_month_day day) {
  if (!day.ok()) throw error(errc::invalid_argument, "day: not a valid calendar date");
  char text[16];
  std::snprintf(text, sizeof text, "%04d-%02u-%02u", static_cast<int>(day.year()), static_cast<unsigned>(day.month()),
                static_cast<unsigned>(day.day()));
  return text;
}

error_code decode_archive_answer(const http::Response& response, std::chrono::system_clock::time_point now,
                                 CheckpointArchiveUrlResponse& out, diagnostics& diag) {
  if (response.status < 300 || response.status >= 400) return decode_json_response(response, out, diag);
  const std::string_view location = response.header("location");
  if (location.empty()) {
    diag.clear();
    diag.http_status = response.status;
    diag.request_id = std::string(response.header("x-request-id"));
    diag.message = "the checkpoint archive redirect has no Location header";
    return make_error_code(errc::protocol_error);
  }
  const auto expires = http::parse_http_date(response.header("expires"), now)
                           .value_or(now + std::chrono::duration_cast<std::chrono::system_clock::duration>(
                                               default_archive_url_lifetime));
  out = CheckpointArchiveUrlResponse(std::string(location), std::chrono::floor<std::chrono::microseconds>(expires));
  return {};
}

awaitable<error_code> list_training_runs(http::HttpClient& client, const ListTrainingRunsOptions& options,
                                         TrainingRunsResponse& out, diagnostics& diag, CallRetrySettings call_retry) {
  QueryString query;
  query.add("limit", options.limit).add("offset", options.offset).add("access_scope", to_string(options.access_scope));
  if (options.project_id) query.add("project_id", *options.project_id);
  http::Request request = get_request(std::string(paths::training_runs.full()), query);
  co_return co_await call_json(client, std::move(request), out, diag, call_retry);
}

awaitable<error_code> get_training_run(http::HttpClient& client, const std::string& run_id, AccessScope scope,
                                       TrainingRun& out, diagnostics& diag, CallRetrySettings call_retry) {
  QueryString query;
  query.add("access_scope", to_string(scope));  // doc/rest.md#calls: always sent
  http::Request request = get_request(item_path(paths::training_runs, run_id), query);
  co_return co_await call_json(client, std::move(request), out, diag, call_retry);
}

awaitable<error_code> list_run_checkpoints(http::HttpClient& client, const std::string& run_id,
                                           CheckpointsListResponse& out, diagnostics& diag,
                                           CallRetrySettings call_retry) {
  const QueryString none;
  http::Request request = get_request(item_path(paths::training_runs, run_id, paths::segment::checkpoints), none);
  co_return co_await call_json(client, std::move(request), out, diag, call_retry);
}

awaitable<error_code> list_user_checkpoints(http::HttpClient& client, const ListUserCheckpointsOptions& options,
                                            CheckpointsListResponse& out, diagnostics& diag,
                                            CallRetrySettings call_retry) {
  QueryString query;
  query.add("limit", options.limit).add("offset", options.offset);
  http::Request request = get_request(std::string(paths::checkpoints.full()), query);
  co_return co_await call_json(client, std::move(request), out, diag, call_retry);
}

awaitable<error_code> delete_checkpoint(http::HttpClient& client, const std::string& run_id,
                                        const std::string& checkpoint_id, diagnostics& diag,
                                        CallRetrySettings call_retry) {
  http::Request request(Method::delete_, checkpoint_path(run_id, checkpoint_id, ""), PoolKind::training);
  co_return co_await call_ignoring_body(client, std::move(request), diag, call_retry);
}

awaitable<error_code> publish_checkpoint(http::HttpClient& client, const std::string& run_id,
                                         const std::string& checkpoint_id, diagnostics& diag,
                                         CallRetrySettings call_retry) {
  co_return co_await set_publication(client, Method::post, run_id, checkpoint_id, diag, std::move(call_retry));
}

awaitable<error_code> unpublish_checkpoint(http::HttpClient& client, const std::string& run_id,
                                           const std::string& checkpoint_id, diagnostics& diag,
                                           CallRetrySettings call_retry) {
  co_return co_await set_publication(client, Method::delete_, run_id, checkpoint_id, diag, std::move(call_retry));
}

awaitable<error_code> set_checkpoint_ttl(http::HttpClient& client, const std::string& run_id,
                                         const std::string& checkpoint_id, const SetCheckpointTtlRequest& request,
                                         diagnostics& diag, CallRetrySettings call_retry) {
  http::Request http_request =
      json_request(Method::put, checkpoint_path(run_id, checkpoint_id, paths::segment::ttl), to_json(request));
  co_return co_await call_ignoring_body(client, std::move(http_request), diag, call_retry);
}

awaitable<error_code> checkpoint_archive_url(http::HttpClient& client, const std::string& run_id,
                                             const std::string& checkpoint_id, const ArchiveWait& wait,
                                             CheckpointArchiveUrlResponse& out, diagnostics& diag,
                                             CallRetrySettings call_retry) {
  http::Request request(Method::get, checkpoint_path(run_id, checkpoint_id, paths::segment::archive),
                        PoolKind::storage);
  request.accept_redirect = true;  // the 302 is the answer, not a hop to follow
  // Each call attempt is the archive's own 503 loop.
  const ArchiveWait* building = &wait;
  call_retry.attempt = [building](http::HttpClient& c, const http::Request& r, diagnostics& d) {
    return archive_attempts(c, r, d, *building);
  };
  http::Clock* clock = &client.clock();
  call_retry.accept = [clock, &out](const http::Response& response, diagnostics& decode_diag) {
    return decode_archive_answer(response, clock->now(), out, decode_diag);
  };
  auto [ec, response] = co_await execute_with_retries(client, std::move(request), diag, std::move(call_retry));
  co_return ec;
}

awaitable<error_code> list_sessions(http::HttpClient& client, const ListSessionsOptions& options,
                                    ListSessionsResponse& out, diagnostics& diag, CallRetrySettings call_retry) {
  QueryString query;
  query.add("limit", options.limit).add("offset", options.offset).add("access_scope", to_string(options.access_scope));
  http::Request request = get_request(std::string(paths::sessions.full()), query);
  co_return co_await call_json(client, std::move(request), out, diag, call_retry);
}

awaitable<error_code> search_sessions(http::HttpClient& client, const SessionSearchRequest& request,
                                      SessionSearchResponse& out, diagnostics& diag, CallRetrySettings call_retry) {
  http::Request http_request = json_request(Method::post, std::string(paths::sessions_search.full()), to_json(request));
  co_return co_await call_json(client, std::move(http_request), out, diag, call_retry);
}

awaitable<error_code> get_session(http::HttpClient& client, const std::string& session_id, AccessScope scope,
                                  GetSessionResponse& out, diagnostics& diag, CallRetrySettings call_retry) {
  QueryString query;
  query.add("access_scope", to_string(scope));
  http::Request request = get_request(item_path(paths::sessions, session_id), query);
  co_return co_await call_json(client, std::move(request), out, diag, call_retry);
}

awaitable<error_code> assign_session_project(http::HttpClient& client, const std::string& session_id,
                                             const AssignSessionProjectRequest& request, diagnostics& diag,
                                             CallRetrySettings call_retry) {
  http::Request http_request =
      json_request(Method::put, item_path(paths::sessions, session_id, paths::segment::project), to_json(request));
  co_return co_await call_ignoring_body(client, std::move(http_request), diag, call_retry);
}

awaitable<error_code> trace_export(http::HttpClient& client, const std::string& session_id, TraceExportResponse& out,
                                   diagnostics& diag, CallRetrySettings call_retry) {
  const QueryString none;
  http::Request request = get_request(item_path(paths::sessions, session_id, paths::segment::trace_export), none);
  co_return co_await call_json(client, std::move(request), out, diag, call_retry);
}

awaitable<error_code> audit_log(http::HttpClient& client, const AuditLogOptions& options, AuditLogResponse& out,
                                diagnostics& diag, CallRetrySettings call_retry) {
  QueryString query;
  query.add("event_type", to_string(options.event_type));
  if (options.day) {
    if (!options.day->ok()) {
      diag.clear();
      diag.message = "day: not a valid calendar date";
      co_return make_error_code(errc::invalid_argument);
    }
    query.add("day", format_day(*options.day));
  }
  http::Request request = get_request(std::string(paths::audit.full()), query, PoolKind::storage);
  co_return co_await call_json(client, std::move(request), out, diag, call_retry);
}

awaitable<error_code> billing_usage(http::HttpClient& client, Timestamp starting_on, Timestamp ending_before,
                                    BillingUsageResponse& out, diagnostics& diag, CallRetrySettings call_retry) {
  QueryString query;
  query.add("starting_on", format_timestamp(starting_on)).add("ending_before", format_timestamp(ending_before));
  http::Request request = get_request(std::string(paths::billing_usage.full()), query);
  co_return co_await call_json(client, std::move(request), out, diag, call_retry);
}

awaitable<error_code> search_checkpoints(http::HttpClient& client, const CheckpointSearchRequest& request,
                                         CheckpointSearchResponse& out, diagnostics& diag,
                                         CallRetrySettings call_retry) {
  http::Request http_request =
      json_request(Method::post, std::string(paths::checkpoints_search.full()), to_json(request));
  co_return co_await call_json(client, std::move(http_request), out, diag, std::move(call_retry));
}

awaitable<error_code> checkpoint_storage_usage(http::HttpClient& client, const std::optional<std::string>& project_id,
                                               CheckpointStorageUsageResponse& out, diagnostics& diag,
                                               CallRetrySettings call_retry) {
  QueryString query;
  if (project_id) query.add("project_id", *project_id);
  http::Request request = get_request(std::string(paths::checkpoint_storage_usage.full()), query);
  co_return co_await call_json(client, std::move(request), out, diag, std::move(call_retry));
}

}  // namespace tinker::api
