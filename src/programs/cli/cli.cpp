// run(): CLI11 parsing, the event loop a command runs in (with Ctrl-C as cancellation), and the
// mapping of every failure to its `Error: ...` text and exit code.
#include "programs/cli/cli.hpp"

#include "programs/cli/context.hpp"
#include "programs/cli/output.hpp"

#include <tinker/async.hpp>
#include <tinker/error.hpp>
#include <tinker/version.hpp>

#include <CLI/CLI.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/object.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <exception>
#include <istream>
#include <memory>
#include <ostream>

namespace tinker::cli {
namespace asio = boost::asio;

Context::Context(Format format_, std::ostream& out_, std::ostream& err_, const CliEnvironment& env_,
                 asio::any_io_executor executor_)
    : format(format_), out(out_), err(err_), env(env_), executor(std::move(executor_)) {}

Context::~Context() = default;

const ClientOptions& Context::client_options() {
  if (!options_) {
    const ClientOptions::EnvLookup no_variables = [](std::string_view) { return std::optional<std::string>(); };
    options_ = ClientOptions::from_environment(env.lookup ? env.lookup : no_variables);
    // Choice: someone is waiting at a terminal, so a service that cannot be reached fails the
    // command within about half a minute instead of the SDK's 5-minute call budget (retries
    // honour Retry-After as usual; the archive's "still building" wait is separate).
    options_->retry.max_retries = 3;
    options_->retry.call_budget = std::chrono::seconds(20);
    options_->retry.call_max_delay = std::chrono::seconds(8);
  }
  return *options_;
}

const RestClient& Context::rest() {
  if (!rest_) rest_.emplace(service().create_rest_client());
  return *rest_;
}

const ServiceClient& Context::service() {
  if (!service_) service_ = std::make_unique<ServiceClient>(executor, ServiceClientOptions(client_options()));
  return *service_;
}

bool Context::confirm(const std::string& question) {
  err << question << " [y/N] " << std::flush;
  std::string answer;
  if (env.input == nullptr || !std::getline(*env.input, answer)) {
    err << '\n';
    if (interrupted()) throw error(errc::cancelled, "interrupted");
    throw CliError("no answer to the confirmation question (end of input); pass -y/--yes to skip it");
  }
  std::transform(answer.begin(), answer.end(), answer.begin(), [](unsigned char c) { return std::tolower(c); });
  return answer == "y" || answer == "yes";
}

CLI::App& add_group(CLI::App& app, const std::string& name, const std::string& help) {
  CLI::App* group = app.add_subcommand(name, help);
  group->require_subcommand(1);
  return *group;
}

CLI::App& add_subcommand(CLI::App& group, const std::string& name, const std::string& help,
                         std::function<void()> on_chosen) {
  CLI::App* command = group.add_subcommand(name, help);
  command->callback(std::move(on_chosen));
  return *command;
}

void add_limit_option(CLI::App& command, std::int64_t& limit, const std::string& help) {
  command.add_option("--limit", limit, help)->check(CLI::NonNegativeNumber)->capture_default_str();
}

namespace {

// The friendly first part of an API error, by status class (the error code it maps to).
std::string friendly(const error& e) {
  const diagnostics& d = e.diag();
  const std::string detail = d.message.empty() ? "" : ": " + d.message;
  switch (static_cast<errc>(e.code().value())) {
    case errc::authentication_failed:
      return "authentication failed; check TINKER_API_KEY (or the key `tinker auth login` stored)" + detail;
    case errc::permission_denied: return "permission denied" + detail;
    case errc::not_found: return "not found" + detail;
    case errc::conflict: return "conflict" + detail;
    case errc::bad_request:
    case errc::unprocessable_entity: return "invalid request" + detail;
    case errc::rate_limited: return "rate limited; try again later" + detail;
    case errc::payment_required: return "billing hold; check your account" + detail;
    case errc::server_error: return "the server failed; try again later" + detail;
    case errc::connection_failed: return "cannot reach the server (TINKER_BASE_URL)" + detail;
    default: return e.code().message() + detail;
  }
}

void print_status_line(std::ostream& err, const diagnostics& d) {
  if (d.http_status != 0 || !d.request_id.empty()) {
    err << "  ";
    if (d.http_status != 0) err << "HTTP status " << d.http_status;
    if (d.http_status != 0 && !d.request_id.empty()) err << ", ";
    if (!d.request_id.empty()) err << "request id " << d.request_id;
    err << '\n';
  }
}

void print_error(std::ostream& err, const error& e) {
  err << "Error: " << friendly(e) << '\n';
  print_status_line(err, e.diag());
}

// The state of one command run, on the io thread.
class RunState {
 public:
  explicit RunState(asio::io_context& io) : watch_timer(io) {}
  bool done = false;
  std::exception_ptr failure;
  asio::cancellation_signal cancel;
  asio::steady_timer watch_timer;  // paces watch_interrupt; cancelled when the command ends
};

// Emits a terminal cancellation into the command once the environment reports Ctrl-C; ends with
// the command. Polling keeps signal handling out of this library: the program's SIGINT handler
// only sets a flag.
asio::awaitable<void> watch_interrupt(const CliEnvironment* env, RunState* state) {
  while (!state->done) {
    if (env->interrupted()) {
      state->cancel.emit(asio::cancellation_type::terminal);
      co_return;
    }
    state->watch_timer.expires_after(std::chrono::milliseconds(50));
    co_await state->watch_timer.async_wait(asio::as_tuple(asio::use_awaitable));
  }
}

class Finished {
 public:
  explicit Finished(RunState* state) : state_(state) {}
  void operator()(std::exception_ptr e) const {
    state_->failure = std::move(e);
    state_->done = true;
    state_->watch_timer.cancel();
  }

 private:
  RunState* state_;
};

// Runs the command to completion on a fresh io_context; rethrows its failure.
void execute(const Action& action, Format format, std::ostream& out, std::ostream& err, const CliEnvironment& env) {
  asio::io_context io;
  RunState state(io);
  auto context = std::make_unique<Context>(format, out, err, env, io.get_executor());
  asio::co_spawn(io, action(*context), asio::bind_cancellation_slot(state.cancel.slot(), Finished(&state)));
  if (env.interrupted) asio::co_spawn(io, watch_interrupt(&env, &state), asio::detached);
  while (!state.done) io.run_one();
  // The client goes before the io_context. No drain after it: helper threads (the download's
  // blocking pool, the credential command) release their work guards on the io thread with their
  // completions, so none touches the io_context once the command is done, and handlers still
  // queued are destroyed with it (checked under ASan+UBSan, CLI tests repeated 20 times).
  context.reset();
  if (state.failure) std::rethrow_exception(state.failure);
}

int version_command(Format format, std::ostream& out) {
  if (format == Format::json) {
    boost::json::object object;
    object["version"] = sdk_version;
    object["protocol_version"] = protocol_version;
    print_json(out, object);
  } else {
    out << "tinker " << sdk_version << '\n';
  }
  return exit_ok;
}

}  // namespace

void print_cli_error(std::ostream& err, const std::exception& failure) {
  if (const auto* api = dynamic_cast<const error*>(&failure)) {
    print_error(err, *api);
    return;
  }
  err << "Error: " << failure.what() << '\n';
  if (const auto* cli = dynamic_cast<const CliError*>(&failure)) print_status_line(err, cli->status);
}

int run(std::vector<std::string> args, std::ostream& out, std::ostream& err, const CliEnvironment& env) {
  CLI::App app(
      "Manage Tinker training runs, checkpoints and sessions; tokenize text; render chats; chat with and "
      "sample from models.",
      "tinker");
  app.fallthrough();  // -f/--format may also follow the subcommand
  app.require_subcommand(1);
  std::string format_name = "table";
  app.add_option("-f,--format", format_name, "Output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  Action action;
  bool version = false;
  app.add_subcommand("version", "Print the version of tinker")->callback([&version] { version = true; });
  add_run_commands(app, action);
  add_checkpoint_commands(app, action);
  add_session_commands(app, action);
  add_billing_commands(app, action);
  add_tokenizer_commands(app, action);
  add_render_command(app, action);
  add_chat_command(app, action);
  add_sample_command(app, action);
  add_model_commands(app, action);
  add_auth_commands(app, action);
  add_plot_command(app, action);

  const auto usage_error = [&err](const char* what) {
    err << "Error: " << what << "\nRun with --help for more information.\n";
    return exit_usage;
  };
  const auto interrupted = [&env] { return env.interrupted && env.interrupted(); };
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last first
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    return usage_error(e.what());
  } catch (const UsageError& e) {
    return usage_error(e.what());
  }
  const Format format = format_name == "json" ? Format::json : Format::table;
  if (version) return version_command(format, out);

  try {
    execute(action, format, out, err, env);
    out.flush();
    return interrupted() ? exit_interrupted : exit_ok;
  } catch (const UsageError& e) {
    return usage_error(e.what());
  } catch (const CliError& e) {
    err << "Error: " << e.what() << '\n';
    print_status_line(err, e.status);
  } catch (const error& e) {
    if (interrupted()) {
      err << "Interrupted.\n";
      return exit_interrupted;
    }
    print_error(err, e);
  } catch (const boost::system::system_error& e) {
    if (interrupted()) {
      err << "Interrupted.\n";
      return exit_interrupted;
    }
    err << "Error: " << e.what() << '\n';
  } catch (const std::exception& e) {
    err << "Error: " << e.what() << '\n';
  }
  return interrupted() ? exit_interrupted : exit_failure;
}

}  // namespace tinker::cli
