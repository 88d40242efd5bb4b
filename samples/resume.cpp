// resume: continue a training run from a checkpoint exactly where it stopped.
//
// A long run saves `save_state` checkpoints (weights *and* Adam's moments); after a crash or a
// preemption a new training client is created from the last one and training goes on. This
// sample checks that the resumed run is the same run: it trains `--steps` steps, saves, trains
// `--continue-steps` more (the uninterrupted run), then creates a new client from the checkpoint
// with its optimizer state and trains the same continuation (the resumed run). The losses of the
// two continuations must agree. For contrast it also resumes from the same checkpoint *without*
// the optimizer state, whose losses drift from the second step on: Adam's moments are part of
// the state, and a resume that drops them is a different run.
//
//   resume [--base-model NAME] [--steps N] [--continue-steps M] [--learning-rate LR]
//          [--tolerance T]
//
// Tolerance: tinker-local computes on the CPU in a fixed order and checkpoints are bit-exact, so
// locally the losses are identical and the default tolerance is 0. On the service, GPU kernels
// may sum in a different order from one request to the next; give e.g. --tolerance 1e-3 there
// (a relative difference).
//
// Mirrors the cookbook's resume path: checkpoint_utils.get_last_checkpoint, then
// create_training_client_from_state_with_optimizer (tinker_cookbook/supervised/train.py).
#include "common/sample_support.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

namespace {

namespace asio = boost::asio;

class Settings {
 public:
  std::string base_model;
  int steps = 4;
  int continue_steps = 3;
  double learning_rate = 2e-3;
  double tolerance = 0.0;
};

// A fixed batch of next-token windows over a short text, so that every run sees the same data.
constexpr const char* training_text =
    "The Tortoise never for a moment stopped, but went on with a slow but steady pace straight to the end "
    "of the course. The Hare, lying down by the wayside, fell fast asleep. Slow but steady wins the race.";

std::vector<tinker::Datum> make_batch(const tinker::Tokenizer& tokenizer) {
  const std::vector<tinker::TokenId> tokens = tokenizer.encode(training_text);
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

// `count` pipelined steps; returns the loss each step's forward_backward saw (the loss of the
// weights *before* that step's update).
asio::awaitable<std::vector<double>> train(const tinker::TrainingClient& training,
                                           const std::vector<tinker::Datum>& batch, int count, double learning_rate) {
  std::vector<double> losses;
  for (int step = 0; step < count; ++step) {
    const tinker::ForwardBackwardInput input(batch, tinker::loss_fn::cross_entropy);
    const tinker::AdamParams adam(learning_rate);
    auto gradients = co_await training.async_forward_backward(input, tinker::use_awaitable);
    auto update = co_await training.async_optim_step(adam, tinker::use_awaitable);
    const tinker::ForwardBackwardOutput output = co_await gradients.async_get(tinker::use_awaitable);
    co_await update.async_get(tinker::use_awaitable);
    losses.push_back(samples::mean_nll(batch, output));
  }
  co_return losses;
}

void print_losses(const std::string& label, const std::vector<double>& losses) {
  std::cout << std::left << std::setw(24) << label << std::right;
  for (double loss : losses) std::cout << "  " << std::fixed << std::setprecision(9) << loss;
  std::cout << "\n";
}

// The largest |a - b| / max(1, |a|) over the two runs' losses.
double largest_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double largest = 0.0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    largest = std::max(largest, std::abs(a[i] - b[i]) / std::max(1.0, std::abs(a[i])));
  }
  return largest;
}

asio::awaitable<bool> run_resume(tinker::ServiceClient& service, Settings settings) {
  tinker::LoraTrainingOptions options(settings.base_model, 16);
  options.seed = 0;
  const tinker::TrainingClient original =
      co_await service.async_create_lora_training_client(options, tinker::use_awaitable);
  const auto tokenizer = co_await original.async_get_tokenizer(tinker::use_awaitable);
  const std::vector<tinker::Datum> batch = make_batch(*tokenizer);

  const std::vector<double> first = co_await train(original, batch, settings.steps, settings.learning_rate);
  print_losses("first steps", first);

  // The checkpoint: weights and optimizer state, as tinker://<model_id>/weights/resume-demo.
  const tinker::SaveStateOptions save_options;
  auto saving = co_await original.async_save_state("resume-demo", save_options, tinker::use_awaitable);
  const std::string path = (co_await saving.async_get(tinker::use_awaitable)).path;
  std::cout << "saved " << path << "\n";

  const std::vector<double> uninterrupted =
      co_await train(original, batch, settings.continue_steps, settings.learning_rate);

  const tinker::FromStateOptions from_state;
  const tinker::TrainingClient resumed =
      co_await service.async_create_training_client_from_state_with_optimizer(path, from_state, tinker::use_awaitable);
  const std::vector<double> continued = co_await train(resumed, batch, settings.continue_steps, settings.learning_rate);

  const tinker::TrainingClient weights_only =
      co_await service.async_create_training_client_from_state(path, from_state, tinker::use_awaitable);
  const std::vector<double> fresh_adam =
      co_await train(weights_only, batch, settings.continue_steps, settings.learning_rate);

  print_losses("uninterrupted", uninterrupted);
  print_losses("resumed with optimizer", continued);
  print_losses("resumed weights only", fresh_adam);

  const double resumed_gap = largest_difference(uninterrupted, continued);
  const double fresh_adam_gap = largest_difference(uninterrupted, fresh_adam);
  const bool same = resumed_gap <= settings.tolerance;
  // Without this, a server that ignored the optimizer state would pass unnoticed.
  const bool optimizer_matters = fresh_adam_gap > settings.tolerance;
  std::cout << std::scientific << std::setprecision(3)
            << "largest relative difference to the uninterrupted run: resumed with optimizer " << resumed_gap
            << (same ? " (within " : " (EXCEEDS ") << settings.tolerance << "), weights only " << fresh_adam_gap
            << (optimizer_matters ? " (differs, as it should)" : " (SAME: the optimizer state made no difference)")
            << "\n";
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
