/// \file
/// RestClient: the management calls that need no session (`doc/rest.md`).
#pragma once

#include <tinker/async.hpp>
#include <tinker/download.hpp>
#include <tinker/external_weights.hpp>
#include <tinker/types/checkpoint.hpp>
#include <tinker/types/checkpoint_search.hpp>
#include <tinker/types/session.hpp>
#include <tinker/types/session_status.hpp>
#include <tinker/types/telemetry.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace tinker {

/// Which runs and sessions a listing or lookup covers.
enum class AccessScope {
  owned,       ///< the caller's own runs/sessions
  accessible,  ///< also those shared with the caller
};
/// The query value: "owned" or "accessible".
const char* to_string(AccessScope scope) noexcept;

/// One page of GET /api/v1/training_runs (RestClient::async_list_training_runs).
class ListTrainingRunsOptions {
 public:
  /// The first 20 of the caller's own runs.
  ListTrainingRunsOptions() = default;
  /// `limit_` runs from `offset_` in `access_scope_`, in `project_id_` when given.
  explicit ListTrainingRunsOptions(std::int64_t limit_, std::int64_t offset_ = 0,
                                   AccessScope access_scope_ = AccessScope::owned,
                                   std::optional<std::string> project_id_ = std::nullopt)
      : limit(limit_), offset(offset_), access_scope(access_scope_), project_id(std::move(project_id_)) {}

  std::int64_t limit = 20;                        ///< most runs on the page
  std::int64_t offset = 0;                        ///< index of the first run
  AccessScope access_scope = AccessScope::owned;  ///< whose runs
  std::optional<std::string> project_id;          ///< only runs of this project; sent only when set
};

/// One page of GET /api/v1/checkpoints: the caller's checkpoints across runs, newest first
/// (RestClient::async_list_user_checkpoints).
class ListUserCheckpointsOptions {
 public:
  /// The newest 100.
  ListUserCheckpointsOptions() = default;
  /// `limit_` checkpoints from `offset_`.
  explicit ListUserCheckpointsOptions(std::int64_t limit_, std::int64_t offset_ = 0) : limit(limit_), offset(offset_) {}

  std::int64_t limit = 100;  ///< most checkpoints on the page
  std::int64_t offset = 0;   ///< index of the first checkpoint
};

/// One page of GET /api/v1/sessions (RestClient::async_list_sessions).
class ListSessionsOptions {
 public:
  /// The newest 20 of the caller's own sessions.
  ListSessionsOptions() = default;
  /// `limit_` sessions from `offset_` in `access_scope_`.
  explicit ListSessionsOptions(std::int64_t limit_, std::int64_t offset_ = 0,
                               AccessScope access_scope_ = AccessScope::owned)
      : limit(limit_), offset(offset_), access_scope(access_scope_) {}

  std::int64_t limit = 20;                        ///< most sessions on the page
  std::int64_t offset = 0;                        ///< index of the first session
  AccessScope access_scope = AccessScope::owned;  ///< whose sessions
};

/// The `async_list_all_*` calls: every page, `page_size` items per request. A page shorter
/// than requested (or the cursor's total_count) ends the listing.
class ListAllOptions {
 public:
  /// The page sizes the Python command line uses: 100 runs, 1000 checkpoints, and (choice) 100
  /// sessions.
  ///@{
  static constexpr std::int64_t default_runs_page = 100;
  static constexpr std::int64_t default_checkpoints_page = 1000;
  static constexpr std::int64_t default_sessions_page = 100;
  ///@}

  /// The caller's own items, default page sizes.
  ListAllOptions() = default;
  /// Items in `access_scope_`, runs of `project_id_` only when given.
  explicit ListAllOptions(AccessScope access_scope_, std::optional<std::string> project_id_ = std::nullopt)
      : access_scope(access_scope_), project_id(std::move(project_id_)) {}

  AccessScope access_scope = AccessScope::owned;  ///< runs and sessions
  std::optional<std::string> project_id;          ///< runs only
  std::optional<std::int64_t> page_size;          ///< empty: the default above; must be >= 1 (invalid_argument)
};

/// Which audit events to list (the service treats both alike today).
enum class AuditEventType {
  all,          ///< every event
  checkpoints,  ///< checkpoint events
};
/// The query value: "all" or "checkpoints".
const char* to_string(AuditEventType type) noexcept;

/// GET /api/v1/audit (RestClient::async_get_audit_log; requires the admin role).
class AuditLogOptions {
 public:
  /// Every event of today (UTC).
  AuditLogOptions() = default;
  /// Events of `event_type_` on `day_` (empty: today).
  explicit AuditLogOptions(AuditEventType event_type_, std::optional<std::chrono::year_month_day> day_ = std::nullopt)
      : event_type(event_type_), day(day_) {}

  AuditEventType event_type = AuditEventType::all;  ///< which events
  std::optional<std::chrono::year_month_day> day;   ///< empty: today (UTC), decided by the server
};

namespace detail {

/// A checkpoint named by run id + checkpoint id, or by a `tinker://` path that the operation
/// parses (so a bad path completes the operation with invalid_argument instead of throwing).
class CheckpointRef {
 public:
  CheckpointRef() = default;
  CheckpointRef(std::string run_id_, std::string checkpoint_id_)
      : run_id(std::move(run_id_)), checkpoint_id(std::move(checkpoint_id_)) {}
  static CheckpointRef from_tinker_path(std::string path) {
    CheckpointRef ref;
    ref.tinker_path = std::move(path);
    return ref;
  }

  std::string run_id;
  std::string checkpoint_id;  ///< "weights/<name>" or "sampler_weights/<name>"
  std::string tinker_path;    ///< when set, run_id and checkpoint_id come from it
};

enum class CheckpointAction { delete_checkpoint, publish, unpublish };

using Done = std::monostate;

void rest_list_training_runs(HolderPtr h, ListTrainingRunsOptions o, diagnostics* d, Handler<TrainingRunsResponse> c);
void rest_get_training_run(HolderPtr h, CheckpointRef run, AccessScope s, diagnostics* d, Handler<TrainingRun> c);
void rest_list_checkpoints(HolderPtr h, std::string run_id, diagnostics* d, Handler<CheckpointsListResponse> c);
void rest_list_user_checkpoints(HolderPtr h, ListUserCheckpointsOptions o, diagnostics* d,
                                Handler<CheckpointsListResponse> c);
void rest_checkpoint_action(HolderPtr h, CheckpointRef ref, CheckpointAction a, diagnostics* d, Handler<Done> c);
void rest_set_checkpoint_ttl(HolderPtr h, CheckpointRef ref, std::optional<std::int64_t> ttl_seconds, diagnostics* d,
                             Handler<Done> c);
void rest_get_checkpoint_archive_url(HolderPtr h, CheckpointRef ref, diagnostics* d,
                                     Handler<CheckpointArchiveUrlResponse> c);
void rest_download_checkpoint(HolderPtr h, std::string tinker_path, DownloadOptions o, diagnostics* d,
                              Handler<DownloadResult> c);
void rest_download_url(HolderPtr h, std::string url, std::filesystem::path file, UrlDownloadOptions o, diagnostics* d,
                       Handler<DownloadResult> c);
void rest_get_weights_info(HolderPtr holder, std::string tinker_path, diagnostics* diag,
                           Handler<WeightsInfoResponse> handler);
void rest_list_sessions(HolderPtr h, ListSessionsOptions o, diagnostics* d, Handler<ListSessionsResponse> c);
void rest_get_session(HolderPtr h, std::string session_id, AccessScope s, diagnostics* d,
                      Handler<GetSessionResponse> c);
void rest_assign_session_project(HolderPtr h, std::string session_id, std::string project_id, diagnostics* d,
                                 Handler<Done> c);
void rest_export_session_trace(HolderPtr h, std::string session_id, diagnostics* d, Handler<TraceExportResponse> c);
void rest_get_sampler(HolderPtr holder, std::string sampler_id, diagnostics* diag, Handler<GetSamplerResponse> handler);
void rest_get_audit_log(HolderPtr h, AuditLogOptions o, diagnostics* d, Handler<AuditLogResponse> c);
void rest_get_billing_usage(HolderPtr h, Timestamp starting_on, Timestamp ending_before, diagnostics* d,
                            Handler<BillingUsageResponse> c);
void rest_list_all_training_runs(HolderPtr h, ListAllOptions o, diagnostics* d, Handler<std::vector<TrainingRun>> c);
void rest_list_all_user_checkpoints(HolderPtr h, ListAllOptions o, diagnostics* d, Handler<std::vector<Checkpoint>> c);
void rest_list_all_sessions(HolderPtr h, ListAllOptions o, diagnostics* d, Handler<std::vector<std::string>> c);
void rest_search_sessions(HolderPtr h, SessionSearchRequest r, diagnostics* d, Handler<SessionSearchResponse> c);
void rest_finish_session(HolderPtr h, FinishSessionRequest r, diagnostics* d, Handler<Done> c);
void rest_search_all_sessions(HolderPtr h, SessionSearchRequest r, std::int64_t max_pages, diagnostics* d,
                              Handler<std::vector<SessionSummary>> c);
void rest_whoami(HolderPtr h, diagnostics* d, Handler<WhoamiResponse> c);
void rest_get_external_weights_urls(HolderPtr h, std::string tinker_path, diagnostics* d,
                                    Handler<ExternalWeightsUrlsResponse> c);
void rest_download_external_weights(HolderPtr h, std::string tinker_path, DownloadOptions o, diagnostics* d,
                                    Handler<DownloadResult> c);
void rest_external_weights_upload_start(HolderPtr h, ExternalWeightsUploadStartRequest r, diagnostics* d,
                                        Handler<ExternalWeightsUploadStartResponse> c);
void rest_external_weights_upload_put(HolderPtr h, ExternalWeightsUploadUrl target, std::filesystem::path file,
                                      ExternalWeightsPutOptions o, diagnostics* d, Handler<Done> c);
void rest_external_weights_upload_finish(HolderPtr h, std::string upload_id, diagnostics* d,
                                         Handler<ExternalWeightsUploadFinishResponse> c);
void rest_upload_external_weights(HolderPtr h, std::filesystem::path dir, ExternalWeightsUploadStartRequest r,
                                  ExternalWeightsUploadOptions o, diagnostics* d,
                                  Handler<ExternalWeightsUploadFinishResponse> c);
void rest_search_checkpoints(HolderPtr h, CheckpointSearchRequest r, diagnostics* d,
                             Handler<CheckpointSearchResponse> c);
void rest_search_all_checkpoints(HolderPtr h, CheckpointSearchRequest r, std::int64_t max_pages, diagnostics* d,
                                 Handler<std::vector<Checkpoint>> c);
void rest_get_checkpoint_storage_usage(HolderPtr h, std::optional<std::string> project_id, diagnostics* d,
                                       Handler<CheckpointStorageUsageResponse> c);
TelemetryInfo holder_telemetry(const ClientHolder& h);
}  // namespace detail

/// The management calls that need no session: training runs, checkpoints (by run id +
/// checkpoint id, or by `tinker://` path), checkpoint downloads, sessions, samplers, the audit
/// log and billing usage (`doc/rest.md`). Get one from ServiceClient::create_rest_client().
///
/// A cheap handle; copies share the connection pools of the ServiceClient that made them, and
/// calls may come from any thread. Every call goes through transport and call retries
/// (`doc/protocol.md#retries`) and comes in two forms: without and with a `diagnostics&`
/// that receives the HTTP status, request id and server message of a failure. Errors are the
/// HTTP status classes of tinker::errc (e.g. not_found, permission_denied, conflict); a
/// malformed `tinker://` path completes with invalid_argument. Calls whose answer carries
/// nothing (delete, publish, unpublish, set TTL, assign project) complete with `std::monostate`.
class RestClient {
 public:
  /// Internal: ServiceClient::create_rest_client() makes REST clients.
  explicit RestClient(detail::HolderPtr holder) : holder_(std::move(holder)) {}

  /// The executor this client runs on (the one its ServiceClient was given), as Asio's I/O objects
  /// have: to post work next to the client's or to run a timer beside its operations.
  boost::asio::any_io_executor get_executor() const noexcept { return detail::holder_executor(*holder_); }

  // ---- Training runs ----
  /// GET /api/v1/training_runs: one page of runs with its cursor.
  ///@{
  template <class Token = default_token>
  auto async_list_training_runs(ListTrainingRunsOptions options, Token&& token = {}) const {
    return detail::start<TrainingRunsResponse>(std::forward<Token>(token), nullptr, &detail::rest_list_training_runs,
                                               holder_, std::move(options));
  }
  template <class Token = default_token>
  auto async_list_training_runs(ListTrainingRunsOptions options, diagnostics& diag, Token&& token = {}) const {
    return detail::start<TrainingRunsResponse>(std::forward<Token>(token), &diag, &detail::rest_list_training_runs,
                                               holder_, std::move(options));
  }
  ///@}
  /// GET /api/v1/training_runs/{id}: one run, looked up in `scope`.
  ///@{
  template <class Token = default_token>
  auto async_get_training_run(std::string run_id, AccessScope scope, Token&& token = {}) const {
    return detail::start<TrainingRun>(std::forward<Token>(token), nullptr, &detail::rest_get_training_run, holder_,
                                      detail::CheckpointRef(std::move(run_id), ""), scope);
  }
  template <class Token = default_token>
  auto async_get_training_run(std::string run_id, AccessScope scope, diagnostics& diag, Token&& token = {}) const {
    return detail::start<TrainingRun>(std::forward<Token>(token), &diag, &detail::rest_get_training_run, holder_,
                                      detail::CheckpointRef(std::move(run_id), ""), scope);
  }
  ///@}
  /// The run owning a `tinker://` checkpoint path.
  ///@{
  template <class Token = default_token>
  auto async_get_training_run_from_tinker_path(std::string tinker_path, AccessScope scope, Token&& token = {}) const {
    return detail::start<TrainingRun>(std::forward<Token>(token), nullptr, &detail::rest_get_training_run, holder_,
                                      detail::CheckpointRef::from_tinker_path(std::move(tinker_path)), scope);
  }
  template <class Token = default_token>
  auto async_get_training_run_from_tinker_path(std::string tinker_path, AccessScope scope, diagnostics& diag,
                                               Token&& token = {}) const {
    return detail::start<TrainingRun>(std::forward<Token>(token), &diag, &detail::rest_get_training_run, holder_,
                                      detail::CheckpointRef::from_tinker_path(std::move(tinker_path)), scope);
  }
  ///@}
  /// Every run, page by page (ListAllOptions::default_runs_page per request).
  ///@{
  template <class Token = default_token>
  auto async_list_all_training_runs(ListAllOptions options, Token&& token = {}) const {
    return detail::start<std::vector<TrainingRun>>(std::forward<Token>(token), nullptr,
                                                   &detail::rest_list_all_training_runs, holder_, std::move(options));
  }
  template <class Token = default_token>
  auto async_list_all_training_runs(ListAllOptions options, diagnostics& diag, Token&& token = {}) const {
    return detail::start<std::vector<TrainingRun>>(std::forward<Token>(token), &diag,
                                                   &detail::rest_list_all_training_runs, holder_, std::move(options));
  }
  ///@}

  // ---- Checkpoints ----
  /// GET /api/v1/training_runs/{id}/checkpoints: training and sampler checkpoints of one run.
  ///@{
  template <class Token = default_token>
  auto async_list_checkpoints(std::string run_id, Token&& token = {}) const {
    return detail::start<CheckpointsListResponse>(std::forward<Token>(token), nullptr, &detail::rest_list_checkpoints,
                                                  holder_, std::move(run_id));
  }
  template <class Token = default_token>
  auto async_list_checkpoints(std::string run_id, diagnostics& diag, Token&& token = {}) const {
    return detail::start<CheckpointsListResponse>(std::forward<Token>(token), &diag, &detail::rest_list_checkpoints,
                                                  holder_, std::move(run_id));
  }
  ///@}
  /// GET /api/v1/checkpoints: one page of the caller's checkpoints, newest first.
  ///@{
  template <class Token = default_token>
  auto async_list_user_checkpoints(ListUserCheckpointsOptions options, Token&& token = {}) const {
    return detail::start<CheckpointsListResponse>(std::forward<Token>(token), nullptr,
                                                  &detail::rest_list_user_checkpoints, holder_, std::move(options));
  }
  template <class Token = default_token>
  auto async_list_user_checkpoints(ListUserCheckpointsOptions options, diagnostics& diag, Token&& token = {}) const {
    return detail::start<CheckpointsListResponse>(std::forward<Token>(token), &diag,
                                                  &detail::rest_list_user_checkpoints, holder_, std::move(options));
  }
  ///@}
  /// Every checkpoint of the caller, page by page (default_checkpoints_page per request).
  ///@{
  template <class Token = default_token>
  auto async_list_all_user_checkpoints(ListAllOptions options, Token&& token = {}) const {
    return detail::start<std::vector<Checkpoint>>(std::forward<Token>(token), nullptr,
                                                  &detail::rest_list_all_user_checkpoints, holder_, std::move(options));
  }
  template <class Token = default_token>
  auto async_list_all_user_checkpoints(ListAllOptions options, diagnostics& diag, Token&& token = {}) const {
    return detail::start<std::vector<Checkpoint>>(std::forward<Token>(token), &diag,
                                                  &detail::rest_list_all_user_checkpoints, holder_, std::move(options));
  }
  ///@}
  /// Deletes the checkpoint (run owner only); by run id + checkpoint id ("weights/<name>" or
  /// "sampler_weights/<name>"), or by `tinker://` path with the `_from_tinker_path` form.
  ///@{
  template <class Token = default_token>
  auto async_delete_checkpoint(std::string run_id, std::string checkpoint_id, Token&& token = {}) const {
    return detail::start<std::monostate>(std::forward<Token>(token), nullptr, &detail::rest_checkpoint_action, holder_,
                                         detail::CheckpointRef(std::move(run_id), std::move(checkpoint_id)),
                                         detail::CheckpointAction::delete_checkpoint);
  }
  template <class Token = default_token>
  auto async_delete_checkpoint(std::string run_id, std::string checkpoint_id, diagnostics& diag,
                               Token&& token = {}) const {
    return detail::start<std::monostate>(std::forward<Token>(token), &diag, &detail::rest_checkpoint_action, holder_,
                                         detail::CheckpointRef(std::move(run_id), std::move(checkpoint_id)),
                                         detail::CheckpointAction::delete_checkpoint);
  }
  template <class Token = default_token>
  auto async_delete_checkpoint_from_tinker_path(std::string tinker_path, Token&& token = {}) const {
    return detail::start<std::monostate>(std::forward<Token>(token), nullptr, &detail::rest_checkpoint_action, holder_,
                                         detail::CheckpointRef::from_tinker_path(std::move(tinker_path)),
                                         detail::CheckpointAction::delete_checkpoint);
  }
  template <class Token = default_token>
  auto async_delete_checkpoint_from_tinker_path(std::string tinker_path, diagnostics& diag, Token&& token = {}) const {
    return detail::start<std::monostate>(std::forward<Token>(token), &diag, &detail::rest_checkpoint_action, holder_,
                                         detail::CheckpointRef::from_tinker_path(std::move(tinker_path)),
                                         detail::CheckpointAction::delete_checkpoint);
  }
  ///@}
  /// Makes the checkpoint public (readable by other users); conflict (409) when it already is.
  /// By run id + checkpoint id, or by `tinker://` path.
  ///@{
  template <class Token = default_token>
  auto async_publish_checkpoint(std::string run_id, std::string checkpoint_id, Token&& token = {}) const {
    return detail::start<std::monostate>(std::forward<Token>(token), nullptr, &detail::rest_checkpoint_action, holder_,
                                         detail::CheckpointRef(std::move(run_id), std::move(checkpoint_id)),
                                         detail::CheckpointAction::publish);
  }
  template <class Token = default_token>
  auto async_publish_checkpoint(std::string run_id, std::string checkpoint_id, diagnostics& diag,
                                Token&& token = {}) const {
    return detail::start<std::monostate>(std::forward<Token>(token), &diag, &detail::rest_checkpoint_action, holder_,
                                         detail::CheckpointRef(std::move(run_id), std::move(checkpoint_id)),
                                         detail::CheckpointAction::publish);
  }
  template <class Token = default_token>
  auto async_publish_checkpoint_from_tinker_path(std::string tinker_path, Token&& token = {}) const {
    return detail::start<std::monostate>(std::forward<Token>(token), nullptr, &detail::rest_checkpoint_action, holder_,
                                         detail::CheckpointRef::from_tinker_path(std::move(tinker_path)),
                                         detail::CheckpointAction::publish);
  }
  template <class Token = default_token>
  auto async_publish_checkpoint_from_tinker_path(std::string tinker_path, diagnostics& diag, Token&& token = {}) const {
    return detail::start<std::monostate>(std::forward<Token>(token), &diag, &detail::rest_checkpoint_action, holder_,
                                         detail::CheckpointRef::from_tinker_path(std::move(tinker_path)),
                                         detail::CheckpointAction::publish);
  }
  ///@}
  /// Makes the checkpoint private again; conflict (409) when it already is. By run id +
  /// checkpoint id, or by `tinker://` path.
  ///@{
  template <class Token = default_token>
  auto async_unpublish_checkpoint(std::string run_id, std::string checkpoint_id, Token&& token = {}) const {
    return detail::start<std::monostate>(std::forward<Token>(token), nullptr, &detail::rest_checkpoint_action, holder_,
                                         detail::CheckpointRef(std::move(run_id), std::move(checkpoint_id)),
                                         detail::CheckpointAction::unpublish);
  }
  template <class Token = default_token>
  auto async_unpublish_checkpoint(std::string run_id, std::string checkpoint_id, diagnostics& diag,
                                  Token&& token = {}) const {
    return detail::start<std::monostate>(std::forward<Token>(token), &diag, &detail::rest_checkpoint_action, holder_,
                                         detail::CheckpointRef(std::move(run_id), std::move(checkpoint_id)),
                                         detail::CheckpointAction::unpublish);
  }
  template <class Token = default_token>
  auto async_unpublish_checkpoint_from_tinker_path(std::string tinker_path, Token&& token = {}) const {
    return detail::start<std::monostate>(std::forward<Token>(token), nullptr, &detail::rest_checkpoint_action, holder_,
                                         detail::CheckpointRef::from_tinker_path(std::move(tinker_path)),
                                         detail::CheckpointAction::unpublish);
  }
  template <class Token = default_token>
  auto async_unpublish_checkpoint_from_tinker_path(std::string tinker_path, diagnostics& diag,
                                                   Token&& token = {}) const {
    return detail::start<std::monostate>(std::forward<Token>(token), &diag, &detail::rest_checkpoint_action, holder_,
                                         detail::CheckpointRef::from_tinker_path(std::move(tinker_path)),
                                         detail::CheckpointAction::unpublish);
  }
  ///@}
  /// PUT .../ttl: expire `ttl_seconds` from now (> 0, else bad_request), or never (nullopt). By
  /// run id + checkpoint id, or by `tinker://` path.
  ///@{
  template <class Token = default_token>
  auto async_set_checkpoint_ttl(std::string run_id, std::string checkpoint_id, std::optional<std::int64_t> ttl_seconds,
                                Token&& token = {}) const {
    return detail::start<std::monostate>(std::forward<Token>(token), nullptr, &detail::rest_set_checkpoint_ttl, holder_,
                                         detail::CheckpointRef(std::move(run_id), std::move(checkpoint_id)),
                                         ttl_seconds);
  }
  template <class Token = default_token>
  auto async_set_checkpoint_ttl(std::string run_id, std::string checkpoint_id, std::optional<std::int64_t> ttl_seconds,
                                diagnostics& diag, Token&& token = {}) const {
    return detail::start<std::monostate>(std::forward<Token>(token), &diag, &detail::rest_set_checkpoint_ttl, holder_,
                                         detail::CheckpointRef(std::move(run_id), std::move(checkpoint_id)),
                                         ttl_seconds);
  }
  template <class Token = default_token>
  auto async_set_checkpoint_ttl_from_tinker_path(std::string tinker_path, std::optional<std::int64_t> ttl_seconds,
                                                 Token&& token = {}) const {
    return detail::start<std::monostate>(std::forward<Token>(token), nullptr, &detail::rest_set_checkpoint_ttl, holder_,
                                         detail::CheckpointRef::from_tinker_path(std::move(tinker_path)), ttl_seconds);
  }
  template <class Token = default_token>
  auto async_set_checkpoint_ttl_from_tinker_path(std::string tinker_path, std::optional<std::int64_t> ttl_seconds,
                                                 diagnostics& diag, Token&& token = {}) const {
    return detail::start<std::monostate>(std::forward<Token>(token), &diag, &detail::rest_set_checkpoint_ttl, holder_,
                                         detail::CheckpointRef::from_tinker_path(std::move(tinker_path)), ttl_seconds);
  }
  ///@}
  /// A signed download URL of the checkpoint's tar archive and when it expires
  /// (`doc/rest.md#checkpoint-downloads`: the 302 is read, never followed; the 200 JSON form is
  /// accepted; 503 "still building" is waited for, 30 s at a time, up to 6 attempts). By run id
  /// + checkpoint id, or by `tinker://` path.
  ///@{
  template <class Token = default_token>
  auto async_get_checkpoint_archive_url(std::string run_id, std::string checkpoint_id, Token&& token = {}) const {
    return detail::start<CheckpointArchiveUrlResponse>(
        std::forward<Token>(token), nullptr, &detail::rest_get_checkpoint_archive_url, holder_,
        detail::CheckpointRef(std::move(run_id), std::move(checkpoint_id)));
  }
  template <class Token = default_token>
  auto async_get_checkpoint_archive_url(std::string run_id, std::string checkpoint_id, diagnostics& diag,
                                        Token&& token = {}) const {
    return detail::start<CheckpointArchiveUrlResponse>(
        std::forward<Token>(token), &diag, &detail::rest_get_checkpoint_archive_url, holder_,
        detail::CheckpointRef(std::move(run_id), std::move(checkpoint_id)));
  }
  template <class Token = default_token>
  auto async_get_checkpoint_archive_url_from_tinker_path(std::string tinker_path, Token&& token = {}) const {
    return detail::start<CheckpointArchiveUrlResponse>(std::forward<Token>(token), nullptr,
                                                       &detail::rest_get_checkpoint_archive_url, holder_,
                                                       detail::CheckpointRef::from_tinker_path(std::move(tinker_path)));
  }
  template <class Token = default_token>
  auto async_get_checkpoint_archive_url_from_tinker_path(std::string tinker_path, diagnostics& diag,
                                                         Token&& token = {}) const {
    return detail::start<CheckpointArchiveUrlResponse>(std::forward<Token>(token), &diag,
                                                       &detail::rest_get_checkpoint_archive_url, holder_,
                                                       detail::CheckpointRef::from_tinker_path(std::move(tinker_path)));
  }
  ///@}
  /// Downloads the checkpoint's archive (URL as above, then a GET without credentials), streams
  /// it to disk in constant memory, resumes with HTTP Range after a connection drop, verifies the
  /// size, and extracts it into `options.output_dir / download_target_name(tinker_path)`.
  /// Archives with absolute paths, `..`, links or special files are refused (invalid_argument)
  /// and leave no target directory behind. `options.on_progress` runs on the client's io thread.
  ///@{
  template <class Token = default_token>
  auto async_download_checkpoint(std::string tinker_path, DownloadOptions options, Token&& token = {}) const {
    return detail::start<DownloadResult>(std::forward<Token>(token), nullptr, &detail::rest_download_checkpoint,
                                         holder_, std::move(tinker_path), std::move(options));
  }
  template <class Token = default_token>
  auto async_download_checkpoint(std::string tinker_path, DownloadOptions options, diagnostics& diag,
                                 Token&& token = {}) const {
    return detail::start<DownloadResult>(std::forward<Token>(token), &diag, &detail::rest_download_checkpoint, holder_,
                                         std::move(tinker_path), std::move(options));
  }
  ///@}
  // ---- External (Hugging Face format) weights, doc/rest.md#external-weights ----
  /// GET .../checkpoints/external_weights/{name}/external_weights_urls: a signed URL per file of
  /// an external checkpoint (TrainingClient::async_save_weights_external), keyed by the file's
  /// path relative to the checkpoint. A path that is not `tinker://<run>/external_weights/<name>`
  /// fails with invalid_argument before anything is sent.
  ///@{
  template <class Token = default_token>
  auto async_get_external_weights_urls(std::string tinker_path, Token&& token = {}) const {
    return detail::start<ExternalWeightsUrlsResponse>(
        std::forward<Token>(token), nullptr, &detail::rest_get_external_weights_urls, holder_, std::move(tinker_path));
  }
  template <class Token = default_token>
  auto async_get_external_weights_urls(std::string tinker_path, diagnostics& diag, Token&& token = {}) const {
    return detail::start<ExternalWeightsUrlsResponse>(
        std::forward<Token>(token), &diag, &detail::rest_get_external_weights_urls, holder_, std::move(tinker_path));
  }
  ///@}
  /// Downloads every file of an external checkpoint into
  /// `options.output_dir / download_target_name(tinker_path)`: the URLs as above, then each file
  /// as async_download_url fetches one (no credentials, resumed with Range, size-checked), into a
  /// hidden staging directory renamed into place only when every file arrived, so an interrupted
  /// download never looks complete. A file path from the server that is absolute or has a `..`,
  /// `.` or empty segment fails with protocol_error before anything is written. URLs that
  /// expire mid-way are asked for again once. `keep_archive_only` is invalid_argument (there is
  /// no archive); `archive_bytes` is the files' total size.
  ///@{
  template <class Token = default_token>
  auto async_download_external_weights(std::string tinker_path, DownloadOptions options, Token&& token = {}) const {
    return detail::start<DownloadResult>(std::forward<Token>(token), nullptr, &detail::rest_download_external_weights,
                                         holder_, std::move(tinker_path), std::move(options));
  }
  template <class Token = default_token>
  auto async_download_external_weights(std::string tinker_path, DownloadOptions options, diagnostics& diag,
                                       Token&& token = {}) const {
    return detail::start<DownloadResult>(std::forward<Token>(token), &diag, &detail::rest_download_external_weights,
                                         holder_, std::move(tinker_path), std::move(options));
  }
  ///@}
  /// POST /api/v1/external_weights_upload_start: where to PUT each file of a PEFT adapter for
  /// `request.base_model` shaped as `request.lora_config`. The server decides whether uploads are
  /// allowed.
  ///@{
  template <class Token = default_token>
  auto async_external_weights_upload_start(ExternalWeightsUploadStartRequest request, Token&& token = {}) const {
    return detail::start<ExternalWeightsUploadStartResponse>(
        std::forward<Token>(token), nullptr, &detail::rest_external_weights_upload_start, holder_, std::move(request));
  }
  template <class Token = default_token>
  auto async_external_weights_upload_start(ExternalWeightsUploadStartRequest request, diagnostics& diag,
                                           Token&& token = {}) const {
    return detail::start<ExternalWeightsUploadStartResponse>(
        std::forward<Token>(token), &diag, &detail::rest_external_weights_upload_start, holder_, std::move(request));
  }
  ///@}
  /// HTTP PUT of `file` to one upload target, streamed from disk, with the target's headers and
  /// no Tinker credentials; retried as `options` say. A failure names the file and the URL's host.
  ///@{
  template <class Token = default_token>
  auto async_external_weights_upload_put(ExternalWeightsUploadUrl target, std::filesystem::path file,
                                         ExternalWeightsPutOptions options, Token&& token = {}) const {
    return detail::start<std::monostate>(std::forward<Token>(token), nullptr, &detail::rest_external_weights_upload_put,
                                         holder_, std::move(target), std::move(file), std::move(options));
  }
  template <class Token = default_token>
  auto async_external_weights_upload_put(ExternalWeightsUploadUrl target, std::filesystem::path file,
                                         ExternalWeightsPutOptions options, diagnostics& diag,
                                         Token&& token = {}) const {
    return detail::start<std::monostate>(std::forward<Token>(token), &diag, &detail::rest_external_weights_upload_put,
                                         holder_, std::move(target), std::move(file), std::move(options));
  }
  ///@}
  /// POST /api/v1/external_weights_upload_finish: the server checks the files and registers the
  /// checkpoint; its `tinker_path` is the answer.
  ///@{
  template <class Token = default_token>
  auto async_external_weights_upload_finish(std::string upload_id, Token&& token = {}) const {
    return detail::start<ExternalWeightsUploadFinishResponse>(std::forward<Token>(token), nullptr,
                                                              &detail::rest_external_weights_upload_finish, holder_,
                                                              std::move(upload_id));
  }
  template <class Token = default_token>
  auto async_external_weights_upload_finish(std::string upload_id, diagnostics& diag, Token&& token = {}) const {
    return detail::start<ExternalWeightsUploadFinishResponse>(
        std::forward<Token>(token), &diag, &detail::rest_external_weights_upload_finish, holder_, std::move(upload_id));
  }
  ///@}
  /// The three steps for a directory: start, then a check that `dir` holds every file the server
  /// asked for (invalid_argument naming the first missing one, before any PUT), a PUT of each
  /// (retried as `options` say), and finish. A PUT that fails for good fails the call naming its
  /// file, and finish is not called, so nothing is registered.
  ///@{
  template <class Token = default_token>
  auto async_upload_external_weights(std::filesystem::path dir, ExternalWeightsUploadStartRequest request,
                                     ExternalWeightsUploadOptions options, Token&& token = {}) const {
    return detail::start<ExternalWeightsUploadFinishResponse>(std::forward<Token>(token), nullptr,
                                                              &detail::rest_upload_external_weights, holder_,
                                                              std::move(dir), std::move(request), std::move(options));
  }
  template <class Token = default_token>
  auto async_upload_external_weights(std::filesystem::path dir, ExternalWeightsUploadStartRequest request,
                                     ExternalWeightsUploadOptions options, diagnostics& diag,
                                     Token&& token = {}) const {
    return detail::start<ExternalWeightsUploadFinishResponse>(std::forward<Token>(token), &diag,
                                                              &detail::rest_upload_external_weights, holder_,
                                                              std::move(dir), std::move(request), std::move(options));
  }
  ///@}
  /// Downloads one file from a signed URL (a checkpoint archive URL, a session trace's URL) to
  /// `file`: a GET without credentials, streamed to a hidden part file beside `file` in constant
  /// memory, resumed with HTTP Range after a connection drop, size-checked, then renamed into
  /// place; the part file is removed on failure. `file`'s directory must exist; a directory at
  /// `file` is invalid_argument, an existing file conflict unless `options.force`. The result's
  /// `path` is `file` and `archive_bytes` its size; `files` stays empty.
  ///@{
  template <class Token = default_token>
  auto async_download_url(std::string url, std::filesystem::path file, UrlDownloadOptions options,
                          Token&& token = {}) const {
    return detail::start<DownloadResult>(std::forward<Token>(token), nullptr, &detail::rest_download_url, holder_,
                                         std::move(url), std::move(file), std::move(options));
  }
  template <class Token = default_token>
  auto async_download_url(std::string url, std::filesystem::path file, UrlDownloadOptions options, diagnostics& diag,
                          Token&& token = {}) const {
    return detail::start<DownloadResult>(std::forward<Token>(token), &diag, &detail::rest_download_url, holder_,
                                         std::move(url), std::move(file), std::move(options));
  }
  ///@}
  /// POST /api/v1/weights_info for a `tinker://` checkpoint path: base model and LoRA settings.
  ///@{
  template <class Token = default_token>
  auto async_get_weights_info(std::string tinker_path, Token&& token = {}) const {
    return detail::start<WeightsInfoResponse>(std::forward<Token>(token), nullptr, &detail::rest_get_weights_info,
                                              holder_, std::move(tinker_path));
  }
  template <class Token = default_token>
  auto async_get_weights_info(std::string tinker_path, diagnostics& diag, Token&& token = {}) const {
    return detail::start<WeightsInfoResponse>(std::forward<Token>(token), &diag, &detail::rest_get_weights_info,
                                              holder_, std::move(tinker_path));
  }
  ///@}
  /// The same call, spelled like every other call that takes a `tinker://` path.
  ///@{
  template <class Token = default_token>
  auto async_get_weights_info_from_tinker_path(std::string tinker_path, Token&& token = {}) const {
    return detail::start<WeightsInfoResponse>(std::forward<Token>(token), nullptr, &detail::rest_get_weights_info,
                                              holder_, std::move(tinker_path));
  }
  template <class Token = default_token>
  auto async_get_weights_info_from_tinker_path(std::string tinker_path, diagnostics& diag, Token&& token = {}) const {
    return detail::start<WeightsInfoResponse>(std::forward<Token>(token), &diag, &detail::rest_get_weights_info,
                                              holder_, std::move(tinker_path));
  }
  ///@}

  /// Deprecated spellings (the Python SDK's `_by_tinker_path`), kept for one release: every call
  /// that takes a `tinker://` path is named `..._from_tinker_path`.
  ///@{
  template <class... Args>
  [[deprecated("renamed async_get_training_run_from_tinker_path")]] auto async_get_training_run_by_tinker_path(
      Args&&... args) const {
    return async_get_training_run_from_tinker_path(std::forward<Args>(args)...);
  }
  template <class... Args>
  [[deprecated("renamed async_get_weights_info_from_tinker_path")]] auto async_get_weights_info_by_tinker_path(
      Args&&... args) const {
    return async_get_weights_info_from_tinker_path(std::forward<Args>(args)...);
  }
  ///@}

  // ---- Sessions and samplers ----
  /// GET /api/v1/sessions: one page of session ids, newest first.
  ///@{
  template <class Token = default_token>
  auto async_list_sessions(ListSessionsOptions options, Token&& token = {}) const {
    return detail::start<ListSessionsResponse>(std::forward<Token>(token), nullptr, &detail::rest_list_sessions,
                                               holder_, std::move(options));
  }
  template <class Token = default_token>
  auto async_list_sessions(ListSessionsOptions options, diagnostics& diag, Token&& token = {}) const {
    return detail::start<ListSessionsResponse>(std::forward<Token>(token), &diag, &detail::rest_list_sessions, holder_,
                                               std::move(options));
  }
  ///@}
  /// Every session id, page by page (default_sessions_page per request).
  ///@{
  template <class Token = default_token>
  auto async_list_all_sessions(ListAllOptions options, Token&& token = {}) const {
    return detail::start<std::vector<std::string>>(std::forward<Token>(token), nullptr, &detail::rest_list_all_sessions,
                                                   holder_, std::move(options));
  }
  template <class Token = default_token>
  auto async_list_all_sessions(ListAllOptions options, diagnostics& diag, Token&& token = {}) const {
    return detail::start<std::vector<std::string>>(std::forward<Token>(token), &diag, &detail::rest_list_all_sessions,
                                                   holder_, std::move(options));
  }
  ///@}
  /// POST /api/v1/sessions/search: one page of sessions matching every filter of `request`,
  /// newest first, with the cursor of the next page (`doc/rest.md#search-sessions`). A limit
  /// outside 1..200 or a user owner without 1..10 URNs fails with invalid_argument naming the
  /// field, before anything is sent.
  ///@{
  template <class Token = default_token>
  auto async_search_sessions(SessionSearchRequest request, Token&& token = {}) const {
    return detail::start<SessionSearchResponse>(std::forward<Token>(token), nullptr, &detail::rest_search_sessions,
                                                holder_, std::move(request));
  }
  template <class Token = default_token>
  auto async_search_sessions(SessionSearchRequest request, diagnostics& diag, Token&& token = {}) const {
    return detail::start<SessionSearchResponse>(std::forward<Token>(token), &diag, &detail::rest_search_sessions,
                                                holder_, std::move(request));
  }
  ///@}
  /// Every session matching `request`, page after page from its cursor (`request.cursor` is where
  /// it starts). A server that repeats a cursor, or still has pages after `max_pages` requests,
  /// fails it with protocol_error (a cursor that never ends cannot hang the call).
  ///@{
  template <class Token = default_token>
  auto async_search_all_sessions(SessionSearchRequest request, std::int64_t max_pages = default_search_max_pages,
                                 Token&& token = {}) const {
    return detail::start<std::vector<SessionSummary>>(
        std::forward<Token>(token), nullptr, &detail::rest_search_all_sessions, holder_, std::move(request), max_pages);
  }
  template <class Token = default_token>
  auto async_search_all_sessions(SessionSearchRequest request, std::int64_t max_pages, diagnostics& diag,
                                 Token&& token = {}) const {
    return detail::start<std::vector<SessionSummary>>(
        std::forward<Token>(token), &diag, &detail::rest_search_all_sessions, holder_, std::move(request), max_pages);
  }
  ///@}
  /// POST /api/v1/finish_session for any session of the caller, e.g. one a crashed program left
  /// running (`tinker session finish`); a ServiceClient finishes its own with
  /// ServiceClient::async_finish_session. An unknown reason or an empty id fails with
  /// invalid_argument before anything is sent.
  ///@{
  template <class Token = default_token>
  auto async_finish_session(FinishSessionRequest request, Token&& token = {}) const {
    return detail::start<std::monostate>(std::forward<Token>(token), nullptr, &detail::rest_finish_session, holder_,
                                         std::move(request));
  }
  template <class Token = default_token>
  auto async_finish_session(FinishSessionRequest request, diagnostics& diag, Token&& token = {}) const {
    return detail::start<std::monostate>(std::forward<Token>(token), &diag, &detail::rest_finish_session, holder_,
                                         std::move(request));
  }
  ///@}
  /// The most pages async_search_all_sessions requests by default (at the largest page size of
  /// 200, 200,000 sessions).
  static constexpr std::int64_t default_search_max_pages = 1000;

  /// GET /api/v1/sessions/{id}: its training runs and samplers, looked up in `scope`.
  ///@{
  template <class Token = default_token>
  auto async_get_session(std::string session_id, AccessScope scope, Token&& token = {}) const {
    return detail::start<GetSessionResponse>(std::forward<Token>(token), nullptr, &detail::rest_get_session, holder_,
                                             std::move(session_id), scope);
  }
  template <class Token = default_token>
  auto async_get_session(std::string session_id, AccessScope scope, diagnostics& diag, Token&& token = {}) const {
    return detail::start<GetSessionResponse>(std::forward<Token>(token), &diag, &detail::rest_get_session, holder_,
                                             std::move(session_id), scope);
  }
  ///@}
  /// PUT /api/v1/sessions/{id}/project: moves the session and its runs into a project
  /// (permission_denied without access to it).
  ///@{
  template <class Token = default_token>
  auto async_assign_session_project(std::string session_id, std::string project_id, Token&& token = {}) const {
    return detail::start<std::monostate>(std::forward<Token>(token), nullptr, &detail::rest_assign_session_project,
                                         holder_, std::move(session_id), std::move(project_id));
  }
  template <class Token = default_token>
  auto async_assign_session_project(std::string session_id, std::string project_id, diagnostics& diag,
                                    Token&& token = {}) const {
    return detail::start<std::monostate>(std::forward<Token>(token), &diag, &detail::rest_assign_session_project,
                                         holder_, std::move(session_id), std::move(project_id));
  }
  ///@}
  /// Starts (or reuses) the server's Perfetto trace export of a session and polls it every 5 s
  /// until it is ready (the result carries the download URL); a failed export completes with
  /// request_failed and the server's error text.
  ///@{
  template <class Token = default_token>
  auto async_export_session_trace(std::string session_id, Token&& token = {}) const {
    return detail::start<TraceExportResponse>(std::forward<Token>(token), nullptr, &detail::rest_export_session_trace,
                                              holder_, std::move(session_id));
  }
  template <class Token = default_token>
  auto async_export_session_trace(std::string session_id, diagnostics& diag, Token&& token = {}) const {
    return detail::start<TraceExportResponse>(std::forward<Token>(token), &diag, &detail::rest_export_session_trace,
                                              holder_, std::move(session_id));
  }
  ///@}
  /// GET /api/v1/samplers/{id}: the base model (and checkpoint) a sampler serves.
  ///@{
  template <class Token = default_token>
  auto async_get_sampler(std::string sampler_id, Token&& token = {}) const {
    return detail::start<GetSamplerResponse>(std::forward<Token>(token), nullptr, &detail::rest_get_sampler, holder_,
                                             std::move(sampler_id));
  }
  template <class Token = default_token>
  auto async_get_sampler(std::string sampler_id, diagnostics& diag, Token&& token = {}) const {
    return detail::start<GetSamplerResponse>(std::forward<Token>(token), &diag, &detail::rest_get_sampler, holder_,
                                             std::move(sampler_id));
  }
  ///@}

  // ---- Identity ----
  /// Who the credential belongs to, read from the JWT the client already holds (no request of
  /// its own; the first call bootstraps the client/config and auth/token exchange): the JWT's
  /// `sub` as user_urn and its `email`. Known when the server uses JWTs (client/config
  /// pjwt_auth_enabled), or when the API key itself is a JWT issued by "passport-..."; otherwise
  /// it fails with invalid_configuration saying why (`doc/rest.md#whoami`).
  ///@{
  template <class Token = default_token>
  auto async_whoami(Token&& token = {}) const {
    return detail::start<WhoamiResponse>(std::forward<Token>(token), nullptr, &detail::rest_whoami, holder_);
  }
  template <class Token = default_token>
  auto async_whoami(diagnostics& diag, Token&& token = {}) const {
    return detail::start<WhoamiResponse>(std::forward<Token>(token), &diag, &detail::rest_whoami, holder_);
  }
  ///@}

  /// Whether telemetry is on, and the session and process ids it reports under
  /// (`doc/protocol.md#telemetry`). Any thread.
  TelemetryInfo telemetry() const { return detail::holder_telemetry(*holder_); }

  // ---- Audit and billing ----
  /// GET /api/v1/audit: one day's audit log (admin role; permission_denied otherwise).
  ///@{
  template <class Token = default_token>
  auto async_get_audit_log(AuditLogOptions options, Token&& token = {}) const {
    return detail::start<AuditLogResponse>(std::forward<Token>(token), nullptr, &detail::rest_get_audit_log, holder_,
                                           std::move(options));
  }
  template <class Token = default_token>
  auto async_get_audit_log(AuditLogOptions options, diagnostics& diag, Token&& token = {}) const {
    return detail::start<AuditLogResponse>(std::forward<Token>(token), &diag, &detail::rest_get_audit_log, holder_,
                                           std::move(options));
  }
  ///@}
  /// GET /api/v1/billing/usage/events for [starting_on, ending_before): hour-aligned UTC times,
  /// a window of at most 14 days, not in the future (checked by the server).
  ///@{
  template <class Token = default_token>
  auto async_get_billing_usage(Timestamp starting_on, Timestamp ending_before, Token&& token = {}) const {
    return detail::start<BillingUsageResponse>(std::forward<Token>(token), nullptr, &detail::rest_get_billing_usage,
                                               holder_, starting_on, ending_before);
  }
  template <class Token = default_token>
  auto async_get_billing_usage(Timestamp starting_on, Timestamp ending_before, diagnostics& diag,
                               Token&& token = {}) const {
    return detail::start<BillingUsageResponse>(std::forward<Token>(token), &diag, &detail::rest_get_billing_usage,
                                               holder_, starting_on, ending_before);
  }
  ///@}

  // ---- Checkpoint search and storage (doc/rest.md#search-checkpoints) ----
  /// One page of a checkpoint search (POST /api/v1/checkpoints/search), newest first; pass the
  /// answer's next_cursor back in `request.cursor` for the next page. A limit outside 1..200 or
  /// an owner with a bad URN count fails with invalid_argument before anything is sent.
  ///@{
  template <class Token = default_token>
  auto async_search_checkpoints(CheckpointSearchRequest request, Token&& token = {}) const {
    return detail::start<CheckpointSearchResponse>(std::forward<Token>(token), nullptr,
                                                   &detail::rest_search_checkpoints, holder_, std::move(request));
  }
  template <class Token = default_token>
  auto async_search_checkpoints(CheckpointSearchRequest request, diagnostics& diag, Token&& token = {}) const {
    return detail::start<CheckpointSearchResponse>(std::forward<Token>(token), &diag, &detail::rest_search_checkpoints,
                                                   holder_, std::move(request));
  }
  ///@}
  /// Every checkpoint matching `request`, page after page from its cursor, newest first. A server
  /// that repeats a cursor, or still has pages after `max_pages` requests, fails it with
  /// protocol_error (a cursor that never ends cannot hang the call); `max_pages` < 1 is
  /// invalid_argument.
  ///@{
  template <class Token = default_token>
  auto async_search_all_checkpoints(CheckpointSearchRequest request, std::int64_t max_pages = default_search_max_pages,
                                    Token&& token = {}) const {
    return detail::start<std::vector<Checkpoint>>(std::forward<Token>(token), nullptr,
                                                  &detail::rest_search_all_checkpoints, holder_, std::move(request),
                                                  max_pages);
  }
  template <class Token = default_token>
  auto async_search_all_checkpoints(CheckpointSearchRequest request, std::int64_t max_pages, diagnostics& diag,
                                    Token&& token = {}) const {
    return detail::start<std::vector<Checkpoint>>(std::forward<Token>(token), &diag,
                                                  &detail::rest_search_all_checkpoints, holder_, std::move(request),
                                                  max_pages);
  }
  ///@}
  /// GET /api/v1/billing/usage/checkpoints/current: the checkpoints stored now and their size
  /// and projected monthly cost, of project `project_id` or (empty) the whole organization.
  ///@{
  template <class Token = default_token>
  auto async_get_checkpoint_storage_usage(std::optional<std::string> project_id, Token&& token = {}) const {
    return detail::start<CheckpointStorageUsageResponse>(std::forward<Token>(token), nullptr,
                                                         &detail::rest_get_checkpoint_storage_usage, holder_,
                                                         std::move(project_id));
  }
  template <class Token = default_token>
  auto async_get_checkpoint_storage_usage(std::optional<std::string> project_id, diagnostics& diag,
                                          Token&& token = {}) const {
    return detail::start<CheckpointStorageUsageResponse>(
        std::forward<Token>(token), &diag, &detail::rest_get_checkpoint_storage_usage, holder_, std::move(project_id));
  }
  ///@}

 private:
  detail::HolderPtr holder_;
};

}  // namespace tinker
