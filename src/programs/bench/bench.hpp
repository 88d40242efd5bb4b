// tinker-bench (doc/bench.md) as a function: `run()` parses the arguments, runs the scenarios and returns the exit
// code. src/programs/bench/main.cpp wires it to the process (argv, the standard streams, terminals, Ctrl-C).
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace tinker::bench {

/// Exit codes: 0 every scenario ran, 1 a scenario failed (its result says why), 2 a usage error (detected before
/// anything is sent), 3 the cost guard refused (nothing was sent), 130 interrupted by Ctrl-C.
inline constexpr int exit_ok = 0;
inline constexpr int exit_failure = 1;
inline constexpr int exit_usage = 2;
inline constexpr int exit_refused = 3;
inline constexpr int exit_interrupted = 130;

/// What tinker-bench sees of its process besides the arguments and output streams.
class BenchEnvironment {
 public:
  BenchEnvironment() = default;

  std::istream* input = nullptr;      ///< the cost guard's answer; null: none
  bool input_is_terminal = false;     ///< the cost guard asks only on a terminal
  bool error_is_terminal = false;     ///< the progress line is drawn only on a terminal
  std::function<bool()> interrupted;  ///< true once Ctrl-C was pressed: no new work starts
};

/// Runs `tinker-bench <args...>` (args without the program name): results on `out`, progress, the cost guard's
/// question and errors on `err`. Forks the local server (--local) before it starts any thread. Never throws.
int run(std::vector<std::string> args, std::ostream& out, std::ostream& err, const BenchEnvironment& env);

}  // namespace tinker::bench
