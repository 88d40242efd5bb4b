// Routing of tinker-local: every endpoint of doc/protocol.md#endpoints under /api/v1/, the
// unauthenticated download path /_downloads/<token>, the loopback-only admin paths /_admin/... and
// the Hugging Face Hub's file path /{org}/{name}/resolve/{revision}/{file} (any other path).
//
// Path parameters are taken verbatim, as clients insert them: run ids contain colons, checkpoint
// ids contain a slash ("weights/<name>", "sampler_weights/<name>"). A percent-encoded segment is
// decoded after splitting, so "weights%2Fstep-1" is the same checkpoint id as "weights/step-1".
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tinker::local::front {

enum class Endpoint : std::uint8_t {
  // /api/v1/ (in the order of the endpoint table of doc/protocol.md#endpoints)
  healthz,
  get_server_capabilities,
  auth_token,
  client_config,
  dynamic_config,
  create_session,
  session_heartbeat,
  finish_session,
  create_sampling_session,
  create_model,
  get_info,
  unload_model,
  forward_backward,
  forward,
  optim_step,
  save_weights,
  load_weights,
  save_weights_for_sampler,
  asample,
  retrieve_future,
  retrieve_futures,
  telemetry,
  list_training_runs,
  get_training_run,
  list_run_checkpoints,
  delete_checkpoint,
  checkpoint_archive,
  publish_checkpoint,
  unpublish_checkpoint,
  set_checkpoint_ttl,
  list_user_checkpoints,
  weights_info,
  list_sessions,
  search_sessions,
  get_session,
  assign_session_project,
  trace_export,
  get_sampler,
  audit_log,
  billing_usage,
  search_checkpoints,             ///< POST checkpoints/search
  copy_weights,                   ///< POST copy_weights (synchronous)
  checkpoint_storage_usage,       ///< GET billing/usage/checkpoints/current
  save_weights_external,          ///< POST save_weights_external (future)
  external_weights_urls,          ///< GET training_runs/{run}/checkpoints/external_weights/{name}/external_weights_urls
  external_weights_upload_start,  ///< POST external_weights_upload_start
  external_weights_upload_finish,  ///< POST external_weights_upload_finish
  // outside /api/v1/
  download,
  hub_resolve,      ///< /{org}/{name}/resolve/{revision}/{file} (Hugging Face Hub-compatible)
  hub_api,          ///< the Hub's upload API: /api/... (not /api/v1/) and /{org}/{name}.git/info/lfs/...
  hub_lfs,          ///< /_hub_lfs/{token}: LFS object uploads (capability URLs, like signed ones)
  external_upload,  ///< PUT /_uploads/{upload_id}/{file}: external-weights uploads (need the upload's token header)
  admin_audit,
  admin_requests,
  admin_set_faults,
  admin_clear_faults,
  admin_advance_clock,
  admin_cancel_session,
};

/// A stable name for logs ("retrieve_future", "delete_checkpoint", "admin_audit", ...).
const char* endpoint_name(Endpoint endpoint) noexcept;

/// Endpoints under /api/v1/ that need an API key (all but healthz, see auth.hpp).
bool requires_api_key(Endpoint endpoint) noexcept;
bool is_admin(Endpoint endpoint) noexcept;
bool is_api(Endpoint endpoint) noexcept;

class Route {
 public:
  enum class Status { ok, not_found, method_not_allowed };

  Status status = Status::not_found;
  Endpoint endpoint = Endpoint::healthz;
  std::string run_id;
  std::string checkpoint_id;
  std::string session_id;
  std::string sampler_id;
  std::string token;       ///< /_downloads/<token>; the upload id of /_uploads/<upload_id>/<file>
  std::string repo;        ///< hub_resolve: "org/name" (or "name")
  std::string revision;    ///< hub_resolve, percent-decoded ("refs%2Fpr%2F1" -> "refs/pr/1")
  std::string file;        ///< hub_resolve: the file's path in the repo; external_upload: the file
  std::string_view allow;  ///< for method_not_allowed: the Allow header value
};

/// Where the unauthenticated downloads are served: /_downloads/<token>.
inline constexpr std::string_view kDownloadsPrefix = "/_downloads/";
/// Where the files of an external-weights upload are PUT: /_uploads/<upload_id>/<file>.
inline constexpr std::string_view kUploadsPrefix = "/_uploads/";

/// Matches `method` ("GET", "POST", ...) and `path` (the target without query, path prefix
/// already removed).
Route match_route(std::string_view method, std::string_view path);

/// True for a Hugging Face Hub path: a file (/{org}/{name}/resolve/{revision}/{file}) or the
/// upload API (hub_api, hub_lfs).
bool is_hub_path(std::string_view path) noexcept;

/// Decodes %XX escapes; a malformed escape is kept as it is.
std::string percent_decode(std::string_view text);

/// A malformed query string or parameter; the message names the parameter.
class BadQuery : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The decoded query parameters of a request target, in order.
class QueryParams {
 public:
  QueryParams() = default;
  /// Parses the part after '?' (empty: no parameters). Throws BadQuery.
  explicit QueryParams(std::string_view query);

  /// The first value of `name`, if present.
  std::optional<std::string_view> get(std::string_view name) const;

  /// An integer parameter in [min_value, max_value] or `fallback` when absent. Throws BadQuery
  /// naming the parameter when it is not such an integer.
  std::int64_t get_int(std::string_view name, std::int64_t fallback, std::int64_t min_value,
                       std::int64_t max_value) const;

 private:
  std::vector<std::pair<std::string, std::string>> params_;
};

/// Splits a request target into path and query ("/a/b?x=1" -> "/a/b", "x=1").
std::pair<std::string_view, std::string_view> split_target(std::string_view target) noexcept;

}  // namespace tinker::local::front
