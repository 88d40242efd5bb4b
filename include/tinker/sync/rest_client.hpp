/// \file
/// tinker::sync::RestClient: the blocking form of tinker::RestClient (`doc/rest.md`).
#pragma once

#include <tinker/rest_client.hpp>
#include <tinker/sync/result.hpp>
#include <tinker/types/checkpoint.hpp>
#include <tinker/types/session.hpp>
#include <tinker/types/telemetry.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace tinker::sync {

class ServiceClient;

/// The blocking form of tinker::RestClient; get one from sync::ServiceClient::create_rest_client.
///
/// Each call does what the async call of the same name does and waits for it. Calls may be made
/// from several threads at once; on the client's io thread they throw tinker::error
/// (invalid_argument) instead of deadlocking. Errors are tinker::error with diagnostics; each
/// call has a `try_` form returning Result<T> instead (Result<void> for the calls without an
/// answer).
class RestClient {
 public:
  /// An empty handle; every call on it fails with errc::invalid_argument.
  RestClient() = default;
  /// Another handle on the same pools (shares the runtime).
  RestClient(const RestClient&) = default;
  /// Takes over `other`'s handle; calls on `other` then fail with errc::invalid_argument.
  RestClient(RestClient&&) noexcept = default;
  /// Replaces this handle (the old one is released as by the destructor).
  RestClient& operator=(RestClient other) noexcept;
  /// Releases the async handle on the io thread; the last sync object shuts the runtime down.
  ~RestClient();

  /// False for a default-constructed handle.
  bool valid() const noexcept { return client_.has_value(); }

  // Training runs.
  /// One page of runs (tinker::RestClient::async_list_training_runs).
  ///@{
  TrainingRunsResponse list_training_runs(ListTrainingRunsOptions options = {}) const;
  Result<TrainingRunsResponse> try_list_training_runs(ListTrainingRunsOptions options = {}) const;
  ///@}
  /// One run, looked up in `scope`.
  ///@{
  TrainingRun get_training_run(std::string run_id, AccessScope scope = AccessScope::owned) const;
  Result<TrainingRun> try_get_training_run(std::string run_id, AccessScope scope = AccessScope::owned) const;
  ///@}
  /// The run owning a `tinker://` checkpoint path.
  ///@{
  TrainingRun get_training_run_from_tinker_path(std::string tinker_path, AccessScope scope = AccessScope::owned) const;
  Result<TrainingRun> try_get_training_run_from_tinker_path(std::string tinker_path,
                                                            AccessScope scope = AccessScope::owned) const;
  ///@}
  /// Every run, page by page.
  ///@{
  std::vector<TrainingRun> list_all_training_runs(ListAllOptions options = {}) const;
  Result<std::vector<TrainingRun>> try_list_all_training_runs(ListAllOptions options = {}) const;
  ///@}

  // Checkpoints, by run id + checkpoint id ("weights/<name>") or by `tinker://` path.
  /// Training and sampler checkpoints of one run.
  ///@{
  CheckpointsListResponse list_checkpoints(std::string run_id) const;
  Result<CheckpointsListResponse> try_list_checkpoints(std::string run_id) const;
  ///@}
  /// One page of the caller's checkpoints, newest first.
  ///@{
  CheckpointsListResponse list_user_checkpoints(ListUserCheckpointsOptions options = {}) const;
  Result<CheckpointsListResponse> try_list_user_checkpoints(ListUserCheckpointsOptions options = {}) const;
  ///@}
  /// Every checkpoint of the caller, page by page.
  ///@{
  std::vector<Checkpoint> list_all_user_checkpoints(ListAllOptions options = {}) const;
  Result<std::vector<Checkpoint>> try_list_all_user_checkpoints(ListAllOptions options = {}) const;
  ///@}
  /// Deletes the checkpoint (run owner only).
  ///@{
  void delete_checkpoint(std::string run_id, std::string checkpoint_id) const;
  Result<void> try_delete_checkpoint(std::string run_id, std::string checkpoint_id) const;
  ///@}
  /// Deletes the checkpoint at a `tinker://` path (run owner only).
  ///@{
  void delete_checkpoint_from_tinker_path(std::string tinker_path) const;
  Result<void> try_delete_checkpoint_from_tinker_path(std::string tinker_path) const;
  ///@}
  /// Makes the checkpoint public; conflict (409) when it already is.
  ///@{
  void publish_checkpoint(std::string run_id, std::string checkpoint_id) const;
  Result<void> try_publish_checkpoint(std::string run_id, std::string checkpoint_id) const;
  ///@}
  /// Makes the checkpoint at a `tinker://` path public; conflict (409) when it already is.
  ///@{
  void publish_checkpoint_from_tinker_path(std::string tinker_path) const;
  Result<void> try_publish_checkpoint_from_tinker_path(std::string tinker_path) const;
  ///@}
  /// Makes the checkpoint private again; conflict (409) when it already is.
  ///@{
  void unpublish_checkpoint(std::string run_id, std::string checkpoint_id) const;
  Result<void> try_unpublish_checkpoint(std::string run_id, std::string checkpoint_id) const;
  ///@}
  /// Makes the checkpoint at a `tinker://` path private again; conflict (409) when it already is.
  ///@{
  void unpublish_checkpoint_from_tinker_path(std::string tinker_path) const;
  Result<void> try_unpublish_checkpoint_from_tinker_path(std::string tinker_path) const;
  ///@}
  /// Expire `ttl_seconds` from now (> 0), or never (nullopt).
  ///@{
  void set_checkpoint_ttl(std::string run_id, std::string checkpoint_id, std::optional<std::int64_t> ttl_seconds) const;
  Result<void> try_set_checkpoint_ttl(std::string run_id, std::string checkpoint_id,
                                      std::optional<std::int64_t> ttl_seconds) const;
  ///@}
  /// set_checkpoint_ttl for the checkpoint at a `tinker://` path.
  ///@{
  void set_checkpoint_ttl_from_tinker_path(std::string tinker_path, std::optional<std::int64_t> ttl_seconds) const;
  Result<void> try_set_checkpoint_ttl_from_tinker_path(std::string tinker_path,
                                                       std::optional<std::int64_t> ttl_seconds) const;
  ///@}
  /// Signed download URL of the checkpoint's tar archive, and its expiry.
  ///@{
  CheckpointArchiveUrlResponse get_checkpoint_archive_url(std::string run_id, std::string checkpoint_id) const;
  Result<CheckpointArchiveUrlResponse> try_get_checkpoint_archive_url(std::string run_id,
                                                                      std::string checkpoint_id) const;
  ///@}
  /// get_checkpoint_archive_url for the checkpoint at a `tinker://` path.
  ///@{
  CheckpointArchiveUrlResponse get_checkpoint_archive_url_from_tinker_path(std::string tinker_path) const;
  Result<CheckpointArchiveUrlResponse> try_get_checkpoint_archive_url_from_tinker_path(std::string tinker_path) const;
  ///@}
  /// Downloads and extracts the checkpoint (see tinker::RestClient::async_download_checkpoint).
  /// `options.on_progress` runs on the client's io thread.
  ///@{
  DownloadResult download_checkpoint(std::string tinker_path, DownloadOptions options = {}) const;
  Result<DownloadResult> try_download_checkpoint(std::string tinker_path, DownloadOptions options = {}) const;
  ///@}
  /// Downloads one file from a signed URL (see tinker::RestClient::async_download_url).
  /// `options.on_progress` runs on the client's io thread.
  ///@{
  DownloadResult download_url(std::string url, std::filesystem::path file, UrlDownloadOptions options = {}) const;
  Result<DownloadResult> try_download_url(std::string url, std::filesystem::path file,
                                          UrlDownloadOptions options = {}) const;
  ///@}

  /// The signed URL of each file of an external checkpoint (see
  /// tinker::RestClient::async_get_external_weights_urls).
  ///@{
  ExternalWeightsUrlsResponse get_external_weights_urls(std::string tinker_path) const;
  Result<ExternalWeightsUrlsResponse> try_get_external_weights_urls(std::string tinker_path) const;
  ///@}
  /// Downloads every file of an external checkpoint (see
  /// tinker::RestClient::async_download_external_weights).
  ///@{
  DownloadResult download_external_weights(std::string tinker_path, DownloadOptions options = {}) const;
  Result<DownloadResult> try_download_external_weights(std::string tinker_path, DownloadOptions options = {}) const;
  ///@}
  /// Starts an external-weights upload (see tinker::RestClient::async_external_weights_upload_start).
  ///@{
  ExternalWeightsUploadStartResponse external_weights_upload_start(ExternalWeightsUploadStartRequest request) const;
  Result<ExternalWeightsUploadStartResponse> try_external_weights_upload_start(
      ExternalWeightsUploadStartRequest request) const;
  ///@}
  /// PUTs one file to an upload target (see tinker::RestClient::async_external_weights_upload_put).
  ///@{
  void external_weights_upload_put(ExternalWeightsUploadUrl target, std::filesystem::path file,
                                   ExternalWeightsPutOptions options = {}) const;
  Result<std::monostate> try_external_weights_upload_put(ExternalWeightsUploadUrl target, std::filesystem::path file,
                                                         ExternalWeightsPutOptions options = {}) const;
  ///@}
  /// Finishes an upload (see tinker::RestClient::async_external_weights_upload_finish).
  ///@{
  ExternalWeightsUploadFinishResponse external_weights_upload_finish(std::string upload_id) const;
  Result<ExternalWeightsUploadFinishResponse> try_external_weights_upload_finish(std::string upload_id) const;
  ///@}
  /// Uploads a PEFT adapter directory as an external checkpoint (see
  /// tinker::RestClient::async_upload_external_weights).
  ///@{
  ExternalWeightsUploadFinishResponse upload_external_weights(std::filesystem::path dir,
                                                              ExternalWeightsUploadStartRequest request,
                                                              ExternalWeightsUploadOptions options = {}) const;
  Result<ExternalWeightsUploadFinishResponse> try_upload_external_weights(
      std::filesystem::path dir, ExternalWeightsUploadStartRequest request,
      ExternalWeightsUploadOptions options = {}) const;
  ///@}
  /// Base model and LoRA settings of a `tinker://` checkpoint.
  ///@{
  WeightsInfoResponse get_weights_info(std::string tinker_path) const;
  Result<WeightsInfoResponse> try_get_weights_info(std::string tinker_path) const;
  ///@}
  /// The same call, spelled like every other call that takes a `tinker://` path.
  ///@{
  WeightsInfoResponse get_weights_info_from_tinker_path(std::string tinker_path) const;
  Result<WeightsInfoResponse> try_get_weights_info_from_tinker_path(std::string tinker_path) const;
  ///@}

  /// Deprecated spellings (the Python SDK's `_by_tinker_path`), kept for one release.
  ///@{
  [[deprecated("renamed get_training_run_from_tinker_path")]] TrainingRun get_training_run_by_tinker_path(
      std::string tinker_path, AccessScope scope = AccessScope::owned) const {
    return get_training_run_from_tinker_path(std::move(tinker_path), scope);
  }
  [[deprecated("renamed try_get_training_run_from_tinker_path")]] Result<TrainingRun>
  try_get_training_run_by_tinker_path(std::string tinker_path, AccessScope scope = AccessScope::owned) const {
    return try_get_training_run_from_tinker_path(std::move(tinker_path), scope);
  }
  [[deprecated("renamed get_weights_info_from_tinker_path")]] WeightsInfoResponse get_weights_info_by_tinker_path(
      std::string tinker_path) const {
    return get_weights_info_from_tinker_path(std::move(tinker_path));
  }
  [[deprecated("renamed try_get_weights_info_from_tinker_path")]] Result<WeightsInfoResponse>
  try_get_weights_info_by_tinker_path(std::string tinker_path) const {
    return try_get_weights_info_from_tinker_path(std::move(tinker_path));
  }
  ///@}

  // Sessions and samplers.
  /// One page of session ids, newest first.
  ///@{
  ListSessionsResponse list_sessions(ListSessionsOptions options = {}) const;
  Result<ListSessionsResponse> try_list_sessions(ListSessionsOptions options = {}) const;
  ///@}
  /// Every session id, page by page.
  ///@{
  std::vector<std::string> list_all_sessions(ListAllOptions options = {}) const;
  Result<std::vector<std::string>> try_list_all_sessions(ListAllOptions options = {}) const;
  ///@}
  /// One page of a session search (tinker::RestClient::async_search_sessions).
  ///@{
  SessionSearchResponse search_sessions(SessionSearchRequest request) const;
  Result<SessionSearchResponse> try_search_sessions(SessionSearchRequest request) const;
  ///@}
  /// Every session a search finds, page by page (tinker::RestClient::async_search_all_sessions).
  ///@{
  std::vector<SessionSummary> search_all_sessions(
      SessionSearchRequest request, std::int64_t max_pages = tinker::RestClient::default_search_max_pages) const;
  Result<std::vector<SessionSummary>> try_search_all_sessions(
      SessionSearchRequest request, std::int64_t max_pages = tinker::RestClient::default_search_max_pages) const;
  ///@}
  /// Finishes any of the caller's sessions by id (tinker::RestClient::async_finish_session).
  ///@{
  void finish_session(FinishSessionRequest request) const;
  Result<void> try_finish_session(FinishSessionRequest request) const;
  ///@}
  /// A session's training runs and samplers, looked up in `scope`.
  ///@{
  GetSessionResponse get_session(std::string session_id, AccessScope scope = AccessScope::owned) const;
  Result<GetSessionResponse> try_get_session(std::string session_id, AccessScope scope = AccessScope::owned) const;
  ///@}
  /// Moves the session and its runs into a project.
  ///@{
  void assign_session_project(std::string session_id, std::string project_id) const;
  Result<void> try_assign_session_project(std::string session_id, std::string project_id) const;
  ///@}
  /// Starts (or reuses) the session's Perfetto trace export and waits until it is ready
  /// (polling every 5 s); the result carries the URL.
  ///@{
  TraceExportResponse export_session_trace(std::string session_id) const;
  Result<TraceExportResponse> try_export_session_trace(std::string session_id) const;
  ///@}
  /// The base model (and checkpoint) a sampler serves.
  ///@{
  GetSamplerResponse get_sampler(std::string sampler_id) const;
  Result<GetSamplerResponse> try_get_sampler(std::string sampler_id) const;
  ///@}

  /// Who the credential belongs to, from the JWT the client holds (tinker::RestClient::async_whoami).
  ///@{
  WhoamiResponse whoami() const;
  Result<WhoamiResponse> try_whoami() const;
  ///@}
  /// Whether telemetry is on, and the session and process ids it reports under.
  TelemetryInfo telemetry() const;

  // Audit and billing.
  /// One day's audit log (admin role).
  ///@{
  AuditLogResponse get_audit_log(AuditLogOptions options = {}) const;
  Result<AuditLogResponse> try_get_audit_log(AuditLogOptions options = {}) const;
  ///@}
  /// Billing usage for [starting_on, ending_before): hour-aligned UTC times, at most 14 days.
  ///@{
  BillingUsageResponse get_billing_usage(Timestamp starting_on, Timestamp ending_before) const;
  Result<BillingUsageResponse> try_get_billing_usage(Timestamp starting_on, Timestamp ending_before) const;
  ///@}

  /// One page of a checkpoint search, newest first (tinker::RestClient::async_search_checkpoints).
  ///@{
  CheckpointSearchResponse search_checkpoints(CheckpointSearchRequest request) const;
  Result<CheckpointSearchResponse> try_search_checkpoints(CheckpointSearchRequest request) const;
  ///@}
  /// Every page of a checkpoint search, at most `max_pages` requests
  /// (tinker::RestClient::async_search_all_checkpoints).
  ///@{
  std::vector<Checkpoint> search_all_checkpoints(
      CheckpointSearchRequest request, std::int64_t max_pages = tinker::RestClient::default_search_max_pages) const;
  Result<std::vector<Checkpoint>> try_search_all_checkpoints(
      CheckpointSearchRequest request, std::int64_t max_pages = tinker::RestClient::default_search_max_pages) const;
  ///@}
  /// The checkpoints stored now, of `project_id` or the whole organization
  /// (tinker::RestClient::async_get_checkpoint_storage_usage).
  ///@{
  CheckpointStorageUsageResponse get_checkpoint_storage_usage(
      std::optional<std::string> project_id = std::nullopt) const;
  Result<CheckpointStorageUsageResponse> try_get_checkpoint_storage_usage(
      std::optional<std::string> project_id = std::nullopt) const;
  ///@}

 private:
  friend class ServiceClient;
  RestClient(detail::RuntimePtr runtime, tinker::RestClient client)
      : runtime_(std::move(runtime)), client_(std::move(client)) {}

  detail::RuntimePtr runtime_;
  std::optional<tinker::RestClient> client_;  // tinker::RestClient has no empty state
};

}  // namespace tinker::sync
