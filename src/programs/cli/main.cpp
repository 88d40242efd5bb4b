// The `tinker` program: the real process around tinker::cli::run() — argv, the standard streams,
// the environment and Ctrl-C (the first SIGINT cancels the command, which exits 130; a second
// one exits at once).
#include "programs/cli/cli.hpp"

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

namespace {

volatile std::sig_atomic_t interrupted = 0;

extern "C" void on_sigint(int) {
  if (interrupted != 0) _exit(tinker::cli::exit_interrupted);
  interrupted = 1;
}

std::optional<std::string> environment_variable(std::string_view name) {
  const char* value = std::getenv(std::string(name).c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

}  // namespace

int main(int argc, char** argv) {
  struct sigaction action = {};
  action.sa_handler = on_sigint;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: a confirmation prompt's read is interrupted too
  sigaction(SIGINT, &action, nullptr);

  tinker::cli::CliEnvironment env(environment_variable);
  env.input = &std::cin;
  env.input_is_terminal = isatty(STDIN_FILENO) == 1;
  env.error_is_terminal = isatty(STDERR_FILENO) == 1;
  env.output_is_terminal = isatty(STDOUT_FILENO) == 1;
  env.interrupted = [] { return interrupted != 0; };

  std::vector<std::string> args(argv + 1, argv + argc);
  return tinker::cli::run(std::move(args), std::cout, std::cerr, env);
}
