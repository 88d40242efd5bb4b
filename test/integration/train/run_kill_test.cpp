// The kill test of crash-safe resume (doc/training-loops.md#resume): a child process
// (tinker_resume_child) trains a run directory against an in-process tinker-local and is killed
// with SIGKILL at random times, several times per run, and started again until it completes. Every
// run must end exactly as an uninterrupted one: the same metrics (but for wall-clock keys), the
// same final weights, and in the server's audit every model applied its operations exactly once in
// order, and the chain of models from the final checkpoint back to step 0 applied each step once.
#include "integration/support/local_service.hpp"
#include "integration/train/run_compare.hpp"
#include "support/temp_files.hpp"

#include <tinker/train/run_dir.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace tinker::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr std::int64_t kill_test_steps = 12;
constexpr std::int64_t kill_test_save_every = 2;
constexpr int killed_runs = 12;
constexpr int kills_per_run = 4;

// A started child: its pid, and how it ended once waited for.
class ResumeChild {
 public:
  // Starts `program dir steps save_every` with the service's address in its environment and its
  // output appended to dir/child.log.
  ResumeChild(const std::string& base_url, const fs::path& dir) {
    std::vector<std::string> env_strings = {"TINKER_BASE_URL=" + base_url,
                                            "TINKER_API_KEY=" + std::string(test_api_key), "TINKER_TELEMETRY=0",
                                            "TINKER_LOG=off"};
    for (char** entry = environ; *entry != nullptr; ++entry) {
      const std::string_view text(*entry);
      if (text.rfind("TINKER_", 0) != 0) env_strings.emplace_back(text);
    }
    const std::vector<std::string> args = {TINKER_RESUME_CHILD_PROGRAM, dir.string(), std::to_string(kill_test_steps),
                                           std::to_string(kill_test_save_every)};
    std::vector<char*> argv;
    for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (const std::string& entry : env_strings) envp.push_back(const_cast<char*>(entry.c_str()));
    envp.push_back(nullptr);
    const std::string log = (dir / "child.log").string();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    const int failed = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (failed != 0) throw std::runtime_error(std::string("posix_spawn: ") + std::strerror(failed));
  }
  ResumeChild(const ResumeChild&) = delete;
  ResumeChild& operator=(const ResumeChild&) = delete;
  ~ResumeChild() {
    if (!status_) kill_and_wait();
  }

  // Whether it has exited (without blocking).
  bool exited() {
    if (status_) return true;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) status_ = status;
    return status_.has_value();
  }
  void kill_and_wait() {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    status_ = status;
  }
  bool succeeded() const { return status_ && WIFEXITED(*status_) && WEXITSTATUS(*status_) == 0; }
  bool was_killed() const { return status_ && WIFSIGNALED(*status_); }

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

std::string read_child_log(const fs::path& dir) {
  std::ifstream in(dir / "child.log");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs a child in `dir` to completion; returns how long it took.
std::chrono::milliseconds run_uninterrupted(const std::string& base_url, const fs::path& dir) {
  const auto started = std::chrono::steady_clock::now();
  ResumeChild child(base_url, dir);
  while (!child.exited()) std::this_thread::sleep_for(5ms);
  EXPECT_TRUE(child.succeeded()) << read_child_log(dir);
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
}

// One start of the child per line of lineage.txt.
struct ResumeLineageEntry {
  std::int64_t start_step = 0;
  std::string resumed_from;  // a state path, or "-"
};

std::map<std::string, ResumeLineageEntry> read_lineage(const fs::path& dir) {
  std::map<std::string, ResumeLineageEntry> by_model;
  std::ifstream in(dir / "lineage.txt");
  std::string model;
  ResumeLineageEntry entry;
  while (in >> model >> entry.start_step >> entry.resumed_from) by_model[model] = entry;
  return by_model;
}

const local::ModelAudit* find_model_audit(const local::AuditReport& report, const std::string& model) {
  for (const local::ModelAudit& audit : report.models) {
    if (audit.model_id == model) return &audit;
  }
  return nullptr;
}

// From the final checkpoint's model back to the one that started at step 0: each model, from its
// start, applied forward_backward and optim_step alternately, one pair per step, up to the save of
// the checkpoint the next model (or the final record) continued from.
void expect_each_step_applied_once_along_the_lineage(const fs::path& dir, const local::AuditReport& report,
                                                     const std::string& final_state_path) {
  const std::map<std::string, ResumeLineageEntry> lineage = read_lineage(dir);
  std::string model = resume::model_of_path(final_state_path);
  std::int64_t saved_at = kill_test_steps;
  for (int hops = 0; hops < 100; ++hops) {
    const auto entry = lineage.find(model);
    ASSERT_NE(entry, lineage.end()) << "model " << model << " is not in lineage.txt";
    const local::ModelAudit* audit = find_model_audit(report, model);
    ASSERT_NE(audit, nullptr) << model;
    const std::int64_t steps = saved_at - entry->second.start_step;
    std::int64_t pairs = 0;
    bool saved = false;
    for (std::size_t i = 0; i < audit->operations.size() && !saved; ++i) {
      const std::string& op = audit->operations[i];
      if (op == "save_weights" && pairs == steps) saved = true;
      if (op == "forward_backward") {
        ASSERT_TRUE(i + 1 < audit->operations.size() && audit->operations[i + 1] == "optim_step")
            << model << ": forward_backward at " << i << " not followed by its optim_step";
        ++pairs;
      }
    }
    EXPECT_TRUE(saved) << model << " never saved after " << steps << " steps from step " << entry->second.start_step;
    if (entry->second.resumed_from == "-") {
      EXPECT_EQ(entry->second.start_step, 0);
      return;
    }
    saved_at = entry->second.start_step;
    model = resume::model_of_path(entry->second.resumed_from);
  }
  ADD_FAILURE() << "the lineage of " << final_state_path << " does not end";
}

class RunKillTest : public LocalService {};

TEST_F(RunKillTest, RunsKilledAtRandomPointsEndExactlyAsAnUninterruptedRun) {
  const std::string base_url = server->base_url();
  const TempDir baseline_dir("tinker-kill-baseline");
  run_uninterrupted(base_url, baseline_dir.path());
  // A second uninterrupted run, timed without the server's warm-up (its first model and
  // tokenizer), sets the range of the kill times; it must also equal the first.
  const TempDir second_dir("tinker-kill-second");
  const std::chrono::milliseconds uninterrupted = run_uninterrupted(base_url, second_dir.path());
  const auto baseline_final = train::get_last_checkpoint(baseline_dir.path(), "sampler_path");
  ASSERT_TRUE(baseline_final && baseline_final->final);

  auto service = make_service_client();
  const PromptLogprobs expected_logprobs = run(resume::logprobs_of(*service, *baseline_final->sampler_path));
  const auto expected_metrics = resume::metrics_without_time(train::RunDirectory(baseline_dir.path()));
  ASSERT_EQ(expected_metrics.size(), static_cast<std::size_t>(kill_test_steps));
  ASSERT_EQ(resume::metrics_without_time(train::RunDirectory(second_dir.path())), expected_metrics);

  std::mt19937 rng(20261129);
  // From the child's start-up to well into its training (a resumed child has fewer steps left):
  // kills land in start-up, mid-step, in a save, between a save and its record, after the final one.
  std::uniform_int_distribution<long> kill_after_ms(0, uninterrupted.count() * 6 / 10);
  int kills = 0;
  for (int run_index = 0; run_index < killed_runs; ++run_index) {
    const TempDir dir("tinker-kill-run");
    for (int attempt = 0;; ++attempt) {
      ResumeChild child(base_url, dir.path());
      if (attempt >= kills_per_run) {  // enough kills: let it finish
        while (!child.exited()) std::this_thread::sleep_for(5ms);
        ASSERT_TRUE(child.succeeded()) << read_child_log(dir.path());
        break;
      }
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kill_after_ms(rng));
      while (!child.exited() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(2ms);
      if (child.exited()) {
        ASSERT_TRUE(child.succeeded()) << read_child_log(dir.path());
        break;
      }
      child.kill_and_wait();
      if (!child.was_killed()) {  // it exited just before the signal
        ASSERT_TRUE(child.succeeded()) << read_child_log(dir.path());
        break;
      }
      ++kills;
    }
    SCOPED_TRACE("run " + std::to_string(run_index) + " in " + dir.path().string());
    EXPECT_EQ(resume::metrics_without_time(train::RunDirectory(dir.path())), expected_metrics);
    const auto final_record = train::get_last_checkpoint(dir.path(), "sampler_path");
    ASSERT_TRUE(final_record && final_record->final && final_record->state_path);
    EXPECT_EQ(run(resume::logprobs_of(*service, *final_record->sampler_path)), expected_logprobs);
    const local::AuditReport report = server->audit();
    EXPECT_TRUE(report.ok());
    expect_each_step_applied_once_along_the_lineage(dir.path(), report, *final_record->state_path);
  }
  EXPECT_GE(kills, 2 * killed_runs);  // the seeded draws kill most starts; a run with no kill tests nothing
  std::cout << "[ info ] " << kills << " kills over " << killed_runs << " runs; an uninterrupted run takes "
            << uninterrupted.count() << " ms\n";
}

}  // namespace
}  // namespace tinker::test
