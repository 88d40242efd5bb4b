// What every command of the `tinker` CLI shares: the output format and streams, the REST client
// (made on first use, so `tinker version` and usage errors need no API key), and the error types
// that decide the exit code.
#pragma once

#include "programs/cli/cli.hpp"

#include <tinker/error.hpp>
#include <tinker/rest_client.hpp>
#include <tinker/service_client.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace CLI {
class App;
}

namespace tinker::cli {

enum class Format { table, json };

/// A failed command (exit 1) in the command line's own words; `status` (when set) adds the
/// "HTTP status N, request id X" line an API error gets (a failure of another service, the Hub).
class CliError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  CliError(const std::string& message, diagnostics status_) : std::runtime_error(message), status(std::move(status_)) {}

  diagnostics status;
};

/// A command line that cannot be run as given (exit 2), found after CLI11's own checks
/// (e.g. option combinations).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Context {
 public:
  Context(Format format_, std::ostream& out_, std::ostream& err_, const CliEnvironment& env_,
          boost::asio::any_io_executor executor_);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  bool json() const noexcept { return format == Format::json; }
  /// The REST client on the context's executor, with options from the environment. Throws
  /// tinker::error (invalid_configuration) when e.g. TINKER_API_KEY is missing.
  const RestClient& rest();
  /// The ServiceClient rest() is made from (made on first use the same way).
  const ServiceClient& service();
  /// The options rest() was made with (read from the environment on first use).
  const ClientOptions& client_options();
  /// Asks `question` on the error stream and reads a line from the input; true for y/yes.
  /// Throws CliError when the input ended, or the interruption error when Ctrl-C was pressed.
  bool confirm(const std::string& question);
  /// True once the environment reports Ctrl-C.
  bool interrupted() const { return env.interrupted && env.interrupted(); }

  Format format;
  std::ostream& out;
  std::ostream& err;
  const CliEnvironment& env;
  boost::asio::any_io_executor executor;

 private:
  std::optional<ClientOptions> options_;
  std::unique_ptr<ServiceClient> service_;
  std::optional<RestClient> rest_;
};

/// The command chosen on the command line, bound to its options.
using Action = std::function<boost::asio::awaitable<void>(Context&)>;

/// Adds the command group `name` to `app`; one of its subcommands must be given.
CLI::App& add_group(CLI::App& app, const std::string& name, const std::string& help);

/// Adds the subcommand `name` to `group`; CLI11 calls `on_chosen` after parsing when the command
/// line chose it (a UsageError thrown there is a usage error).
CLI::App& add_subcommand(CLI::App& group, const std::string& name, const std::string& help,
                         std::function<void()> on_chosen);

/// Adds the command `name` to `group`. Its options live in `*options` (the caller binds them on the
/// returned command); once parsed, `prepare` (if any) checks and completes them, throwing
/// UsageError, and `action` becomes `command(context, options)`, the coroutine owning a copy.
template <class Options, class Command>
CLI::App& add_command(CLI::App& group, const std::string& name, const std::string& help, Action& action,
                      std::shared_ptr<Options> options, Command command,
                      std::type_identity_t<std::function<void(Options&)>> prepare = {}) {
  return add_subcommand(group, name, help, [&action, options, command, prepare] {
    if (prepare) prepare(*options);
    action = [options, command](Context& context) { return command(context, *options); };
  });
}

/// The tokenizer named by a `--tokenizer` option: a tokenizer file, a directory holding one, or a
/// model name (resolved, found or downloaded as the SDK's get_tokenizer does). Throws CliError
/// saying why it cannot be loaded.
std::shared_ptr<const Tokenizer> load_cli_tokenizer(const Context& context, const std::string& spec);

/// Prints `Error: <message>` (and the status line of an API error) as run() does for a failed
/// command: for commands that report a failure and go on (`tinker chat`).
void print_cli_error(std::ostream& err, const std::exception& failure);

/// Adds `--limit` (0: all, else how many to show) bound to `limit`, showing its default.
void add_limit_option(CLI::App& command, std::int64_t& limit, const std::string& help);

/// The command groups; each adds its subcommands to `app` and, through their CLI11 callbacks,
/// stores the chosen command in `action`.
void add_run_commands(CLI::App& app, Action& action);
void add_checkpoint_commands(CLI::App& app, Action& action);
void add_session_commands(CLI::App& app, Action& action);
void add_billing_commands(CLI::App& app, Action& action);
void add_tokenizer_commands(CLI::App& app, Action& action);
void add_render_command(CLI::App& app, Action& action);
/// `chat` and `sample` (chat_command.cpp, sample_command.cpp).
void add_chat_command(CLI::App& app, Action& action);
void add_sample_command(CLI::App& app, Action& action);
/// `model list` and `auth login|logout|status` (model_commands.cpp, auth_commands.cpp).
void add_model_commands(CLI::App& app, Action& action);
void add_auth_commands(CLI::App& app, Action& action);
/// `plot RUN_DIR...` (plot_command.cpp): training curves from run directories, no request.
void add_plot_command(CLI::App& app, Action& action);
/// `checkpoint delete` and `checkpoint download` (separate files, same group).
void add_checkpoint_delete_command(CLI::App& checkpoint, Action& action);
void add_checkpoint_download_command(CLI::App& checkpoint, Action& action);
void add_checkpoint_upload_command(CLI::App& checkpoint, Action& action);
/// `checkpoint push-hf` and `checkpoint export` (their own files too).
void add_checkpoint_push_hf_command(CLI::App& checkpoint, Action& action);
void add_checkpoint_export_command(CLI::App& checkpoint, Action& action);
/// `checkpoint search|copy` and `billing storage` (checkpoint_search.cpp).
void add_checkpoint_search_commands(CLI::App& checkpoint, Action& action);
void add_billing_storage_command(CLI::App& billing, Action& action);

}  // namespace tinker::cli
