/// \file
/// Bootstrap, sessions and sampler management on the wire (`doc/protocol.md#endpoints`,
/// `doc/protocol.md#bootstrap-and-lifecycle`).
#pragma once

#include <tinker/types/common.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tinker {

/// POST /api/v1/client/config and /api/v1/client/dynamic_config request body.
class ClientConfigRequest {
 public:
  ClientConfigRequest();  ///< sdk_version = the protocol version this SDK speaks
  /// A request claiming `sdk_version_`.
  explicit ClientConfigRequest(std::string sdk_version_) : sdk_version(std::move(sdk_version_)) {}

  /// The protocol version the client speaks (tinker::protocol_version), e.g. "0.25.0".
  std::string sdk_version;

  /// Equal when every field is equal.
  friend bool operator==(const ClientConfigRequest&, const ClientConfigRequest&) = default;
};

/// Feature flags from /api/v1/client/config (`doc/protocol.md#endpoints`); absent keys keep
/// these defaults, unknown keys are ignored.
class ClientConfigResponse {
 public:
  /// The defaults of every flag.
  ClientConfigResponse() = default;

  /// Exchange the credential for a JWT (POST /api/v1/auth/token) and authenticate with that
  /// (`doc/protocol.md#authentication`).
  bool pjwt_auth_enabled = false;
  /// "credential_cmd": the token exchange must use ClientOptions::credential_command.
  std::string credential_default_source = "api_key";
  /// Budget of estimated prompt bytes of sample submissions in flight (10 MiB).
  std::int64_t sample_dispatch_bytes_semaphore_size = 10 * 1024 * 1024;
  /// Budget of bytes of large results being fetched at once (50 MiB).
  std::int64_t inflight_response_bytes_semaphore_size = 50 * 1024 * 1024;
  /// Submit the chunks of one forward_backward concurrently (`doc/training.md#chunking`).
  bool parallel_fwdbwd_chunks = true;
  /// zstd-compress the protobuf forward_backward body.
  bool proto_compress_fwdbwd = false;
  /// Most datums per forward_backward request.
  std::int64_t fwdbwd_max_chunk_len = 1024;
  /// Most estimated bytes per forward_backward request (a larger single datum still goes alone).
  std::int64_t fwdbwd_max_chunk_bytes_count = 5'000'000;
  /// Budget of estimated forward_backward bytes being submitted at once.
  std::int64_t fwdbwd_dispatch_bytes_semaphore_size = 50'000'000;
  /// How long (seconds) a billing hold (HTTP 402) is waited out before it fails the call
  /// (`doc/protocol.md#billing-pause-402`).
  std::int64_t billing_exception_max_pause_duration_sec = 3600;
  /// Sample without the client's sampling retry layer (`doc/protocol.md#sample-resubmission`).
  bool sample_no_retries = false;
  /// Fail a sample when no sample has completed for the progress timeout (2 h).
  bool sample_enable_stuck_detection = true;
  /// Most sample operations in flight at once, end to end (submission to result).
  std::int64_t sample_max_concurrent_requests = 2000;
  bool use_pyqwest_transport = true;  ///< a Python transport choice; C++ ignores it
  /// Create a model from a checkpoint with one load_weights call (`doc/service.md`).
  bool create_model_via_load_weights = false;
  /// Collect finished samples with the batched long-poll /api/v1/retrieve_futures instead of one
  /// poll per request (`doc/sampling.md`). Empty: the server did not name the flag, so it predates
  /// the post-0.25 protocol (`doc/protocol.md#server-generations`): optim_step then sends
  /// `adam_params`, newer servers get `optim_params`.
  std::optional<bool> sample_use_retrieve_futures;
  bool proto_write_fwdbwd = false;  ///< SDKs 0.19-0.24.1 only
  bool fwd_via_fwdbwd = false;      ///< SDKs 0.22.3-0.24.1 only

  /// Equal when every field is equal.
  friend bool operator==(const ClientConfigResponse&, const ClientConfigResponse&) = default;
};

/// /api/v1/client/dynamic_config answer.
class DynamicConfigResponse {
 public:
  /// The default interval.
  DynamicConfigResponse() = default;
  /// An answer asking for a refresh every `refresh_interval_sec_` seconds.
  explicit DynamicConfigResponse(std::int64_t refresh_interval_sec_) : refresh_interval_sec(refresh_interval_sec_) {}

  /// Seconds until the client fetches the dynamic config again (at least 10 are waited).
  std::int64_t refresh_interval_sec = 300;

  /// Equal when every field is equal.
  friend bool operator==(const DynamicConfigResponse&, const DynamicConfigResponse&) = default;
};

/// POST /api/v1/auth/token: the body is `{}`.
class AuthTokenRequest {
 public:
  /// The (only) request.
  AuthTokenRequest() = default;
  /// Equal when every field is equal.
  friend bool operator==(const AuthTokenRequest&, const AuthTokenRequest&) = default;
};

/// Answer of POST /api/v1/auth/token.
class AuthTokenResponse {
 public:
  /// An empty token.
  AuthTokenResponse() = default;
  /// An answer carrying `jwt_`.
  explicit AuthTokenResponse(std::string jwt_) : jwt(std::move(jwt_)) {}

  /// The compact JWT the client authenticates with from now on (never logged).
  std::string jwt;

  /// Equal when every field is equal.
  friend bool operator==(const AuthTokenResponse&, const AuthTokenResponse&) = default;
};

/// GET /api/v1/healthz.
class HealthResponse {
 public:
  /// A healthy answer.
  HealthResponse() = default;

  /// Always "ok".
  std::string status = "ok";

  /// Equal when every field is equal.
  friend bool operator==(const HealthResponse&, const HealthResponse&) = default;
};

/// One base model the server offers.
class SupportedModel {
 public:
  /// An entry without fields.
  SupportedModel() = default;
  /// The model `model_name_`.
  explicit SupportedModel(std::string model_name_, std::optional<std::int64_t> max_context_length_ = std::nullopt)
      : model_name(std::move(model_name_)), max_context_length(max_context_length_) {}

  std::optional<std::string> model_name;           ///< e.g. "Qwen/Qwen3-8B"
  std::optional<std::int64_t> max_context_length;  ///< in tokens

  /// Equal when every field is equal.
  friend bool operator==(const SupportedModel&, const SupportedModel&) = default;
};

/// GET /api/v1/get_server_capabilities.
class GetServerCapabilitiesResponse {
 public:
  /// No models.
  GetServerCapabilitiesResponse() = default;
  /// An answer listing `supported_models_`.
  explicit GetServerCapabilitiesResponse(std::vector<SupportedModel> supported_models_)
      : supported_models(std::move(supported_models_)) {}

  /// The base models a training or sampling client may be created on.
  std::vector<SupportedModel> supported_models;

  /// Equal when every field is equal.
  friend bool operator==(const GetServerCapabilitiesResponse&, const GetServerCapabilitiesResponse&) = default;
};

/// POST /api/v1/create_session.
class CreateSessionRequest {
 public:
  CreateSessionRequest();  ///< sdk_version = the protocol version this SDK speaks
  /// A session with `tags_` and `user_metadata_`, in project `project_id_` (sdk_version as above).
  CreateSessionRequest(std::vector<std::string> tags_, JsonObject user_metadata_,
                       std::optional<std::string> project_id_ = std::nullopt);

  std::vector<std::string> tags;          ///< ClientOptions::tags (TINKER_TAGS)
  JsonObject user_metadata;               ///< sent as {} when empty
  std::string sdk_version;                ///< the protocol version the client speaks
  std::optional<std::string> project_id;  ///< ClientOptions::project_id (TINKER_PROJECT_ID)
  /// ServiceClientOptions::display_name: the session's name in the console and in searches
  /// (need not be unique); omitted when empty.
  std::optional<std::string> display_name;

  /// Equal when every field is equal.
  friend bool operator==(const CreateSessionRequest&, const CreateSessionRequest&) = default;
};

/// Answer of POST /api/v1/create_session.
class CreateSessionResponse {
 public:
  /// An empty answer.
  CreateSessionResponse() = default;
  /// The new session `session_id_`.
  explicit CreateSessionResponse(std::string session_id_) : session_id(std::move(session_id_)) {}

  std::string session_id;                      ///< the new session's id
  std::optional<std::string> info_message;     ///< logged at info level
  std::optional<std::string> warning_message;  ///< logged as a warning (e.g. an outdated SDK)
  std::optional<std::string> error_message;    ///< logged as an error

  /// Equal when every field is equal.
  friend bool operator==(const CreateSessionResponse&, const CreateSessionResponse&) = default;
};

/// POST /api/v1/session_heartbeat: keeps a session alive (sent every 10 s).
class SessionHeartbeatRequest {
 public:
  /// An empty request.
  SessionHeartbeatRequest() = default;
  /// A heartbeat of `session_id_`.
  explicit SessionHeartbeatRequest(std::string session_id_) : session_id(std::move(session_id_)) {}

  /// The session kept alive.
  std::string session_id;

  /// Equal when every field is equal.
  friend bool operator==(const SessionHeartbeatRequest&, const SessionHeartbeatRequest&) = default;
};

/// Answer of POST /api/v1/session_heartbeat (no fields).
class SessionHeartbeatResponse {
 public:
  /// The (only) answer.
  SessionHeartbeatResponse() = default;
  /// Equal when every field is equal.
  friend bool operator==(const SessionHeartbeatResponse&, const SessionHeartbeatResponse&) = default;
};

/// POST /api/v1/create_sampling_session: sample a base model or a tinker:// checkpoint.
class CreateSamplingSessionRequest {
 public:
  /// An empty request.
  CreateSamplingSessionRequest() = default;
  /// A sampler in `session_id_` on `base_model_` or on the sampler checkpoint `model_path_`.
  CreateSamplingSessionRequest(std::string session_id_, std::int64_t sampling_session_seq_id_,
                               std::optional<std::string> base_model_, std::optional<std::string> model_path_)
      : session_id(std::move(session_id_)),
        sampling_session_seq_id(sampling_session_seq_id_),
        base_model(std::move(base_model_)),
        model_path(std::move(model_path_)) {}

  std::string session_id;                    ///< the owning session
  std::int64_t sampling_session_seq_id = 0;  ///< the session's sampler counter, from 0
  std::optional<std::string> base_model;     ///< required when sampling a base model
  std::optional<std::string> model_path;     ///< a `tinker://.../sampler_weights/...` path

  /// Equal when every field is equal.
  friend bool operator==(const CreateSamplingSessionRequest&, const CreateSamplingSessionRequest&) = default;
};

/// Answer of POST /api/v1/create_sampling_session.
class CreateSamplingSessionResponse {
 public:
  /// An empty answer.
  CreateSamplingSessionResponse() = default;
  /// The new sampler `sampling_session_id_`.
  explicit CreateSamplingSessionResponse(std::string sampling_session_id_)
      : sampling_session_id(std::move(sampling_session_id_)) {}

  /// The sampler's id, `<session_id>:sample:<n>`.
  std::string sampling_session_id;

  /// Equal when every field is equal.
  friend bool operator==(const CreateSamplingSessionResponse&, const CreateSamplingSessionResponse&) = default;
};

/// GET /api/v1/sessions (ids only, no cursor).
class ListSessionsResponse {
 public:
  /// No sessions.
  ListSessionsResponse() = default;
  /// A page of `sessions_`.
  explicit ListSessionsResponse(std::vector<std::string> sessions_) : sessions(std::move(sessions_)) {}

  /// Session ids, newest first.
  std::vector<std::string> sessions;

  /// Equal when every field is equal.
  friend bool operator==(const ListSessionsResponse&, const ListSessionsResponse&) = default;
};

/// GET /api/v1/sessions/{id}.
class GetSessionResponse {
 public:
  /// A session without runs or samplers.
  GetSessionResponse() = default;
  /// A session holding the given runs and samplers.
  GetSessionResponse(std::vector<std::string> training_run_ids_, std::vector<std::string> sampler_ids_)
      : training_run_ids(std::move(training_run_ids_)), sampler_ids(std::move(sampler_ids_)) {}

  std::vector<std::string> training_run_ids;  ///< the session's models (training run id = model id)
  std::vector<std::string> sampler_ids;       ///< the session's samplers

  /// Equal when every field is equal.
  friend bool operator==(const GetSessionResponse&, const GetSessionResponse&) = default;
};

/// PUT /api/v1/sessions/{id}/project.
class AssignSessionProjectRequest {
 public:
  /// An empty request.
  AssignSessionProjectRequest() = default;
  /// Move the session into `project_id_`.
  explicit AssignSessionProjectRequest(std::string project_id_) : project_id(std::move(project_id_)) {}

  /// The target project (required: clearing is not supported).
  std::string project_id;

  /// Equal when every field is equal.
  friend bool operator==(const AssignSessionProjectRequest&, const AssignSessionProjectRequest&) = default;
};

/// Where a session trace export stands.
enum class TraceExportStatus {
  pending,  ///< the server is still building the trace
  ready,    ///< done: TraceExportResponse::url is set
  failed,   ///< the export failed: TraceExportResponse::error says why
};
/// The wire name: "pending", "ready" or "failed".
const char* to_string(TraceExportStatus status) noexcept;

/// GET /api/v1/sessions/{id}/trace_export: a Perfetto trace of the session.
class TraceExportResponse {
 public:
  /// A pending export.
  TraceExportResponse() = default;
  /// An export in `status_`.
  explicit TraceExportResponse(TraceExportStatus status_) : status(status_) {}

  TraceExportStatus status = TraceExportStatus::pending;  ///< where the export stands
  /// Set when ready: a signed URL (valid about an hour) of the `.pftrace` file, downloadable
  /// without credentials.
  std::optional<std::string> url;
  std::optional<std::string> error;  ///< set when failed

  /// Equal when every field is equal.
  friend bool operator==(const TraceExportResponse&, const TraceExportResponse&) = default;
};

/// GET /api/v1/samplers/{id}.
class GetSamplerResponse {
 public:
  /// An empty answer.
  GetSamplerResponse() = default;
  /// The sampler `sampler_id_` on `base_model_`.
  GetSamplerResponse(std::string sampler_id_, std::string base_model_)
      : sampler_id(std::move(sampler_id_)), base_model(std::move(base_model_)) {}

  std::string sampler_id;                 ///< `<session_id>:sample:<n>`
  std::string base_model;                 ///< the model it samples, e.g. "Qwen/Qwen3-8B"
  std::optional<std::string> model_path;  ///< the sampler checkpoint it serves, if any

  /// Equal when every field is equal.
  friend bool operator==(const GetSamplerResponse&, const GetSamplerResponse&) = default;
};

TINKER_DECLARE_PRINTABLE(ClientConfigRequest);
TINKER_DECLARE_PRINTABLE(ClientConfigResponse);
TINKER_DECLARE_PRINTABLE(DynamicConfigResponse);
TINKER_DECLARE_PRINTABLE(AuthTokenRequest);
TINKER_DECLARE_PRINTABLE(AuthTokenResponse);
TINKER_DECLARE_PRINTABLE(HealthResponse);
TINKER_DECLARE_PRINTABLE(SupportedModel);
TINKER_DECLARE_PRINTABLE(GetServerCapabilitiesResponse);
TINKER_DECLARE_PRINTABLE(CreateSessionRequest);
TINKER_DECLARE_PRINTABLE(CreateSessionResponse);
TINKER_DECLARE_PRINTABLE(SessionHeartbeatRequest);
TINKER_DECLARE_PRINTABLE(SessionHeartbeatResponse);
TINKER_DECLARE_PRINTABLE(CreateSamplingSessionRequest);
TINKER_DECLARE_PRINTABLE(CreateSamplingSessionResponse);
TINKER_DECLARE_PRINTABLE(ListSessionsResponse);
TINKER_DECLARE_PRINTABLE(GetSessionResponse);
TINKER_DECLARE_PRINTABLE(AssignSessionProjectRequest);
TINKER_DECLARE_PRINTABLE(TraceExportResponse);
TINKER_DECLARE_PRINTABLE(GetSamplerResponse);

}  // namespace tinker
