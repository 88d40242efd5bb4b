// tinker::sync::RestClient: the blocking form of tinker::RestClient (spec 14). Calls may be made
// from several threads at once; on the client's io thread they throw tinker::error
// (invalid_argument) instead of deadlocking. Each call has a `try_` form returning Result<T>.
#pragma once

#include <tinker/rest_client.hpp>
#include <tinker/sync/result.hpp>
#include <tinker/types/checkpoint.hpp>
#include <tinker/types/session.hpp>
#include <tinker/types/telemetry.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tinker::sync {

class ServiceClient;

class RestClient {
 public:
  /// An empty handle; every call on it fails with errc::invalid_argument.
  RestClient() = default;
  RestClient(const RestClient&) = default;
  RestClient(RestClient&&) noexcept = default;
  RestClient& operator=(RestClient other) noexcept;
  /// Releases the async handle on the io thread; the last sync object shuts the runtime down.
  ~RestClient();

  bool valid() const noexcept { return client_.has_value(); }

  // Training runs.
  TrainingRunsResponse list_training_runs(ListTrainingRunsOptions options = {}) const;
  Result<TrainingRunsResponse> try_list_training_runs(ListTrainingRunsOptions options = {}) const;
  TrainingRun get_training_run(std::string run_id, AccessScope scope = AccessScope::owned) const;
  Result<TrainingRun> try_get_training_run(std::string run_id, AccessScope scope = AccessScope::owned) const;
  TrainingRun get_training_run_by_tinker_path(std::string tinker_path, AccessScope scope = AccessScope::owned) const;
  Result<TrainingRun> try_get_training_run_by_tinker_path(std::string tinker_path,
                                                          AccessScope scope = AccessScope::owned) const;
  /// Every run, page by page.
  std::vector<TrainingRun> list_all_training_runs(ListAllOptions options = {}) const;
  Result<std::vector<TrainingRun>> try_list_all_training_runs(ListAllOptions options = {}) const;

  // Checkpoints, by run id + checkpoint id ("weights/<name>") or by `tinker://` path.
  CheckpointsListResponse list_checkpoints(std::string run_id) const;
  Result<CheckpointsListResponse> try_list_checkpoints(std::string run_id) const;
  CheckpointsListResponse list_user_checkpoints(ListUserCheckpointsOptions options = {}) const;
  Result<CheckpointsListResponse> try_list_user_checkpoints(ListUserCheckpointsOptions options = {}) const;
  std::vector<Checkpoint> list_all_user_checkpoints(ListAllOptions options = {}) const;
  Result<std::vector<Checkpoint>> try_list_all_user_checkpoints(ListAllOptions options = {}) const;
  void delete_checkpoint(std::string run_id, std::string checkpoint_id) const;
  Result<void> try_delete_checkpoint(std::string run_id, std::string checkpoint_id) const;
  void delete_checkpoint_from_tinker_path(std::string tinker_path) const;
  Result<void> try_delete_checkpoint_from_tinker_path(std::string tinker_path) const;
  void publish_checkpoint(std::string run_id, std::string checkpoint_id) const;
  Result<void> try_publish_checkpoint(std::string run_id, std::string checkpoint_id) const;
  void publish_checkpoint_from_tinker_path(std::string tinker_path) const;
  Result<void> try_publish_checkpoint_from_tinker_path(std::string tinker_path) const;
  void unpublish_checkpoint(std::string run_id, std::string checkpoint_id) const;
  Result<void> try_unpublish_checkpoint(std::string run_id, std::string checkpoint_id) const;
  void unpublish_checkpoint_from_tinker_path(std::string tinker_path) const;
  Result<void> try_unpublish_checkpoint_from_tinker_path(std::string tinker_path) const;
  /// Expire `ttl_seconds` from now, or never (nullopt).
  void set_checkpoint_ttl(std::string run_id, std::string checkpoint_id, std::optional<std::int64_t> ttl_seconds) const;
  Result<void> try_set_checkpoint_ttl(std::string run_id, std::string checkpoint_id,
                                      std::optional<std::int64_t> ttl_seconds) const;
  void set_checkpoint_ttl_from_tinker_path(std::string tinker_path, std::optional<std::int64_t> ttl_seconds) const;
  Result<void> try_set_checkpoint_ttl_from_tinker_path(std::string tinker_path,
                                                       std::optional<std::int64_t> ttl_seconds) const;
  /// Signed download URL of the checkpoint's tar archive, and its expiry.
  CheckpointArchiveUrlResponse get_checkpoint_archive_url(std::string run_id, std::string checkpoint_id) const;
  Result<CheckpointArchiveUrlResponse> try_get_checkpoint_archive_url(std::string run_id,
                                                                      std::string checkpoint_id) const;
  CheckpointArchiveUrlResponse get_checkpoint_archive_url_from_tinker_path(std::string tinker_path) const;
  Result<CheckpointArchiveUrlResponse> try_get_checkpoint_archive_url_from_tinker_path(std::string tinker_path) const;
  /// Downloads and extracts the checkpoint (see tinker::RestClient::async_download_checkpoint).
  /// `options.on_progress` runs on the client's io thread.
  DownloadResult download_checkpoint(std::string tinker_path, DownloadOptions options = {}) const;
  Result<DownloadResult> try_download_checkpoint(std::string tinker_path, DownloadOptions options = {}) const;
  /// Base model and LoRA settings of a `tinker://` checkpoint.
  WeightsInfoResponse get_weights_info(std::string tinker_path) const;
  Result<WeightsInfoResponse> try_get_weights_info(std::string tinker_path) const;
  WeightsInfoResponse get_weights_info_by_tinker_path(std::string tinker_path) const;
  Result<WeightsInfoResponse> try_get_weights_info_by_tinker_path(std::string tinker_path) const;

  // Sessions and samplers.
  ListSessionsResponse list_sessions(ListSessionsOptions options = {}) const;
  Result<ListSessionsResponse> try_list_sessions(ListSessionsOptions options = {}) const;
  std::vector<std::string> list_all_sessions(ListAllOptions options = {}) const;
  Result<std::vector<std::string>> try_list_all_sessions(ListAllOptions options = {}) const;
  GetSessionResponse get_session(std::string session_id, AccessScope scope = AccessScope::owned) const;
  Result<GetSessionResponse> try_get_session(std::string session_id, AccessScope scope = AccessScope::owned) const;
  void assign_session_project(std::string session_id, std::string project_id) const;
  Result<void> try_assign_session_project(std::string session_id, std::string project_id) const;
  /// Waits until the export is ready (polling every 5 s); the result carries the URL.
  TraceExportResponse export_session_trace(std::string session_id) const;
  Result<TraceExportResponse> try_export_session_trace(std::string session_id) const;
  /// The base model (and checkpoint) a sampler serves.
  GetSamplerResponse get_sampler(std::string sampler_id) const;
  Result<GetSamplerResponse> try_get_sampler(std::string sampler_id) const;

  // Audit and billing.
  AuditLogResponse get_audit_log(AuditLogOptions options = {}) const;
  Result<AuditLogResponse> try_get_audit_log(AuditLogOptions options = {}) const;
  BillingUsageResponse get_billing_usage(Timestamp starting_on, Timestamp ending_before) const;
  Result<BillingUsageResponse> try_get_billing_usage(Timestamp starting_on, Timestamp ending_before) const;

 private:
  friend class ServiceClient;
  RestClient(detail::RuntimePtr runtime, tinker::RestClient client)
      : runtime_(std::move(runtime)), client_(std::move(client)) {}

  detail::RuntimePtr runtime_;
  std::optional<tinker::RestClient> client_;  // tinker::RestClient has no empty state
};

}  // namespace tinker::sync
