// RestClient's single-request calls (doc/rest.md#calls): session-less (ensure_config,
// doc/protocol.md#bootstrap-and-lifecycle), then one endpoint of api/endpoints_rest with transport and call retries.
#include <tinker/rest_client.hpp>

#include "api/endpoints_rest.hpp"
#include "client/rest/operation.hpp"

namespace tinker::client::rest {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

Op<TrainingRunsResponse> list_training_runs_op(HolderPtr holder, ListTrainingRunsOptions options, diagnostics& diag) {
  TrainingRunsResponse out;
  if (auto ec = co_await holder->ensure_config(diag)) co_return OperationResult<TrainingRunsResponse>(ec, out);
  const error_code ec = co_await api::list_training_runs(holder->http(), options, out, diag, holder->retry_call());
  co_return OperationResult<TrainingRunsResponse>(ec, std::move(out));
}

Op<TrainingRun> get_training_run_op(HolderPtr holder, CheckpointRef run, AccessScope scope, diagnostics& diag) {
  resolve_run(run);
  TrainingRun out;
  if (auto ec = co_await holder->ensure_config(diag)) co_return OperationResult<TrainingRun>(ec, out);
  const error_code ec =
      co_await api::get_training_run(holder->http(), run.run_id, scope, out, diag, holder->retry_call());
  co_return OperationResult<TrainingRun>(ec, std::move(out));
}

Op<CheckpointsListResponse> list_checkpoints_op(HolderPtr holder, std::string run_id, diagnostics& diag) {
  CheckpointRef run(std::move(run_id), "");
  resolve_run(run);
  CheckpointsListResponse out;
  if (auto ec = co_await holder->ensure_config(diag)) co_return OperationResult<CheckpointsListResponse>(ec, out);
  const error_code ec = co_await api::list_run_checkpoints(holder->http(), run.run_id, out, diag, holder->retry_call());
  co_return OperationResult<CheckpointsListResponse>(ec, std::move(out));
}

Op<CheckpointsListResponse> list_user_checkpoints_op(HolderPtr holder, ListUserCheckpointsOptions options,
                                                     diagnostics& diag) {
  CheckpointsListResponse out;
  if (auto ec = co_await holder->ensure_config(diag)) co_return OperationResult<CheckpointsListResponse>(ec, out);
  const error_code ec = co_await api::list_user_checkpoints(holder->http(), options, out, diag, holder->retry_call());
  co_return OperationResult<CheckpointsListResponse>(ec, std::move(out));
}

Op<Done> checkpoint_action_op(HolderPtr holder, CheckpointRef ref, CheckpointAction action, diagnostics& diag) {
  resolve_checkpoint(ref);
  if (auto ec = co_await holder->ensure_config(diag)) co_return OperationResult<Done>(ec, Done());
  http::HttpClient& http = holder->http();
  const api::CallRetrySettings call_retry = holder->retry_call();
  error_code ec;
  switch (action) {
    case CheckpointAction::delete_checkpoint:
      ec = co_await api::delete_checkpoint(http, ref.run_id, ref.checkpoint_id, diag, call_retry);
      break;
    case CheckpointAction::publish:
      ec = co_await api::publish_checkpoint(http, ref.run_id, ref.checkpoint_id, diag, call_retry);
      break;
    case CheckpointAction::unpublish:
      ec = co_await api::unpublish_checkpoint(http, ref.run_id, ref.checkpoint_id, diag, call_retry);
      break;
  }
  co_return OperationResult<Done>(ec, Done());
}

Op<Done> set_checkpoint_ttl_op(HolderPtr holder, CheckpointRef ref, std::optional<std::int64_t> ttl_seconds,
                               diagnostics& diag) {
  resolve_checkpoint(ref);
  if (auto ec = co_await holder->ensure_config(diag)) co_return OperationResult<Done>(ec, Done());
  const SetCheckpointTtlRequest request(ttl_seconds);
  const error_code ec = co_await api::set_checkpoint_ttl(holder->http(), ref.run_id, ref.checkpoint_id, request, diag,
                                                         holder->retry_call());
  co_return OperationResult<Done>(ec, Done());
}

Op<ListSessionsResponse> list_sessions_op(HolderPtr holder, ListSessionsOptions options, diagnostics& diag) {
  ListSessionsResponse out;
  if (auto ec = co_await holder->ensure_config(diag)) co_return OperationResult<ListSessionsResponse>(ec, out);
  const error_code ec = co_await api::list_sessions(holder->http(), options, out, diag, holder->retry_call());
  co_return OperationResult<ListSessionsResponse>(ec, std::move(out));
}

Op<GetSessionResponse> get_session_op(HolderPtr holder, std::string session_id, AccessScope scope, diagnostics& diag) {
  if (session_id.empty()) throw error(errc::invalid_argument, "session_id: must not be empty");
  GetSessionResponse out;
  if (auto ec = co_await holder->ensure_config(diag)) co_return OperationResult<GetSessionResponse>(ec, out);
  const error_code ec = co_await api::get_session(holder->http(), session_id, scope, out, diag, holder->retry_call());
  co_return OperationResult<GetSessionResponse>(ec, std::move(out));
}

Op<Done> assign_session_project_op(HolderPtr holder, std::string session_id, std::string project_id,
                                   diagnostics& diag) {
  if (session_id.empty()) throw error(errc::invalid_argument, "session_id: must not be empty");
  if (auto ec = co_await holder->ensure_config(diag)) co_return OperationResult<Done>(ec, Done());
  const AssignSessionProjectRequest request(std::move(project_id));
  const error_code ec =
      co_await api::assign_session_project(holder->http(), session_id, request, diag, holder->retry_call());
  co_return OperationResult<Done>(ec, Done());
}

Op<AuditLogResponse> audit_log_op(HolderPtr holder, AuditLogOptions options, diagnostics& diag) {
  AuditLogResponse out;
  if (auto ec = co_await holder->ensure_config(diag)) co_return OperationResult<AuditLogResponse>(ec, out);
  const error_code ec = co_await api::audit_log(holder->http(), options, out, diag, holder->retry_call());
  co_return OperationResult<AuditLogResponse>(ec, std::move(out));
}

Op<BillingUsageResponse> billing_usage_op(HolderPtr holder, Timestamp starting_on, Timestamp ending_before,
                                          diagnostics& diag) {
  BillingUsageResponse out;
  if (auto ec = co_await holder->ensure_config(diag)) co_return OperationResult<BillingUsageResponse>(ec, out);
  const error_code ec =
      co_await api::billing_usage(holder->http(), starting_on, ending_before, out, diag, holder->retry_call());
  co_return OperationResult<BillingUsageResponse>(ec, std::move(out));
}

}  // namespace

void resolve_run(CheckpointRef& ref) {
  if (!ref.tinker_path.empty()) {
    const TinkerPath parsed = TinkerPath::parse(ref.tinker_path);
    ref.run_id = parsed.training_run_id;
    ref.checkpoint_id = parsed.checkpoint_id();
  }
  if (ref.run_id.empty()) throw error(errc::invalid_argument, "run_id: must not be empty");
}

void resolve_checkpoint(CheckpointRef& ref) {
  resolve_run(ref);
  if (ref.checkpoint_id.empty()) throw error(errc::invalid_argument, "checkpoint_id: must not be empty");
}

}  // namespace tinker::client::rest

namespace tinker::detail {

using namespace client::rest;  // the operations above

void rest_list_training_runs(HolderPtr h, ListTrainingRunsOptions o, diagnostics* d, Handler<TrainingRunsResponse> c) {
  spawn_rest_call(std::move(h), d, std::move(c), &list_training_runs_op, std::move(o));
}

void rest_get_training_run(HolderPtr h, CheckpointRef run, AccessScope s, diagnostics* d, Handler<TrainingRun> c) {
  spawn_rest_call(std::move(h), d, std::move(c), &get_training_run_op, std::move(run), s);
}

void rest_list_checkpoints(HolderPtr h, std::string run_id, diagnostics* d, Handler<CheckpointsListResponse> c) {
  spawn_rest_call(std::move(h), d, std::move(c), &list_checkpoints_op, std::move(run_id));
}

void rest_list_user_checkpoints(HolderPtr h, ListUserCheckpointsOptions o, diagnostics* d,
                                Handler<CheckpointsListResponse> c) {
  spawn_rest_call(std::move(h), d, std::move(c), &list_user_checkpoints_op, std::move(o));
}

void rest_checkpoint_action(HolderPtr h, CheckpointRef ref, CheckpointAction a, diagnostics* d, Handler<Done> c) {
  spawn_rest_call(std::move(h), d, std::move(c), &checkpoint_action_op, std::move(ref), a);
}

void rest_set_checkpoint_ttl(HolderPtr h, CheckpointRef ref, std::optional<std::int64_t> ttl_seconds, diagnostics* d,
                             Handler<Done> c) {
  spawn_rest_call(std::move(h), d, std::move(c), &set_checkpoint_ttl_op, std::move(ref), ttl_seconds);
}

void rest_list_sessions(HolderPtr h, ListSessionsOptions o, diagnostics* d, Handler<ListSessionsResponse> c) {
  spawn_rest_call(std::move(h), d, std::move(c), &list_sessions_op, std::move(o));
}

void rest_get_session(HolderPtr h, std::string session_id, AccessScope s, diagnostics* d,
                      Handler<GetSessionResponse> c) {
  spawn_rest_call(std::move(h), d, std::move(c), &get_session_op, std::move(session_id), s);
}

void rest_assign_session_project(HolderPtr h, std::string session_id, std::string project_id, diagnostics* d,
                                 Handler<Done> c) {
  spawn_rest_call(std::move(h), d, std::move(c), &assign_session_project_op, std::move(session_id),
                  std::move(project_id));
}

void rest_get_audit_log(HolderPtr h, AuditLogOptions o, diagnostics* d, Handler<AuditLogResponse> c) {
  spawn_rest_call(std::move(h), d, std::move(c), &audit_log_op, std::move(o));
}

void rest_get_billing_usage(HolderPtr h, Timestamp starting_on, Timestamp ending_before, diagnostics* d,
                            Handler<BillingUsageResponse> c) {
  spawn_rest_call(std::move(h), d, std::move(c), &billing_usage_op, starting_on, ending_before);
}

}  // namespace tinker::detail
