// tinker::train::TrainingRun against tinker-local (doc/training-loops.md#resume): the files of a
// fresh run, a resume that continues exactly, and the automatic recovery from a corrupted run
// (Server::corrupt_model), also when the newest checkpoint does not load, and its bound.
#include "integration/support/local_service.hpp"
#include "integration/train/resume_loop.hpp"
#include "integration/train/run_compare.hpp"
#include "support/temp_files.hpp"

#include <tinker/train/run.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tinker::test {
namespace {

using resume::Hooks;
using resume::logprobs_of;
using resume::metrics_without_time;
using resume::model_of_path;
using resume::run_options;
using resume::train_to_completion;

constexpr std::int64_t run_test_steps = 6;
constexpr std::int64_t run_test_save_every = 2;

// Thrown by a hook to stop a run the way a crash would (nothing saved, nothing finished).
class SimulatedRunCrash : public std::runtime_error {
 public:
  SimulatedRunCrash() : std::runtime_error("simulated crash") {}
};

class TrainingRunTest : public LocalService {
 protected:
  train::CheckpointRecord train(const std::filesystem::path& dir, Hooks hooks = {},
                                std::function<void(train::RunOptions&)> adjust = {}) {
    train::RunOptions options = run_options(dir.string(), run_test_steps, run_test_save_every);
    if (adjust) adjust(options);
    return run(train_to_completion(*service, options, std::move(hooks)));
  }

  // The uninterrupted run every other one must equal.
  void train_baseline() { baseline_final = train(baseline_dir.path()); }

  void expect_same_as_baseline(const std::filesystem::path& dir, const train::CheckpointRecord& final_record) {
    EXPECT_EQ(metrics_without_time(train::RunDirectory(dir)),
              metrics_without_time(train::RunDirectory(baseline_dir.path())));
    ASSERT_TRUE(final_record.sampler_path && baseline_final.sampler_path);
    const PromptLogprobs resumed = run(logprobs_of(*service, *final_record.sampler_path));
    const PromptLogprobs uninterrupted = run(logprobs_of(*service, *baseline_final.sampler_path));
    EXPECT_EQ(resumed, uninterrupted);
    EXPECT_TRUE(server->audit().ok());
  }

  void SetUp() override {
    LocalService::SetUp();
    service = make_service_client();
  }
  void TearDown() override {
    service.reset();
    LocalService::TearDown();
  }

  std::unique_ptr<ServiceClient> service;
  TempDir baseline_dir{"tinker-run-baseline"};
  TempDir dir{"tinker-run"};
  train::CheckpointRecord baseline_final;
};

TEST_F(TrainingRunTest, AFreshRunWritesItsConfigMetricsAndCheckpointsInTheCookbooksShape) {
  train_baseline();
  const train::RunDirectory run_dir(baseline_dir.path());
  EXPECT_EQ(run_dir.read_config(), run_options("x", run_test_steps, run_test_save_every).config_json + "\n");
  const std::vector<train::StepMetrics> metrics = run_dir.read_metrics();
  ASSERT_EQ(metrics.size(), 6u);
  for (std::int64_t step = 0; step < run_test_steps; ++step) {
    const train::StepMetrics& line = metrics[static_cast<std::size_t>(step)];
    EXPECT_EQ(line.step, step);
    EXPECT_TRUE(line.get("loss") && line.get("lr") && line.get("time/step") && line.get("time/total"));
  }
  // It trains: step 3 sees step 0's batch again (three batches in turn), at a lower loss.
  EXPECT_LT(*metrics[3].get("loss"), *metrics[0].get("loss"));
  const std::vector<train::CheckpointRecord> checkpoints = run_dir.read_checkpoints();
  ASSERT_EQ(checkpoints.size(), 3u);  // after steps 2 and 4, and the final one (not a 6th-step one too)
  EXPECT_EQ(checkpoints[0].name, "000002");
  EXPECT_EQ(checkpoints[0].step, 2);
  EXPECT_FALSE(checkpoints[0].sampler_path);
  EXPECT_EQ(checkpoints[1].step, 4);
  EXPECT_EQ(checkpoints[2], baseline_final);
  EXPECT_EQ(baseline_final.name, "final");
  EXPECT_EQ(baseline_final.step, run_test_steps);
  EXPECT_TRUE(baseline_final.final);
  EXPECT_EQ(baseline_final.renderer_name, "role_colon");
  ASSERT_TRUE(baseline_final.state_path && baseline_final.sampler_path);
  EXPECT_NE(baseline_final.state_path->find("/weights/final"), std::string::npos);
  EXPECT_NE(baseline_final.sampler_path->find("/sampler_weights/final"), std::string::npos);
}

TEST_F(TrainingRunTest, ARunStoppedMidwayResumesFromItsLastCheckpointAndEndsAsAnUninterruptedOne) {
  train_baseline();
  Hooks crash_after_three;
  crash_after_three.after_step = [](const train::TrainingRun&, std::int64_t steps_done) {
    if (steps_done == 3) throw SimulatedRunCrash();
  };
  EXPECT_THROW(train(dir.path(), crash_after_three), SimulatedRunCrash);
  EXPECT_EQ(train::RunDirectory(dir.path()).read_metrics().size(), 3u);

  bool resumed = false;
  std::int64_t start_step = -1;
  Hooks observe;
  observe.after_open = [&](const train::TrainingRun& run) {
    resumed = run.resumed();
    start_step = run.start_step();
    // The step after the checkpoint was dropped, to be trained and logged again.
    EXPECT_EQ(run.directory().read_metrics().size(), 2u);
  };
  const train::CheckpointRecord final_record = train(dir.path(), observe);
  EXPECT_TRUE(resumed);
  EXPECT_EQ(start_step, 2);
  expect_same_as_baseline(dir.path(), final_record);
}

TEST_F(TrainingRunTest, ACorruptedRunRecoversFromItsLastCheckpointAndEndsAsAnUninterruptedOne) {
  train_baseline();
  std::string first_model;
  Hooks corrupt_once;
  corrupt_once.after_step = [&](const train::TrainingRun& run, std::int64_t steps_done) {
    if (steps_done == 3 && first_model.empty()) {
      first_model = run.training().model_id();
      server->corrupt_model(first_model, "lost in a test");
    }
  };
  const train::CheckpointRecord final_record = train(dir.path(), corrupt_once);
  ASSERT_FALSE(first_model.empty());
  // Continued on another model, from the checkpoint after step 2.
  EXPECT_NE(model_of_path(*final_record.state_path), first_model);
  expect_same_as_baseline(dir.path(), final_record);
}

TEST_F(TrainingRunTest, RecoveryFallsBackToAnOlderCheckpointWhenTheNewestDoesNotLoad) {
  train_baseline();
  bool corrupted = false;
  Hooks corrupt_after_a_broken_record;
  corrupt_after_a_broken_record.after_step = [&](const train::TrainingRun& run, std::int64_t steps_done) {
    if (steps_done != 5 || corrupted) return;
    corrupted = true;
    // The newest record names a checkpoint the service does not have: its load fails.
    train::CheckpointRecord broken;
    broken.name = "000004";
    broken.step = 4;
    broken.state_path = "tinker://" + run.training().model_id() + "/weights/never-saved";
    run.directory().append_checkpoint(broken);
    server->corrupt_model(run.training().model_id(), "lost in a test");
  };
  const train::CheckpointRecord final_record = train(dir.path(), corrupt_after_a_broken_record);
  EXPECT_TRUE(corrupted);
  expect_same_as_baseline(dir.path(), final_record);
}

TEST_F(TrainingRunTest, RecoveryGivesUpAfterMaxRecoveryAttempts) {
  Hooks corrupt_every_model;
  std::vector<std::string> corrupted;
  corrupt_every_model.after_step = [&](const train::TrainingRun& run, std::int64_t steps_done) {
    const std::string model = run.training().model_id();
    if (steps_done >= 3 && std::find(corrupted.begin(), corrupted.end(), model) == corrupted.end()) {
      corrupted.push_back(model);
      server->corrupt_model(model, "lost in a test");
    }
  };
  try {
    train(dir.path(), corrupt_every_model, [](train::RunOptions& options) { options.max_recovery_attempts = 1; });
    ADD_FAILURE() << "expected the run to give up";
  } catch (const tinker::error& e) {
    EXPECT_EQ(e.code(), errc::request_failed);
    EXPECT_NE(std::string(e.what()).find("gave up after 1 recoveries"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("is corrupted: lost in a test"), std::string::npos) << e.what();
  }
  EXPECT_EQ(corrupted.size(), 2u);
}

// What a test sees of a run opened on a directory (TrainingRun itself cannot leave run(), which
// needs a default-constructible result).
struct OpenedRunProbe {
  bool resumed = true;
  std::int64_t start_step = -1;
  std::size_t metrics = 0;
  std::size_t checkpoints = 0;
  bool refused_step_out_of_order = false;
  bool refused_checkpoint_past_the_logged_steps = false;
};

boost::asio::awaitable<OpenedRunProbe> open_and_probe(ServiceClient& service, train::RunOptions options) {
  train::TrainingRun run = co_await train::TrainingRun::open(service, std::move(options));
  OpenedRunProbe seen;
  seen.resumed = run.resumed();
  seen.start_step = run.start_step();
  seen.metrics = run.directory().read_metrics().size();
  seen.checkpoints = run.directory().read_checkpoints().size();
  try {
    run.log_step(train::StepMetrics(1));
  } catch (const tinker::error& e) {
    seen.refused_step_out_of_order = e.code() == errc::invalid_argument;
  }
  run.log_step(train::StepMetrics(0));
  std::optional<tinker::error> refusal;
  try {
    co_await run.save_checkpoint(2);
  } catch (const tinker::error& e) {
    refusal = e;
  }
  seen.refused_checkpoint_past_the_logged_steps = refusal && refusal->code() == errc::invalid_argument;
  co_return seen;
}

TEST_F(TrainingRunTest, AnExistingRunIsRefusedOrOverwrittenAsAsked) {
  train_baseline();
  train::RunOptions options = run_options(baseline_dir.path().string(), run_test_steps, run_test_save_every);
  options.if_exists = train::ExistingRun::fail;
  try {
    run(open_and_probe(*service, options));
    ADD_FAILURE() << "expected a refusal";
  } catch (const tinker::error& e) {
    EXPECT_EQ(e.code(), errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find(baseline_dir.path().string()), std::string::npos);
  }
  options.if_exists = train::ExistingRun::overwrite;
  const OpenedRunProbe fresh = run(open_and_probe(*service, options));
  EXPECT_FALSE(fresh.resumed);
  EXPECT_EQ(fresh.start_step, 0);
  EXPECT_EQ(fresh.metrics, 0u);
  EXPECT_EQ(fresh.checkpoints, 0u);
  // Steps are logged in order, and a checkpoint never points past them.
  EXPECT_TRUE(fresh.refused_step_out_of_order);
  EXPECT_TRUE(fresh.refused_checkpoint_past_the_logged_steps);
}

TEST_F(TrainingRunTest, BadOptionsNameTheField) {
  train::RunOptions options = run_options(dir.path().string(), run_test_steps, run_test_save_every);
  options.save_every = -1;
  try {
    run(open_and_probe(*service, options));
    ADD_FAILURE() << "expected a refusal";
  } catch (const tinker::error& e) {
    EXPECT_EQ(e.code(), errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("RunOptions::save_every must be >= 0, got -1"), std::string::npos);
  }
}

}  // namespace
}  // namespace tinker::test
