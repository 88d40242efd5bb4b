#include "programs/local/server/router.hpp"

#include "core/wire/endpoint_paths.hpp"

#include <boost/url/encoding_opts.hpp>
#include <boost/url/parse_query.hpp>

#include <array>
#include <charconv>

namespace tinker::local::front {
namespace {

namespace paths = wire::paths;

constexpr std::string_view kApiPrefix = paths::api_prefix;
constexpr std::string_view kAdminPrefix = "/_admin/";

struct FixedRoute {
  std::string_view path;  // after kApiPrefix (or the admin prefix)
  std::string_view method;
  Endpoint endpoint;
};

// Endpoints without path parameters. A path may appear twice with different methods.
constexpr std::array kApiRoutes{
    FixedRoute{paths::retrieve_future.relative(), "POST", Endpoint::retrieve_future},
    FixedRoute{paths::retrieve_futures.relative(), "POST", Endpoint::retrieve_futures},
    FixedRoute{paths::asample.relative(), "POST", Endpoint::asample},
    FixedRoute{paths::forward_backward.relative(), "POST", Endpoint::forward_backward},
    FixedRoute{paths::optim_step.relative(), "POST", Endpoint::optim_step},
    FixedRoute{paths::session_heartbeat.relative(), "POST", Endpoint::session_heartbeat},
    FixedRoute{paths::finish_session.relative(), "POST", Endpoint::finish_session},
    FixedRoute{paths::telemetry.relative(), "POST", Endpoint::telemetry},
    FixedRoute{paths::healthz.relative(), "GET", Endpoint::healthz},
    FixedRoute{paths::get_server_capabilities.relative(), "GET", Endpoint::get_server_capabilities},
    FixedRoute{paths::auth_token.relative(), "POST", Endpoint::auth_token},
    FixedRoute{paths::client_config.relative(), "POST", Endpoint::client_config},
    FixedRoute{paths::dynamic_config.relative(), "POST", Endpoint::dynamic_config},
    FixedRoute{paths::create_session.relative(), "POST", Endpoint::create_session},
    FixedRoute{paths::create_sampling_session.relative(), "POST", Endpoint::create_sampling_session},
    FixedRoute{paths::create_model.relative(), "POST", Endpoint::create_model},
    FixedRoute{paths::get_info.relative(), "POST", Endpoint::get_info},
    FixedRoute{paths::unload_model.relative(), "POST", Endpoint::unload_model},
    FixedRoute{paths::forward.relative(), "POST", Endpoint::forward},
    FixedRoute{paths::save_weights.relative(), "POST", Endpoint::save_weights},
    FixedRoute{paths::load_weights.relative(), "POST", Endpoint::load_weights},
    FixedRoute{paths::save_weights_for_sampler.relative(), "POST", Endpoint::save_weights_for_sampler},
    FixedRoute{paths::training_runs.relative(), "GET", Endpoint::list_training_runs},
    FixedRoute{paths::checkpoints.relative(), "GET", Endpoint::list_user_checkpoints},
    FixedRoute{paths::weights_info.relative(), "POST", Endpoint::weights_info},
    FixedRoute{paths::sessions.relative(), "GET", Endpoint::list_sessions},
    FixedRoute{paths::sessions_search.relative(), "POST", Endpoint::search_sessions},
    FixedRoute{paths::audit.relative(), "GET", Endpoint::audit_log},
    FixedRoute{paths::billing_usage.relative(), "GET", Endpoint::billing_usage},
    FixedRoute{paths::checkpoints_search.relative(), "POST", Endpoint::search_checkpoints},
    FixedRoute{paths::copy_weights.relative(), "POST", Endpoint::copy_weights},
    FixedRoute{paths::checkpoint_storage_usage.relative(), "GET", Endpoint::checkpoint_storage_usage},
    FixedRoute{paths::save_weights_external.relative(), "POST", Endpoint::save_weights_external},
    FixedRoute{paths::external_weights_upload_start.relative(), "POST", Endpoint::external_weights_upload_start},
    FixedRoute{paths::external_weights_upload_finish.relative(), "POST", Endpoint::external_weights_upload_finish},
};

constexpr std::array kAdminRoutes{
    FixedRoute{"audit", "GET", Endpoint::admin_audit},
    FixedRoute{"requests", "GET", Endpoint::admin_requests},
    FixedRoute{"faults", "POST", Endpoint::admin_set_faults},
    FixedRoute{"faults", "DELETE", Endpoint::admin_clear_faults},
    FixedRoute{"clock/advance", "POST", Endpoint::admin_advance_clock},
    FixedRoute{"sessions/cancel", "POST", Endpoint::admin_cancel_session},
};

std::string_view allow_of(std::string_view path, const FixedRoute* begin, const FixedRoute* end) {
  bool get = false, post = false, del = false;
  for (const FixedRoute* r = begin; r != end; ++r) {
    if (r->path != path) continue;
    get |= r->method == "GET";
    post |= r->method == "POST";
    del |= r->method == "DELETE";
  }
  if (post && del) return "POST, DELETE";
  if (get) return "GET";
  if (post) return "POST";
  return "DELETE";
}

template <std::size_t N>
Route match_fixed(std::string_view method, std::string_view path, const std::array<FixedRoute, N>& table) {
  Route route;
  bool path_known = false;
  for (const FixedRoute& r : table) {
    if (r.path != path) continue;
    path_known = true;
    if (r.method == method) {
      route.status = Route::Status::ok;
      route.endpoint = r.endpoint;
      return route;
    }
  }
  if (path_known) {
    route.status = Route::Status::method_not_allowed;
    route.allow = allow_of(path, table.data(), table.data() + table.size());
  }
  return route;
}

std::vector<std::string_view> split_segments(std::string_view path) {
  std::vector<std::string_view> segments;
  std::size_t start = 0;
  for (;;) {
    const std::size_t slash = path.find('/', start);
    segments.push_back(path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
    if (slash == std::string_view::npos) return segments;
    start = slash + 1;
  }
}

bool any_empty(const std::vector<std::string_view>& segments) {
  for (std::string_view s : segments) {
    if (s.empty()) return true;
  }
  return false;
}

Route ok(Endpoint endpoint) {
  Route route;
  route.status = Route::Status::ok;
  route.endpoint = endpoint;
  return route;
}

Route with_method(std::string_view method, std::string_view wanted, Endpoint endpoint, std::string_view allow) {
  if (method == wanted) return ok(endpoint);
  Route route;
  route.status = Route::Status::method_not_allowed;
  route.allow = allow;
  return route;
}

// training_runs/{run_id}/checkpoints/{checkpoint_id}[/archive|/publish|/ttl], with
// `rest` = the segments after "checkpoints". A checkpoint id is "<type>/<name>" (names have no
// slash), so two segments are an id unless the first is no checkpoint type and the second an action.
Route match_checkpoint(std::string_view method, const std::vector<std::string_view>& rest, Route route) {
  auto is_type = [](std::string_view s) { return s == "weights" || s == "sampler_weights" || s == "external_weights"; };
  auto is_action = [](std::string_view s) {
    return s == paths::segment::archive || s == paths::segment::publish || s == paths::segment::ttl ||
           s == paths::segment::external_weights_urls;
  };
  std::string_view action;
  std::size_t id_segments = rest.size();
  if (rest.size() == 3 || (rest.size() == 2 && !is_type(rest[0]) && is_action(rest[1]))) {
    action = rest.back();
    id_segments = rest.size() - 1;
  }
  if (id_segments == 0 || id_segments > 2 || (!action.empty() && !is_action(action))) return Route{};
  std::string id = percent_decode(rest[0]);
  if (id_segments == 2) id += '/' + percent_decode(rest[1]);

  Route matched;
  if (action.empty()) {
    matched = with_method(method, "DELETE", Endpoint::delete_checkpoint, "DELETE");
  } else if (action == paths::segment::archive) {
    matched = with_method(method, "GET", Endpoint::checkpoint_archive, "GET");
  } else if (action == paths::segment::ttl) {
    matched = with_method(method, "PUT", Endpoint::set_checkpoint_ttl, "PUT");
  } else if (action == paths::segment::external_weights_urls) {
    matched = with_method(method, "GET", Endpoint::external_weights_urls, "GET");
  } else if (method == "POST") {
    matched = ok(Endpoint::publish_checkpoint);
  } else if (method == "DELETE") {
    matched = ok(Endpoint::unpublish_checkpoint);
  } else {
    matched.status = Route::Status::method_not_allowed;
    matched.allow = "POST, DELETE";
  }
  if (matched.status != Route::Status::ok) return matched;
  route.status = Route::Status::ok;
  route.endpoint = matched.endpoint;
  route.checkpoint_id = std::move(id);
  return route;
}

// /{org}/{name}/resolve/{revision}/{file...} or /{name}/resolve/{revision}/{file...}.
Route match_hub(std::string_view method, std::string_view path) {
  if (!path.starts_with('/')) return Route{};
  const std::vector<std::string_view> s = split_segments(path.substr(1));
  if (any_empty(s)) return Route{};
  std::size_t resolve = 1;
  if (s.size() >= 5 && s[2] == "resolve") resolve = 2;
  if (s.size() < resolve + 3 || s[resolve] != "resolve") return Route{};
  Route route = with_method(method, "GET", Endpoint::hub_resolve, "GET, HEAD");
  if (route.status != Route::Status::ok) return route;
  route.repo = resolve == 2 ? std::string(s[0]) + "/" + std::string(s[1]) : std::string(s[0]);
  route.revision = percent_decode(s[resolve + 1]);
  const std::size_t file_start = static_cast<std::size_t>(s[resolve + 2].data() - path.data());
  route.file = percent_decode(path.substr(file_start));
  return route;
}

// The Hub's upload API (hub_upload.cpp parses the rest): /api/whoami-v2, /api/repos/...,
// /api/models/..., the LFS endpoints /{org}/{name}.git/info/lfs/..., and the upload URLs
// /_hub_lfs/{token}. Any method.
std::optional<Route> match_hub_upload(std::string_view path) {
  constexpr std::string_view lfs_uploads = "/_hub_lfs/";
  if (path.starts_with(lfs_uploads) && path.size() > lfs_uploads.size()) return ok(Endpoint::hub_lfs);
  const bool api = path == "/api/whoami-v2" || path.starts_with("/api/repos/") || path.starts_with("/api/models/");
  if (api || path.find(".git/info/lfs/") != std::string_view::npos) return ok(Endpoint::hub_api);
  return std::nullopt;
}

Route match_parameterised(std::string_view method, std::string_view path) {
  const std::vector<std::string_view> s = split_segments(path);
  if (s.size() < 2 || any_empty(s)) return Route{};
  if (s[0] == paths::training_runs.relative()) {
    Route route;
    route.run_id = percent_decode(s[1]);
    if (s.size() == 2) {
      Route matched = with_method(method, "GET", Endpoint::get_training_run, "GET");
      if (matched.status != Route::Status::ok) return matched;
      route.status = Route::Status::ok;
      route.endpoint = matched.endpoint;
      return route;
    }
    if (s[2] != paths::segment::checkpoints) return Route{};
    if (s.size() == 3) {
      Route matched = with_method(method, "GET", Endpoint::list_run_checkpoints, "GET");
      if (matched.status != Route::Status::ok) return matched;
      route.status = Route::Status::ok;
      route.endpoint = matched.endpoint;
      return route;
    }
    const std::vector<std::string_view> rest(s.begin() + 3, s.end());
    return match_checkpoint(method, rest, std::move(route));
  }
  if (s[0] == paths::sessions.relative()) {
    Route matched;
    if (s.size() == 2) {
      matched = with_method(method, "GET", Endpoint::get_session, "GET");
    } else if (s.size() == 3 && s[2] == paths::segment::project) {
      matched = with_method(method, "PUT", Endpoint::assign_session_project, "PUT");
    } else if (s.size() == 3 && s[2] == paths::segment::trace_export) {
      matched = with_method(method, "GET", Endpoint::trace_export, "GET");
    } else {
      return Route{};
    }
    if (matched.status == Route::Status::ok) matched.session_id = percent_decode(s[1]);
    return matched;
  }
  if (s[0] == paths::samplers.relative() && s.size() == 2) {
    Route matched = with_method(method, "GET", Endpoint::get_sampler, "GET");
    if (matched.status == Route::Status::ok) matched.sampler_id = percent_decode(s[1]);
    return matched;
  }
  return Route{};
}

int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

const char* endpoint_name(Endpoint endpoint) noexcept {
  switch (endpoint) {
    case Endpoint::healthz: return "healthz";
    case Endpoint::get_server_capabilities: return "get_server_capabilities";
    case Endpoint::auth_token: return "auth_token";
    case Endpoint::client_config: return "client_config";
    case Endpoint::dynamic_config: return "dynamic_config";
    case Endpoint::create_session: return "create_session";
    case Endpoint::session_heartbeat: return "session_heartbeat";
    case Endpoint::finish_session: return "finish_session";
    case Endpoint::create_sampling_session: return "create_sampling_session";
    case Endpoint::create_model: return "create_model";
    case Endpoint::get_info: return "get_info";
    case Endpoint::unload_model: return "unload_model";
    case Endpoint::forward_backward: return "forward_backward";
    case Endpoint::forward: return "forward";
    case Endpoint::optim_step: return "optim_step";
    case Endpoint::save_weights: return "save_weights";
    case Endpoint::load_weights: return "load_weights";
    case Endpoint::save_weights_for_sampler: return "save_weights_for_sampler";
    case Endpoint::asample: return "asample";
    case Endpoint::retrieve_future: return "retrieve_future";
    case Endpoint::retrieve_futures: return "retrieve_futures";
    case Endpoint::telemetry: return "telemetry";
    case Endpoint::list_training_runs: return "list_training_runs";
    case Endpoint::get_training_run: return "get_training_run";
    case Endpoint::list_run_checkpoints: return "list_run_checkpoints";
    case Endpoint::delete_checkpoint: return "delete_checkpoint";
    case Endpoint::checkpoint_archive: return "checkpoint_archive";
    case Endpoint::publish_checkpoint: return "publish_checkpoint";
    case Endpoint::unpublish_checkpoint: return "unpublish_checkpoint";
    case Endpoint::set_checkpoint_ttl: return "set_checkpoint_ttl";
    case Endpoint::list_user_checkpoints: return "list_user_checkpoints";
    case Endpoint::weights_info: return "weights_info";
    case Endpoint::list_sessions: return "list_sessions";
    case Endpoint::search_sessions: return "search_sessions";
    case Endpoint::get_session: return "get_session";
    case Endpoint::assign_session_project: return "assign_session_project";
    case Endpoint::trace_export: return "trace_export";
    case Endpoint::get_sampler: return "get_sampler";
    case Endpoint::audit_log: return "audit_log";
    case Endpoint::billing_usage: return "billing_usage";
    case Endpoint::search_checkpoints: return "search_checkpoints";
    case Endpoint::copy_weights: return "copy_weights";
    case Endpoint::checkpoint_storage_usage: return "checkpoint_storage_usage";
    case Endpoint::download: return "download";
    case Endpoint::hub_resolve: return "hub_resolve";
    case Endpoint::hub_api: return "hub_api";
    case Endpoint::hub_lfs: return "hub_lfs";
    case Endpoint::external_upload: return "external_upload";
    case Endpoint::save_weights_external: return "save_weights_external";
    case Endpoint::external_weights_urls: return "external_weights_urls";
    case Endpoint::external_weights_upload_start: return "external_weights_upload_start";
    case Endpoint::external_weights_upload_finish: return "external_weights_upload_finish";
    case Endpoint::admin_audit: return "admin_audit";
    case Endpoint::admin_requests: return "admin_requests";
    case Endpoint::admin_set_faults: return "admin_set_faults";
    case Endpoint::admin_clear_faults: return "admin_clear_faults";
    case Endpoint::admin_advance_clock: return "admin_advance_clock";
    case Endpoint::admin_cancel_session: return "admin_cancel_session";
  }
  return "unknown";
}

bool is_admin(Endpoint endpoint) noexcept {
  return endpoint >= Endpoint::admin_audit;
}
bool is_api(Endpoint endpoint) noexcept {
  return endpoint < Endpoint::download;
}

// Choice: healthz answers without a key, so readiness probes and scripts can wait for the
// server without credentials; every other /api/v1/ endpoint needs one.
bool requires_api_key(Endpoint endpoint) noexcept {
  return is_api(endpoint) && endpoint != Endpoint::healthz;
}

Route match_route(std::string_view method, std::string_view path) {
  if (path.substr(0, kApiPrefix.size()) == kApiPrefix) {
    const std::string_view rest = path.substr(kApiPrefix.size());
    Route route = match_fixed(method, rest, kApiRoutes);
    if (route.status != Route::Status::not_found) return route;
    return match_parameterised(method, rest);
  }
  if (path.substr(0, kDownloadsPrefix.size()) == kDownloadsPrefix) {
    const std::string_view token = path.substr(kDownloadsPrefix.size());
    if (token.empty() || token.find('/') != std::string_view::npos) return Route{};
    Route route = with_method(method, "GET", Endpoint::download, "GET");
    if (route.status == Route::Status::ok) route.token = percent_decode(token);
    return route;
  }
  if (path.substr(0, kAdminPrefix.size()) == kAdminPrefix) {
    return match_fixed(method, path.substr(kAdminPrefix.size()), kAdminRoutes);
  }
  if (path.substr(0, kUploadsPrefix.size()) == kUploadsPrefix) {
    // /_uploads/<upload_id>/<file>: one segment each (the upload's files have plain names).
    const std::vector<std::string_view> s = split_segments(path.substr(kUploadsPrefix.size()));
    if (s.size() != 2 || any_empty(s)) return Route{};
    Route route = with_method(method, "PUT", Endpoint::external_upload, "PUT");
    if (route.status != Route::Status::ok) return route;
    route.token = percent_decode(s[0]);
    route.file = percent_decode(s[1]);
    return route;
  }
  if (auto upload = match_hub_upload(path)) return *upload;
  return match_hub(method, path);
}

bool is_hub_path(std::string_view path) noexcept {
  return match_hub_upload(path).has_value() || match_hub("GET", path).status == Route::Status::ok;
}

std::string percent_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      const int hi = hex_value(text[i + 1]);
      const int lo = hex_value(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

QueryParams::QueryParams(std::string_view query) {
  if (query.empty()) return;
  // Boost.URL 1.81's parse_query reads its input with strlen (ASan: heap-buffer-overflow on a
  // view into the request head), so it gets a NUL-terminated copy.
  const std::string terminated(query);
  auto parsed = boost::urls::parse_query(terminated.c_str());
  if (!parsed) throw BadQuery("malformed query string");
  boost::urls::encoding_opts options;
  options.space_as_plus = true;
  for (const auto& param : *parsed) {
    params_.emplace_back(param.key.decode(options), param.has_value ? param.value.decode(options) : std::string());
  }
}

std::optional<std::string_view> QueryParams::get(std::string_view name) const {
  for (const auto& [key, value] : params_) {
    if (key == name) return std::string_view(value);
  }
  return std::nullopt;
}

std::int64_t QueryParams::get_int(std::string_view name, std::int64_t fallback, std::int64_t min_value,
                                  std::int64_t max_value) const {
  const auto text = get(name);
  if (!text) return fallback;
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (text->empty() || ec != std::errc() || end != text->data() + text->size()) {
    throw BadQuery("query parameter " + std::string(name) + ": expected an integer, got \"" + std::string(*text) +
                   "\"");
  }
  if (value < min_value || value > max_value) {
    throw BadQuery("query parameter " + std::string(name) + ": " + std::to_string(value) + " is outside [" +
                   std::to_string(min_value) + ", " + std::to_string(max_value) + "]");
  }
  return value;
}

std::pair<std::string_view, std::string_view> split_target(std::string_view target) noexcept {
  const std::size_t question = target.find('?');
  if (question == std::string_view::npos) return {target, {}};
  return {target.substr(0, question), target.substr(question + 1)};
}

}  // namespace tinker::local::front
