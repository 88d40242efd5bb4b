// Runs the tinker-bench program (its path is TINKER_BENCH_PROGRAM, set by test/CMakeLists.txt) as a child process
// with its standard input from /dev/null, and collects its exit code and output.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace tinker::test {

class ProgramRun {
 public:
  int exit_code = -1;  ///< -1: killed
  std::string out;
  std::string err;
};

/// The environment of the test process with `set` added or replaced and `unset` removed.
class ChildEnvironment {
 public:
  std::map<std::string, std::string> set;
  std::vector<std::string> unset;
};

/// A started child process; kill() and wait() end it.
class Child {
 public:
  Child(std::vector<std::string> args, const ChildEnvironment& environment);
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  /// Waits for the exit, up to `timeout` (then kills it and reports exit_code -1).
  ProgramRun wait(std::chrono::seconds timeout);
  void kill();

 private:
  pid_t pid_ = -1;
  std::string out_path_;
  std::string err_path_;
  std::optional<ProgramRun> finished_;
};

/// tinker-bench with `args`, the hub cache the other tests use (offline), and no TINKER_* variables of the caller.
ProgramRun run_bench(const std::vector<std::string>& args, ChildEnvironment environment = {},
                     std::chrono::seconds timeout = std::chrono::seconds(120));

}  // namespace tinker::test
