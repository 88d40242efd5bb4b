// Client options: set in code, or read from the environment variables of spec 1.1.
//
// Defaults follow the spec where it gives one (timeouts 7.2, retries 5.1/5.2) and are documented
// choices elsewhere (pool sizes, body limits). A bad value is a `tinker::error`
// (invalid_configuration) naming the option or variable; the API key never appears in a message.
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
  Secret() = default;
  explicit Secret(std::string value) : value_(std::move(value)) {}

  const std::string& reveal() const noexcept { return value_; }
  bool empty() const noexcept { return value_.empty(); }

  friend bool operator==(const Secret&, const Secret&) = default;

 private:
  std::string value_;
};

std::ostream& operator<<(std::ostream& os, const Secret& secret);

enum class LogLevel { off, error, warning, info, debug };
const char* to_string(LogLevel level) noexcept;

/// Transport-level retry (layer 1, spec 5.1) and whole-call retry (layer 2, spec 5.2).
class RetryOptions {
 public:
  RetryOptions() = default;

  int max_retries = 10;  ///< layer 1: retries after the first attempt (per-endpoint overrides may lower it)
  std::chrono::milliseconds initial_delay{500};       ///< layer 1: delay before the first retry
  std::chrono::milliseconds max_delay{10'000};        ///< layer 1: cap of the exponential delay
  std::chrono::milliseconds max_retry_after{60'000};  ///< server hints above this are ignored
  std::chrono::seconds call_budget{300};              ///< layer 2: wall-time budget of one logical call
  std::chrono::seconds call_max_delay{30};            ///< layer 2: cap of the 2^k s delay

  friend bool operator==(const RetryOptions&, const RetryOptions&) = default;
};

/// Timeouts (spec 7.2).
class TimeoutOptions {
 public:
  TimeoutOptions() = default;

  std::chrono::milliseconds connect{5'000};
  std::chrono::milliseconds request{60'000};          ///< read/write of one ordinary request
  std::chrono::milliseconds retrieve_future{45'000};  ///< one long-poll of retrieve_future
  std::chrono::milliseconds heartbeat{10'000};
  std::chrono::milliseconds dynamic_config{10'000};
  std::chrono::milliseconds telemetry{5'000};

  friend bool operator==(const TimeoutOptions&, const TimeoutOptions&) = default;
};

/// Limits of one connection pool (one per origin and purpose).
class PoolLimits {
 public:
  PoolLimits() = default;
  PoolLimits(std::size_t max_connections_, std::size_t max_idle_)
      : max_connections(max_connections_), max_idle(max_idle_) {}

  std::size_t max_connections = 32;
  std::size_t max_idle = 8;
  std::chrono::milliseconds idle_timeout{30'000};

  friend bool operator==(const PoolLimits&, const PoolLimits&) = default;
};

/// Connection pools per purpose. Choice: the sums stay far below 1024 open files even with the
/// server in-process (two descriptors per loopback connection): 4+32+128+256+8 = 428 connections.
class PoolOptions {
 public:
  PoolOptions() = default;

  PoolLimits session{4, 4};
  PoolLimits training{32, 8};
  PoolLimits sampling{128, 32};
  PoolLimits futures{256, 32};  ///< each pending result holds one long-poll connection
  PoolLimits storage{8, 4};     ///< checkpoint downloads, archive URLs

  friend bool operator==(const PoolOptions&, const PoolOptions&) = default;
};

/// Size limits applied to every response (Beast's default of 8 MB is never relied upon).
class LimitOptions {
 public:
  LimitOptions() = default;

  std::size_t max_response_body = 256 * 1024 * 1024;  ///< bytes; results are at most a few hundred MB
  std::size_t max_response_header = 64 * 1024;
  std::size_t max_decompressed_body = 1024 * 1024 * 1024;

  friend bool operator==(const LimitOptions&, const LimitOptions&) = default;
};

class TlsOptions {
 public:
  TlsOptions() = default;

  bool verify_peer = true;             ///< verify the certificate chain and the host name
  std::optional<std::string> ca_file;  ///< PEM bundle to trust instead of the system store (SSL_CERT_FILE)

  friend bool operator==(const TlsOptions&, const TlsOptions&) = default;
};

/// Everything a client needs to reach the service.
class ClientOptions {
 public:
  ClientOptions() = default;
  explicit ClientOptions(std::string base_url_, Secret api_key_ = {})
      : api_key(std::move(api_key_)), base_url(std::move(base_url_)) {}

  /// The variables of spec 1.1 as a lookup, so tests can inject an environment.
  using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

  /// Reads the process environment (see `from_environment(EnvLookup)`).
  static ClientOptions from_environment();

  /// Reads TINKER_API_KEY (checked for the `tml-`/`eyJ` prefix), TINKER_BASE_URL (empty =
  /// unset), TINKER_PROJECT_ID, TINKER_TAGS (comma separated, trimmed, deduplicated in first-seen
  /// order), TINKER_LOG (off|error|warning|info|debug), TINKER_TELEMETRY
  /// (1/true/yes/on or 0/false/no/off, case-insensitive), TINKER_CREDENTIAL_CMD,
  /// CLOUDFLARE_ACCESS_CLIENT_ID/SECRET and SSL_CERT_FILE. Unset variables keep the defaults.
  /// Throws `tinker::error` (invalid_configuration) naming the first bad variable.
  static ClientOptions from_environment(const EnvLookup& env);

  /// Throws `tinker::error` (invalid_configuration) naming the first bad option.
  /// `require_credential` additionally demands an API key or credential command.
  void validate(bool require_credential = true) const;

  static constexpr const char* default_base_url = "https://tinker.thinkingmachines.dev/services/tinker-prod";

  Secret api_key;
  std::string base_url = default_base_url;
  std::optional<std::string> project_id;
  std::vector<std::string> tags;
  LogLevel log_level = LogLevel::warning;
  bool telemetry_enabled = true;
  std::optional<std::string> credential_command;  ///< shell command printing a credential (spec 2.3)
  std::optional<std::string> cloudflare_access_client_id;
  Secret cloudflare_access_client_secret;
  std::map<std::string, std::string> default_headers;
  RetryOptions retry;
  TimeoutOptions timeouts;
  PoolOptions pools;
  LimitOptions limits;
  TlsOptions tls;
};

/// True if `key` has a valid API-key form: `tml-...` or a JWT (`eyJ...`), spec 2.2.
bool is_valid_api_key(std::string_view key) noexcept;

}  // namespace tinker
