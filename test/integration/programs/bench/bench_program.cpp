#include "integration/programs/bench/bench_program.hpp"

#include "integration/support/local_service.hpp"
#include "support/temp_files.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace tinker::test {
namespace {

std::vector<std::string> environment_of(const ChildEnvironment& environment) {
  std::vector<std::string> entries;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text(*entry);
    const std::string name = text.substr(0, text.find('='));
    bool dropped = environment.set.contains(name);
    for (const std::string& unset : environment.unset) dropped = dropped || name == unset;
    if (!dropped) entries.push_back(text);
  }
  for (const auto& [name, value] : environment.set) entries.push_back(name + "=" + value);
  return entries;
}

std::vector<char*> pointers_to(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& text : strings) pointers.push_back(text.data());
  pointers.push_back(nullptr);
  return pointers;
}

}  // namespace

Child::Child(std::vector<std::string> args, const ChildEnvironment& environment) {
  static int next = 0;
  const std::string stem = "/tmp/tinker-bench-test-" + std::to_string(getpid()) + "-" + std::to_string(next++);
  out_path_ = stem + ".out";
  err_path_ = stem + ".err";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  args.insert(args.begin(), TINKER_BENCH_PROGRAM);
  std::vector<char*> argv = pointers_to(args);
  std::vector<std::string> env_strings = environment_of(environment);
  std::vector<char*> envp = pointers_to(env_strings);
  const int failed = posix_spawn(&pid_, TINKER_BENCH_PROGRAM, &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (failed != 0) throw std::runtime_error("cannot start " + std::string(TINKER_BENCH_PROGRAM));
}

Child::~Child() {
  if (!finished_) {
    kill();
    wait(std::chrono::seconds(10));
  }
  std::remove(out_path_.c_str());
  std::remove(err_path_.c_str());
}

void Child::kill() {
  if (!finished_) ::kill(pid_, SIGKILL);
}

ProgramRun Child::wait(std::chrono::seconds timeout) {
  if (finished_) return *finished_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (waitpid(pid_, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ProgramRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = read_file(out_path_);
  run.err = read_file(err_path_);
  finished_ = run;
  return run;
}

ProgramRun run_bench(const std::vector<std::string>& args, ChildEnvironment environment, std::chrono::seconds timeout) {
  environment.set["HF_HUB_CACHE"] = shared_hf_hub_cache().string();
  environment.set["HF_HUB_OFFLINE"] = "1";
  for (const char* name : {"TINKER_API_KEY", "TINKER_BASE_URL", "TINKER_CREDENTIAL_CMD"}) {
    if (!environment.set.contains(name)) environment.unset.emplace_back(name);
  }
  Child child(args, environment);
  return child.wait(timeout);
}

}  // namespace tinker::test
