// train_supervised against tinker-local: the loss falls and the held-out NLL is logged, runs are
// reproducible, truncation is counted, a resumed run equals an uninterrupted one, and
// submit_ahead = 1 really submits the next step before the last one's results are awaited.
#include "integration/support/local_service.hpp"
#include "integration/train/run_compare.hpp"
#include "support/temp_files.hpp"

#include <tinker/renderers.hpp>
#include <tinker/train/supervised.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace tinker::test {
// Named, not anonymous: unity builds put the other trainers' tests in the same file.
namespace supervised_trainer_test {

namespace asio = boost::asio;
using renderers::Message;
using train::StepMetrics;

std::vector<train::Conversation> chat_conversations() {
  const std::vector<std::pair<std::string, std::string>> pairs{
      {"What is the opposite of up?", "The opposite of up is down."},
      {"What color is coal?", "Coal is black."},
      {"What is the capital of Chile?", "The capital of Chile is Santiago."},
      {"How many legs does a cat have?", "A cat has four legs."},
      {"What is two plus two?", "Two plus two is four."},
      {"What color is the sky?", "The sky is blue."},
      {"What is the opposite of hot?", "The opposite of hot is cold."},
      {"What do bees make?", "Bees make honey."},
      {"What is the capital of France?", "The capital of France is Paris."},
      {"What color is snow?", "Snow is white."},
  };
  std::vector<train::Conversation> conversations;
  for (const auto& [question, answer] : pairs)
    conversations.push_back({Message("user", question), Message("assistant", answer)});
  return conversations;
}

// The tiny model's renderer, from its sampler's tokenizer.
asio::awaitable<std::shared_ptr<const renderers::Renderer>> tiny_renderer(ServiceClient& service) {
  const SamplingClient sampler = co_await base_sampler(service);
  const auto tokenizer = co_await sampler.async_get_tokenizer(tinker::use_awaitable);
  co_return std::shared_ptr<const renderers::Renderer>(renderers::make_renderer("qwen3_instruct", tokenizer));
}

train::SupervisedOptions small_options(const std::filesystem::path& dir) {
  train::SupervisedOptions options;
  options.run.log_path = dir;
  options.run.base_model = std::string(tiny_model);
  options.run.lora_rank = 8;
  options.run.seed = 3;
  options.run.show_progress = false;
  options.learning_rate = 2e-3;
  options.batch_size = 4;
  options.max_steps = 6;
  options.eval_every = 0;
  options.data_seed = 11;
  return options;
}

// The NLL evaluator, failing on its `fail_on`th call (1-based) to stand in for a crash.
class FailingNll : public train::TrainingEvaluator {
 public:
  FailingNll(std::vector<Datum> data, int fail_on) : inner_(std::move(data)), fail_on_(fail_on) {}
  asio::awaitable<StepMetrics> evaluate(const TrainingClient& training) override {
    if (++calls_ == fail_on_) throw tinker::error(errc::invalid_argument, "evaluator crashed on purpose");
    co_return co_await inner_.evaluate(training);
  }

 private:
  train::NllEvaluator inner_;
  int fail_on_;
  int calls_ = 0;
};

std::optional<double> value_at(const std::vector<StepMetrics>& metrics, std::int64_t step, std::string_view key) {
  for (const StepMetrics& line : metrics) {
    if (line.step == step) return line.get(key);
  }
  return std::nullopt;
}

class SupervisedTrainer : public LocalService {
 protected:
  asio::awaitable<train::DatumDataset> dataset(ServiceClient& service, train::RenderOptions render = {}) {
    const auto renderer = co_await tiny_renderer(service);
    co_return train::render_conversations(*renderer, chat_conversations(), render);
  }

  // Renders the data, trains with `options` and `evaluators`, returns the summary.
  asio::awaitable<train::SupervisedSummary> train(train::SupervisedOptions options,
                                                  train::SupervisedEvaluators evaluators,
                                                  train::RenderOptions render = {}) {
    const auto service = make_service_client();
    const train::DatumDataset data = co_await dataset(*service, render);
    co_return co_await train::train_supervised(*service, data, std::move(options), std::move(evaluators));
  }

  // The mean NLL of `data` under a fresh LoRA of the tiny model (seed 3, as small_options).
  asio::awaitable<double> fresh_nll(std::vector<Datum> data) {
    const auto service = make_service_client();
    LoraTrainingOptions lora(std::string(tiny_model), 8);
    lora.seed = 3;
    const TrainingClient training = co_await service->async_create_lora_training_client(lora, tinker::use_awaitable);
    train::NllEvaluator evaluator(std::move(data));
    const StepMetrics metrics = co_await evaluator.evaluate(training);
    co_return metrics.get("test/nll").value();
  }

  const TempDir dir;
};

TEST_F(SupervisedTrainer, LossFallsAndTheHeldOutNllIsLoggedWithTheCookbooksKeys) {
  const std::vector<train::Conversation> conversations = chat_conversations();
  auto options = small_options(dir / "run");
  options.eval_every = 3;
  options.run.save_every = 3;
  std::vector<Datum> held_out;
  const auto service = make_service_client();
  const auto renderer = run(tiny_renderer(*service));
  held_out = train::render_conversations(*renderer, {conversations[0], conversations[1]}).data();
  train::SupervisedEvaluators evaluators;
  evaluators.training.push_back(std::make_shared<train::NllEvaluator>(held_out));

  const train::SupervisedSummary summary = run(train(options, evaluators));
  EXPECT_EQ(summary.total_steps, 6);
  ASSERT_TRUE(summary.final_checkpoint.has_value());
  EXPECT_TRUE(summary.final_checkpoint->final);

  const std::vector<StepMetrics> metrics = train::RunDirectory(dir / "run").read_metrics();
  ASSERT_EQ(metrics.size(), 7u) << "six steps and the final evaluation";
  for (const char* key : {"epoch", "progress", "learning_rate", "num_sequences", "num_tokens", "num_loss_tokens",
                          "train_mean_nll", "num_truncated", "time/total"}) {
    EXPECT_TRUE(metrics[0].get(key).has_value()) << key;
  }
  EXPECT_EQ(metrics[0].get("num_sequences"), 4.0);
  EXPECT_DOUBLE_EQ(*metrics[0].get("learning_rate"), 2e-3) << "linear schedule starts at the base rate";
  EXPECT_LT(*metrics[5].get("learning_rate"), *metrics[0].get("learning_rate"));
  EXPECT_EQ(metrics[2].get("epoch"), 1.0) << "two batches of four per epoch of ten";
  EXPECT_LT(*metrics[5].get("train_mean_nll"), *metrics[0].get("train_mean_nll"));

  // Evaluated before steps 0 and 3 (on the weights those steps start from) and after the last.
  EXPECT_TRUE(value_at(metrics, 0, "test/nll").has_value());
  EXPECT_TRUE(value_at(metrics, 3, "test/nll").has_value());
  EXPECT_FALSE(value_at(metrics, 1, "test/nll").has_value());
  const double before = *value_at(metrics, 0, "test/nll");
  const double after = *value_at(metrics, 6, "test/nll");
  EXPECT_LT(after, before) << "held-out NLL fell";
  EXPECT_DOUBLE_EQ(summary.final_evaluation.get("test/nll").value(), after);
  // Started beside step 0's pipeline, the evaluator still scored the untrained weights.
  EXPECT_DOUBLE_EQ(before, run(fresh_nll(held_out)));

  const std::vector<train::CheckpointRecord> checkpoints = train::RunDirectory(dir / "run").read_checkpoints();
  ASSERT_EQ(checkpoints.size(), 2u);
  EXPECT_EQ(checkpoints[0].step, 3);
  EXPECT_EQ(checkpoints[1].step, 6);
}

TEST_F(SupervisedTrainer, TwoRunsWithTheSameSeedAreIdenticalAndTruncationIsCounted) {
  // A limit that cuts about half of the conversations: the median rendered length.
  const auto service = make_service_client();
  const train::DatumDataset whole = run(dataset(*service));
  std::vector<std::size_t> lengths;
  for (const Datum& datum : whole.data()) lengths.push_back(static_cast<std::size_t>(datum.model_input.length()) + 1);
  std::sort(lengths.begin(), lengths.end());
  train::RenderOptions render;
  render.max_length = lengths[lengths.size() / 2];
  render.warn = false;
  auto first = small_options(dir / "first");
  first.max_steps = 4;
  auto second = first;
  second.run.log_path = dir / "second";
  const train::SupervisedSummary summary = run(train(first, {}, render));
  run(train(second, {}, render));

  const auto first_metrics = resume::metrics_without_time(train::RunDirectory(dir / "first"));
  EXPECT_EQ(first_metrics, resume::metrics_without_time(train::RunDirectory(dir / "second")));
  EXPECT_GT(summary.truncated_examples, 0);
  EXPECT_LT(summary.truncated_examples, 10);
  double counted = 0.0;
  for (const StepMetrics& line : first_metrics) counted += line.get("num_truncated").value_or(0.0);
  // Two epochs of two batches of four over ten examples: at least one truncated one is trained.
  EXPECT_GT(counted, 0.0);
  const double limit = static_cast<double>(*render.max_length);
  for (const StepMetrics& line : first_metrics) EXPECT_LE(*line.get("num_tokens"), 4.0 * (limit - 1.0));

  auto other_seed = first;
  other_seed.run.log_path = dir / "other";
  other_seed.data_seed = 12;
  run(train(other_seed, {}, render));
  EXPECT_NE(first_metrics, resume::metrics_without_time(train::RunDirectory(dir / "other")));
}

// The uninterrupted run (in dir/whole: checkpoints every 2 steps, held-out NLL every 4) that an
// interrupted one is compared with; `options` and `held_out` are for the interrupted one.
class SupervisedInterruption : public SupervisedTrainer {
 protected:
  void SetUp() override {
    SupervisedTrainer::SetUp();
    const auto service = make_service_client();
    const auto renderer = run(tiny_renderer(*service));
    held_out = train::render_conversations(*renderer, {chat_conversations()[2]}).data();
    options = small_options(dir / "whole");
    options.eval_every = 4;
    options.run.save_every = 2;
    whole.training.push_back(std::make_shared<train::NllEvaluator>(held_out));
    run(train(options, whole));
  }

  std::vector<Datum> held_out;
  train::SupervisedOptions options;
  train::SupervisedEvaluators whole;
};

TEST_F(SupervisedInterruption, AResumedRunEqualsAnUninterruptedOne) {
  // The same run, stopped by an evaluator failure when step 4 is logged (after the step-4
  // checkpoint), then started again on the same directory.
  options.run.log_path = dir / "resumed";
  train::SupervisedEvaluators crashing;
  crashing.training.push_back(std::make_shared<FailingNll>(held_out, 2));
  EXPECT_THROW(run(train(options, crashing)), tinker::error);
  EXPECT_EQ(train::RunDirectory(dir / "resumed").read_metrics().size(), 4u);
  const train::SupervisedSummary resumed = run(train(options, whole));
  EXPECT_EQ(resumed.start_step, 4);
  EXPECT_EQ(resume::metrics_without_time(train::RunDirectory(dir / "whole")),
            resume::metrics_without_time(train::RunDirectory(dir / "resumed")));
}

// The NLL evaluator that, on its `corrupt_on`th call, has tinker-local mark the run corrupted (as the
// service marks a run it lost) before scoring: that forward and every later operation of the model fail.
class CorruptingNll : public train::TrainingEvaluator {
 public:
  CorruptingNll(std::vector<Datum> data, int corrupt_on, local::Server* server)
      : inner_(std::move(data)), corrupt_on_(corrupt_on), server_(server) {}
  asio::awaitable<StepMetrics> evaluate(const TrainingClient& training) override {
    if (++calls_ == corrupt_on_) server_->corrupt_model(training.model_id(), "lost by the test");
    co_return co_await inner_.evaluate(training);
  }

 private:
  train::NllEvaluator inner_;
  int corrupt_on_;
  local::Server* server_;
  int calls_ = 0;
};

TEST_F(SupervisedInterruption, ARunTheServiceCorruptsRecoversFromItsLastCheckpointAndEqualsAnUninterruptedOne) {
  // The run is corrupted when step 4 starts (after the step-4 checkpoint): the trainer recovers
  // once, from that checkpoint, within the same call.
  options.run.log_path = dir / "recovered";
  train::SupervisedEvaluators corrupting;
  corrupting.training.push_back(std::make_shared<CorruptingNll>(held_out, 2, server.get()));
  const train::SupervisedSummary recovered = run(train(options, corrupting));
  EXPECT_EQ(recovered.recoveries, 1);
  EXPECT_EQ(resume::metrics_without_time(train::RunDirectory(dir / "whole")),
            resume::metrics_without_time(train::RunDirectory(dir / "recovered")));
}

TEST_F(SupervisedTrainer, RefusesBadOptionsNamingTheField) {
  auto options = small_options(dir / "bad");
  options.submit_ahead = -1;
  try {
    run(train(options, {}));
    FAIL() << "a negative submit_ahead was accepted";
  } catch (const tinker::error& e) {
    EXPECT_NE(std::string(e.what()).find("SupervisedOptions::submit_ahead"), std::string::npos) << e.what();
  }
}

// With a training delay, whether step k+1's forward_backward reached the server before step k's
// optim_step finished computing: the pipelining submit_ahead promises.
class SupervisedPipelining : public SupervisedTrainer {
 protected:
  local::ServerOptions server_options() const override {
    auto options = fast_server_options();
    options.training_delay = std::chrono::milliseconds(25);
    return options;
  }

  // For each step but the last: did the next forward_backward arrive before this optim_step ended?
  std::vector<bool> submitted_early(const std::string& model_id) const {
    const auto steady_to_system = std::chrono::system_clock::now().time_since_epoch() -
                                  std::chrono::duration_cast<std::chrono::system_clock::duration>(
                                      std::chrono::steady_clock::now().time_since_epoch());
    const local::AuditReport audit = server->audit();
    std::vector<bool> early;
    for (const local::ModelAudit& model : audit.models) {
      if (model.model_id != model_id) continue;
      for (std::size_t i = 0; i + 1 < model.timings.size(); ++i) {
        if (model.timings[i].operation != "optim_step") continue;
        const local::OperationTiming* next = nullptr;
        for (std::size_t j = i + 1; j < model.timings.size() && next == nullptr; ++j) {
          if (model.timings[j].operation == "forward_backward") next = &model.timings[j];
        }
        if (next == nullptr) continue;
        for (const local::RequestRecord& request : audit.requests) {
          if (request.model_id != model_id || request.seq_id != next->seq_id ||
              !request.path.ends_with("forward_backward")) {
            continue;
          }
          const auto finished =
              std::chrono::system_clock::time_point(std::chrono::duration_cast<std::chrono::system_clock::duration>(
                                                        model.timings[i].finished.time_since_epoch()) +
                                                    steady_to_system);
          early.push_back(request.arrived < finished);
          break;
        }
      }
    }
    return early;
  }

  std::string model_of_run(const std::filesystem::path& run_dir) const {
    const std::vector<train::CheckpointRecord> checkpoints = train::RunDirectory(run_dir).read_checkpoints();
    return resume::model_of_path(checkpoints.back().state_path.value());
  }
};

TEST_F(SupervisedPipelining, SubmitAheadOneQueuesTheNextStepWhileTheLastOneComputes) {
  auto ahead = small_options(dir / "ahead");
  ahead.max_steps = 4;
  ahead.submit_ahead = 1;
  auto in_lockstep = ahead;
  in_lockstep.run.log_path = dir / "lockstep";
  in_lockstep.submit_ahead = 0;
  run(train(ahead, {}));
  run(train(in_lockstep, {}));

  EXPECT_EQ(submitted_early(model_of_run(dir / "ahead")), std::vector<bool>(3, true));
  EXPECT_EQ(submitted_early(model_of_run(dir / "lockstep")), std::vector<bool>(3, false));
  // Pipelining changes when requests are sent, never what is computed.
  EXPECT_EQ(resume::metrics_without_time(train::RunDirectory(dir / "ahead")),
            resume::metrics_without_time(train::RunDirectory(dir / "lockstep")));
}

}  // namespace supervised_trainer_test
}  // namespace tinker::test
