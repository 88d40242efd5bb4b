// Holder bootstrap (doc/protocol.md#bootstrap-and-lifecycle): client/config with the raw credential, auth/token when
// the server uses JWTs (doc/protocol.md#authentication), dynamic_config, then create_session. Each step is single
// flight.
#include "api/endpoints.hpp"
#include "client/session/holder_impl.hpp"
#include "core/types/exception_error.hpp"

#include <tinker/types/telemetry.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

namespace tinker::client::session {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

error_code configuration_error(diagnostics& diag, std::string message) {
  diag.clear();
  diag.message = std::move(message);
  return make_error_code(errc::invalid_configuration);
}

error_code stopped_error(diagnostics& diag) {
  diag.clear();
  diag.message = "the client was shut down";
  return make_error_code(errc::cancelled);
}

// Installs `credential` on `client`; a credential with a line break is refused (header injection).
error_code install_credential(http::HttpClient& client, Secret credential, diagnostics& diag) {
  try {
    client.set_credential(std::move(credential));
    return {};
  } catch (const error&) {
    const error_code ec = detail::current_exception_error(diag);
    if (diag.message.empty()) diag.message = "the credential cannot be sent as a header";
    return ec;
  }
}

// The credential that authenticates client/config: the API key, else the command's output.
asio::awaitable<error_code> config_credential(const ClientOptions& options, Secret& out, diagnostics& diag) {
  if (!options.api_key.empty()) {
    out = options.api_key;
    co_return error_code{};
  }
  co_return co_await async_run_credential_command(*options.credential_command, out, diag);
}

// The credential exchanged at auth/token (doc/protocol.md#authentication): the command's output when the server asks
// for it (unless the key is already a JWT) or when there is no key; else the key.
asio::awaitable<error_code> token_credential(const ClientOptions& options, const ClientConfigResponse& config,
                                             Secret& out, diagnostics& diag) {
  const bool has_command = options.credential_command && !options.credential_command->empty();
  const bool key_is_jwt = looks_like_jwt(options.api_key.reveal());
  const bool command_required = config.credential_default_source == "credential_cmd" && !key_is_jwt;
  if (command_required && !has_command) {
    co_return configuration_error(diag,
                                  "the server requires a credential command (credential_default_source = "
                                  "credential_cmd): set TINKER_CREDENTIAL_CMD or ClientOptions::credential_command");
  }
  if (command_required || options.api_key.empty()) {
    co_return co_await async_run_credential_command(*options.credential_command, out, diag);
  }
  out = options.api_key;
  co_return error_code{};
}

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// doc/protocol.md#authentication step 3: refresh on demand when the JWT has <= 60 s left or cannot be read.
bool jwt_needs_refresh(const ClientHolder::Impl& impl) {
  if (!impl.jwt_auth) return false;
  if (!impl.jwt_claims || !impl.jwt_claims->exp) return true;
  const auto threshold = std::chrono::duration_cast<std::chrono::seconds>(impl.timing.jwt_on_demand_threshold);
  return *impl.jwt_claims->exp - unix_now() <= threshold.count();
}

void log_session_messages(const ClientHolder& holder, const CreateSessionResponse& response) {
  if (response.info_message) holder.log(LogLevel::info, *response.info_message);
  if (response.warning_message) holder.log(LogLevel::warning, *response.warning_message);
  if (response.error_message) holder.log(LogLevel::error, *response.error_message);
}

}  // namespace

asio::awaitable<error_code> fetch_jwt(std::shared_ptr<ClientHolder> holder, diagnostics& diag) {
  ClientHolder::Impl& impl = holder->impl();
  const ClientConfigResponse config = holder->config();
  Secret credential;
  if (auto ec = co_await token_credential(impl.options.client, config, credential, diag)) co_return ec;
  if (holder->shutting_down()) co_return stopped_error(diag);
  if (auto ec = install_credential(*impl.auth_http, std::move(credential), diag)) co_return ec;
  AuthTokenResponse token;
  if (auto ec = co_await api::auth_token(*impl.auth_http, token, diag, holder->retry_call())) co_return ec;
  if (token.jwt.empty()) {
    diag.clear();
    diag.message = "auth/token answered an empty jwt";
    co_return make_error_code(errc::protocol_error);
  }
  std::optional<JwtClaims> claims = decode_jwt_claims(token.jwt);
  if (auto ec = install_credential(*impl.http, Secret(std::move(token.jwt)), diag)) co_return ec;
  impl.jwt_claims = std::move(claims);  // no exp: the refresh loop retries every 60 s (doc/protocol.md#authentication)
  co_return error_code{};
}

asio::awaitable<error_code> refresh_jwt(std::shared_ptr<ClientHolder> holder) {
  ClientHolder::Impl& impl = holder->impl();
  diagnostics diag;
  if (impl.refresh_flight) co_return co_await join_flight(impl.refresh_flight, diag);
  auto flight = std::make_shared<Flight>(impl.executor);
  impl.refresh_flight = flight;
  const error_code ec = co_await fetch_jwt(holder, diag);
  impl.refresh_flight.reset();
  impl.jwt_refresh_failed = static_cast<bool>(ec);
  if (ec) {
    holder->log(LogLevel::warning, "refreshing the JWT failed (" + ec.message() +
                                       (diag.message.empty() ? std::string() : ": " + diag.message) +
                                       "); the current token stays in use");
  } else {
    holder->log(LogLevel::debug, "JWT refreshed");
  }
  flight->finish(ec, diag);
  co_return ec;
}

asio::awaitable<error_code> bootstrap_config(std::shared_ptr<ClientHolder> holder, diagnostics& diag) {
  ClientHolder::Impl& impl = holder->impl();
  const ClientOptions& options = impl.options.client;

  Secret raw;
  if (auto ec = co_await config_credential(options, raw, diag)) co_return ec;
  if (holder->shutting_down()) co_return stopped_error(diag);
  if (auto ec = install_credential(*impl.auth_http, std::move(raw), diag)) co_return ec;
  const ClientConfigRequest config_request;
  ClientConfigResponse config;
  if (auto ec = co_await api::client_config(*impl.auth_http, config_request, config, diag, holder->retry_call())) {
    co_return ec;
  }
  if (holder->shutting_down()) co_return stopped_error(diag);

  impl.config = config;  // fetch_jwt and retry_call read it
  if (config.pjwt_auth_enabled) {
    impl.jwt_auth = true;
    const error_code ec = co_await fetch_jwt(holder, diag);
    if (ec) {
      impl.config.reset();
      impl.jwt_auth = false;
      co_return ec;
    }
  } else if (options.api_key.empty()) {
    impl.config.reset();
    co_return configuration_error(
        diag,
        "no API key: the server does not use JWTs, so a credential command alone cannot "
        "authenticate requests (doc/protocol.md#authentication); set TINKER_API_KEY or ClientOptions::api_key");
  }
  if (holder->shutting_down()) co_return stopped_error(diag);

  DynamicConfigResponse dynamic;
  if (auto ec = co_await api::dynamic_config(*impl.http, dynamic, diag, holder->retry_call())) {
    impl.config.reset();
    co_return ec;
  }
  if (holder->shutting_down()) co_return stopped_error(diag);
  impl.dynamic = dynamic;
  if (impl.jwt_auth) start_jwt_refresh(holder);
  start_telemetry(holder);
  co_return error_code{};
}

asio::awaitable<error_code> bootstrap_session(std::shared_ptr<ClientHolder> holder, diagnostics& diag) {
  ClientHolder::Impl& impl = holder->impl();
  const ClientOptions& options = impl.options.client;
  CreateSessionRequest request(options.tags, json_object_of_strings(impl.options.user_metadata), options.project_id);
  request.display_name = impl.options.display_name;
  CreateSessionResponse response;
  if (auto ec = co_await api::create_session(*impl.http, request, response, diag)) co_return ec;
  if (holder->shutting_down()) co_return stopped_error(diag);
  if (response.session_id.empty()) {
    diag.clear();
    diag.message = "create_session answered an empty session_id";
    co_return make_error_code(errc::protocol_error);
  }
  log_session_messages(*holder, response);
  {
    std::lock_guard lock(impl.session_mutex);
    impl.session_id = response.session_id;
  }
  impl.model_seq = 0;  // doc/protocol.md#bootstrap-and-lifecycle step 4: counters start with the session
  impl.sampling_seq = 0;
  start_heartbeat(holder, response.session_id);
  start_dynamic_config_refresh(holder);
  if (impl.telemetry) {
    const auto now = std::chrono::system_clock::now();
    impl.telemetry->session_started = now;
    const Timestamp started = std::chrono::time_point_cast<std::chrono::microseconds>(now);
    TelemetryEvent start(TelemetryEventKind::session_start, std::string(), 0, Severity::info, started);
    holder->telemetry(std::move(start));
  }
  co_return error_code{};
}

}  // namespace tinker::client::session

namespace tinker::detail {

namespace asio = boost::asio;
using boost::system::error_code;
using namespace client::session;  // the bootstrap steps above

bool ClientHolder::config_current() const noexcept {
  const Impl& impl = *impl_;
  return !impl.shutting_down && impl.config && !impl.config_flight && !jwt_needs_refresh(impl);
}

asio::awaitable<error_code> ClientHolder::ensure_config(diagnostics& diag) {
  std::shared_ptr<ClientHolder> self = shared_from_this();
  Impl& impl = *impl_;
  if (impl.shutting_down) co_return stopped_error(diag);
  if (impl.config && !impl.config_flight) {
    if (jwt_needs_refresh(impl)) co_await refresh_jwt(self);  // a failure keeps the old token
    co_return error_code{};
  }
  if (impl.config_flight) co_return co_await join_flight(impl.config_flight, diag);

  auto flight = std::make_shared<Flight>(impl.executor);
  impl.config_flight = flight;
  diagnostics bootstrap_diag;
  const error_code ec = co_await bootstrap_config(self, bootstrap_diag);
  if (ec) impl.config.reset();  // the next caller tries again
  impl.config_flight.reset();
  flight->finish(ec, bootstrap_diag);
  diag = bootstrap_diag;
  co_return ec;
}

asio::awaitable<error_code> ClientHolder::ensure_session(diagnostics& diag) {
  std::shared_ptr<ClientHolder> self = shared_from_this();
  Impl& impl = *impl_;
  if (auto ec = co_await ensure_config(diag)) co_return ec;
  if (impl.shutting_down) co_return stopped_error(diag);
  if (impl.finish_requested) co_return finished_session_error(impl, diag);
  if (!impl.current_session_id().empty()) co_return error_code{};
  if (impl.session_flight) co_return co_await join_flight(impl.session_flight, diag);

  auto flight = std::make_shared<Flight>(impl.executor);
  impl.session_flight = flight;
  diagnostics session_diag;
  const error_code ec = co_await bootstrap_session(self, session_diag);
  impl.session_flight.reset();
  flight->finish(ec, session_diag);
  diag = session_diag;
  co_return ec;
}

}  // namespace tinker::detail
