// Bootstrap, sessions and sampler management (spec 8.1-8.6, 8.12.11-8.12.15).
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
  explicit ClientConfigRequest(std::string sdk_version_) : sdk_version(std::move(sdk_version_)) {}

  std::string sdk_version;

  friend bool operator==(const ClientConfigRequest&, const ClientConfigRequest&) = default;
};

/// Feature flags from /api/v1/client/config (spec 8.4); absent keys keep these defaults.
class ClientConfigResponse {
 public:
  ClientConfigResponse() = default;

  bool pjwt_auth_enabled = false;
  std::string credential_default_source = "api_key";
  std::int64_t sample_dispatch_bytes_semaphore_size = 10 * 1024 * 1024;
  std::int64_t inflight_response_bytes_semaphore_size = 50 * 1024 * 1024;
  bool parallel_fwdbwd_chunks = true;
  bool proto_compress_fwdbwd = false;
  std::int64_t fwdbwd_max_chunk_len = 1024;
  std::int64_t fwdbwd_max_chunk_bytes_count = 5'000'000;
  std::int64_t fwdbwd_dispatch_bytes_semaphore_size = 50'000'000;
  std::int64_t billing_exception_max_pause_duration_sec = 3600;
  bool sample_no_retries = false;
  bool sample_enable_stuck_detection = true;
  std::int64_t sample_max_concurrent_requests = 2000;
  bool use_pyqwest_transport = true;  ///< a Python transport choice; C++ ignores it
  bool create_model_via_load_weights = false;
  bool proto_write_fwdbwd = false;  ///< SDKs 0.19-0.24.1 only
  bool fwd_via_fwdbwd = false;      ///< SDKs 0.22.3-0.24.1 only

  friend bool operator==(const ClientConfigResponse&, const ClientConfigResponse&) = default;
};

/// /api/v1/client/dynamic_config answer.
class DynamicConfigResponse {
 public:
  DynamicConfigResponse() = default;
  explicit DynamicConfigResponse(std::int64_t refresh_interval_sec_) : refresh_interval_sec(refresh_interval_sec_) {}

  std::int64_t refresh_interval_sec = 300;

  friend bool operator==(const DynamicConfigResponse&, const DynamicConfigResponse&) = default;
};

/// POST /api/v1/auth/token: the body is `{}`.
class AuthTokenRequest {
 public:
  AuthTokenRequest() = default;
  friend bool operator==(const AuthTokenRequest&, const AuthTokenRequest&) = default;
};

class AuthTokenResponse {
 public:
  AuthTokenResponse() = default;
  explicit AuthTokenResponse(std::string jwt_) : jwt(std::move(jwt_)) {}

  std::string jwt;

  friend bool operator==(const AuthTokenResponse&, const AuthTokenResponse&) = default;
};

/// GET /api/v1/healthz.
class HealthResponse {
 public:
  HealthResponse() = default;

  std::string status = "ok";

  friend bool operator==(const HealthResponse&, const HealthResponse&) = default;
};

class SupportedModel {
 public:
  SupportedModel() = default;
  explicit SupportedModel(std::string model_name_, std::optional<std::int64_t> max_context_length_ = std::nullopt)
      : model_name(std::move(model_name_)), max_context_length(max_context_length_) {}

  std::optional<std::string> model_name;
  std::optional<std::int64_t> max_context_length;

  friend bool operator==(const SupportedModel&, const SupportedModel&) = default;
};

/// GET /api/v1/get_server_capabilities.
class GetServerCapabilitiesResponse {
 public:
  GetServerCapabilitiesResponse() = default;
  explicit GetServerCapabilitiesResponse(std::vector<SupportedModel> supported_models_)
      : supported_models(std::move(supported_models_)) {}

  std::vector<SupportedModel> supported_models;

  friend bool operator==(const GetServerCapabilitiesResponse&, const GetServerCapabilitiesResponse&) = default;
};

/// POST /api/v1/create_session.
class CreateSessionRequest {
 public:
  CreateSessionRequest();  ///< sdk_version = the protocol version this SDK speaks
  CreateSessionRequest(std::vector<std::string> tags_, JsonObject user_metadata_,
                       std::optional<std::string> project_id_ = std::nullopt);

  std::vector<std::string> tags;
  JsonObject user_metadata;  ///< sent as {} when empty
  std::string sdk_version;
  std::optional<std::string> project_id;

  friend bool operator==(const CreateSessionRequest&, const CreateSessionRequest&) = default;
};

class CreateSessionResponse {
 public:
  CreateSessionResponse() = default;
  explicit CreateSessionResponse(std::string session_id_) : session_id(std::move(session_id_)) {}

  std::string session_id;
  std::optional<std::string> info_message;
  std::optional<std::string> warning_message;
  std::optional<std::string> error_message;

  friend bool operator==(const CreateSessionResponse&, const CreateSessionResponse&) = default;
};

/// POST /api/v1/session_heartbeat.
class SessionHeartbeatRequest {
 public:
  SessionHeartbeatRequest() = default;
  explicit SessionHeartbeatRequest(std::string session_id_) : session_id(std::move(session_id_)) {}

  std::string session_id;

  friend bool operator==(const SessionHeartbeatRequest&, const SessionHeartbeatRequest&) = default;
};

class SessionHeartbeatResponse {
 public:
  SessionHeartbeatResponse() = default;
  friend bool operator==(const SessionHeartbeatResponse&, const SessionHeartbeatResponse&) = default;
};

/// POST /api/v1/create_sampling_session: sample a base model or a tinker:// checkpoint.
class CreateSamplingSessionRequest {
 public:
  CreateSamplingSessionRequest() = default;
  CreateSamplingSessionRequest(std::string session_id_, std::int64_t sampling_session_seq_id_,
                               std::optional<std::string> base_model_, std::optional<std::string> model_path_)
      : session_id(std::move(session_id_)),
        sampling_session_seq_id(sampling_session_seq_id_),
        base_model(std::move(base_model_)),
        model_path(std::move(model_path_)) {}

  std::string session_id;
  std::int64_t sampling_session_seq_id = 0;
  std::optional<std::string> base_model;
  std::optional<std::string> model_path;

  friend bool operator==(const CreateSamplingSessionRequest&, const CreateSamplingSessionRequest&) = default;
};

class CreateSamplingSessionResponse {
 public:
  CreateSamplingSessionResponse() = default;
  explicit CreateSamplingSessionResponse(std::string sampling_session_id_)
      : sampling_session_id(std::move(sampling_session_id_)) {}

  std::string sampling_session_id;

  friend bool operator==(const CreateSamplingSessionResponse&, const CreateSamplingSessionResponse&) = default;
};

/// GET /api/v1/sessions (ids only, no cursor).
class ListSessionsResponse {
 public:
  ListSessionsResponse() = default;
  explicit ListSessionsResponse(std::vector<std::string> sessions_) : sessions(std::move(sessions_)) {}

  std::vector<std::string> sessions;

  friend bool operator==(const ListSessionsResponse&, const ListSessionsResponse&) = default;
};

/// GET /api/v1/sessions/{id}.
class GetSessionResponse {
 public:
  GetSessionResponse() = default;
  GetSessionResponse(std::vector<std::string> training_run_ids_, std::vector<std::string> sampler_ids_)
      : training_run_ids(std::move(training_run_ids_)), sampler_ids(std::move(sampler_ids_)) {}

  std::vector<std::string> training_run_ids;
  std::vector<std::string> sampler_ids;

  friend bool operator==(const GetSessionResponse&, const GetSessionResponse&) = default;
};

/// PUT /api/v1/sessions/{id}/project.
class AssignSessionProjectRequest {
 public:
  AssignSessionProjectRequest() = default;
  explicit AssignSessionProjectRequest(std::string project_id_) : project_id(std::move(project_id_)) {}

  std::string project_id;

  friend bool operator==(const AssignSessionProjectRequest&, const AssignSessionProjectRequest&) = default;
};

enum class TraceExportStatus { pending, ready, failed };
const char* to_string(TraceExportStatus status) noexcept;

/// GET /api/v1/sessions/{id}/trace_export.
class TraceExportResponse {
 public:
  TraceExportResponse() = default;
  explicit TraceExportResponse(TraceExportStatus status_) : status(status_) {}

  TraceExportStatus status = TraceExportStatus::pending;
  std::optional<std::string> url;    ///< set when ready
  std::optional<std::string> error;  ///< set when failed

  friend bool operator==(const TraceExportResponse&, const TraceExportResponse&) = default;
};

/// GET /api/v1/samplers/{id}.
class GetSamplerResponse {
 public:
  GetSamplerResponse() = default;
  GetSamplerResponse(std::string sampler_id_, std::string base_model_)
      : sampler_id(std::move(sampler_id_)), base_model(std::move(base_model_)) {}

  std::string sampler_id;
  std::string base_model;
  std::optional<std::string> model_path;

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
