// The REST management endpoints (doc/rest.md#calls): one typed function per endpoint, in the style of
// api/endpoints.hpp. Transport retries with the default 10 retries and call retries unless noted; path
// parameters are inserted verbatim (checkpoint ids contain a slash, doc/protocol.md#endpoints).
#pragma once

#include "api/execute_with_retries.hpp"
#include "http/client.hpp"

#include <tinker/rest_client.hpp>
#include <tinker/types.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace tinker::api {

using boost::asio::awaitable;
using boost::system::error_code;

/// The "still building" wait of the archive endpoint (doc/rest.md#checkpoint-downloads): on 503 sleep `interval`
/// and ask again, up to `attempts` requests in this inner loop. `warn` (may be empty) receives
/// the log lines (when the wait starts, and "still running" once `still_running_after` passed).
class ArchiveWait {
 public:
  ArchiveWait() = default;
  std::chrono::milliseconds interval{30'000};
  int attempts = 6;
  std::chrono::milliseconds still_running_after{180'000};
  std::function<void(const std::string&)> warn;
};

awaitable<error_code> list_training_runs(http::HttpClient& client, const ListTrainingRunsOptions& options,
                                         TrainingRunsResponse& out, diagnostics& diag, CallRetrySettings call_retry);
awaitable<error_code> get_training_run(http::HttpClient& client, const std::string& run_id, AccessScope scope,
                                       TrainingRun& out, diagnostics& diag, CallRetrySettings call_retry);
awaitable<error_code> list_run_checkpoints(http::HttpClient& client, const std::string& run_id,
                                           CheckpointsListResponse& out, diagnostics& diag,
                                           CallRetrySettings call_retry);
awaitable<error_code> list_user_checkpoints(http::HttpClient& client, const ListUserCheckpointsOptions& options,
                                            CheckpointsListResponse& out, diagnostics& diag,
                                            CallRetrySettings call_retry);
awaitable<error_code> delete_checkpoint(http::HttpClient& client, const std::string& run_id,
                                        const std::string& checkpoint_id, diagnostics& diag,
                                        CallRetrySettings call_retry);
/// Choice: 409 ("already public" / "already private") is final here. The Python SDK retries it
/// in both layers like any 409, so a second publish only fails after minutes of retries;
/// these two calls therefore send without transport retries and the call retries do not retry a 409
/// (transport failures, 429 and 5xx are still retried by the call retries).
awaitable<error_code> publish_checkpoint(http::HttpClient& client, const std::string& run_id,
                                         const std::string& checkpoint_id, diagnostics& diag,
                                         CallRetrySettings call_retry);
awaitable<error_code> unpublish_checkpoint(http::HttpClient& client, const std::string& run_id,
                                           const std::string& checkpoint_id, diagnostics& diag,
                                           CallRetrySettings call_retry);
awaitable<error_code> set_checkpoint_ttl(http::HttpClient& client, const std::string& run_id,
                                         const std::string& checkpoint_id, const SetCheckpointTtlRequest& request,
                                         diagnostics& diag, CallRetrySettings call_retry);
/// Storage pool, redirects read and never followed: a 3xx gives Location and Expires (missing
/// or unparsable Expires: now + 15 min); a 200 is the JSON form. The 503 loop of `wait` runs
/// inside the call retries, each of its requests with transport retries.
awaitable<error_code> checkpoint_archive_url(http::HttpClient& client, const std::string& run_id,
                                             const std::string& checkpoint_id, const ArchiveWait& wait,
                                             CheckpointArchiveUrlResponse& out, diagnostics& diag,
                                             CallRetrySettings call_retry);
awaitable<error_code> list_sessions(http::HttpClient& client, const ListSessionsOptions& options,
                                    ListSessionsResponse& out, diagnostics& diag, CallRetrySettings call_retry);
/// POST /api/v1/sessions/search (doc/rest.md#search-sessions).
awaitable<error_code> search_sessions(http::HttpClient& client, const SessionSearchRequest& request,
                                      SessionSearchResponse& out, diagnostics& diag, CallRetrySettings call_retry);
awaitable<error_code> get_session(http::HttpClient& client, const std::string& session_id, AccessScope scope,
                                  GetSessionResponse& out, diagnostics& diag, CallRetrySettings call_retry);
awaitable<error_code> assign_session_project(http::HttpClient& client, const std::string& session_id,
                                             const AssignSessionProjectRequest& request, diagnostics& diag,
                                             CallRetrySettings call_retry);
/// One poll of the trace export job (the polling loop is the caller's).
awaitable<error_code> trace_export(http::HttpClient& client, const std::string& session_id, TraceExportResponse& out,
                                   diagnostics& diag, CallRetrySettings call_retry);
/// Storage pool (doc/protocol.md#pools-timeouts-and-throttles: REST_SUPPORT_REDIRECT).
awaitable<error_code> audit_log(http::HttpClient& client, const AuditLogOptions& options, AuditLogResponse& out,
                                diagnostics& diag, CallRetrySettings call_retry);
awaitable<error_code> billing_usage(http::HttpClient& client, Timestamp starting_on, Timestamp ending_before,
                                    BillingUsageResponse& out, diagnostics& diag, CallRetrySettings call_retry);
/// POST /api/v1/checkpoints/search with the request as its JSON body (a read: retried like a GET).
awaitable<error_code> search_checkpoints(http::HttpClient& client, const CheckpointSearchRequest& request,
                                         CheckpointSearchResponse& out, diagnostics& diag,
                                         CallRetrySettings call_retry);
/// GET /api/v1/billing/usage/checkpoints/current[?project_id=...].
awaitable<error_code> checkpoint_storage_usage(http::HttpClient& client, const std::optional<std::string>& project_id,
                                               CheckpointStorageUsageResponse& out, diagnostics& diag,
                                               CallRetrySettings call_retry);

/// "?name=value&..." with percent-encoded values (for tests and the functions above).
class QueryString {
 public:
  QueryString() = default;
  QueryString& add(std::string_view name, std::string_view value);
  QueryString& add(std::string_view name, std::int64_t value);
  const std::string& text() const noexcept { return text_; }

 private:
  std::string text_;
};

/// The archive endpoint's answer (doc/rest.md#checkpoint-downloads): a 3xx gives Location and Expires (an HTTP-date;
/// missing or unparsable: `now` + 15 min; no Location: protocol_error); a 200 is the JSON form.
error_code decode_archive_answer(const http::Response& response, std::chrono::system_clock::time_point now,
                                 CheckpointArchiveUrlResponse& out, diagnostics& diag);

/// "YYYY-MM-DD"; throws tinker::error (invalid_argument) for an invalid date.
std::string format_day(std::chrono::year_month_day day);

}  // namespace tinker::api
