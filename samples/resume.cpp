// resume: a training run that stops and resumes from its run directory exactly where it stopped.
//
// tinker::train::TrainingRun keeps a run directory (metrics.jsonl, checkpoints.jsonl, config.json)
// and, opened on a directory with a checkpoint, continues from the newest one with its weights
// *and* Adam's moments. This sample trains `--steps` steps with a checkpoint after them and stops
// as a crash would; opening the directory again resumes at that step and trains `--continue-steps`
// more. The continuation's losses must equal those of an uninterrupted run in another directory.
// For contrast it also continues from the same checkpoint *without* the optimizer state, whose
// losses drift from the second step on: Adam's moments are part of the state.
//
//   resume [--base-model NAME] [--steps N] [--continue-steps M] [--learning-rate LR]
//          [--tolerance T]
//
// Tolerance: tinker-local computes on the CPU in a fixed order and checkpoints are bit-exact, so
// locally the losses are identical and the default tolerance is 0. On the service, GPU kernels
// may sum in a different order from one request to the next; give e.g. --tolerance 1e-3 there.
#include "common/sample_support.hpp"

#include <tinker/train/run.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

namespace {

namespace asio = boost::asio;
namespace train = tinker::train;

class Settings {
 public:
  std::string base_model;
  int steps = 4;
  int continue_steps = 3;
  double learning_rate = 2e-3;
  double tolerance = 0.0;
};

// A fixed batch of next-token windows over a short text, so that every run sees the same data.
std::vector<tinker::Datum> make_batch(const tinker::Tokenizer& tokenizer) {
  const std::vector<tinker::TokenId> tokens = tokenizer.encode(
      "The Tortoise never for a moment stopped, but went on with a slow but steady pace straight to the end of the "
      "course. The Hare, lying down by the wayside, fell fast asleep. Slow but steady wins the race.");
  constexpr std::size_t window = 16;
  std::vector<tinker::Datum> batch;
  for (std::size_t start = 0; start + window + 1 <= tokens.size(); start += window) {
    std::vector<tinker::TokenId> input(tokens.begin() + start, tokens.begin() + start + window);
    std::vector<tinker::TokenId> targets(tokens.begin() + start + 1, tokens.begin() + start + window + 1);
    const std::vector<float> weights(window, 1.0f);
    tinker::LossFnInputs inputs{{"target_tokens", tinker::TensorData::from_tokens(targets)},
                                {"weights", tinker::TensorData::from_floats(weights)}};
    batch.emplace_back(tinker::ModelInput::from_ints(std::move(input)), std::move(inputs));
  }
  return batch;
}

// One step: forward_backward and optim_step submitted back to back; the loss the first saw.
asio::awaitable<double> train_step(tinker::TrainingClient training, std::vector<tinker::Datum> batch, double lr) {
  const tinker::ForwardBackwardInput input(batch, tinker::loss_fn::cross_entropy);
  const tinker::AdamParams adam(lr);
  auto gradients = co_await training.async_forward_backward(input, tinker::use_awaitable);
  auto update = co_await training.async_optim_step(adam, tinker::use_awaitable);
  const tinker::ForwardBackwardOutput output = co_await gradients.async_get(tinker::use_awaitable);
  co_await update.async_get(tinker::use_awaitable);
  co_return samples::mean_nll(batch, output);
}

// Opens (or resumes) the run in `dir` (`total` steps, a checkpoint every `save_every`) and trains
// it up to step `stop_at`, as a run that crashes there would; finishes it when that is its end.
asio::awaitable<void> train_until(tinker::ServiceClient& service, std::filesystem::path dir, std::string base_model,
                                  int save_every, int total, int stop_at, double lr) {
  train::RunOptions options;
  options.log_path = dir;
  options.base_model = base_model;
  options.seed = 0;
  options.total_steps = total;
  options.save_every = save_every;
  train::TrainingRun run = co_await train::TrainingRun::open(service, options);
  const auto tokenizer = co_await run.training().async_get_tokenizer(tinker::use_awaitable);
  const std::vector<tinker::Datum> batch = make_batch(*tokenizer);
  for (std::int64_t step = run.start_step(); step < stop_at; ++step) {
    const double loss = co_await train_step(run.training(), batch, lr);
    train::StepMetrics metrics(step);
    metrics.set("loss", loss);
    run.log_step(metrics);
    if (run.checkpoint_due(step + 1)) co_await run.save_checkpoint(step + 1);
  }
  if (stop_at == total) co_await run.finish();
}

std::vector<double> losses_from(const std::filesystem::path& dir, int first_step) {
  std::vector<double> losses;
  for (const train::StepMetrics& line : train::RunDirectory(dir).read_metrics()) {
    if (line.step >= first_step) losses.push_back(line.get("loss").value_or(NAN));
  }
  return losses;
}

double largest_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double largest = a.size() == b.size() ? 0.0 : INFINITY;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    largest = std::max(largest, std::abs(a[i] - b[i]) / std::max(1.0, std::abs(a[i])));
  }
  return largest;
}

asio::awaitable<bool> run_resume(tinker::ServiceClient& service, Settings settings) {
  const auto root = std::filesystem::temp_directory_path() / ("tinker-resume-sample-" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  const int total = settings.steps + settings.continue_steps;
  const double lr = settings.learning_rate;
  // Uninterrupted; then stopped after `steps` (its checkpoint) and opened again to the end.
  co_await train_until(service, root / "uninterrupted", settings.base_model, settings.steps, total, total, lr);
  co_await train_until(service, root / "resumed", settings.base_model, settings.steps, total, settings.steps, lr);
  co_await train_until(service, root / "resumed", settings.base_model, settings.steps, total, total, lr);

  // The contrast: the same checkpoint without its optimizer state.
  const std::vector<train::CheckpointRecord> saved = train::RunDirectory(root / "resumed").read_checkpoints();
  const auto checkpoint =
      std::find_if(saved.begin(), saved.end(), [&](const auto& r) { return r.step == settings.steps; });
  const tinker::FromStateOptions from_state;
  const tinker::TrainingClient weights_only = co_await service.async_create_training_client_from_state(
      *checkpoint->state_path, from_state, tinker::use_awaitable);
  const auto tokenizer = co_await weights_only.async_get_tokenizer(tinker::use_awaitable);
  std::vector<double> fresh_adam;
  for (int step = 0; step < settings.continue_steps; ++step) {
    const double loss = co_await train_step(weights_only, make_batch(*tokenizer), lr);
    fresh_adam.push_back(loss);
  }

  const std::vector<double> uninterrupted = losses_from(root / "uninterrupted", settings.steps);
  const std::vector<double> continued = losses_from(root / "resumed", settings.steps);
  for (const auto& [label, losses] : {std::pair{"uninterrupted", uninterrupted}, std::pair{"resumed", continued},
                                      std::pair{"weights only", fresh_adam}}) {
    std::printf("%-14s", label);
    for (double loss : losses) std::printf("  %.9f", loss);
    std::printf("\n");
  }
  std::filesystem::remove_all(root);

  const double resumed_gap = largest_difference(uninterrupted, continued);
  const double fresh_adam_gap = largest_difference(uninterrupted, fresh_adam);
  const bool same = resumed_gap <= settings.tolerance;
  // Without this, a server that ignored the optimizer state would pass unnoticed.
  const bool optimizer_matters = fresh_adam_gap > settings.tolerance;
  std::printf("largest relative difference to the uninterrupted run: resumed %.3e (%s %.3e), weights only %.3e (%s)\n",
              resumed_gap, same ? "within" : "EXCEEDS", settings.tolerance, fresh_adam_gap,
              optimizer_matters ? "differs, as it should" : "SAME: the optimizer state made no difference");
  co_return same&& optimizer_matters;
}

}  // namespace

int main(int argc, char** argv) {
  return samples::guarded_main([&] {
    const samples::Flags flags(argc, argv,
                               {"--base-model", "--steps", "--continue-steps", "--learning-rate", "--tolerance"});
    const samples::Backend backend("resume");
    Settings settings;
    settings.base_model = backend.base_model(flags);
    settings.steps = flags.integer("--steps", settings.steps);
    settings.continue_steps = flags.integer("--continue-steps", settings.continue_steps);
    settings.learning_rate = flags.number("--learning-rate", settings.learning_rate);
    settings.tolerance = flags.number("--tolerance", settings.tolerance);
    if (settings.steps < 1 || settings.continue_steps < 2) {
      throw std::invalid_argument("--steps must be at least 1 and --continue-steps at least 2");
    }
    return samples::run_async(backend, [&](tinker::ServiceClient& service) { return run_resume(service, settings); });
  });
}
