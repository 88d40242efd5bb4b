// A deterministic training loop on tinker::train::TrainingRun for the resume tests: the batch and
// learning rate of a step depend on the step number alone, so a run resumed at any checkpoint
// continues exactly as an uninterrupted one. Used by the in-process resume and recovery tests
// (run_test.cpp, load_checkpoint_test.cpp); the kill test's child program (resume_child.cpp) trains
// kill_test_examples() with the supervised trainer.
#pragma once

#include <tinker/service_client.hpp>
#include <tinker/train/run.hpp>
#include <tinker/training_client.hpp>

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tinker::test::resume {

inline constexpr const char* model = "tinker-local/tiny-lm";

/// Two sequences of 12 tokens; three batches in turn, chosen by the step, so the loss falls and a
/// resume that got the data order wrong shows.
inline std::vector<Datum> batch_for_step(std::int64_t step) {
  std::vector<Datum> batch;
  for (std::int64_t row = 0; row < 2; ++row) {
    std::vector<TokenId> tokens;
    for (std::int64_t i = 0; i < 13; ++i) {
      tokens.push_back(static_cast<TokenId>(5 + (row * 11 + i * 7 + (step % 3) * 5) % 200));
    }
    std::vector<TokenId> input(tokens.begin(), tokens.end() - 1);
    std::vector<TokenId> targets(tokens.begin() + 1, tokens.end());
    const std::vector<float> weights(targets.size(), 1.0f);
    LossFnInputs inputs{{"target_tokens", TensorData::from_tokens(targets)},
                        {"weights", TensorData::from_floats(weights)}};
    batch.emplace_back(ModelInput::from_ints(std::move(input)), std::move(inputs));
  }
  return batch;
}

/// Five sequences of 12 tokens for the kill test's trainer: with batches of 2, two batches per
/// epoch in a shuffled order, so a resume that got the data order wrong shows.
inline std::vector<Datum> kill_test_examples() {
  std::vector<Datum> examples;
  for (std::int64_t step = 0; step < 3; ++step) {
    for (Datum& datum : batch_for_step(step)) examples.push_back(std::move(datum));
  }
  examples.pop_back();
  return examples;
}

/// A linear decay from 2e-3, so a resumed run that got the schedule wrong shows.
inline double learning_rate_for_step(std::int64_t step, std::int64_t total_steps) {
  return 2e-3 * (1.0 - static_cast<double>(step) / static_cast<double>(total_steps + 1));
}

/// The options of a test run in `log_path`.
inline train::RunOptions run_options(std::string log_path, std::int64_t total_steps, std::int64_t save_every) {
  train::RunOptions options;
  options.log_path = std::move(log_path);
  options.base_model = model;
  options.lora_rank = 8;
  options.seed = 11;
  options.renderer_name = "role_colon";
  options.config_json = R"({"test": "resume", "total_steps": )" + std::to_string(total_steps) + "}";
  options.total_steps = total_steps;
  options.save_every = save_every;
  options.show_progress = false;
  return options;
}

/// One step: forward_backward and optim_step submitted back to back, the step's metrics logged,
/// a checkpoint when one is due.
inline boost::asio::awaitable<void> train_one_step(train::TrainingRun& run, std::int64_t step) {
  const std::vector<Datum> batch = batch_for_step(step);
  const double lr = learning_rate_for_step(step, run.options().total_steps);
  const ForwardBackwardInput input(batch, "cross_entropy");
  const AdamParams adam(lr);
  const TrainingClient training = run.training();
  auto gradients = co_await training.async_forward_backward(input, tinker::use_awaitable);
  auto update = co_await training.async_optim_step(adam, tinker::use_awaitable);
  const ForwardBackwardOutput output = co_await gradients.async_get(tinker::use_awaitable);
  co_await update.async_get(tinker::use_awaitable);
  double total = 0.0;
  double count = 0.0;
  for (const auto& datum_output : output.loss_fn_outputs) {
    for (float logprob : datum_output.at("logprobs").to_dense_floats()) {
      total -= logprob;
      count += 1.0;
    }
  }
  train::StepMetrics metrics(step);
  metrics.set("loss", total / count);
  metrics.set("lr", lr);
  run.log_step(std::move(metrics));
  if (run.checkpoint_due(step + 1)) co_await run.save_checkpoint(step + 1);
}

/// Callbacks of train_to_completion (plain functions: never coroutines).
struct Hooks {
  std::function<void(const train::TrainingRun&)> after_open;
  std::function<void(const train::TrainingRun&, std::int64_t steps_done)> after_step;
};

/// Opens (or resumes) the run and trains it to its end, recovering from what
/// TrainingRun::is_recoverable accepts; returns the final checkpoint.
inline boost::asio::awaitable<train::CheckpointRecord> train_to_completion(ServiceClient& service,
                                                                           train::RunOptions options, Hooks hooks) {
  train::TrainingRun run = co_await train::TrainingRun::open(service, std::move(options));
  if (hooks.after_open) hooks.after_open(run);
  std::int64_t step = run.start_step();
  while (step < run.options().total_steps) {
    std::optional<tinker::error> failure;
    try {
      co_await train_one_step(run, step);
    } catch (const tinker::error& e) {
      failure = e;  // recovered below: no co_await inside a catch block (GCC 12)
    }
    if (failure) {
      step = co_await run.recover(*failure);
      continue;
    }
    ++step;
    if (hooks.after_step) hooks.after_step(run, step);
  }
  const train::CheckpointRecord final_record = co_await run.finish();
  co_return final_record;
}

}  // namespace tinker::test::resume
