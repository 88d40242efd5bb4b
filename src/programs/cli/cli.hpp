// The `tinker` command line (doc/cli.md) as a library: `run()` parses the arguments, runs one command
// against the Tinker REST API and returns the process exit code. src/programs/cli/main.cpp wires it to the
// real process (argv, std::cout/std::cerr/std::cin, the environment, Ctrl-C); tests call it
// in-process with string streams and an injected environment.
#pragma once

#include <tinker/config.hpp>

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace tinker::cli {

/// Exit codes: 0 success, 1 a failed command (API error, refused input), 2 a usage error (bad
/// option, missing argument: detected before any request), 130 interrupted by Ctrl-C.
inline constexpr int exit_ok = 0;
inline constexpr int exit_failure = 1;
inline constexpr int exit_usage = 2;
inline constexpr int exit_interrupted = 130;

/// What the command line sees of its process besides the arguments and output streams.
class CliEnvironment {
 public:
  CliEnvironment() = default;
  explicit CliEnvironment(ClientOptions::EnvLookup lookup_) : lookup(std::move(lookup_)) {}

  /// The environment variables (TINKER_API_KEY, TINKER_BASE_URL, ...), as ClientOptions reads them.
  /// Empty: no variable is set.
  ClientOptions::EnvLookup lookup;
  /// Answers to confirmation prompts (`checkpoint delete` without --yes); null: no input.
  std::istream* input = nullptr;
  /// Prompts are only shown to a terminal: without one (and without --yes) a delete is refused.
  bool input_is_terminal = false;
  /// Progress bars are drawn on the error stream only when it is a terminal.
  bool error_is_terminal = false;
  /// `tinker chat` and `tinker sample` dim the model's reasoning and draw a spinner while waiting
  /// only when standard output is a terminal.
  bool output_is_terminal = false;
  /// Polled while a command runs (from the thread calling run()); once it returns true the
  /// command is cancelled and run() returns exit_interrupted. Empty: never interrupted.
  std::function<bool()> interrupted;
};

/// Runs `tinker <args...>` (args without the program name). Results go to `out`, errors
/// (`Error: <message>`, with the HTTP status and the server's request id when there is one),
/// prompts and progress to `err`. Never throws; never prints the API key.
int run(std::vector<std::string> args, std::ostream& out, std::ostream& err, const CliEnvironment& env);

}  // namespace tinker::cli
