/// \file
/// Client options: set in code, or read from the environment (`doc/protocol.md#transport`).
///
/// Defaults follow the protocol where it gives one (timeouts, the retry layers of
/// `doc/protocol.md#retries`) and are documented choices elsewhere (pool sizes, body
/// limits, `doc/protocol.md#pools-timeouts-and-throttles`). A bad value is a `tinker::error`
/// (invalid_configuration) naming the option or variable; the API key never appears in a message.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tinker {

/// A credential. It prints as "<redacted>" and is only readable through `reveal()`, so it cannot
/// end up in a log line or error message by accident.
class Secret {
 public:
  /// No credential.
  Secret() = default;
  /// Holds `value`.
  explicit Secret(std::string value) : value_(std::move(value)) {}

  /// The credential itself. Call it only where the value is sent, never to print it.
  const std::string& reveal() const noexcept { return value_; }
  /// True when no credential is held.
  bool empty() const noexcept { return value_.empty(); }

  /// Equal when the held values are equal.
  friend bool operator==(const Secret&, const Secret&) = default;

 private:
  std::string value_;
};

/// Prints "<redacted>", or "<empty>" when there is no credential; never the value.
std::ostream& operator<<(std::ostream& os, const Secret& secret);

/// How much the SDK logs; each level includes the ones before it.
enum class LogLevel {
  off,      ///< nothing
  error,    ///< problems the server reports outside a call's result (a session's error message)
  warning,  ///< degraded operation: queue pauses, billing holds, failing heartbeats
  info,     ///< noteworthy events: server messages, recoveries
  debug,    ///< background failures that are retried (telemetry, heartbeats, config refresh)
};
/// "off", "error", "warning", "info" or "debug" (the values of TINKER_LOG).
const char* to_string(LogLevel level) noexcept;

/// Transport retries (the same request again) and call retries (the whole call again) of
/// `doc/protocol.md#retries`.
class RetryOptions {
 public:
  /// The protocol's defaults.
  RetryOptions() = default;

  int max_retries = 10;  ///< transport retry: retries after the first attempt (per-endpoint overrides may lower it)
  std::chrono::milliseconds initial_delay{500};       ///< transport retry: delay before the first retry
  std::chrono::milliseconds max_delay{10'000};        ///< transport retry: cap of the exponential delay
  std::chrono::milliseconds max_retry_after{60'000};  ///< server Retry-After hints above this are ignored
  std::chrono::seconds call_budget{300};              ///< call retry: wall-time budget of one logical call
  std::chrono::seconds call_max_delay{30};            ///< call retry: cap of the 2^k s delay

  /// Equal when every field is equal.
  friend bool operator==(const RetryOptions&, const RetryOptions&) = default;
};

/// Timeouts of the requests the client sends (`doc/protocol.md#pools-timeouts-and-throttles`).
/// Each must be positive.
class TimeoutOptions {
 public:
  /// The protocol's defaults.
  TimeoutOptions() = default;

  std::chrono::milliseconds connect{5'000};           ///< TCP connect and TLS handshake
  std::chrono::milliseconds request{60'000};          ///< read/write of one ordinary request
  std::chrono::milliseconds retrieve_future{45'000};  ///< one long-poll of retrieve_future
  std::chrono::milliseconds heartbeat{10'000};        ///< one session heartbeat
  std::chrono::milliseconds dynamic_config{10'000};   ///< one dynamic-config fetch
  std::chrono::milliseconds telemetry{5'000};         ///< one telemetry batch

  /// Equal when every field is equal.
  friend bool operator==(const TimeoutOptions&, const TimeoutOptions&) = default;
};

/// Limits of one connection pool (one per origin and purpose).
class PoolLimits {
 public:
  /// 32 connections, 8 kept idle.
  PoolLimits() = default;
  /// `max_connections_` connections, `max_idle_` kept idle.
  PoolLimits(std::size_t max_connections_, std::size_t max_idle_)
      : max_connections(max_connections_), max_idle(max_idle_) {}

  /// Most open connections (at least 1); a request beyond waits for one to be free.
  std::size_t max_connections = 32;
  /// Most idle connections kept open for reuse (at most max_connections).
  std::size_t max_idle = 8;
  /// An idle connection unused for this long is closed.
  std::chrono::milliseconds idle_timeout{30'000};

  /// Equal when every field is equal.
  friend bool operator==(const PoolLimits&, const PoolLimits&) = default;
};

/// Connection pools per purpose. Choice: the sums stay far below 1024 open files even with the
/// server in-process (two descriptors per loopback connection): 4+32+128+256+8 = 428 connections.
class PoolOptions {
 public:
  /// The sizes above.
  PoolOptions() = default;

  PoolLimits session{4, 4};      ///< bootstrap, sessions, heartbeats, telemetry
  PoolLimits training{32, 8};    ///< training operations and REST calls
  PoolLimits sampling{128, 32};  ///< sample submissions
  PoolLimits futures{256, 32};   ///< each pending result holds one long-poll connection
  PoolLimits storage{8, 4};      ///< checkpoint downloads, archive URLs

  /// Equal when every field is equal.
  friend bool operator==(const PoolOptions&, const PoolOptions&) = default;
};

/// Size limits applied to every response (Beast's default of 8 MB is never relied upon).
/// A larger response fails with errc::response_too_large. Each must be positive.
class LimitOptions {
 public:
  /// The sizes above.
  LimitOptions() = default;

  std::size_t max_response_body = 256 * 1024 * 1024;       ///< bytes; results are at most a few hundred MB
  std::size_t max_response_header = 64 * 1024;             ///< bytes of the status line and headers
  std::size_t max_decompressed_body = 1024 * 1024 * 1024;  ///< bytes of a compressed body once decompressed

  /// Equal when every field is equal.
  friend bool operator==(const LimitOptions&, const LimitOptions&) = default;
};

/// How https:// connections are verified.
class TlsOptions {
 public:
  /// Verify against the system's trust store.
  TlsOptions() = default;

  bool verify_peer = true;             ///< verify the certificate chain and the host name
  std::optional<std::string> ca_file;  ///< PEM bundle to trust instead of the system store (SSL_CERT_FILE)

  /// Equal when every field is equal.
  friend bool operator==(const TlsOptions&, const TlsOptions&) = default;
};

/// Everything a client needs to reach the service.
class ClientOptions {
 public:
  /// The defaults: the production service, no credential.
  ClientOptions() = default;
  /// The service at `base_url_` with `api_key_`.
  explicit ClientOptions(std::string base_url_, Secret api_key_ = {})
      : api_key(std::move(api_key_)), base_url(std::move(base_url_)) {}

  /// Looks an environment variable up (nullopt: unset), so tests can inject an environment.
  using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

  /// Reads the process environment (see `from_environment(EnvLookup)`).
  static ClientOptions from_environment();

  /// Reads TINKER_API_KEY (checked for the `tml-`/`eyJ` prefix), TINKER_BASE_URL (empty =
  /// unset), TINKER_PROJECT_ID, TINKER_TAGS (comma separated, trimmed, deduplicated in first-seen
  /// order), TINKER_LOG (off|error|warning|info|debug), TINKER_TELEMETRY
  /// (1/true/yes/on or 0/false/no/off, case-insensitive), TINKER_CREDENTIAL_CMD,
  /// CLOUDFLARE_ACCESS_CLIENT_ID/SECRET and SSL_CERT_FILE. Unset variables keep the defaults.
  /// When neither TINKER_API_KEY nor TINKER_CREDENTIAL_CMD is set, the default key of the
  /// credentials file `$HOME/.tinker/credentials.json` (<tinker/credentials.hpp>, written by
  /// `tinker auth login`) is the API key: the lowest-priority source.
  /// Throws `tinker::error` (invalid_configuration) naming the first bad variable, or the
  /// credentials file and what is wrong with it (never its content).
  static ClientOptions from_environment(const EnvLookup& env);

  /// Throws `tinker::error` (invalid_configuration) naming the first bad option: an API key of
  /// the wrong form, a base URL that is not an absolute http(s) URL (or has a query or
  /// fragment), header values with control characters, negative retry settings, non-positive
  /// timeouts or limits, a pool without connections. `require_credential` additionally demands
  /// an API key or credential command.
  void validate(bool require_credential = true) const;

  /// The production service.
  static constexpr const char* default_base_url = "https://tinker.thinkingmachines.dev/services/tinker-prod";

  /// The API key, sent as `X-API-Key` (TINKER_API_KEY): `tml-...`, or a JWT.
  Secret api_key;
  /// Where the service is (TINKER_BASE_URL); may carry a path prefix, request paths are appended.
  std::string base_url = default_base_url;
  /// The project new sessions belong to (TINKER_PROJECT_ID).
  std::optional<std::string> project_id;
  /// Tags of new sessions (TINKER_TAGS).
  std::vector<std::string> tags;
  /// Lines below this level are not logged (TINKER_LOG).
  LogLevel log_level = LogLevel::warning;
  /// Send telemetry events to the service (TINKER_TELEMETRY; `doc/protocol.md#telemetry`).
  bool telemetry_enabled = true;
  /// Shell command printing a credential on stdout, run for each token request; used when there
  /// is no API key, or when the server asks for it (TINKER_CREDENTIAL_CMD,
  /// `doc/protocol.md#authentication`).
  std::optional<std::string> credential_command;
  /// Sent as `CF-Access-Client-Id` when set (CLOUDFLARE_ACCESS_CLIENT_ID).
  std::optional<std::string> cloudflare_access_client_id;
  /// Sent as `CF-Access-Client-Secret` when set (CLOUDFLARE_ACCESS_CLIENT_SECRET).
  Secret cloudflare_access_client_secret;
  /// Extra headers sent with every request to the service.
  std::map<std::string, std::string> default_headers;
  RetryOptions retry;       ///< transport and call retries
  TimeoutOptions timeouts;  ///< per-request timeouts
  PoolOptions pools;        ///< connection pools
  LimitOptions limits;      ///< response size limits
  TlsOptions tls;           ///< certificate verification (SSL_CERT_FILE)
};

/// True if `key` has a valid API-key form: `tml-...` or a JWT (`eyJ...`), without whitespace or
/// control characters (`doc/protocol.md#authentication`).
bool is_valid_api_key(std::string_view key) noexcept;

}  // namespace tinker
