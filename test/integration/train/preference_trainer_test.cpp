// train_dpo against tinker-local: the margin grows from exactly 0 (policy = reference at step 0),
// the reference checkpoint is recorded, held-out pairs are scored with evaluate_dpo, and a run
// resumed after losing its last steps ends with the metrics and weights of an uninterrupted one.
#include "integration/support/local_service.hpp"
#include "integration/train/run_compare.hpp"
#include "support/temp_files.hpp"

#include <tinker/renderers.hpp>
#include <tinker/train/preference.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

namespace tinker::test {
namespace {

namespace asio = boost::asio;
using renderers::Message;

// Chosen: the question's answer; rejected: the next question's answer.
std::vector<train::Comparison> small_comparisons() {
  const std::vector<std::pair<std::string, std::string>> qa{
      {"What is the opposite of up?", "Down."}, {"What color is coal?", "Black."},
      {"What do bees make?", "Honey."},         {"What color is snow?", "White."},
      {"What is two plus two?", "Four."},       {"What is the capital of France?", "Paris."},
  };
  std::vector<train::Comparison> comparisons(qa.size());
  for (std::size_t i = 0; i < qa.size(); ++i) {
    comparisons[i].prompt = {Message("user", qa[i].first)};
    comparisons[i].chosen = {Message("assistant", qa[i].second)};
    comparisons[i].rejected = {Message("assistant", qa[(i + 1) % qa.size()].second)};
  }
  return comparisons;
}

asio::awaitable<std::vector<Datum>> tiny_pairs(ServiceClient& service) {
  const SamplingClient sampler = co_await base_sampler(service);
  const auto tokenizer = co_await sampler.async_get_tokenizer(tinker::use_awaitable);
  const auto renderer = renderers::make_renderer("qwen3_instruct", tokenizer);
  co_return train::render_comparisons(*renderer, small_comparisons());
}

train::PreferenceOptions small_options(const std::filesystem::path& dir) {
  train::PreferenceOptions options;
  options.run.log_path = dir;
  options.run.base_model = std::string(tiny_model);
  options.run.lora_rank = 8;
  options.run.seed = 5;
  options.run.renderer_name = "qwen3_instruct";
  options.run.show_progress = false;
  options.learning_rate = 2e-3;
  options.batch_size = 3;
  options.max_steps = 4;
  options.data_seed = 2;
  return options;
}

// evaluate_dpo of the weights at `policy_path`, and of the reference against itself.
asio::awaitable<std::pair<train::StepMetrics, train::StepMetrics>> score_against_reference(ServiceClient& service,
                                                                                           std::string policy_path,
                                                                                           std::string reference_path,
                                                                                           std::vector<Datum> pairs) {
  const SamplingSource policy_source = SamplingSource::from_model_path(std::move(policy_path));
  const SamplingSource reference_source = SamplingSource::from_model_path(std::move(reference_path));
  const SamplingClient policy = co_await service.async_create_sampling_client(policy_source, tinker::use_awaitable);
  const SamplingClient reference =
      co_await service.async_create_sampling_client(reference_source, tinker::use_awaitable);
  const train::StepMetrics trained = co_await train::evaluate_dpo(policy, reference, pairs, 0.1);
  const train::StepMetrics untouched = co_await train::evaluate_dpo(reference, reference, pairs, 0.1);
  co_return std::make_pair(trained, untouched);
}

class PreferenceTrainer : public LocalService {};

TEST_F(PreferenceTrainer, MarginGrowsFromZeroAndHeldOutPairsScoreAgainstTheReference) {
  TempDir dir("dpo-run");
  auto service = make_service_client();
  const std::vector<Datum> pairs = run(tiny_pairs(*service));
  ASSERT_EQ(pairs.size(), 12u);
  // Every pair in every step: the rejected reply of one pair is the chosen one of the next, so a
  // step on some pairs may lower the margin of the others.
  train::PreferenceOptions options = small_options(dir.path());
  options.batch_size = 6;
  const train::PreferenceSummary summary = run(train::train_dpo(*service, pairs, options));
  EXPECT_EQ(summary.start_step, 0);
  EXPECT_EQ(summary.total_steps, 4);
  // Step 0 scores the reference weights themselves.
  EXPECT_NEAR(summary.first_margin.value(), 0.0, 1e-4);
  EXPECT_GT(summary.last_margin.value(), summary.first_margin.value() + 0.01);

  const std::vector<train::StepMetrics> metrics = train::RunDirectory(dir.path()).read_metrics();
  ASSERT_EQ(metrics.size(), 4u);
  EXPECT_NEAR(metrics[0].get("dpo_loss").value(), std::log(2.0), 1e-4);
  for (const char* key : {"dpo_loss", "accuracy", "margin", "chosen_reward", "rejected_reward", "num_pairs",
                          "num_tokens", "learning_rate", "epoch", "progress"}) {
    EXPECT_TRUE(metrics[3].get(key).has_value()) << key;
  }
  EXPECT_EQ(metrics[3].get("num_pairs").value(), 6.0);
  EXPECT_LT(metrics[3].get("dpo_loss").value(), metrics[0].get("dpo_loss").value());

  const auto checkpoints = train::RunDirectory(dir.path()).read_checkpoints();
  ASSERT_GE(checkpoints.size(), 2u);
  EXPECT_EQ(checkpoints.front(), summary.reference.value());
  EXPECT_EQ(checkpoints.front().step, 0);
  EXPECT_TRUE(checkpoints.front().sampler_path.has_value());
  EXPECT_TRUE(checkpoints.back().final);
  EXPECT_EQ(checkpoints.back().step, 4);

  // The trained weights prefer the chosen replies of the pairs they trained on; the reference
  // against itself has margin 0.
  const auto [trained, untouched] = run(score_against_reference(
      *service, *summary.final_checkpoint.value().sampler_path, *summary.reference.value().sampler_path, pairs));
  EXPECT_GT(trained.get("margin").value(), 0.01);
  EXPECT_EQ(untouched.get("margin").value(), 0.0);
  EXPECT_NEAR(untouched.get("dpo_loss").value(), std::log(2.0), 1e-12);
}

TEST_F(PreferenceTrainer, AResumedRunEqualsAnUninterruptedOne) {
  TempDir whole("dpo-whole");
  TempDir resumed("dpo-resumed");
  auto service = make_service_client();
  const std::vector<Datum> pairs = run(tiny_pairs(*service));
  train::PreferenceOptions options = small_options(whole.path());
  options.run.save_every = 2;
  const auto uninterrupted = run(train::train_dpo(*service, pairs, options));

  options.run.log_path = resumed.path();
  run(train::train_dpo(*service, pairs, options));
  // As if killed after logging step 2 and before the step-4 checkpoint: the later records are gone.
  const train::RunDirectory resumed_dir(resumed.path());
  std::vector<train::CheckpointRecord> kept;
  for (const auto& record : resumed_dir.read_checkpoints()) {
    if (record.step <= 2 && !record.final) kept.push_back(record);
  }
  ASSERT_EQ(kept.size(), 2u);  // the reference (000000) and 000002
  std::filesystem::remove(resumed.path() / "checkpoints.jsonl");
  for (const auto& record : kept) resumed_dir.append_checkpoint(record);
  ASSERT_EQ(train::get_last_checkpoint(resumed.path()).value().step, 2);

  const auto again = run(train::train_dpo(*service, pairs, options));
  EXPECT_EQ(again.start_step, 2);
  EXPECT_EQ(again.reference.value().step, 0);
  EXPECT_EQ(resume::metrics_without_time(resumed_dir), resume::metrics_without_time(train::RunDirectory(whole.path())));
  const auto logprobs_whole = run(resume::logprobs_of(*service, *uninterrupted.final_checkpoint->sampler_path));
  const auto logprobs_resumed = run(resume::logprobs_of(*service, *again.final_checkpoint->sampler_path));
  EXPECT_EQ(logprobs_whole, logprobs_resumed);
}

}  // namespace
}  // namespace tinker::test
