// The state of tinker-local: sessions, models, futures with seq_id ordering, checkpoints on disk,
// sampling sessions, REST listings and the audit. Contract between the engine
// (src/programs/local/engine/) and the HTTP front end (src/programs/local/server/).
//
// Threading: every member function is called on the server's single io thread; the engine keeps
// all its state there without locks. Model computations run on a worker pool and post their
// results back to the io executor. In null-model mode nothing runs on workers: operations
// complete at submission with well-formed, correctly sized results.
#pragma once

#include <tinker/local/server.hpp>
#include <tinker/types.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace tinker::local {

class LocalTokenizers;
namespace engine_detail {
class Backend;
}

/// An error answered directly over HTTP: `{"detail": message}` with `status`.
class HttpError : public std::runtime_error {
 public:
  HttpError(int status, const std::string& detail) : std::runtime_error(detail), status_(status) {}
  int status() const noexcept { return status_; }

 private:
  int status_;
};

/// Who is calling, derived from the API key (or the JWT minted for it). The key itself is never
/// stored: `user_id` is "tml:organization_user:" + the first 16 hex digits of SHA-256(key).
struct Principal {
  std::string user_id;
  std::string email;  ///< "<user hash>@tinker-local.invalid"
  std::string organization_id;
};

/// The server's clock for TTLs, expiry and timestamps: system time plus an adjustable offset.
class EngineClock {
 public:
  std::chrono::system_clock::time_point now() const;
  /// now() as the protocol's Timestamp (whole microseconds).
  Timestamp now_timestamp() const;
  void advance(std::chrono::seconds by) { offset_ += by; }

 private:
  std::chrono::system_clock::duration offset_{0};
};

/// What a poll of retrieve_future answers (HTTP 200 in every case; unknown ids and evicted
/// results are HttpError 404 / 410).
struct RetrieveOutcome {
  std::string content_type;  ///< "application/json" or "application/x-protobuf"
  std::string body;          ///< try_again, complete_metadata, {"error","category"} or the result
  int status = 200;          ///< 408 for a pending future with options.try_again_as_408 (same try_again body)
};

/// A file the server hands out without authentication (archive tars, trace exports).
struct Download {
  std::string content_type;
  std::shared_ptr<const std::string> data;
  std::chrono::system_clock::time_point expires;
};

/// Answer to GET .../archive: either the download token (the front end builds the URL from its
/// own base URL: <base>/_downloads/<token>) with its expiry, or HttpError 503 while "building".
struct ArchiveLocation {
  std::string token;
  std::chrono::system_clock::time_point expires;
};

/// Answer to GET .../external_weights/<name>/external_weights_urls: a download token per file
/// (relative path -> token; the front end makes the URLs <base>/_downloads/<token>).
struct ExternalWeightsLocation {
  std::map<std::string, std::string> tokens;
  std::chrono::system_clock::time_point expires;
};

/// Answer to external_weights_upload_start: the front end makes each file's URL
/// <base>/_uploads/<upload_id>/<file>, to be PUT with header X-Tinker-Upload-Token: <secret>.
struct ExternalUploadStart {
  std::string upload_id;
  std::string secret;
  std::vector<std::string> files;
  std::chrono::system_clock::time_point expires;
};

/// For paused-queue faults: asked once per submitted future with the endpoint name
/// ("forward_backward", "asample", ...). A value makes the future report that queue state
/// ("paused_capacity" | "paused_rate_limit") for the duration before it may run.
struct QueuePause {
  std::string queue_state;
  std::chrono::milliseconds duration{0};
};
using QueuePauseHook = std::function<std::optional<QueuePause>(std::string_view endpoint)>;

class Engine {
 public:
  /// `tokenizers` are installed/loaded by the caller (see tokenizer_store.hpp); may be empty only
  /// in null-model mode. Checkpoints live under options.data_dir/checkpoints and are rescanned
  /// here (they survive a restart); an empty data_dir gets a private temporary directory that is
  /// removed with the engine.
  Engine(boost::asio::any_io_executor io, const ServerOptions& options, const LocalTokenizers& tokenizers);
  /// An engine over a given compute backend (src/programs/local/engine/backend.hpp), for tests and tools;
  /// options.null_model is ignored.
  static std::unique_ptr<Engine> with_backend(boost::asio::any_io_executor io, const ServerOptions& options,
                                              std::shared_ptr<engine_detail::Backend> backend);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// Stops timers and workers; pending long polls complete with try_again.
  void shutdown();
  EngineClock& clock() noexcept;
  void set_queue_pause_hook(QueuePauseHook hook);

  // Direct endpoints. All throw HttpError for the caller's mistakes (400/404/409/422).
  GetServerCapabilitiesResponse capabilities() const;
  CreateSessionResponse create_session(const CreateSessionRequest& request, const Principal& who);
  SessionHeartbeatResponse heartbeat(const SessionHeartbeatRequest& request, const Principal& who);
  CreateSamplingSessionResponse create_sampling_session(const CreateSamplingSessionRequest& request,
                                                        const Principal& who);
  GetInfoResponse get_info(const GetInfoRequest& request, const Principal& who);
  /// Counts the events and keeps `body` as received (the newest 1000 batches) for telemetry_batches().
  TelemetryResponse telemetry(const TelemetryRequest& request, std::string_view body, const Principal& who);
  std::vector<std::string> telemetry_batches() const;

  // Future endpoints: return the ticket. Ordering (seq_id <= 0 -> HttpError 400,
  // repeated seq_id -> the earlier ticket, later seq_id held until every earlier one ran).
  UntypedAPIFuture create_model(const CreateModelRequest& request, const Principal& who);
  UntypedAPIFuture unload_model(const UnloadModelRequest& request, const Principal& who);
  UntypedAPIFuture forward_backward(ForwardBackwardRequest request, const Principal& who);
  UntypedAPIFuture optim_step(const OptimStepRequest& request, const Principal& who);
  UntypedAPIFuture save_weights(const SaveWeightsRequest& request, const Principal& who);
  UntypedAPIFuture load_weights(const LoadWeightsRequest& request, const Principal& who);
  UntypedAPIFuture save_weights_for_sampler(const SaveWeightsForSamplerRequest& request, const Principal& who);
  /// The adapter as a PEFT directory, checkpoint tinker://<run>/external_weights/<name>
  /// (doc/local.md#external-weights). age recipients: HttpError 400 (tinker-local cannot encrypt).
  UntypedAPIFuture save_weights_external(const SaveWeightsExternalRequest& request, const Principal& who);
  /// `backpressure`: the request carried X-Tinker-Sampling-Backpressure: 1; with more pending
  /// samples than options.sample_queue_limit this throws HttpError 429.
  UntypedAPIFuture sample(SampleRequest request, const Principal& who, bool backpressure);

  /// Long poll (doc/local.md#ordering-and-futures): completes when the future is done or
  /// `options.long_poll_hold` passed. `accept_protobuf`: the poll's Accept contains
  /// application/x-protobuf. Throws HttpError 404 (unknown id) / 410 (evicted). With
  /// options.try_again_as_408 a pending poll answers status 408 with the try_again body (the
  /// protocol's alternate form).
  boost::asio::awaitable<RetrieveOutcome> retrieve(std::string request_id, bool allow_metadata_only,
                                                   bool accept_protobuf, Principal who);
  /// POST /api/v1/retrieve_futures (doc/local.md#sampling-results-in-batches): the completions of a
  /// sampling session's requests after request.prev_cursor, at once when there are some, else after
  /// the first one or `timeout` seconds (default and cap 30). HttpError 404 for a sampler that is
  /// not the caller's, 400 for a negative cursor, clone or timeout.
  boost::asio::awaitable<FuturesRetrieveResponse> retrieve_futures(FuturesRetrieveRequest request, Principal who);

  // REST (doc/rest.md). Listings take limit/offset and fill cursor.total_count.
  TrainingRunsResponse list_training_runs(std::int64_t limit, std::int64_t offset, std::string_view access_scope,
                                          const Principal& who) const;
  TrainingRun get_training_run(std::string_view run_id, std::string_view access_scope, const Principal& who) const;
  CheckpointsListResponse list_run_checkpoints(std::string_view run_id, const Principal& who) const;
  CheckpointsListResponse list_user_checkpoints(std::int64_t limit, std::int64_t offset, const Principal& who) const;
  void delete_checkpoint(std::string_view run_id, std::string_view checkpoint_id, const Principal& who);
  void publish_checkpoint(std::string_view run_id, std::string_view checkpoint_id, const Principal& who);
  void unpublish_checkpoint(std::string_view run_id, std::string_view checkpoint_id, const Principal& who);
  void set_checkpoint_ttl(std::string_view run_id, std::string_view checkpoint_id,
                          const SetCheckpointTtlRequest& request, const Principal& who);
  ArchiveLocation checkpoint_archive(std::string_view run_id, std::string_view checkpoint_id, const Principal& who);
  /// Test hook (Server::replace_checkpoint_archive): the checkpoint at `tinker_path` is served
  /// as `tar` (any bytes) from now on, under a fresh download token. HttpError 404 when unknown.
  void replace_checkpoint_archive(std::string_view tinker_path, std::string tar);
  WeightsInfoResponse weights_info(const WeightsInfoRequest& request, const Principal& who) const;
  /// POST /api/v1/checkpoints/search (doc/local.md#checkpoint-search): every filter, owner
  /// semantics, newest first, cursor paging. 400 for a limit outside 1..200.
  CheckpointSearchResponse search_checkpoints(const CheckpointSearchRequest& request, const Principal& who) const;
  /// POST /api/v1/copy_weights (doc/local.md#copying-weights): a new run of the session holding a
  /// copy that shares the source's files and takes no training. 404 for a checkpoint the caller
  /// cannot read, 400 for a bad path or TTL, 409 for a model_seq_id in use by something else.
  CopyWeightsResponse copy_weights(const CopyWeightsRequest& request, const Principal& who);
  /// GET /api/v1/billing/usage/checkpoints/current: live checkpoints per (project, owner), at a
  /// fixed rate (doc/local.md#checkpoint-storage-usage).
  CheckpointStorageUsageResponse checkpoint_storage_usage(const std::optional<std::string>& project_id,
                                                          const Principal& who) const;
  ListSessionsResponse list_sessions(std::int64_t limit, std::int64_t offset, const Principal& who) const;
  GetSessionResponse get_session(std::string_view session_id, const Principal& who) const;
  /// POST /api/v1/finish_session: the session ends as client_finished; later requests naming it get
  /// 400. 404 for an unknown or expired session, 400 for one that already ended or an unknown reason.
  void finish_session(const FinishSessionRequest& request, const Principal& who);
  /// POST /api/v1/sessions/search (doc/local.md#session-search): every filter, owner semantics,
  /// newest first, cursor paging. 400 for a limit outside 1..200.
  SessionSearchResponse search_sessions(const SessionSearchRequest& request, const Principal& who) const;
  /// Admin (POST /_admin/sessions/cancel): the session ends as cancelled with `detail`, as a
  /// console cancel does. HttpError 404 when unknown, 400 when it already ended.
  void cancel_session(std::string_view session_id, std::optional<std::string> detail);
  /// Test hook (Server::corrupt_model): the model's run is marked corrupted (failed, `corrupted`
  /// in the REST listings) and every operation that has not started yet fails with category
  /// server, "training run <id> is corrupted: <detail>". HttpError 404 for an unknown model.
  void corrupt_model(std::string_view model_id, std::string detail);
  void assign_session_project(std::string_view session_id, const AssignSessionProjectRequest& request,
                              const Principal& who);
  /// `download_base`: the front end's base URL, for the ready export's URL.
  TraceExportResponse trace_export(std::string_view session_id, std::string_view download_base, const Principal& who);
  GetSamplerResponse get_sampler(std::string_view sampler_id, const Principal& who) const;
  AuditLogResponse audit_log(std::int64_t limit, std::int64_t offset, const Principal& who) const;
  /// Both bounds required (RFC 3339), hour-aligned, window <= 14 days, not in the future; else 400.
  BillingUsageResponse billing_usage(std::string_view start_time, std::string_view end_time,
                                     const Principal& who) const;

  // External weights (doc/local.md#external-weights).
  /// The files of an external checkpoint as downloads valid for 15 minutes; 400 for another kind, 404.
  ExternalWeightsLocation external_weights_urls(std::string_view run_id, std::string_view checkpoint_id,
                                                const Principal& who);
  /// Checks the base model and LoRA config (400/404) and opens an upload of the two PEFT files.
  ExternalUploadStart external_upload_start(const ExternalWeightsUploadStartRequest& request, const Principal& who);
  /// Stores one file of an upload. HttpError 403 without the upload's token, 404 for an unknown or
  /// expired upload or a file it did not ask for, 409 after its finish.
  void external_upload_put(std::string_view upload_id, std::string_view file, std::string_view token, std::string body);
  /// Checks every file arrived and is a PEFT adapter fitting the base model and rank, then registers
  /// the checkpoint; HttpError 400 naming the file otherwise (nothing registered).
  ExternalWeightsUploadFinishResponse external_upload_finish(const ExternalWeightsUploadFinishRequest& request,
                                                             const Principal& who);

  /// A file served at /_downloads/<token>; nullopt when unknown or expired.
  std::optional<Download> download(std::string_view token) const;

  /// Per model, the seq_ids applied in application order (the front end adds the arrival log).
  std::vector<ModelAudit> model_audit() const;

  /// Telemetry events received so far (they are counted and the last few kept, not forwarded).
  std::size_t telemetry_event_count() const noexcept;

 private:
  class Impl;
  explicit Engine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tinker::local
