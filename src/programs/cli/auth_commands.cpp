// `tinker auth login|logout|status` (doc/cli.md#auth): the API key stored in
// ~/.tinker/credentials.json (<tinker/credentials.hpp>), the lowest-priority credential of the SDK
// and the CLI. No key, nor any part of one, is ever printed: records are shown by name and id.
#include "programs/cli/context.hpp"
#include "programs/cli/output.hpp"

#include <tinker/async.hpp>
#include <tinker/credentials.hpp>

#include <CLI/CLI.hpp>
#include <boost/json/object.hpp>

#include <termios.h>
#include <unistd.h>

#include <istream>
#include <memory>
#include <ostream>
#include <random>

namespace tinker::cli {
namespace {
namespace asio = boost::asio;

class LoginOptions {
 public:
  LoginOptions() = default;
  bool api_key = false;
  std::string name = "API key";
};

// Turns the terminal's echo off while it lives (the key is typed unseen); restores it after.
class EchoOff {
 public:
  explicit EchoOff(bool terminal) {
    if (!terminal || ::tcgetattr(STDIN_FILENO, &saved_) != 0) return;
    termios quiet = saved_;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    active_ = ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet) == 0;
  }
  ~EchoOff() {
    if (active_) ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_);
  }
  EchoOff(const EchoOff&) = delete;
  EchoOff& operator=(const EchoOff&) = delete;

 private:
  termios saved_{};
  bool active_ = false;
};

std::string trimmed(std::string text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

// The key, read from a terminal without echo, or as the first line of piped input.
Secret read_key(Context& context) {
  context.err << "API key: " << std::flush;
  std::string line;
  bool got = false;
  {
    EchoOff quiet(context.env.input_is_terminal);
    got = context.env.input != nullptr && static_cast<bool>(std::getline(*context.env.input, line));
  }
  context.err << '\n';  // the Enter was not echoed (a terminal without echo, or piped input)
  if (context.interrupted()) throw error(errc::cancelled, "interrupted");
  Secret key(trimmed(std::move(line)));
  if (!got || key.empty()) throw CliError("no API key entered (end of input); nothing was stored");
  if (!is_valid_api_key(key.reveal())) {
    throw CliError(
        "that is not an API key (it must start with 'tml-', or be a JWT, without spaces); nothing was stored");
  }
  return key;
}

std::filesystem::path credentials_path(const Context& context) {
  const std::optional<std::filesystem::path> path = CredentialStore::default_path(context.env.lookup);
  if (!path) throw CliError("HOME is not set, so there is no ~/.tinker/credentials.json to use");
  return *path;
}

CredentialStore load_store(const std::filesystem::path& path) {
  try {
    return CredentialStore::load(path);
  } catch (const error& e) {
    throw CliError(e.diag().message);  // names the file and the problem, never its content
  }
}

void save_store(const CredentialStore& store, const std::filesystem::path& path) {
  try {
    store.save(path);
  } catch (const error& e) {
    throw CliError(e.diag().message);
  }
}

// Choice (doc/protocol.md): "manual-" and 12 random hex digits; derived from nothing secret.
std::string new_key_id() {
  std::random_device random;
  static constexpr char hex[] = "0123456789abcdef";
  std::string id = "manual-";
  for (int i = 0; i < 12; ++i) id += hex[random() % 16];
  return id;
}

// The id of the record already holding `key` (logging in again with it replaces that record), or a new one.
std::string key_id_for(const CredentialStore& store, const Secret& key) {
  for (const StoredCredential& record : store.keys) {
    if (record.key == key) return record.id;
  }
  return new_key_id();
}

// The options a check is made with: those of the environment (base URL, ...), one attempt.
ClientOptions check_options(Context& context) {
  ClientOptions options = context.client_options();
  options.retry.max_retries = 0;
  options.retry.call_budget = std::chrono::seconds(0);
  return options;
}

// Why a check failed, in the CLI's words. The SDK's messages never hold a credential.
std::string check_failure(const error& e) {
  const std::string detail = e.diag().message.empty() ? "" : " (" + e.diag().message + ")";
  switch (static_cast<errc>(e.code().value())) {
    case errc::authentication_failed: return "the server refused the key (HTTP 401)" + detail;
    case errc::permission_denied: return "the key may not use this service (HTTP 403)" + detail;
    case errc::payment_required:
      return "the account is on a billing hold (HTTP 402): set up billing in the console" + detail;
    default: return e.code().message() + detail;
  }
}

asio::awaitable<void> verify_key(Context& context, Secret key) {
  ClientOptions options = check_options(context);
  options.api_key = std::move(key);
  options.credential_command.reset();
  const ServiceClient service(context.executor, ServiceClientOptions(options));
  try {
    co_await service.async_check_access(use_awaitable);
  } catch (const error& e) {
    if (e.code() == errc::cancelled) throw;
    throw CliError(check_failure(e) + "; nothing was stored", e.diag());
  }
}

bool variable_set(const Context& context, std::string_view name) {
  const std::optional<std::string> value = context.env.lookup ? context.env.lookup(name) : std::nullopt;
  return value && !value->empty();
}

// The sources that win over the stored key, as a warning (or nothing).
std::string precedence_note(const Context& context) {
  if (variable_set(context, "TINKER_API_KEY")) return "TINKER_API_KEY is set and is used before the stored key";
  if (variable_set(context, "TINKER_CREDENTIAL_CMD")) {
    return "TINKER_CREDENTIAL_CMD is set and is used before the stored key";
  }
  return {};
}

asio::awaitable<void> auth_login(Context& context, LoginOptions options) {
  const std::filesystem::path path = credentials_path(context);
  CredentialStore store = load_store(path);  // a damaged file is reported before a key is asked for
  if (!options.api_key) {
    context.err << "The browser login of the Python CLI is not available in tinker-cpp: enter an existing API key "
                   "(create one in the Tinker console).\n";
  }
  Secret key = read_key(context);
  co_await verify_key(context, key);
  const std::string id = key_id_for(store, key);  // before the key is moved into the record
  store.put(StoredCredential(id, std::move(key), options.name), /*make_default=*/true);
  save_store(store, path);
  const std::string note = precedence_note(context);
  if (context.json()) {
    boost::json::object object;
    object["key_id"] = id;
    object["name"] = options.name;
    object["credentials_file"] = path.string();
    object["default"] = true;
    print_json(context.out, object);
  } else {
    context.out << "Logged in: the key '" << options.name << "' (id " << id << ") is stored in " << path.string()
                << " as the default\n";
  }
  if (!note.empty()) context.err << "Note: " << note << ".\n";
}

asio::awaitable<void> auth_logout(Context& context, bool /*unused*/) {
  const std::filesystem::path path = credentials_path(context);
  CredentialStore store = load_store(path);
  const StoredCredential* stored = store.default_credential();
  boost::json::object object;
  object["credentials_file"] = path.string();
  if (stored == nullptr) {
    object["removed"] = nullptr;
    if (context.json()) {
      print_json(context.out, object);
    } else {
      context.out << "Not logged in: " << path.string() << " names no default key\n";
    }
    co_return;
  }
  const std::string id = stored->id;
  const std::string name = stored->name;
  const bool generated = stored->type == "generated";
  store.remove(id);
  save_store(store, path);
  object["removed"] = id;
  if (context.json()) {
    print_json(context.out, object);
  } else {
    context.out << "Logged out: removed the key '" << name << "' (id " << id << ") from " << path.string() << '\n';
  }
  // Nothing mints keys today, so there is no server call to revoke one with.
  if (generated) context.err << "Note: the key was removed locally only; revoke it in the Tinker console.\n";
  const std::string note = precedence_note(context);
  if (!note.empty()) context.err << "Note: " << note << " (still).\n";
}

// What `auth status` found, for both output forms.
class StatusReport {
 public:
  StatusReport() = default;
  CredentialSource source = CredentialSource::none;
  std::string path;
  std::optional<std::string> key_id;    // of the stored default, when there is one
  std::optional<std::string> key_name;  // likewise
  std::string base_url;
  bool reachable = false;
  std::string problem;  // why not reachable (or not checked)
};

std::string source_text(const StatusReport& report) {
  switch (report.source) {
    case CredentialSource::environment: return "TINKER_API_KEY";
    case CredentialSource::command: return "TINKER_CREDENTIAL_CMD";
    case CredentialSource::file: return report.path;
    case CredentialSource::none: return "none";
  }
  return "none";
}

void print_status(Context& context, const StatusReport& report) {
  if (context.json()) {
    boost::json::object object;
    object["logged_in"] = report.source != CredentialSource::none;
    object["source"] = to_string(report.source);
    object["credentials_file"] = report.path;
    object["key_id"] = report.key_id ? boost::json::value(*report.key_id) : boost::json::value(nullptr);
    object["key_name"] = report.key_name ? boost::json::value(*report.key_name) : boost::json::value(nullptr);
    object["base_url"] = report.base_url;
    object["reachable"] = report.reachable;
    if (!report.problem.empty()) object["problem"] = report.problem;
    print_json(context.out, object);
    return;
  }
  Properties properties;
  properties.emplace_back("Credential", source_text(report));
  properties.emplace_back(
      "Stored default key",
      report.key_id ? "'" + report.key_name.value_or("") + "' (id " + *report.key_id + ")" : "none");
  properties.emplace_back("Server", report.base_url);
  properties.emplace_back("Reachable", report.reachable ? "yes" : "no: " + report.problem);
  print_properties(context.out, properties);
}

asio::awaitable<void> auth_status(Context& context, bool /*unused*/) {
  StatusReport report;
  const std::filesystem::path path = credentials_path(context);
  report.path = path.string();
  const CredentialStore store = load_store(path);
  if (const StoredCredential* stored = store.default_credential()) {
    report.key_id = stored->id;
    report.key_name = stored->name;
  }
  try {
    report.source = credential_source(context.env.lookup);
  } catch (const error& e) {
    throw CliError(e.diag().message);
  }
  ClientOptions options = check_options(context);
  report.base_url = options.base_url;
  if (report.source == CredentialSource::none) {
    report.problem = "not checked: no credential (run `tinker auth login`, or set TINKER_API_KEY)";
  } else {
    try {
      const ServiceClient service(context.executor, ServiceClientOptions(options));
      co_await service.async_check_access(use_awaitable);
      report.reachable = true;
    } catch (const error& e) {
      if (e.code() == errc::cancelled) throw;
      report.problem = check_failure(e);
    }
  }
  print_status(context, report);
  if (report.source == CredentialSource::none) throw CliError("not logged in");
  if (!report.reachable) throw CliError("the service is not reachable with these credentials");
}

}  // namespace

void add_auth_commands(CLI::App& app, Action& action) {
  CLI::App& group = add_group(app, "auth", "Stored credentials (~/.tinker/credentials.json)");

  auto login = std::make_shared<LoginOptions>();
  CLI::App& login_cmd = add_command(group, "login", "Verify an API key with the server and store it as the default",
                                    action, login, auth_login);
  login_cmd.add_flag("--api-key", login->api_key, "Enter an existing API key (the only way in tinker-cpp)");
  login_cmd.add_option("--name", login->name, "The name the key is stored under")->capture_default_str();

  auto unused = std::make_shared<bool>(false);
  add_command(group, "logout", "Remove the stored default key", action, unused, auth_logout);
  add_command(group, "status", "Show where the credential comes from and whether the server accepts it", action, unused,
              auth_status);
}

}  // namespace tinker::cli
