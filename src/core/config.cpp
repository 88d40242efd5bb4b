// Client options: environment parsing (TINKER_* variables, doc/protocol.md#transport) and validation.
//
// Every failure is a `tinker::error(errc::invalid_configuration, ...)` whose message names the
// variable or option. Messages about the API key are fixed strings: they never contain the key or
// any part of it, whatever the key looks like.
#include "core/redaction.hpp"

#include <tinker/config.hpp>
#include <tinker/credentials.hpp>
#include <tinker/error.hpp>

#include <boost/url/parse.hpp>
#include <boost/url/url.hpp>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <ostream>
#include <utility>

namespace tinker {
namespace {

constexpr std::string_view ascii_whitespace = " \t\n\v\f\r";
constexpr const char* api_key_prefix_rule = "must start with 'tml-' (an API key) or 'eyJ' (a JWT)";
constexpr const char* api_key_charset_rule = "must not contain whitespace or control characters";
constexpr const char* log_level_values = "off, error, warning (or warn), info, debug";
constexpr const char* telemetry_values = "1, true, yes, on, 0, false, no, off";

[[noreturn]] void fail(std::string message) {
  throw error(errc::invalid_configuration, std::move(message));
}

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(ascii_whitespace);
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(ascii_whitespace);
  return text.substr(first, last - first + 1);
}

std::string to_lower_ascii(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// Bytes that must never reach an HTTP header value (CR/LF would allow header injection).
bool is_control_or_space(char c) noexcept {
  const auto byte = static_cast<unsigned char>(c);
  return byte <= 0x20 || byte == 0x7f;
}

// Header values may contain spaces and tabs (RFC 9110 5.5), but no other control byte.
bool has_control_char(std::string_view text) noexcept {
  return std::any_of(text.begin(), text.end(), [](char c) { return c != ' ' && c != '\t' && is_control_or_space(c); });
}

// ---- Messages that may show a (non-secret) value --------------------------------------------

// Quotes a value for a message; control bytes are escaped so a value cannot forge log lines.
std::string quoted_value(std::string_view value) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out = "'";
  for (char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      out += "\\x";
      out += hex[byte >> 4];
      out += hex[byte & 0xf];
    } else {
      out += c;
    }
  }
  return out + "'";
}

// ---- API key ---------------------------------------------------------------------------------

// Returns a fixed description of what is wrong with a key, or nullptr if it is fine. Never
// derived from the key's content, so it can go into a message as it is.
const char* api_key_problem(std::string_view key) noexcept {
  if (!key.starts_with("tml-") && !key.starts_with("eyJ")) return api_key_prefix_rule;
  if (key == "tml-" || key == "eyJ") return api_key_prefix_rule;
  if (std::any_of(key.begin(), key.end(), is_control_or_space)) return api_key_charset_rule;
  return nullptr;
}

// ---- Base URL --------------------------------------------------------------------------------

// Boost.URL 1.81 silently wraps some out-of-range ports (":100000" parses as port 34464), so the
// port text is checked here.
bool is_valid_port(std::string_view port) noexcept {
  if (port.empty()) return true;  // "https://host:/" means the default port
  unsigned long value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  return ec == std::errc{} && end == port.data() + port.size() && value >= 1 && value <= 65535;
}

// Returns what is wrong with a base URL, or an empty string. A path prefix is allowed (the service
// may be mounted under one); a query or fragment is not, because request paths are appended to it.
std::string base_url_problem(std::string_view text) {
  const auto parsed = boost::urls::parse_uri(text);
  if (!parsed) return "must be an absolute http:// or https:// URL";
  const boost::urls::url url = *parsed;  // owning copy: never keep a view into `text`
  const auto scheme = url.scheme_id();
  if (scheme != boost::urls::scheme::http && scheme != boost::urls::scheme::https) {
    return "must be an absolute http:// or https:// URL";
  }
  if (!url.has_authority() || url.encoded_host().empty()) return "must name a host";
  if (url.has_port() && !is_valid_port(url.port())) return "has an invalid port";
  // Boost.URL 1.81 also accepts "https://host:8x", reading "x" as a path without its leading '/'.
  const auto path = url.encoded_path();
  if (!path.empty() && path.front() != '/') return "has an invalid port";
  if (url.has_query() || url.has_fragment()) return "must not have a query or fragment";
  return {};
}

void check_base_url(std::string_view url, std::string_view name) {
  if (auto problem = base_url_problem(url); !problem.empty()) {
    fail(std::string(name) + " " + problem + ", got " + quoted_value(redact_url_userinfo(url)));
  }
}

// ---- Environment variables -------------------------------------------------------------------

// Every variable treats an empty value as unset, so `TINKER_X= program` restores the default.
std::optional<std::string> lookup(const ClientOptions::EnvLookup& env, std::string_view name) {
  auto value = env(name);
  if (value && value->empty()) value.reset();
  return value;
}

LogLevel parse_log_level(std::string_view text) {
  const std::string value = to_lower_ascii(trim(text));
  if (value == "off") return LogLevel::off;
  if (value == "error") return LogLevel::error;
  if (value == "warning" || value == "warn") return LogLevel::warning;
  if (value == "info") return LogLevel::info;
  if (value == "debug") return LogLevel::debug;
  fail(std::string("TINKER_LOG must be one of ") + log_level_values + ", got " + quoted_value(text));
}

// Deliberately stricter than the Python SDK, which treats every value outside 1/true/yes/on as
// "off": a typo such as "flase" or "disabled" should be reported, not guessed.
bool parse_telemetry(std::string_view text) {
  const std::string value = to_lower_ascii(trim(text));
  if (value == "1" || value == "true" || value == "yes" || value == "on") return true;
  if (value == "0" || value == "false" || value == "no" || value == "off") return false;
  fail(std::string("TINKER_TELEMETRY must be one of ") + telemetry_values + ", got " + quoted_value(text));
}

// The Python SDK uses a set (order lost); we keep first-seen order so sessions are reproducible.
std::vector<std::string> parse_tags(std::string_view text) {
  std::vector<std::string> tags;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const auto tag = trim(text.substr(0, comma));
    if (!tag.empty() && std::find(tags.begin(), tags.end(), tag) == tags.end()) tags.emplace_back(tag);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
  }
  return tags;
}

void read_api_key(const ClientOptions::EnvLookup& env, ClientOptions& options) {
  auto key = lookup(env, "TINKER_API_KEY");
  if (!key) return;
  if (const char* problem = api_key_problem(*key)) fail(std::string("TINKER_API_KEY ") + problem);
  options.api_key = Secret(std::move(*key));
}

void read_connection(const ClientOptions::EnvLookup& env, ClientOptions& options) {
  if (auto url = lookup(env, "TINKER_BASE_URL")) {
    check_base_url(*url, "TINKER_BASE_URL");
    options.base_url = std::move(*url);
  }
  if (auto command = lookup(env, "TINKER_CREDENTIAL_CMD")) options.credential_command = std::move(command);
  if (auto id = lookup(env, "CLOUDFLARE_ACCESS_CLIENT_ID")) options.cloudflare_access_client_id = std::move(id);
  if (auto secret = lookup(env, "CLOUDFLARE_ACCESS_CLIENT_SECRET")) {
    options.cloudflare_access_client_secret = Secret(std::move(*secret));
  }
  if (auto ca_file = lookup(env, "SSL_CERT_FILE")) options.tls.ca_file = std::move(ca_file);
}

// The lowest-priority credential (doc/service.md#stored-credentials): the credentials file's
// default key, read only when neither TINKER_API_KEY nor TINKER_CREDENTIAL_CMD is set, so a
// damaged file cannot stand in the way of a key given in the environment.
void read_stored_key(const ClientOptions::EnvLookup& env, ClientOptions& options) {
  if (!options.api_key.empty() || options.credential_command) return;
  const std::optional<std::filesystem::path> path = CredentialStore::default_path(env);
  if (!path) return;
  CredentialStore store;
  try {
    store = CredentialStore::load(*path);
  } catch (const error& e) {
    fail(e.diag().message);  // names the file and what is wrong, never its content
  }
  const StoredCredential* stored = store.default_credential();
  if (stored == nullptr) return;
  if (stored->key.empty()) fail("credentials file " + path->string() + ": the default record has no key");
  if (const char* problem = api_key_problem(stored->key.reveal())) {
    fail("credentials file " + path->string() + ": the default key " + problem);
  }
  options.api_key = stored->key;
}

void read_session(const ClientOptions::EnvLookup& env, ClientOptions& options) {
  if (auto project = lookup(env, "TINKER_PROJECT_ID")) options.project_id = std::move(project);
  if (auto tags = lookup(env, "TINKER_TAGS")) options.tags = parse_tags(*tags);
  if (auto level = lookup(env, "TINKER_LOG")) options.log_level = parse_log_level(*level);
  if (auto telemetry = lookup(env, "TINKER_TELEMETRY")) options.telemetry_enabled = parse_telemetry(*telemetry);
}

// ---- validate() ------------------------------------------------------------------------------

void require(bool ok, std::string_view option, std::string_view rule) {
  if (!ok) fail(std::string(option) + " " + std::string(rule));
}

template <class Duration>
void require_positive(Duration value, std::string_view option) {
  require(value.count() > 0, option, "must be positive");
}

template <class Duration>
void require_non_negative(Duration value, std::string_view option) {
  require(value.count() >= 0, option, "must not be negative");
}

void validate_credentials(const ClientOptions& options, bool require_credential) {
  if (!options.api_key.empty()) {
    if (const char* problem = api_key_problem(options.api_key.reveal())) fail(std::string("api_key ") + problem);
  }
  const bool has_command = options.credential_command && !options.credential_command->empty();
  if (require_credential && options.api_key.empty() && !has_command) {
    fail("no API key: set TINKER_API_KEY or ClientOptions::api_key (or TINKER_CREDENTIAL_CMD)");
  }
  // These travel as header values (CF-Access-Client-Id/-Secret); CR/LF there would inject headers.
  if (options.cloudflare_access_client_id) {
    require(!has_control_char(*options.cloudflare_access_client_id), "cloudflare_access_client_id",
            "must not contain control characters");
  }
  require(!has_control_char(options.cloudflare_access_client_secret.reveal()), "cloudflare_access_client_secret",
          "must not contain control characters");
}

void validate_headers(const std::map<std::string, std::string>& headers) {
  for (const auto& [name, value] : headers) {
    const bool name_ok = !name.empty() && std::none_of(name.begin(), name.end(), is_control_or_space);
    // The header name is shown; values are not, as a header may carry a credential.
    require(name_ok, "default_headers", "has an empty header name or one with whitespace or control characters");
    require(!has_control_char(value), "default_headers[" + name + "]", "must not contain control characters");
  }
}

void validate_retry(const RetryOptions& retry) {
  require(retry.max_retries >= 0, "retry.max_retries", "must not be negative");
  require_non_negative(retry.initial_delay, "retry.initial_delay");
  require(retry.max_delay >= retry.initial_delay, "retry.max_delay", "must not be less than retry.initial_delay");
  require_non_negative(retry.max_retry_after, "retry.max_retry_after");
  require_non_negative(retry.call_budget, "retry.call_budget");
  require_non_negative(retry.call_max_delay, "retry.call_max_delay");
}

void validate_timeouts(const TimeoutOptions& timeouts) {
  require_positive(timeouts.connect, "timeouts.connect");
  require_positive(timeouts.request, "timeouts.request");
  require_positive(timeouts.retrieve_future, "timeouts.retrieve_future");
  require_positive(timeouts.heartbeat, "timeouts.heartbeat");
  require_positive(timeouts.dynamic_config, "timeouts.dynamic_config");
  require_positive(timeouts.telemetry, "timeouts.telemetry");
}

void validate_pool(const PoolLimits& pool, const std::string& path) {
  require(pool.max_connections >= 1, path + ".max_connections", "must be at least 1");
  require(pool.max_idle <= pool.max_connections, path + ".max_idle", "must not exceed max_connections");
  require_positive(pool.idle_timeout, path + ".idle_timeout");
}

void validate_pools(const PoolOptions& pools) {
  validate_pool(pools.session, "pools.session");
  validate_pool(pools.training, "pools.training");
  validate_pool(pools.sampling, "pools.sampling");
  validate_pool(pools.futures, "pools.futures");
  validate_pool(pools.storage, "pools.storage");
}

void validate_limits(const LimitOptions& limits) {
  require(limits.max_response_body > 0, "limits.max_response_body", "must be positive");
  require(limits.max_response_header > 0, "limits.max_response_header", "must be positive");
  require(limits.max_decompressed_body > 0, "limits.max_decompressed_body", "must be positive");
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const Secret& secret) {
  return os << (secret.empty() ? "<empty>" : "<redacted>");
}

const char* to_string(LogLevel level) noexcept {
  switch (level) {
    case LogLevel::off: return "off";
    case LogLevel::error: return "error";
    case LogLevel::warning: return "warning";
    case LogLevel::info: return "info";
    case LogLevel::debug: return "debug";
  }
  return "unknown";
}

bool is_valid_api_key(std::string_view key) noexcept {
  return api_key_problem(key) == nullptr;
}

ClientOptions ClientOptions::from_environment() {
  // std::getenv is not synchronised with setenv: like any getenv user, don't modify the
  // environment from another thread while this runs.
  return from_environment([](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  });
}

ClientOptions ClientOptions::from_environment(const EnvLookup& env) {
  if (!env) throw error(errc::invalid_argument, "ClientOptions::from_environment: the lookup function is empty");
  ClientOptions options;
  read_api_key(env, options);
  read_connection(env, options);
  read_stored_key(env, options);
  read_session(env, options);
  return options;
}

void ClientOptions::validate(bool require_credential) const {
  check_base_url(base_url, "base_url");
  validate_credentials(*this, require_credential);
  validate_headers(default_headers);
  if (project_id) require(!project_id->empty(), "project_id", "must not be empty when set");
  if (tls.ca_file) require(!tls.ca_file->empty(), "tls.ca_file", "must not be empty when set");
  validate_retry(retry);
  validate_timeouts(timeouts);
  validate_pools(pools);
  validate_limits(limits);
}

}  // namespace tinker
