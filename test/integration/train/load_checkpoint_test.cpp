// RunOptions::load_checkpoint_path against tinker-local: a fresh run started from another run's
// training checkpoint has that run's weights (the cookbook's load_checkpoint_path, as an RL run
// after a supervised warm-up uses it), and a run without it does not.
#include "integration/support/local_service.hpp"
#include "integration/train/resume_loop.hpp"
#include "integration/train/run_compare.hpp"
#include "support/temp_files.hpp"

#include <tinker/train/run.hpp>

#include <gtest/gtest.h>

#include <string>

namespace tinker::test {
namespace {

using resume::logprobs_of;
using resume::run_options;
using resume::train_to_completion;

// Opens a run of no steps and saves its final checkpoint: the weights it started from.
boost::asio::awaitable<train::CheckpointRecord> starting_weights(ServiceClient& service, train::RunOptions options) {
  train::TrainingRun run = co_await train::TrainingRun::open(service, std::move(options));
  co_return co_await run.finish();
}

class LoadCheckpointTest : public LocalService {};

TEST_F(LoadCheckpointTest, AFreshRunStartsFromTheLoadedWeights) {
  auto service = make_service_client();
  TempDir trained_dir{"tinker-load-trained"};
  TempDir loaded_dir{"tinker-load-loaded"};
  TempDir fresh_dir{"tinker-load-fresh"};
  const train::CheckpointRecord trained =
      run(train_to_completion(*service, run_options(trained_dir.path().string(), 2, 0), {}));
  ASSERT_TRUE(trained.state_path && trained.sampler_path);

  train::RunOptions loaded_options = run_options(loaded_dir.path().string(), 0, 0);
  loaded_options.load_checkpoint_path = trained.state_path;
  const train::CheckpointRecord loaded = run(starting_weights(*service, loaded_options));
  const train::CheckpointRecord fresh = run(starting_weights(*service, run_options(fresh_dir.path().string(), 0, 0)));
  ASSERT_TRUE(loaded.sampler_path && fresh.sampler_path);

  const PromptLogprobs expected = run(logprobs_of(*service, *trained.sampler_path));
  EXPECT_EQ(run(logprobs_of(*service, *loaded.sampler_path)), expected);
  EXPECT_NE(run(logprobs_of(*service, *fresh.sampler_path)), expected);
}

}  // namespace
}  // namespace tinker::test
