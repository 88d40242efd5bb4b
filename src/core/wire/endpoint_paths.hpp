// The paths of the API's endpoints: one list for the SDK, which sends to them, and tinker-local,
// whose router matches them (doc/protocol.md#endpoints). Each is spelled once, in full; the
// router matches the part after the prefix.
#pragma once

#include <string_view>

namespace tinker::wire::paths {

/// Every endpoint of the API lives under this prefix.
inline constexpr std::string_view api_prefix = "/api/v1/";

/// An endpoint's absolute path, checked at compile time to start with the prefix.
class EndpointPath {
 public:
  consteval explicit EndpointPath(std::string_view full) : full_(full) {
    if (!full.starts_with(api_prefix) || full.size() == api_prefix.size()) throw "an endpoint path is /api/v1/<name>";
  }
  /// "/api/v1/<name>": what the SDK sends.
  constexpr std::string_view full() const noexcept { return full_; }
  /// "<name>": what the server's router matches after the prefix.
  constexpr std::string_view relative() const noexcept { return full_.substr(api_prefix.size()); }

 private:
  std::string_view full_;
};

// Session, configuration and authentication.
inline constexpr EndpointPath healthz{"/api/v1/healthz"};
inline constexpr EndpointPath get_server_capabilities{"/api/v1/get_server_capabilities"};
inline constexpr EndpointPath auth_token{"/api/v1/auth/token"};
inline constexpr EndpointPath client_config{"/api/v1/client/config"};
inline constexpr EndpointPath dynamic_config{"/api/v1/client/dynamic_config"};
inline constexpr EndpointPath create_session{"/api/v1/create_session"};
inline constexpr EndpointPath session_heartbeat{"/api/v1/session_heartbeat"};
/// The client reports its session done (doc/protocol.md#choices-where-the-protocol-was-open: path chosen).
inline constexpr EndpointPath finish_session{"/api/v1/finish_session"};
inline constexpr EndpointPath create_sampling_session{"/api/v1/create_sampling_session"};
inline constexpr EndpointPath telemetry{"/api/v1/telemetry"};

// Training and sampling: submits answer with a future, read through retrieve_future.
inline constexpr EndpointPath create_model{"/api/v1/create_model"};
inline constexpr EndpointPath get_info{"/api/v1/get_info"};
inline constexpr EndpointPath unload_model{"/api/v1/unload_model"};
inline constexpr EndpointPath forward{"/api/v1/forward"};
inline constexpr EndpointPath forward_backward{"/api/v1/forward_backward"};
inline constexpr EndpointPath optim_step{"/api/v1/optim_step"};
inline constexpr EndpointPath save_weights{"/api/v1/save_weights"};
inline constexpr EndpointPath load_weights{"/api/v1/load_weights"};
inline constexpr EndpointPath save_weights_for_sampler{"/api/v1/save_weights_for_sampler"};
inline constexpr EndpointPath weights_info{"/api/v1/weights_info"};
inline constexpr EndpointPath save_weights_external{"/api/v1/save_weights_external"};
inline constexpr EndpointPath asample{"/api/v1/asample"};
inline constexpr EndpointPath retrieve_future{"/api/v1/retrieve_future"};
/// The batched long-poll of a sampling session's completions (doc/protocol.md#batched-sampling-results).
inline constexpr EndpointPath retrieve_futures{"/api/v1/retrieve_futures"};

// REST resources (doc/rest.md#calls). The collections; an item is "<collection>/<id>".
inline constexpr EndpointPath training_runs{"/api/v1/training_runs"};
inline constexpr EndpointPath checkpoints{"/api/v1/checkpoints"};
inline constexpr EndpointPath sessions{"/api/v1/sessions"};
/// POST: search sessions (doc/protocol.md#choices-where-the-protocol-was-open: path chosen).
inline constexpr EndpointPath sessions_search{"/api/v1/sessions/search"};
inline constexpr EndpointPath samplers{"/api/v1/samplers"};
inline constexpr EndpointPath audit{"/api/v1/audit"};
inline constexpr EndpointPath billing_usage{"/api/v1/billing/usage/events"};
// External-weights uploads (doc/rest.md#external-weights).
inline constexpr EndpointPath external_weights_upload_start{"/api/v1/external_weights_upload_start"};
inline constexpr EndpointPath external_weights_upload_finish{"/api/v1/external_weights_upload_finish"};
// Checkpoint search (POST, JSON body; a choice: doc/protocol.md#choices-where-the-protocol-was-open),
// the synchronous weights copy (POST, a choice too) and the current checkpoint storage usage (GET).
inline constexpr EndpointPath checkpoints_search{"/api/v1/checkpoints/search"};
inline constexpr EndpointPath copy_weights{"/api/v1/copy_weights"};
inline constexpr EndpointPath checkpoint_storage_usage{"/api/v1/billing/usage/checkpoints/current"};

/// The segments after an item of a collection: training_runs/<run>/checkpoints/<type>/<name>
/// [/archive|/publish|/ttl], sessions/<id>/project, sessions/<id>/trace_export.
namespace segment {
inline constexpr std::string_view checkpoints = "checkpoints";
inline constexpr std::string_view archive = "archive";
inline constexpr std::string_view publish = "publish";
inline constexpr std::string_view ttl = "ttl";
inline constexpr std::string_view project = "project";
inline constexpr std::string_view trace_export = "trace_export";
inline constexpr std::string_view external_weights_urls = "external_weights_urls";
}  // namespace segment

}  // namespace tinker::wire::paths
