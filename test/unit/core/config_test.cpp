// Tests of ClientOptions: defaults (the Python SDK's timeouts and retry settings), environment
// parsing (TINKER_* variables), API-key checks ("tml-" keys or JWTs) and validate(). Errors must
// name the variable and never echo a secret.
#include <tinker/config.hpp>
#include <tinker/error.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using namespace std::chrono_literals;
using tinker::ClientOptions;
using tinker::LogLevel;
using tinker::Secret;
using Env = std::map<std::string, std::string>;

// Public option types are non-aggregates: GCC 12 double-frees aggregate temporaries inside co_await
// expressions (doc/architecture.md#toolchain-rules).
static_assert(!std::is_aggregate_v<ClientOptions>);
static_assert(!std::is_aggregate_v<tinker::RetryOptions>);
static_assert(!std::is_aggregate_v<tinker::TimeoutOptions>);
static_assert(!std::is_aggregate_v<tinker::PoolOptions>);
static_assert(!std::is_aggregate_v<tinker::PoolLimits>);
static_assert(!std::is_aggregate_v<tinker::LimitOptions>);
static_assert(!std::is_aggregate_v<tinker::TlsOptions>);
static_assert(!std::is_aggregate_v<Secret>);

const std::vector<std::string> all_variables = {"TINKER_API_KEY",
                                                "TINKER_BASE_URL",
                                                "TINKER_PROJECT_ID",
                                                "TINKER_TAGS",
                                                "TINKER_LOG",
                                                "TINKER_TELEMETRY",
                                                "TINKER_CREDENTIAL_CMD",
                                                "CLOUDFLARE_ACCESS_CLIENT_ID",
                                                "CLOUDFLARE_ACCESS_CLIENT_SECRET",
                                                "SSL_CERT_FILE"};

ClientOptions::EnvLookup lookup_in(Env env) {
  return [env = std::move(env)](std::string_view name) -> std::optional<std::string> {
    const auto it = env.find(std::string(name));
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
}

ClientOptions from_env(Env env) {
  return ClientOptions::from_environment(lookup_in(std::move(env)));
}

// Runs `action`, expecting an invalid_configuration error; returns it (or nullopt after a failure).
std::optional<tinker::error> config_error(const std::function<void()>& action) {
  try {
    action();
  } catch (const tinker::error& e) {
    EXPECT_EQ(e.code(), tinker::make_error_code(tinker::errc::invalid_configuration)) << e.what();
    return e;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "unexpected exception type: " << e.what();
    return std::nullopt;
  }
  ADD_FAILURE() << "no exception thrown";
  return std::nullopt;
}

// Expects an invalid_configuration error whose what() and diag().message both contain `needle`.
std::optional<tinker::error> expect_error_naming(const std::function<void()>& action, const std::string& needle) {
  auto e = config_error(action);
  if (e) {
    EXPECT_NE(std::string(e->what()).find(needle), std::string::npos) << e->what();
    EXPECT_NE(e->diag().message.find(needle), std::string::npos) << e->diag().message;
  }
  return e;
}

std::optional<tinker::error> expect_env_error(const Env& env, const std::string& variable) {
  SCOPED_TRACE("environment error for " + variable);
  return expect_error_naming([&] { from_env(env); }, variable);
}

std::optional<tinker::error> expect_validate_error(const ClientOptions& options, const std::string& option,
                                                   bool require_credential = false) {
  SCOPED_TRACE("validate() error for " + option);
  return expect_error_naming([&] { options.validate(require_credential); }, option);
}

// No substring of `secret` with 6 or more characters may appear in `text`.
void expect_no_fragment(const std::string& text, const std::string& secret) {
  for (std::size_t start = 0; start + 6 <= secret.size(); ++start) {
    for (std::size_t length = 6; start + length <= secret.size(); ++length) {
      const std::string fragment = secret.substr(start, length);
      EXPECT_EQ(text.find(fragment), std::string::npos) << "'" << fragment << "' leaked into: " << text;
    }
  }
}

void expect_error_hides(const tinker::error& e, const std::string& secret) {
  expect_no_fragment(e.what(), secret);
  expect_no_fragment(e.diag().message, secret);
}

ClientOptions valid_options() {
  return ClientOptions("http://127.0.0.1:8080", Secret("tml-valid-key"));
}

// ---- Defaults -------------------------------------------------------------------------------

TEST(ConfigDefaults, MatchTheSpec) {
  const ClientOptions options;
  EXPECT_EQ(options.base_url, "https://tinker.thinkingmachines.dev/services/tinker-prod");
  EXPECT_EQ(std::string(ClientOptions::default_base_url), options.base_url);
  EXPECT_EQ(options.timeouts.connect, 5s);
  EXPECT_EQ(options.timeouts.request, 60s);
  EXPECT_EQ(options.timeouts.retrieve_future, 45s);
  EXPECT_EQ(options.timeouts.heartbeat, 10s);
  EXPECT_EQ(options.timeouts.dynamic_config, 10s);
  EXPECT_EQ(options.timeouts.telemetry, 5s);
  EXPECT_EQ(options.retry.max_retries, 10);
  EXPECT_EQ(options.retry.initial_delay, 500ms);
  EXPECT_EQ(options.retry.max_delay, 10s);
  EXPECT_EQ(options.retry.max_retry_after, 60s);
  EXPECT_EQ(options.retry.call_budget, 300s);
  EXPECT_EQ(options.retry.call_max_delay, 30s);
  EXPECT_TRUE(options.telemetry_enabled);
  EXPECT_EQ(options.log_level, LogLevel::warning);
  EXPECT_TRUE(options.api_key.empty());
  EXPECT_FALSE(options.project_id);
  EXPECT_TRUE(options.tags.empty());
  EXPECT_FALSE(options.credential_command);
  EXPECT_TRUE(options.tls.verify_peer);
  EXPECT_FALSE(options.tls.ca_file);
}

TEST(ConfigDefaults, AreValidExceptForTheMissingCredential) {
  const ClientOptions options;
  EXPECT_NO_THROW(options.validate(false));
  auto e = config_error([&] { options.validate(); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->diag().message, "no API key: set TINKER_API_KEY or ClientOptions::api_key (or TINKER_CREDENTIAL_CMD)");
  EXPECT_NO_THROW(valid_options().validate());
}

// ---- Environment: every variable ------------------------------------------------------------

TEST(ConfigEnvironment, EmptyEnvironmentGivesDefaults) {
  const ClientOptions defaults;
  const ClientOptions options = from_env({});
  EXPECT_EQ(options.base_url, defaults.base_url);
  EXPECT_TRUE(options.api_key.empty());
  EXPECT_EQ(options.timeouts, defaults.timeouts);
  EXPECT_EQ(options.retry, defaults.retry);
  EXPECT_EQ(options.pools, defaults.pools);
  EXPECT_EQ(options.limits, defaults.limits);
  EXPECT_EQ(options.tls, defaults.tls);
  EXPECT_EQ(options.log_level, defaults.log_level);
  EXPECT_TRUE(options.telemetry_enabled);
}

TEST(ConfigEnvironment, EmptyValuesMeanUnset) {
  Env env;
  for (const auto& name : all_variables) env[name] = "";
  const ClientOptions options = from_env(env);
  const ClientOptions defaults;
  EXPECT_EQ(options.base_url, defaults.base_url);
  EXPECT_TRUE(options.api_key.empty());
  EXPECT_FALSE(options.project_id);
  EXPECT_TRUE(options.tags.empty());
  EXPECT_EQ(options.log_level, defaults.log_level);
  EXPECT_TRUE(options.telemetry_enabled);
  EXPECT_FALSE(options.credential_command);
  EXPECT_FALSE(options.cloudflare_access_client_id);
  EXPECT_TRUE(options.cloudflare_access_client_secret.empty());
  EXPECT_FALSE(options.tls.ca_file);
}

TEST(ConfigEnvironment, ReadsApiKeys) {
  EXPECT_EQ(from_env({{"TINKER_API_KEY", "tml-abc123"}}).api_key, Secret("tml-abc123"));
  EXPECT_EQ(from_env({{"TINKER_API_KEY", "eyJhbGciOiJIUzI1NiJ9.e30.sig"}}).api_key,
            Secret("eyJhbGciOiJIUzI1NiJ9.e30.sig"));
}

TEST(ConfigEnvironment, ReadsBaseUrls) {
  for (const std::string url :
       {"http://127.0.0.1:8080", "https://example.com/services/tinker-prod", "https://example.com/prefix/",
        "HTTPS://Example.COM", "http://[::1]:9000/p", "https://host:/x"}) {
    EXPECT_EQ(from_env({{"TINKER_BASE_URL", url}}).base_url, url);
  }
}

TEST(ConfigEnvironment, RejectsBadBaseUrls) {
  for (const std::string url : {"not a url", "example.com", "localhost:8080", "/relative/path", "ftp://host/x",
                                "file:///etc/passwd", "https://", "http:///path", "https://host?x=1",
                                "https://host/#frag", "https://host:0", "https://host:100000", "https://host:8x"}) {
    SCOPED_TRACE(url);
    auto e = expect_env_error({{"TINKER_BASE_URL", url}}, "TINKER_BASE_URL");
    if (e) {
      EXPECT_NE(std::string(e->what()).find(url), std::string::npos) << "the (non-secret) URL helps: " << url;
    }
  }
}

TEST(ConfigEnvironment, BaseUrlErrorsStripUserinfo) {
  // Parsable but wrong scheme, unparsable (space), a bad port, and a password containing '/' and '@'.
  for (const std::string url :
       {"ftp://alice:hunter2secret@files.example.com/x", "https://alice:hunter2 secret@example.com/x",
        "https://alice:hunter2secret@host:99999", "https://alice:hunter2/sec@ret@host?x"}) {
    auto e = expect_env_error({{"TINKER_BASE_URL", url}}, "TINKER_BASE_URL");
    if (!e) continue;
    const std::string what = e->what();
    EXPECT_EQ(what.find("hunter2"), std::string::npos) << what;
    EXPECT_EQ(what.find("alice"), std::string::npos) << what;
    EXPECT_EQ(e->diag().message.find("hunter2"), std::string::npos);
  }
  auto e = expect_env_error({{"TINKER_BASE_URL", "ftp://alice:pw@files.example.com/x"}}, "TINKER_BASE_URL");
  ASSERT_TRUE(e);
  EXPECT_NE(std::string(e->what()).find("files.example.com/x"), std::string::npos) << e->what();
}

TEST(ConfigEnvironment, BaseUrlErrorsEscapeControlCharacters) {
  auto e = expect_env_error({{"TINKER_BASE_URL", "ftp://host/\r\nX-Injected: 1"}}, "TINKER_BASE_URL");
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()).find('\n'), std::string::npos);
  EXPECT_NE(std::string(e->what()).find("\\x0d\\x0a"), std::string::npos) << e->what();
}

TEST(ConfigEnvironment, ReadsProjectId) {
  EXPECT_EQ(from_env({{"TINKER_PROJECT_ID", "proj-42"}}).project_id, "proj-42");
}

TEST(ConfigEnvironment, ReadsTagsTrimmedDeduplicatedInFirstSeenOrder) {
  using Tags = std::vector<std::string>;
  EXPECT_EQ(from_env({{"TINKER_TAGS", " b, a ,,b,\tc ,a, "}}).tags, (Tags{"b", "a", "c"}));
  EXPECT_EQ(from_env({{"TINKER_TAGS", "solo"}}).tags, (Tags{"solo"}));
  EXPECT_EQ(from_env({{"TINKER_TAGS", "with space, x"}}).tags, (Tags{"with space", "x"}));
  EXPECT_TRUE(from_env({{"TINKER_TAGS", " , ,, "}}).tags.empty());
}

TEST(ConfigEnvironment, ReadsLogLevelsCaseInsensitively) {
  const std::map<std::string, LogLevel> cases = {
      {"off", LogLevel::off},      {"error", LogLevel::error},   {"warning", LogLevel::warning},
      {"warn", LogLevel::warning}, {"WARN", LogLevel::warning},  {"info", LogLevel::info},
      {"Debug", LogLevel::debug},  {" DEBUG ", LogLevel::debug}, {"ERROR", LogLevel::error}};
  for (const auto& [text, level] : cases) EXPECT_EQ(from_env({{"TINKER_LOG", text}}).log_level, level) << text;
}

TEST(ConfigEnvironment, RejectsBadLogLevels) {
  for (const std::string text : {"verbose", "2", "trace", "debugg", "warnings"}) {
    auto e = expect_env_error({{"TINKER_LOG", text}}, "TINKER_LOG");
    if (!e) continue;
    for (const char* allowed : {"off", "error", "warning", "warn", "info", "debug"}) {
      EXPECT_NE(e->diag().message.find(allowed), std::string::npos) << "lists " << allowed;
    }
  }
}

TEST(ConfigEnvironment, ReadsTelemetryFlags) {
  for (const std::string yes : {"1", "true", "TRUE", "yes", "Yes", "on", "ON"}) {
    EXPECT_TRUE(from_env({{"TINKER_TELEMETRY", yes}}).telemetry_enabled) << yes;
  }
  for (const std::string no : {"0", "false", "False", "no", "NO", "off", "Off", " off "}) {
    EXPECT_FALSE(from_env({{"TINKER_TELEMETRY", no}}).telemetry_enabled) << no;
  }
}

TEST(ConfigEnvironment, RejectsUnknownTelemetryFlags) {
  // Stricter than the Python SDK (which reads these as "off") on purpose.
  for (const std::string text : {"2", "maybe", "enabled", "disabled", "flase", "y"}) {
    expect_env_error({{"TINKER_TELEMETRY", text}}, "TINKER_TELEMETRY");
  }
}

TEST(ConfigEnvironment, ReadsCredentialCommandCloudflareAndCaFile) {
  const ClientOptions options = from_env({{"TINKER_CREDENTIAL_CMD", "vault read -field=key secret/tinker"},
                                          {"CLOUDFLARE_ACCESS_CLIENT_ID", "cf-id.access"},
                                          {"CLOUDFLARE_ACCESS_CLIENT_SECRET", "cf-secret-value"},
                                          {"SSL_CERT_FILE", "/etc/ssl/custom.pem"}});
  EXPECT_EQ(options.credential_command, "vault read -field=key secret/tinker");
  EXPECT_EQ(options.cloudflare_access_client_id, "cf-id.access");
  EXPECT_EQ(options.cloudflare_access_client_secret, Secret("cf-secret-value"));
  EXPECT_EQ(options.tls.ca_file, "/etc/ssl/custom.pem");
  EXPECT_TRUE(options.api_key.empty());
  EXPECT_NO_THROW(options.validate()) << "a credential command stands in for the API key";
}

TEST(ConfigEnvironment, EmptyLookupIsAnInvalidArgument) {
  try {
    ClientOptions::from_environment(ClientOptions::EnvLookup{});
    ADD_FAILURE() << "no exception thrown";
  } catch (const tinker::error& e) {
    EXPECT_EQ(e.code(), tinker::make_error_code(tinker::errc::invalid_argument));
  }
}

// ---- API keys never leak --------------------------------------------------------------------

TEST(ConfigApiKey, BadKeysAreRejectedWithoutEchoingThem) {
  const std::string prefix_message = "TINKER_API_KEY must start with 'tml-' (an API key) or 'eyJ' (a JWT)";
  for (const std::string key : {"sk-THISISSECRET123", "tml", "eyJ", "tml-", "TML-SECRETSECRET", "eyj-SECRETSECRET",
                                " tml-SECRETSECRET", "Bearer tml-SECRETSECRET"}) {
    auto e = expect_env_error({{"TINKER_API_KEY", key}}, "TINKER_API_KEY");
    if (!e) continue;
    expect_error_hides(*e, key);
    // The message is a fixed text: it cannot depend on (and so cannot reveal) the key.
    EXPECT_EQ(e->diag().message, prefix_message) << "for a key of length " << key.size();
  }
}

TEST(ConfigApiKey, KeysWithWhitespaceOrControlCharactersAreRejected) {
  const std::vector<std::string> keys = {"tml-SECRETSECRET\n", "tml-SECRET SECRET", "eyJSECRET\r\nX-Evil: 1",
                                         std::string("tml-SECRET\0SECRET", 17)};
  for (const std::string& key : keys) {
    auto e = expect_env_error({{"TINKER_API_KEY", key}}, "TINKER_API_KEY");
    if (e) expect_error_hides(*e, key);
  }
}

TEST(ConfigApiKey, IsValidApiKey) {
  EXPECT_TRUE(tinker::is_valid_api_key("tml-x"));
  EXPECT_TRUE(tinker::is_valid_api_key("tml-0123456789abcdef"));
  EXPECT_TRUE(tinker::is_valid_api_key("eyJhbGciOiJIUzI1NiJ9.e30.sig"));
  EXPECT_FALSE(tinker::is_valid_api_key(""));
  EXPECT_FALSE(tinker::is_valid_api_key("tml"));
  EXPECT_FALSE(tinker::is_valid_api_key("tml-"));
  EXPECT_FALSE(tinker::is_valid_api_key("eyJ"));
  EXPECT_FALSE(tinker::is_valid_api_key("TML-abc"));
  EXPECT_FALSE(tinker::is_valid_api_key("sk-abc"));
  EXPECT_FALSE(tinker::is_valid_api_key("tml-abc\n"));
  EXPECT_FALSE(tinker::is_valid_api_key("tml-a b"));
}

TEST(ConfigSecret, PrintsRedactedNeverTheValue) {
  std::ostringstream out;
  out << Secret("tml-SUPERSECRETVALUE") << '|' << Secret() << '|' << Secret("x");
  EXPECT_EQ(out.str(), "<redacted>|<empty>|<redacted>");
  EXPECT_EQ(Secret("tml-SUPERSECRETVALUE").reveal(), "tml-SUPERSECRETVALUE");
}

TEST(ConfigLogLevel, ToString) {
  EXPECT_STREQ(tinker::to_string(LogLevel::off), "off");
  EXPECT_STREQ(tinker::to_string(LogLevel::error), "error");
  EXPECT_STREQ(tinker::to_string(LogLevel::warning), "warning");
  EXPECT_STREQ(tinker::to_string(LogLevel::info), "info");
  EXPECT_STREQ(tinker::to_string(LogLevel::debug), "debug");
}

// ---- validate() -----------------------------------------------------------------------------

TEST(ConfigValidate, BaseUrl) {
  ClientOptions options = valid_options();
  options.base_url = "https://example.com/mounted/prefix";
  EXPECT_NO_THROW(options.validate());
  for (const std::string url : {"", "example.com", "ws://example.com", "https://example.com?q", "https://:80/"}) {
    options.base_url = url;
    expect_validate_error(options, "base_url");
  }
  options.base_url = "gopher://carol:s3cr3tpassword@example.com";
  auto e = expect_validate_error(options, "base_url");
  if (e) expect_no_fragment(e->what(), "carol:s3cr3tpassword");
}

TEST(ConfigValidate, ApiKeyFormWithoutEchoingIt) {
  ClientOptions options = valid_options();
  options.api_key = Secret("sk-THISISSECRET123");
  auto e = expect_validate_error(options, "api_key", false);
  ASSERT_TRUE(e);
  expect_error_hides(*e, "sk-THISISSECRET123");
  EXPECT_EQ(std::string(e->what()).find("TINKER_API_KEY"), std::string::npos) << "names the option, not the variable";
}

TEST(ConfigValidate, RequiresACredentialOnlyWhenAsked) {
  ClientOptions options("http://127.0.0.1:1");
  EXPECT_NO_THROW(options.validate(false));
  expect_validate_error(options, "no API key", true);
  options.credential_command = "";
  expect_validate_error(options, "no API key", true);
  options.credential_command = "print-token";
  EXPECT_NO_THROW(options.validate(true));
}

TEST(ConfigValidate, Timeouts) {
  using Member = std::chrono::milliseconds tinker::TimeoutOptions::*;
  const std::map<std::string, Member> members = {{"timeouts.connect", &tinker::TimeoutOptions::connect},
                                                 {"timeouts.request", &tinker::TimeoutOptions::request},
                                                 {"timeouts.retrieve_future", &tinker::TimeoutOptions::retrieve_future},
                                                 {"timeouts.heartbeat", &tinker::TimeoutOptions::heartbeat},
                                                 {"timeouts.dynamic_config", &tinker::TimeoutOptions::dynamic_config},
                                                 {"timeouts.telemetry", &tinker::TimeoutOptions::telemetry}};
  for (const auto& [path, member] : members) {
    for (const auto bad : {0ms, -1ms}) {
      ClientOptions options = valid_options();
      options.timeouts.*member = bad;
      expect_validate_error(options, path);
    }
  }
}

TEST(ConfigValidate, Pools) {
  using Member = tinker::PoolLimits tinker::PoolOptions::*;
  const std::map<std::string, Member> pools = {{"pools.session", &tinker::PoolOptions::session},
                                               {"pools.training", &tinker::PoolOptions::training},
                                               {"pools.sampling", &tinker::PoolOptions::sampling},
                                               {"pools.futures", &tinker::PoolOptions::futures},
                                               {"pools.storage", &tinker::PoolOptions::storage}};
  for (const auto& [path, member] : pools) {
    ClientOptions options = valid_options();
    (options.pools.*member) = tinker::PoolLimits(0, 0);
    expect_validate_error(options, path + ".max_connections");
    (options.pools.*member) = tinker::PoolLimits(2, 3);
    expect_validate_error(options, path + ".max_idle");
    (options.pools.*member) = tinker::PoolLimits(2, 0);
    (options.pools.*member).idle_timeout = 0ms;
    expect_validate_error(options, path + ".idle_timeout");
    (options.pools.*member) = tinker::PoolLimits(1, 1);
    EXPECT_NO_THROW(options.validate()) << path;
  }
}

TEST(ConfigValidate, Retry) {
  ClientOptions options = valid_options();
  options.retry.max_retries = 0;
  options.retry.call_budget = 0s;
  EXPECT_NO_THROW(options.validate()) << "zero retries and no call budget disable retrying";
  options.retry.max_retries = -1;
  expect_validate_error(options, "retry.max_retries");
  options = valid_options();
  options.retry.initial_delay = -1ms;
  expect_validate_error(options, "retry.initial_delay");
  options = valid_options();
  options.retry.max_delay = 100ms;
  expect_validate_error(options, "retry.max_delay");
  options = valid_options();
  options.retry.max_retry_after = -1ms;
  expect_validate_error(options, "retry.max_retry_after");
  options = valid_options();
  options.retry.call_budget = -1s;
  expect_validate_error(options, "retry.call_budget");
  options = valid_options();
  options.retry.call_max_delay = -1s;
  expect_validate_error(options, "retry.call_max_delay");
}

TEST(ConfigValidate, Limits) {
  using Member = std::size_t tinker::LimitOptions::*;
  const std::map<std::string, Member> limits = {
      {"limits.max_response_body", &tinker::LimitOptions::max_response_body},
      {"limits.max_response_header", &tinker::LimitOptions::max_response_header},
      {"limits.max_decompressed_body", &tinker::LimitOptions::max_decompressed_body}};
  for (const auto& [path, member] : limits) {
    ClientOptions options = valid_options();
    options.limits.*member = 0;
    expect_validate_error(options, path);
  }
}

TEST(ConfigValidate, HeaderValuesCannotInjectHeaders) {
  ClientOptions options = valid_options();
  options.default_headers["X-Team"] = "ml\tinfra ok";
  EXPECT_NO_THROW(options.validate());
  options.default_headers["X-Team"] = "ml\r\nX-Evil: 1";
  expect_validate_error(options, "default_headers[X-Team]");
  options = valid_options();
  options.default_headers["Bad Name"] = "v";
  expect_validate_error(options, "default_headers");
  options = valid_options();
  options.cloudflare_access_client_id = "id\nX-Evil: 1";
  expect_validate_error(options, "cloudflare_access_client_id");
  options = valid_options();
  options.cloudflare_access_client_secret = Secret("CFSECRETVALUE\r\nX-Evil: 1");
  auto e = expect_validate_error(options, "cloudflare_access_client_secret");
  if (e) expect_error_hides(*e, "CFSECRETVALUE");
}

TEST(ConfigValidate, EmptyOptionalStrings) {
  ClientOptions options = valid_options();
  options.project_id = "";
  expect_validate_error(options, "project_id");
  options = valid_options();
  options.tls.ca_file = "";
  expect_validate_error(options, "tls.ca_file");
}

TEST(ConfigValidate, FirstBadOptionIsNamed) {
  ClientOptions options = valid_options();
  options.timeouts.connect = 0ms;
  options.limits.max_response_body = 0;
  expect_validate_error(options, "timeouts.connect");
}

// ---- The process environment ----------------------------------------------------------------

// Saves the variables ClientOptions reads (all_variables), clears them, and restores them on
// destruction.
class ScopedEnvironment {
 public:
  ScopedEnvironment() {
    for (const auto& name : all_variables) {
      if (const char* value = std::getenv(name.c_str())) saved_[name] = value;
      ::unsetenv(name.c_str());
    }
  }
  ~ScopedEnvironment() {
    for (const auto& name : all_variables) {
      const auto it = saved_.find(name);
      if (it == saved_.end()) {
        ::unsetenv(name.c_str());
      } else {
        ::setenv(name.c_str(), it->second.c_str(), 1);
      }
    }
  }
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

  void set(const std::string& name, const std::string& value) { ::setenv(name.c_str(), value.c_str(), 1); }

 private:
  std::map<std::string, std::string> saved_;
};

TEST(ConfigProcessEnvironment, ReadsRealVariables) {
  ScopedEnvironment scope;
  EXPECT_EQ(ClientOptions::from_environment().base_url, ClientOptions::default_base_url);
  scope.set("TINKER_API_KEY", "tml-from-process-env");
  scope.set("TINKER_BASE_URL", "http://127.0.0.1:9/prefix");
  scope.set("TINKER_TAGS", "x, y, x");
  scope.set("TINKER_TELEMETRY", "off");
  scope.set("TINKER_LOG", "info");
  const ClientOptions options = ClientOptions::from_environment();
  EXPECT_EQ(options.api_key, Secret("tml-from-process-env"));
  EXPECT_EQ(options.base_url, "http://127.0.0.1:9/prefix");
  EXPECT_EQ(options.tags, (std::vector<std::string>{"x", "y"}));
  EXPECT_FALSE(options.telemetry_enabled);
  EXPECT_EQ(options.log_level, LogLevel::info);
  EXPECT_NO_THROW(options.validate());
  scope.set("TINKER_TELEMETRY", "sometimes");
  expect_error_naming([] { ClientOptions::from_environment(); }, "TINKER_TELEMETRY");
}

}  // namespace
