// The tinker-bench program: the process around tinker::bench::run() — argv, the standard streams, whether they are
// terminals, and Ctrl-C (the first SIGINT stops starting new work and reports what was measured; a second one exits
// at once).
#include "programs/bench/bench.hpp"

#include <csignal>
#include <iostream>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

volatile std::sig_atomic_t interrupted = 0;

extern "C" void on_sigint(int) {
  if (interrupted != 0) _exit(tinker::bench::exit_interrupted);
  interrupted = 1;
}

}  // namespace

int main(int argc, char** argv) {
  struct sigaction action = {};
  action.sa_handler = on_sigint;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: the cost guard's read is interrupted too
  sigaction(SIGINT, &action, nullptr);

  tinker::bench::BenchEnvironment env;
  env.input = &std::cin;
  env.input_is_terminal = isatty(STDIN_FILENO) == 1;
  env.error_is_terminal = isatty(STDERR_FILENO) == 1;
  env.interrupted = [] { return interrupted != 0; };
  std::vector<std::string> args(argv + 1, argv + argc);
  return tinker::bench::run(std::move(args), std::cout, std::cerr, env);
}
