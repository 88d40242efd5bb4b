// The shared request machinery of the Hub API calls (hub_call.hpp) and the small calls of
// hub_upload.hpp: whoami, repo creation, branches, repo info, reading one file.
#include "hub/hub_call.hpp"

#include "core/wire/json_writer.hpp"
#include "http/error_mapping.hpp"
#include "http/proxy.hpp"
#include "http/url.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>

namespace tinker {
namespace hub_detail {
namespace {

namespace asio = boost::asio;

constexpr int max_tries = 3;
constexpr std::chrono::milliseconds first_retry_delay{250};
constexpr std::size_t excerpt_bytes = 300;

bool transient(int status) {
  return status == 429 || status >= 500;
}

std::string origin_of(std::string_view url) {
  const http::AbsoluteUrl parsed = http::parse_absolute_url(url, "URL");
  return parsed.origin_key;
}

// The Hub's own words for a failed answer: X-Error-Message, else the body's "error" (a string or
// a list of strings), else a printable excerpt of the body.
std::string hub_error_text(const http::SingleResponse& response, std::string_view token) {
  if (auto message = response.header("x-error-message")) return http::redact(*message, token);
  boost::system::error_code ec;
  const boost::json::value body = boost::json::parse(response.body, ec);
  if (!ec && body.is_object()) {
    const auto* error = body.as_object().if_contains("error");
    if (error != nullptr && error->is_string()) return http::redact(std::string(error->as_string()), token);
    if (error != nullptr) return http::redact(boost::json::serialize(*error), token);
  }
  return http::printable_prefix(response.body, excerpt_bytes, token);
}

}  // namespace

HubCall::HubCall(const HubOptions& options_, const EnvLookup& env) : options(options_), endpoint(options_.endpoint) {
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  http::parse_absolute_url(endpoint + "/", "HF_ENDPOINT");
  transport.tls = options.tls;
  transport.connect_timeout = options.connect_timeout;
  transport.read_timeout = options.read_timeout;
  transport.proxy = std::make_shared<const http::ProxySettings>(http::ProxySettings::from_environment(env));
}

std::string HubCall::url(std::string_view path) const {
  return endpoint + "/" + std::string(path);
}

bool HubCall::same_origin(std::string_view url) const {
  return origin_of(url) == origin_of(endpoint + "/");
}

asio::awaitable<http::SingleResponse> HubCall::send(http::SingleRequest request, Send how) {
  if (how.with_token && same_origin(request.url) && !options.token.empty()) {
    request.authorization = Secret("Bearer " + options.token.reveal());
  }
  std::chrono::milliseconds delay = first_retry_delay;
  for (int attempt = 1;; ++attempt) {
    http::SingleResponse response = co_await http::send_single(transport, request);
    const bool dropped = response.error && response.error != errc::cancelled &&
                         response.error != errc::response_too_large && response.error != errc::invalid_argument;
    const bool again = how.retry && attempt < max_tries && (dropped || (!response.error && transient(response.status)));
    if (!again) {
      if (response.error) {
        diagnostics diag;
        diag.message =
            request.method + " " + http::parse_absolute_url(request.url, "URL").display + ": " + response.reason;
        throw error(response.error, std::move(diag));
      }
      co_return response;
    }
    asio::steady_timer timer(co_await asio::this_coro::executor);
    timer.expires_after(delay);
    co_await timer.async_wait(asio::use_awaitable);
    delay *= 2;
  }
}

void HubCall::fail(const http::SingleResponse& response, std::string_view what) const {
  diagnostics diag;
  diag.http_status = response.status;
  diag.request_id = response.header("x-request-id").value_or("");
  std::string message = std::string(what) + ": the Hugging Face Hub answered HTTP " + std::to_string(response.status);
  if (auto code = response.header("x-error-code")) message += " (" + *code + ")";
  const std::string text = hub_error_text(response, options.token.reveal());
  if (!text.empty()) message += ": " + text;
  if (response.status == 401) {
    message += options.token.empty() ? " (HF_TOKEN is not set)" : " (the token in HF_TOKEN was refused)";
  }
  diag.message = std::move(message);
  throw error(http::error_for_status(response.status), std::move(diag));
}

boost::json::value HubCall::json_of(const http::SingleResponse& response, std::string_view what) const {
  boost::system::error_code ec;
  boost::json::value value = boost::json::parse(response.body, ec);
  if (ec) {
    diagnostics diag;
    diag.http_status = response.status;
    diag.request_id = response.header("x-request-id").value_or("");
    diag.message = std::string(what) + ": the answer is not JSON (is HF_ENDPOINT a Hugging Face Hub?)";
    throw error(errc::protocol_error, std::move(diag));
  }
  return value;
}

void require_token(const HubOptions& options) {
  if (options.token.empty()) {
    throw error(
        errc::invalid_configuration,
        "HF_TOKEN is not set: uploading to the Hugging Face Hub needs a token with write access (set HF_TOKEN)");
  }
}

void check_repo_id(std::string_view repo_id) {
  if (auto problem = hub_repo_id_problem(repo_id); !problem.empty()) {
    throw error(errc::invalid_argument, "'" + std::string(repo_id) + "' is not a Hugging Face repo id: " + problem);
  }
}

std::string quote_segment(std::string_view text) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) != 0 || c == '-' || c == '_' || c == '.' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += hex[byte >> 4];
      out += hex[byte & 0xF];
    }
  }
  return out;
}

std::string base64(std::string_view bytes) {
  return wire::base64_encode(std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
}

namespace {

asio::awaitable<std::string> whoami(HubCall* call) {
  const http::SingleRequest request("GET", call->url("api/whoami-v2"));
  const http::SingleResponse response = co_await call->send(request, Send());
  if (response.status / 100 != 2) call->fail(response, "asking the Hub who HF_TOKEN belongs to");
  const boost::json::value body = call->json_of(response, "whoami");
  const auto* name = body.is_object() ? body.as_object().if_contains("name") : nullptr;
  if (name == nullptr || !name->is_string()) {
    throw error(errc::protocol_error, "whoami: the Hub's answer names no account");
  }
  co_return std::string(name->as_string());
}

asio::awaitable<std::string> create_repo(HubCall* call, std::string repo_id, bool private_repo, bool exist_ok) {
  const auto slash = repo_id.find('/');
  boost::json::object payload;
  payload["name"] = slash == std::string::npos ? repo_id : repo_id.substr(slash + 1);
  if (slash == std::string::npos) {
    payload["organization"] = nullptr;
  } else {
    payload["organization"] = repo_id.substr(0, slash);
  }
  payload["visibility"] = private_repo ? "private" : "public";
  payload["type"] = "model";
  http::SingleRequest request("POST", call->url("api/repos/create"));
  request.headers.emplace_back("Content-Type", "application/json");
  request.body = boost::json::serialize(payload);
  Send how;
  how.retry = false;
  const http::SingleResponse response = co_await call->send(request, how);
  if (response.status == 409 && exist_ok) {
    if (slash != std::string::npos) co_return repo_id;
    const std::string owner = co_await whoami(call);
    co_return owner + "/" + repo_id;
  }
  if (response.status / 100 != 2) call->fail(response, "creating the repo " + repo_id);
  // {"url": "{endpoint}/{namespace}/{name}"}: the id is the URL's path.
  const boost::json::value body = call->json_of(response, "creating the repo " + repo_id);
  const auto* url = body.is_object() ? body.as_object().if_contains("url") : nullptr;
  if (url != nullptr && url->is_string()) {
    // "{endpoint}/{namespace}/{name}", the endpoint possibly with a path of its own.
    const std::string_view text = url->as_string();
    const std::string prefix = call->endpoint + "/";
    if (text.starts_with(prefix) && hub_repo_id_problem(text.substr(prefix.size())).empty()) {
      co_return std::string(text.substr(prefix.size()));
    }
  }
  if (slash != std::string::npos) co_return repo_id;
  const std::string owner = co_await whoami(call);
  co_return owner + "/" + repo_id;
}

asio::awaitable<bool> create_branch(HubCall* call, std::string repo_id, std::string branch, bool exist_ok) {
  http::SingleRequest request("POST", call->url("api/models/" + repo_id + "/branch/" + quote_segment(branch)));
  request.headers.emplace_back("Content-Type", "application/json");
  request.body = "{}";
  Send how;
  how.retry = false;
  const http::SingleResponse response = co_await call->send(request, how);
  if (response.status == 409 && exist_ok) co_return false;
  if (response.status / 100 != 2) call->fail(response, "creating the branch " + branch + " of " + repo_id);
  co_return true;
}

asio::awaitable<HubRepoInfo> repo_info(HubCall* call, std::string repo_id, std::string revision) {
  std::string path = "api/models/" + repo_id;
  if (revision != "main") path += "/revision/" + quote_segment(revision);
  const http::SingleRequest request("GET", call->url(path));
  const http::SingleResponse response = co_await call->send(request, Send());
  if (response.status / 100 != 2) call->fail(response, "reading the repo info of " + repo_id);
  const boost::json::value body = call->json_of(response, "repo info");
  HubRepoInfo info;
  if (const auto* object = body.if_object()) {
    if (const auto* id = object->if_contains("id"); id != nullptr && id->is_string()) info.id = id->as_string();
    if (const auto* priv = object->if_contains("private"); priv != nullptr && priv->is_bool()) {
      info.is_private = priv->as_bool();
    }
    if (const auto* sha = object->if_contains("sha"); sha != nullptr && sha->is_string()) info.sha = sha->as_string();
  }
  co_return info;
}

asio::awaitable<std::optional<std::string>> read_file(HubCall* call, std::string repo_id, std::string revision,
                                                      std::string path) {
  http::SingleRequest request("GET", call->url(repo_id + "/resolve/" + quote_segment(revision) + "/" + path));
  request.max_response = 64u << 20;
  const http::SingleResponse response = co_await call->send(request, Send());
  if (response.status == 404) co_return std::nullopt;
  if (response.status / 100 != 2) call->fail(response, "reading " + path + " of " + repo_id);
  co_return response.body;
}

}  // namespace
}  // namespace hub_detail

using hub_detail::HubCall;

std::string hub_whoami(const HubOptions& options, const EnvLookup& env) {
  hub_detail::require_token(options);
  HubCall call(options, env);
  boost::asio::io_context io;
  return hub_detail::run_blocking(io, hub_detail::whoami(&call));
}

std::string hub_create_repo(const HubOptions& options, std::string_view repo_id, bool private_repo, bool exist_ok,
                            const EnvLookup& env) {
  hub_detail::require_token(options);
  hub_detail::check_repo_id(repo_id);
  HubCall call(options, env);
  boost::asio::io_context io;
  return hub_detail::run_blocking(io, hub_detail::create_repo(&call, std::string(repo_id), private_repo, exist_ok));
}

void hub_create_branch(const HubOptions& options, std::string_view repo_id, std::string_view branch, bool exist_ok,
                       const EnvLookup& env) {
  hub_detail::require_token(options);
  hub_detail::check_repo_id(repo_id);
  HubCall call(options, env);
  boost::asio::io_context io;
  hub_detail::run_blocking(io, hub_detail::create_branch(&call, std::string(repo_id), std::string(branch), exist_ok));
}

HubRepoInfo hub_repo_info(const HubOptions& options, std::string_view repo_id, std::string_view revision,
                          const EnvLookup& env) {
  hub_detail::check_repo_id(repo_id);
  HubCall call(options, env);
  boost::asio::io_context io;
  return hub_detail::run_blocking(io, hub_detail::repo_info(&call, std::string(repo_id), std::string(revision)));
}

std::optional<std::string> hub_read_file(const HubOptions& options, std::string_view repo_id, std::string_view revision,
                                         std::string_view path, const EnvLookup& env) {
  hub_detail::check_repo_id(repo_id);
  HubCall call(options, env);
  boost::asio::io_context io;
  return hub_detail::run_blocking(
      io, hub_detail::read_file(&call, std::string(repo_id), std::string(revision), std::string(path)));
}

}  // namespace tinker
