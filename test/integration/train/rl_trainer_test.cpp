// train_rl (include/tinker/train/rl.hpp) against tinker-local: on-policy training on addition
// problems raises the reward and samples every step with that step's weights; async off-policy
// training drops exactly the group that a slow env made stale and trains every step on a full
// batch; the run directory holds the cookbook's metric keys; a run the service corrupts recovers
// in the call and ends as an uninterrupted one.
#include "integration/support/local_service.hpp"
#include "integration/train/run_compare.hpp"

#include <tinker/renderers.hpp>
#include <tinker/train/problem_env.hpp>
#include <tinker/train/rl.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace tinker::test {
namespace {

namespace asio = boost::asio;
using train::StepMetrics;

class RlTrainerTest : public LocalService {
 protected:
  void SetUp() override {
    LocalService::SetUp();
    log_dir = std::filesystem::temp_directory_path() /
              ("tinker-rl-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(log_dir);
  }
  void TearDown() override {
    std::filesystem::remove_all(log_dir);
    LocalService::TearDown();
  }

  train::RLOptions options(std::int64_t steps) const {
    train::RLOptions made;
    made.run.log_path = log_dir;
    made.run.base_model = std::string(tiny_model);
    made.run.lora_rank = 8;
    made.run.seed = 1;
    made.run.renderer_name = "qwen3_instruct";
    made.run.total_steps = steps;
    made.run.show_progress = false;
    return made;
  }

  std::filesystem::path log_dir;
};

asio::awaitable<std::shared_ptr<const renderers::Renderer>> tiny_renderer(ServiceClient& service) {
  const SamplingClient sampler = co_await base_sampler(service);
  auto tokenizer = co_await sampler.async_get_tokenizer(use_awaitable);
  co_return std::shared_ptr<const renderers::Renderer>(renderers::make_renderer("qwen3_instruct", tokenizer));
}

// "What is x + y?" with digits from the batch and problem index (deterministic); a reply is
// correct when it holds the sum, well formed when it holds any digit.
train::Problem addition(std::size_t batch, std::size_t index) {
  const auto x = static_cast<int>((batch * 7 + index * 3) % 10);
  const auto y = static_cast<int>((batch * 3 + index * 5 + 1) % 10);
  return train::Problem("What is " + std::to_string(x) + " + " + std::to_string(y) + "?", std::to_string(x + y));
}

bool has_digit(const std::string& text, const train::Problem&) {
  return text.find_first_of("0123456789") != std::string::npos;
}

bool holds_answer(const std::string& text, const train::Problem& problem) {
  return text.find(problem.answer) != std::string::npos;
}

asio::awaitable<train::RLResult> train_additions(
    ServiceClient& service, train::RLOptions options,
    std::vector<std::shared_ptr<train::SamplingEvaluator>> evaluators = {}) {
  const auto renderer = co_await tiny_renderer(service);
  train::ProblemEnvOptions env_options;
  env_options.convo_prefix = {renderers::Message("user", "What is 4 + 5?"), renderers::Message("assistant", "9")};
  env_options.termination = train::FormatTermination::any;
  env_options.check_format = has_digit;
  train::ProblemDataset dataset(renderer, addition, holds_answer, 8, 4, 8, env_options, "addition");
  co_return co_await train::train_rl(service, dataset, std::move(options), std::move(evaluators));
}

TEST_F(RlTrainerTest, OnPolicyTrainingRaisesTheRewardAndLogsTheCookbookKeys) {
  auto service = make_service_client();
  train::RLOptions rl = options(16);
  rl.learning_rate = 1e-3;
  rl.max_tokens = 4;
  const train::RLResult result = run(train_additions(*service, rl), std::chrono::seconds(120));
  ASSERT_EQ(result.metrics.size(), 16u);
  for (const StepMetrics& step : result.metrics) {
    EXPECT_EQ(*step.get("sampling_client/step_min"), static_cast<double>(step.step)) << "step " << step.step;
    EXPECT_EQ(*step.get("async/stale_groups_dropped"), 0.0);
    EXPECT_EQ(*step.get("env/all/total_episodes"), 32.0);
    EXPECT_TRUE(step.get("optim/lr").has_value());
  }
  auto reward = [&](std::size_t i) { return *result.metrics[i].get("env/all/reward/total"); };
  // The tiny model learns the format first: from about -0.1 (no digit) towards 0. The sampler's seeds
  // come from its session id, new in every run, so the rewards differ from run to run: comparing the
  // first and last three of ten steps came out wrong in 5 runs of 100, four of sixteen in none of 150.
  const double first = (reward(0) + reward(1) + reward(2) + reward(3)) / 4.0;
  const double last = (reward(12) + reward(13) + reward(14) + reward(15)) / 4.0;
  EXPECT_GT(last, first);
  const std::vector<StepMetrics> logged = train::RunDirectory(log_dir).read_metrics();
  ASSERT_EQ(logged.size(), 16u);
  EXPECT_NEAR(*logged.back().get("env/all/reward/total"), reward(15), 1e-12);
  EXPECT_TRUE(logged.front().get("env/all/format").has_value());
  EXPECT_TRUE(logged.front().get("time/step").has_value());
  EXPECT_TRUE(result.final_checkpoint.final);
}

// Counts the evaluations: with eval_every = 1, the number of steps begun.
class StepCounter : public train::SamplingEvaluator {
 public:
  explicit StepCounter(std::shared_ptr<int> count) : count_(std::move(count)) {}
  asio::awaitable<StepMetrics> evaluate(const SamplingClient&) override {
    ++*count_;
    StepMetrics metrics;
    metrics.set("test/steps_begun", *count_);
    co_return metrics;
  }

 private:
  std::shared_ptr<int> count_;
};

// One sampled action, rewarded by its first token's parity; a gated env answers only once
// `open_at` steps have begun.
class ParityEnv : public train::Env {
 public:
  ParityEnv(ModelInput prompt, std::shared_ptr<int> steps_begun, int open_at)
      : prompt_(std::move(prompt)), steps_begun_(std::move(steps_begun)), open_at_(open_at) {}
  asio::awaitable<train::Observation> initial_observation() override {
    co_return train::Observation(prompt_, StopCondition(std::vector<TokenId>{}));
  }
  asio::awaitable<train::StepResult> step(const std::vector<TokenId>& action) override {
    asio::steady_timer timer(co_await asio::this_coro::executor);
    while (*steps_begun_ < open_at_) {
      timer.expires_after(std::chrono::milliseconds(5));
      co_await timer.async_wait(use_awaitable);
    }
    train::StepResult result;
    result.reward = action.empty() ? 0.0 : static_cast<double>(action.front() % 2);
    result.episode_done = true;
    co_return result;
  }

 private:
  ModelInput prompt_;
  std::shared_ptr<int> steps_begun_;
  int open_at_;
};

class ParityGroup : public train::EnvGroupBuilder {
 public:
  ParityGroup(std::shared_ptr<int> steps_begun, int open_at)
      : steps_begun_(std::move(steps_begun)), open_at_(open_at) {}
  asio::awaitable<std::vector<std::unique_ptr<train::Env>>> make_envs() override {
    std::vector<std::unique_ptr<train::Env>> envs;
    const int open_at = rolled_out_++ == 0 ? open_at_ : 0;  // only the first rollout is slow
    for (int i = 0; i < 2; ++i) {
      envs.push_back(std::make_unique<ParityEnv>(ModelInput::from_ints({1, 2, 3}), steps_begun_, open_at));
    }
    co_return envs;
  }

 private:
  std::shared_ptr<int> steps_begun_;
  int open_at_;
  int rolled_out_ = 0;
};

// Batches of two groups; the first group of batch 0 is slow: it finishes only when step 2 begins.
class GatedDataset : public train::RLDataset {
 public:
  explicit GatedDataset(std::shared_ptr<int> steps_begun) : steps_begun_(std::move(steps_begun)) {}
  std::size_t size() const override { return 4; }
  std::vector<std::shared_ptr<train::EnvGroupBuilder>> get_batch(std::size_t index) override {
    const int open_at = index == 0 ? 3 : 0;
    return {std::make_shared<ParityGroup>(steps_begun_, open_at), std::make_shared<ParityGroup>(steps_begun_, 0)};
  }

 private:
  std::shared_ptr<int> steps_begun_;
};

asio::awaitable<train::RLResult> train_gated(ServiceClient& service, train::RLOptions options) {
  auto steps_begun = std::make_shared<int>(0);
  GatedDataset dataset(steps_begun);
  std::vector<std::shared_ptr<train::SamplingEvaluator>> evaluators{std::make_shared<StepCounter>(steps_begun)};
  co_return co_await train::train_rl(service, dataset, std::move(options), std::move(evaluators));
}

// Training ops take 100 ms on the server, the rollouts (two sampled tokens) a few: sampling is
// never what makes a group late, only the gated env.
class RlAsyncTrainerTest : public RlTrainerTest {
 protected:
  local::ServerOptions server_options() const override {
    auto options = fast_server_options();
    options.training_delay = std::chrono::milliseconds(100);
    return options;
  }
};

TEST_F(RlAsyncTrainerTest, DropsExactlyTheStaleGroupAndTrainsFullBatches) {
  auto service = make_service_client();
  train::RLOptions rl = options(4);
  rl.max_tokens = 2;
  rl.max_steps_off_policy = 1;
  rl.eval_every = 1;
  rl.remove_constant_reward_groups = false;
  const train::RLResult result = run(train_gated(*service, rl), std::chrono::seconds(60));
  ASSERT_EQ(result.metrics.size(), 4u);
  double dropped = 0.0;
  for (const StepMetrics& step : result.metrics) {
    dropped += *step.get("async/stale_groups_dropped");
    EXPECT_EQ(*step.get("env/all/total_episodes"), 4.0) << "step " << step.step;  // two groups of two
    EXPECT_GE(*step.get("sampling_client/step_min"), static_cast<double>(step.step - 1)) << "step " << step.step;
    EXPECT_LE(*step.get("sampling_client/step_max"), static_cast<double>(step.step)) << "step " << step.step;
  }
  EXPECT_EQ(dropped, 1.0);
  // Step 1 trains on a group sampled before step 0's update: sampling ran ahead of training.
  EXPECT_EQ(*result.metrics[1].get("sampling_client/step_min"), 0.0);
}

// An evaluator that, on its `corrupt_on`th call, has tinker-local mark every training model it
// knows corrupted (as the service marks a run it lost): that step's operations fail.
class Corrupter : public train::SamplingEvaluator {
 public:
  Corrupter(local::Server* server, int corrupt_on) : server_(server), corrupt_on_(corrupt_on) {}
  asio::awaitable<StepMetrics> evaluate(const SamplingClient&) override {
    if (++calls_ == corrupt_on_) {
      for (const local::ModelAudit& model : server_->audit().models) server_->corrupt_model(model.model_id, "lost");
    }
    co_return StepMetrics();
  }

 private:
  local::Server* server_;
  int corrupt_on_;
  int calls_ = 0;
};

// Sampling is not seeded, so the recovered run cannot be compared with an uninterrupted one
// number for number (the supervised trainer's recovery test does that); what is checked is that
// every step ran once in the end, the replayed steps sampled with the restored weights, and the
// model of the final checkpoint applied exactly the steps after the restored checkpoint.
TEST_F(RlTrainerTest, ARunTheServiceCorruptsRecoversFromItsLastCheckpointAndRunsEachStepOnce) {
  auto service = make_service_client();
  train::RLOptions rl = options(5);
  rl.learning_rate = 1e-3;
  rl.max_tokens = 4;
  rl.max_steps_off_policy = 1;  // step 3's batch is rolling out when the run is lost
  rl.run.save_every = 2;
  rl.eval_every = 1;
  rl.remove_constant_reward_groups = false;  // every step trains, whatever the rewards
  // Corrupted when step 3 begins (the 4th evaluation), after the step-2 checkpoint.
  const train::RLResult result = run(train_additions(*service, rl, {std::make_shared<Corrupter>(server.get(), 4)}));
  EXPECT_EQ(result.recoveries, 1);
  const std::vector<StepMetrics> logged = train::RunDirectory(log_dir).read_metrics();
  ASSERT_EQ(result.metrics.size(), 5u);
  ASSERT_EQ(logged.size(), 5u);
  for (std::size_t i = 0; i < logged.size(); ++i) {
    EXPECT_EQ(result.metrics[i].step, static_cast<std::int64_t>(i));
    EXPECT_EQ(logged[i].step, static_cast<std::int64_t>(i));
  }
  EXPECT_EQ(*logged[2].get("sampling_client/step_min"), 2.0);  // re-sampled by the restored step-2 weights
  ASSERT_TRUE(result.final_checkpoint.final);
  const std::string final_model = resume::model_of_path(result.final_checkpoint.state_path.value());
  const local::AuditReport audit = server->audit();
  const auto model = std::find_if(audit.models.begin(), audit.models.end(),
                                  [&](const local::ModelAudit& m) { return m.model_id == final_model; });
  ASSERT_NE(model, audit.models.end());
  EXPECT_TRUE(model->exactly_once_in_order);
  EXPECT_EQ(std::count(model->operations.begin(), model->operations.end(), "optim_step"), 3);  // steps 2, 3, 4
}

TEST_F(RlTrainerTest, KlPenaltyAgainstTheBaseModelStartsAtZeroWithCispo) {
  auto service = make_service_client();
  train::RLOptions rl = options(2);
  rl.learning_rate = 1e-3;
  rl.max_tokens = 4;
  rl.loss_fn = loss_fn::cispo;
  rl.kl_penalty_coef = 0.1;
  rl.remove_constant_reward_groups = false;  // step 0 trains (and measures the KL) whatever the rewards
  const train::RLResult result = run(train_additions(*service, rl), std::chrono::seconds(60));
  ASSERT_EQ(result.metrics.size(), 2u);
  // Before the first update the LoRA is zero: the policy is the reference, sampled logprobs equal
  // the reference's (up to float rounding).
  ASSERT_TRUE(result.metrics[0].get("kl_policy_base").has_value());
  EXPECT_NEAR(*result.metrics[0].get("kl_policy_base"), 0.0, 1e-4);
  EXPECT_NEAR(*result.metrics[0].get("optim/kl_sample_train_v1"), 0.0, 1e-4);
  ASSERT_TRUE(result.metrics[1].get("kl_policy_base").has_value());
}

TEST_F(RlTrainerTest, RefusesBadOptionsNamingTheField) {
  auto service = make_service_client();
  train::RLOptions rl = options(2);
  rl.loss_fn = "cross_entropy";
  try {
    run(train_additions(*service, rl));
    FAIL() << "train_rl accepted loss_fn cross_entropy";
  } catch (const tinker::error& failure) {
    EXPECT_NE(std::string(failure.what()).find("RLOptions::loss_fn"), std::string::npos) << failure.what();
  }
}

}  // namespace
}  // namespace tinker::test
