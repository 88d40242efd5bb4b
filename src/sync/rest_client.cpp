// tinker::sync::RestClient: the blocking REST calls (include/tinker/sync/rest_client.hpp) over
// tinker::RestClient, each a call_blocking of the async call (src/sync/blocking.hpp). The two
// calls that existed before (get_weights_info, get_sampler) live in src/sync/service_client.cpp.
#include <tinker/sync/rest_client.hpp>

#include "sync/blocking.hpp"
#include "sync/runtime.hpp"

#include <variant>

namespace tinker::sync {
namespace {

using detail::call_blocking;
using detail::PromiseHandler;
using detail::value_or_throw;

// The async calls without an answer complete with std::monostate; the blocking ones return void.
Result<void> without_value(Result<std::monostate>&& result) {
  if (result.has_error()) return Result<void>(boost::system::in_place_error, result.error());
  return Result<void>();
}

void value_or_throw(Result<void>&& result) {
  if (result.has_error()) result.error().raise();
}

}  // namespace

Result<TrainingRunsResponse> RestClient::try_list_training_runs(ListTrainingRunsOptions options) const {
  using T = TrainingRunsResponse;
  return call_blocking<T>(runtime_, "RestClient::list_training_runs",
                          [&](diagnostics& diag, PromiseHandler<T> handler) {
                            client_->async_list_training_runs(std::move(options), diag, std::move(handler));
                          });
}

TrainingRunsResponse RestClient::list_training_runs(ListTrainingRunsOptions options) const {
  return value_or_throw(try_list_training_runs(std::move(options)));
}

Result<TrainingRun> RestClient::try_get_training_run(std::string run_id, AccessScope scope) const {
  using T = TrainingRun;
  return call_blocking<T>(runtime_, "RestClient::get_training_run", [&](diagnostics& diag, PromiseHandler<T> handler) {
    client_->async_get_training_run(std::move(run_id), scope, diag, std::move(handler));
  });
}

TrainingRun RestClient::get_training_run(std::string run_id, AccessScope scope) const {
  return value_or_throw(try_get_training_run(std::move(run_id), scope));
}

Result<TrainingRun> RestClient::try_get_training_run_from_tinker_path(std::string tinker_path,
                                                                      AccessScope scope) const {
  using T = TrainingRun;
  return call_blocking<T>(
      runtime_, "RestClient::get_training_run_from_tinker_path", [&](diagnostics& diag, PromiseHandler<T> handler) {
        client_->async_get_training_run_from_tinker_path(std::move(tinker_path), scope, diag, std::move(handler));
      });
}

TrainingRun RestClient::get_training_run_from_tinker_path(std::string tinker_path, AccessScope scope) const {
  return value_or_throw(try_get_training_run_from_tinker_path(std::move(tinker_path), scope));
}

Result<std::vector<TrainingRun>> RestClient::try_list_all_training_runs(ListAllOptions options) const {
  using T = std::vector<TrainingRun>;
  return call_blocking<T>(runtime_, "RestClient::list_all_training_runs",
                          [&](diagnostics& diag, PromiseHandler<T> handler) {
                            client_->async_list_all_training_runs(std::move(options), diag, std::move(handler));
                          });
}

std::vector<TrainingRun> RestClient::list_all_training_runs(ListAllOptions options) const {
  return value_or_throw(try_list_all_training_runs(std::move(options)));
}

Result<CheckpointsListResponse> RestClient::try_list_checkpoints(std::string run_id) const {
  using T = CheckpointsListResponse;
  return call_blocking<T>(runtime_, "RestClient::list_checkpoints", [&](diagnostics& diag, PromiseHandler<T> handler) {
    client_->async_list_checkpoints(std::move(run_id), diag, std::move(handler));
  });
}

CheckpointsListResponse RestClient::list_checkpoints(std::string run_id) const {
  return value_or_throw(try_list_checkpoints(std::move(run_id)));
}

Result<CheckpointsListResponse> RestClient::try_list_user_checkpoints(ListUserCheckpointsOptions options) const {
  using T = CheckpointsListResponse;
  return call_blocking<T>(runtime_, "RestClient::list_user_checkpoints",
                          [&](diagnostics& diag, PromiseHandler<T> handler) {
                            client_->async_list_user_checkpoints(std::move(options), diag, std::move(handler));
                          });
}

CheckpointsListResponse RestClient::list_user_checkpoints(ListUserCheckpointsOptions options) const {
  return value_or_throw(try_list_user_checkpoints(std::move(options)));
}

Result<std::vector<Checkpoint>> RestClient::try_list_all_user_checkpoints(ListAllOptions options) const {
  using T = std::vector<Checkpoint>;
  return call_blocking<T>(runtime_, "RestClient::list_all_user_checkpoints",
                          [&](diagnostics& diag, PromiseHandler<T> handler) {
                            client_->async_list_all_user_checkpoints(std::move(options), diag, std::move(handler));
                          });
}

std::vector<Checkpoint> RestClient::list_all_user_checkpoints(ListAllOptions options) const {
  return value_or_throw(try_list_all_user_checkpoints(std::move(options)));
}

Result<void> RestClient::try_delete_checkpoint(std::string run_id, std::string checkpoint_id) const {
  using T = std::monostate;
  return without_value(
      call_blocking<T>(runtime_, "RestClient::delete_checkpoint", [&](diagnostics& diag, PromiseHandler<T> handler) {
        client_->async_delete_checkpoint(std::move(run_id), std::move(checkpoint_id), diag, std::move(handler));
      }));
}

void RestClient::delete_checkpoint(std::string run_id, std::string checkpoint_id) const {
  value_or_throw(try_delete_checkpoint(std::move(run_id), std::move(checkpoint_id)));
}

Result<void> RestClient::try_delete_checkpoint_from_tinker_path(std::string tinker_path) const {
  using T = std::monostate;
  return without_value(call_blocking<T>(
      runtime_, "RestClient::delete_checkpoint_from_tinker_path", [&](diagnostics& diag, PromiseHandler<T> handler) {
        client_->async_delete_checkpoint_from_tinker_path(std::move(tinker_path), diag, std::move(handler));
      }));
}

void RestClient::delete_checkpoint_from_tinker_path(std::string tinker_path) const {
  value_or_throw(try_delete_checkpoint_from_tinker_path(std::move(tinker_path)));
}

Result<void> RestClient::try_publish_checkpoint(std::string run_id, std::string checkpoint_id) const {
  using T = std::monostate;
  return without_value(
      call_blocking<T>(runtime_, "RestClient::publish_checkpoint", [&](diagnostics& diag, PromiseHandler<T> handler) {
        client_->async_publish_checkpoint(std::move(run_id), std::move(checkpoint_id), diag, std::move(handler));
      }));
}

void RestClient::publish_checkpoint(std::string run_id, std::string checkpoint_id) const {
  value_or_throw(try_publish_checkpoint(std::move(run_id), std::move(checkpoint_id)));
}

Result<void> RestClient::try_publish_checkpoint_from_tinker_path(std::string tinker_path) const {
  using T = std::monostate;
  return without_value(call_blocking<T>(
      runtime_, "RestClient::publish_checkpoint_from_tinker_path", [&](diagnostics& diag, PromiseHandler<T> handler) {
        client_->async_publish_checkpoint_from_tinker_path(std::move(tinker_path), diag, std::move(handler));
      }));
}

void RestClient::publish_checkpoint_from_tinker_path(std::string tinker_path) const {
  value_or_throw(try_publish_checkpoint_from_tinker_path(std::move(tinker_path)));
}

Result<void> RestClient::try_unpublish_checkpoint(std::string run_id, std::string checkpoint_id) const {
  using T = std::monostate;
  return without_value(
      call_blocking<T>(runtime_, "RestClient::unpublish_checkpoint", [&](diagnostics& diag, PromiseHandler<T> handler) {
        client_->async_unpublish_checkpoint(std::move(run_id), std::move(checkpoint_id), diag, std::move(handler));
      }));
}

void RestClient::unpublish_checkpoint(std::string run_id, std::string checkpoint_id) const {
  value_or_throw(try_unpublish_checkpoint(std::move(run_id), std::move(checkpoint_id)));
}

Result<void> RestClient::try_unpublish_checkpoint_from_tinker_path(std::string tinker_path) const {
  using T = std::monostate;
  return without_value(call_blocking<T>(
      runtime_, "RestClient::unpublish_checkpoint_from_tinker_path", [&](diagnostics& diag, PromiseHandler<T> handler) {
        client_->async_unpublish_checkpoint_from_tinker_path(std::move(tinker_path), diag, std::move(handler));
      }));
}

void RestClient::unpublish_checkpoint_from_tinker_path(std::string tinker_path) const {
  value_or_throw(try_unpublish_checkpoint_from_tinker_path(std::move(tinker_path)));
}

Result<void> RestClient::try_set_checkpoint_ttl(std::string run_id, std::string checkpoint_id,
                                                std::optional<std::int64_t> ttl_seconds) const {
  using T = std::monostate;
  return without_value(
      call_blocking<T>(runtime_, "RestClient::set_checkpoint_ttl", [&](diagnostics& diag, PromiseHandler<T> handler) {
        client_->async_set_checkpoint_ttl(std::move(run_id), std::move(checkpoint_id), ttl_seconds, diag,
                                          std::move(handler));
      }));
}

void RestClient::set_checkpoint_ttl(std::string run_id, std::string checkpoint_id,
                                    std::optional<std::int64_t> ttl_seconds) const {
  value_or_throw(try_set_checkpoint_ttl(std::move(run_id), std::move(checkpoint_id), ttl_seconds));
}

Result<void> RestClient::try_set_checkpoint_ttl_from_tinker_path(std::string tinker_path,
                                                                 std::optional<std::int64_t> ttl_seconds) const {
  using T = std::monostate;
  return without_value(call_blocking<T>(runtime_, "RestClient::set_checkpoint_ttl_from_tinker_path",
                                        [&](diagnostics& diag, PromiseHandler<T> handler) {
                                          client_->async_set_checkpoint_ttl_from_tinker_path(
                                              std::move(tinker_path), ttl_seconds, diag, std::move(handler));
                                        }));
}

void RestClient::set_checkpoint_ttl_from_tinker_path(std::string tinker_path,
                                                     std::optional<std::int64_t> ttl_seconds) const {
  value_or_throw(try_set_checkpoint_ttl_from_tinker_path(std::move(tinker_path), ttl_seconds));
}

Result<CheckpointArchiveUrlResponse> RestClient::try_get_checkpoint_archive_url(std::string run_id,
                                                                                std::string checkpoint_id) const {
  using T = CheckpointArchiveUrlResponse;
  return call_blocking<T>(runtime_, "RestClient::get_checkpoint_archive_url",
                          [&](diagnostics& diag, PromiseHandler<T> handler) {
                            client_->async_get_checkpoint_archive_url(std::move(run_id), std::move(checkpoint_id), diag,
                                                                      std::move(handler));
                          });
}

CheckpointArchiveUrlResponse RestClient::get_checkpoint_archive_url(std::string run_id,
                                                                    std::string checkpoint_id) const {
  return value_or_throw(try_get_checkpoint_archive_url(std::move(run_id), std::move(checkpoint_id)));
}

Result<CheckpointArchiveUrlResponse> RestClient::try_get_checkpoint_archive_url_from_tinker_path(
    std::string tinker_path) const {
  using T = CheckpointArchiveUrlResponse;
  return call_blocking<T>(runtime_, "RestClient::get_checkpoint_archive_url_from_tinker_path",
                          [&](diagnostics& diag, PromiseHandler<T> handler) {
                            client_->async_get_checkpoint_archive_url_from_tinker_path(std::move(tinker_path), diag,
                                                                                       std::move(handler));
                          });
}

CheckpointArchiveUrlResponse RestClient::get_checkpoint_archive_url_from_tinker_path(std::string tinker_path) const {
  return value_or_throw(try_get_checkpoint_archive_url_from_tinker_path(std::move(tinker_path)));
}

Result<DownloadResult> RestClient::try_download_checkpoint(std::string tinker_path, DownloadOptions options) const {
  using T = DownloadResult;
  return call_blocking<T>(
      runtime_, "RestClient::download_checkpoint", [&](diagnostics& diag, PromiseHandler<T> handler) {
        client_->async_download_checkpoint(std::move(tinker_path), std::move(options), diag, std::move(handler));
      });
}

DownloadResult RestClient::download_checkpoint(std::string tinker_path, DownloadOptions options) const {
  return value_or_throw(try_download_checkpoint(std::move(tinker_path), std::move(options)));
}

Result<DownloadResult> RestClient::try_download_url(std::string url, std::filesystem::path file,
                                                    UrlDownloadOptions options) const {
  using T = DownloadResult;
  return call_blocking<T>(runtime_, "RestClient::download_url", [&](diagnostics& diag, PromiseHandler<T> handler) {
    client_->async_download_url(std::move(url), std::move(file), std::move(options), diag, std::move(handler));
  });
}

DownloadResult RestClient::download_url(std::string url, std::filesystem::path file, UrlDownloadOptions options) const {
  return value_or_throw(try_download_url(std::move(url), std::move(file), std::move(options)));
}

Result<ExternalWeightsUrlsResponse> RestClient::try_get_external_weights_urls(std::string tinker_path) const {
  using T = ExternalWeightsUrlsResponse;
  return call_blocking<T>(runtime_, "RestClient::get_external_weights_urls",
                          [&](diagnostics& diag, PromiseHandler<T> handler) {
                            client_->async_get_external_weights_urls(std::move(tinker_path), diag, std::move(handler));
                          });
}

ExternalWeightsUrlsResponse RestClient::get_external_weights_urls(std::string tinker_path) const {
  return value_or_throw(try_get_external_weights_urls(std::move(tinker_path)));
}

Result<DownloadResult> RestClient::try_download_external_weights(std::string tinker_path,
                                                                 DownloadOptions options) const {
  using T = DownloadResult;
  return call_blocking<T>(
      runtime_, "RestClient::download_external_weights", [&](diagnostics& diag, PromiseHandler<T> handler) {
        client_->async_download_external_weights(std::move(tinker_path), std::move(options), diag, std::move(handler));
      });
}

DownloadResult RestClient::download_external_weights(std::string tinker_path, DownloadOptions options) const {
  return value_or_throw(try_download_external_weights(std::move(tinker_path), std::move(options)));
}

Result<ExternalWeightsUploadStartResponse> RestClient::try_external_weights_upload_start(
    ExternalWeightsUploadStartRequest request) const {
  using T = ExternalWeightsUploadStartResponse;
  return call_blocking<T>(runtime_, "RestClient::external_weights_upload_start",
                          [&](diagnostics& diag, PromiseHandler<T> handler) {
                            client_->async_external_weights_upload_start(std::move(request), diag, std::move(handler));
                          });
}

ExternalWeightsUploadStartResponse RestClient::external_weights_upload_start(
    ExternalWeightsUploadStartRequest request) const {
  return value_or_throw(try_external_weights_upload_start(std::move(request)));
}

Result<std::monostate> RestClient::try_external_weights_upload_put(ExternalWeightsUploadUrl target,
                                                                   std::filesystem::path file,
                                                                   ExternalWeightsPutOptions options) const {
  using T = std::monostate;
  return call_blocking<T>(runtime_, "RestClient::external_weights_upload_put",
                          [&](diagnostics& diag, PromiseHandler<T> handler) {
                            client_->async_external_weights_upload_put(std::move(target), std::move(file),
                                                                       std::move(options), diag, std::move(handler));
                          });
}

void RestClient::external_weights_upload_put(ExternalWeightsUploadUrl target, std::filesystem::path file,
                                             ExternalWeightsPutOptions options) const {
  static_cast<void>(
      value_or_throw(try_external_weights_upload_put(std::move(target), std::move(file), std::move(options))));
}

Result<ExternalWeightsUploadFinishResponse> RestClient::try_external_weights_upload_finish(
    std::string upload_id) const {
  using T = ExternalWeightsUploadFinishResponse;
  return call_blocking<T>(
      runtime_, "RestClient::external_weights_upload_finish", [&](diagnostics& diag, PromiseHandler<T> handler) {
        client_->async_external_weights_upload_finish(std::move(upload_id), diag, std::move(handler));
      });
}

ExternalWeightsUploadFinishResponse RestClient::external_weights_upload_finish(std::string upload_id) const {
  return value_or_throw(try_external_weights_upload_finish(std::move(upload_id)));
}

Result<ExternalWeightsUploadFinishResponse> RestClient::try_upload_external_weights(
    std::filesystem::path dir, ExternalWeightsUploadStartRequest request, ExternalWeightsUploadOptions options) const {
  using T = ExternalWeightsUploadFinishResponse;
  return call_blocking<T>(runtime_, "RestClient::upload_external_weights",
                          [&](diagnostics& diag, PromiseHandler<T> handler) {
                            client_->async_upload_external_weights(std::move(dir), std::move(request),
                                                                   std::move(options), diag, std::move(handler));
                          });
}

ExternalWeightsUploadFinishResponse RestClient::upload_external_weights(std::filesystem::path dir,
                                                                        ExternalWeightsUploadStartRequest request,
                                                                        ExternalWeightsUploadOptions options) const {
  return value_or_throw(try_upload_external_weights(std::move(dir), std::move(request), std::move(options)));
}

Result<WeightsInfoResponse> RestClient::try_get_weights_info_from_tinker_path(std::string tinker_path) const {
  using T = WeightsInfoResponse;
  return call_blocking<T>(
      runtime_, "RestClient::get_weights_info_from_tinker_path", [&](diagnostics& diag, PromiseHandler<T> handler) {
        client_->async_get_weights_info_from_tinker_path(std::move(tinker_path), diag, std::move(handler));
      });
}

WeightsInfoResponse RestClient::get_weights_info_from_tinker_path(std::string tinker_path) const {
  return value_or_throw(try_get_weights_info_from_tinker_path(std::move(tinker_path)));
}

Result<ListSessionsResponse> RestClient::try_list_sessions(ListSessionsOptions options) const {
  using T = ListSessionsResponse;
  return call_blocking<T>(runtime_, "RestClient::list_sessions", [&](diagnostics& diag, PromiseHandler<T> handler) {
    client_->async_list_sessions(std::move(options), diag, std::move(handler));
  });
}

ListSessionsResponse RestClient::list_sessions(ListSessionsOptions options) const {
  return value_or_throw(try_list_sessions(std::move(options)));
}

Result<std::vector<std::string>> RestClient::try_list_all_sessions(ListAllOptions options) const {
  using T = std::vector<std::string>;
  return call_blocking<T>(runtime_, "RestClient::list_all_sessions", [&](diagnostics& diag, PromiseHandler<T> handler) {
    client_->async_list_all_sessions(std::move(options), diag, std::move(handler));
  });
}

std::vector<std::string> RestClient::list_all_sessions(ListAllOptions options) const {
  return value_or_throw(try_list_all_sessions(std::move(options)));
}

Result<SessionSearchResponse> RestClient::try_search_sessions(SessionSearchRequest request) const {
  using T = SessionSearchResponse;
  return call_blocking<T>(runtime_, "RestClient::search_sessions", [&](diagnostics& diag, PromiseHandler<T> handler) {
    client_->async_search_sessions(std::move(request), diag, std::move(handler));
  });
}

SessionSearchResponse RestClient::search_sessions(SessionSearchRequest request) const {
  return value_or_throw(try_search_sessions(std::move(request)));
}

Result<std::vector<SessionSummary>> RestClient::try_search_all_sessions(SessionSearchRequest request,
                                                                        std::int64_t max_pages) const {
  using T = std::vector<SessionSummary>;
  return call_blocking<T>(runtime_, "RestClient::search_all_sessions",
                          [&](diagnostics& diag, PromiseHandler<T> handler) {
                            client_->async_search_all_sessions(std::move(request), max_pages, diag, std::move(handler));
                          });
}

std::vector<SessionSummary> RestClient::search_all_sessions(SessionSearchRequest request,
                                                            std::int64_t max_pages) const {
  return value_or_throw(try_search_all_sessions(std::move(request), max_pages));
}

Result<void> RestClient::try_finish_session(FinishSessionRequest request) const {
  using T = std::monostate;
  return without_value(
      call_blocking<T>(runtime_, "RestClient::finish_session", [&](diagnostics& diag, PromiseHandler<T> handler) {
        client_->async_finish_session(std::move(request), diag, std::move(handler));
      }));
}

void RestClient::finish_session(FinishSessionRequest request) const {
  value_or_throw(try_finish_session(std::move(request)));
}

Result<GetSessionResponse> RestClient::try_get_session(std::string session_id, AccessScope scope) const {
  using T = GetSessionResponse;
  return call_blocking<T>(runtime_, "RestClient::get_session", [&](diagnostics& diag, PromiseHandler<T> handler) {
    client_->async_get_session(std::move(session_id), scope, diag, std::move(handler));
  });
}

GetSessionResponse RestClient::get_session(std::string session_id, AccessScope scope) const {
  return value_or_throw(try_get_session(std::move(session_id), scope));
}

Result<void> RestClient::try_assign_session_project(std::string session_id, std::string project_id) const {
  using T = std::monostate;
  return without_value(call_blocking<T>(
      runtime_, "RestClient::assign_session_project", [&](diagnostics& diag, PromiseHandler<T> handler) {
        client_->async_assign_session_project(std::move(session_id), std::move(project_id), diag, std::move(handler));
      }));
}

void RestClient::assign_session_project(std::string session_id, std::string project_id) const {
  value_or_throw(try_assign_session_project(std::move(session_id), std::move(project_id)));
}

Result<TraceExportResponse> RestClient::try_export_session_trace(std::string session_id) const {
  using T = TraceExportResponse;
  return call_blocking<T>(runtime_, "RestClient::export_session_trace",
                          [&](diagnostics& diag, PromiseHandler<T> handler) {
                            client_->async_export_session_trace(std::move(session_id), diag, std::move(handler));
                          });
}

TraceExportResponse RestClient::export_session_trace(std::string session_id) const {
  return value_or_throw(try_export_session_trace(std::move(session_id)));
}

Result<AuditLogResponse> RestClient::try_get_audit_log(AuditLogOptions options) const {
  using T = AuditLogResponse;
  return call_blocking<T>(runtime_, "RestClient::get_audit_log", [&](diagnostics& diag, PromiseHandler<T> handler) {
    client_->async_get_audit_log(std::move(options), diag, std::move(handler));
  });
}

AuditLogResponse RestClient::get_audit_log(AuditLogOptions options) const {
  return value_or_throw(try_get_audit_log(std::move(options)));
}

Result<BillingUsageResponse> RestClient::try_get_billing_usage(Timestamp starting_on, Timestamp ending_before) const {
  using T = BillingUsageResponse;
  return call_blocking<T>(runtime_, "RestClient::get_billing_usage", [&](diagnostics& diag, PromiseHandler<T> handler) {
    client_->async_get_billing_usage(starting_on, ending_before, diag, std::move(handler));
  });
}

BillingUsageResponse RestClient::get_billing_usage(Timestamp starting_on, Timestamp ending_before) const {
  return value_or_throw(try_get_billing_usage(starting_on, ending_before));
}

}  // namespace tinker::sync
