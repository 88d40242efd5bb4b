// resume: a training run that stops and resumes from its run directory exactly where it stopped.
//
// tinker::train keeps a run directory (metrics.jsonl, checkpoints.jsonl, config.json); opened on
// a directory with a checkpoint, train_supervised continues from the newest one with its weights
// *and* Adam's moments. This sample trains `--steps` steps, then opens the same directory for
// `--continue-steps` more, as one extending (or restarting) a run does; the continuation's losses
// must equal an uninterrupted run's. For contrast, a third run starts from the same checkpoint's
// weights with a fresh optimizer (RunOptions::load_checkpoint_path, as RL after SFT does); its
// losses drift from the second step on: Adam's moments are part of the state.
//
//   resume [--base-model NAME] [--steps N] [--continue-steps M] [--learning-rate LR]
//          [--tolerance T] [--data-dir DIR]
//
// Tolerance: tinker-local computes on the CPU in a fixed order and checkpoints are bit-exact, so
// locally the losses are identical and the default tolerance is 0. On the service, GPU kernels
// may sum in a different order from one request to the next; give e.g. --tolerance 1e-3 there.
#include "common/sample_support.hpp"

#include <tinker/train/supervised.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

namespace {

namespace asio = boost::asio;
namespace train = tinker::train;

class Settings {
 public:
  train::SupervisedOptions options;                // shared by the three runs; each sets its directory and length
  std::vector<train::Conversation> conversations;  // all trained at every step, in file order
  int steps = 4;
  int continue_steps = 3;
  double tolerance = 0.0;
};

// The shared options for a run in `dir` of `max_steps` steps.
train::SupervisedOptions run_of(train::SupervisedOptions options, std::filesystem::path dir, int max_steps) {
  options.run.log_path = std::move(dir);
  options.max_steps = max_steps;
  return options;
}

std::vector<double> losses_from(const std::filesystem::path& dir, int first_step) {
  std::vector<double> losses;
  for (const train::StepMetrics& line : train::RunDirectory(dir).read_metrics()) {
    if (line.step >= first_step) losses.push_back(line.get("train_mean_nll").value_or(NAN));
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
  const auto base = tinker::SamplingSource::from_base_model(settings.options.run.base_model);
  const tinker::SamplingClient sampler = co_await service.async_create_sampling_client(base, tinker::use_awaitable);
  const auto renderer =
      tinker::renderers::make_renderer(tinker::renderers::recommended_renderer(settings.options.run.base_model),
                                       co_await sampler.async_get_tokenizer(tinker::use_awaitable));
  const train::DatumDataset data = train::render_conversations(*renderer, settings.conversations);
  settings.options.batch_size = data.size();
  const int n = settings.steps;
  const int total = n + settings.continue_steps;

  const train::SupervisedOptions& options = settings.options;
  co_await train::train_supervised(service, data, run_of(options, root / "uninterrupted", total));
  co_await train::train_supervised(service, data, run_of(options, root / "resumed", n));  // a checkpoint at n
  const std::string checkpoint_n =
      train::get_last_checkpoint(root / "resumed", "state_path").value().state_path.value();
  const train::SupervisedSummary continued =
      co_await train::train_supervised(service, data, run_of(options, root / "resumed", total));
  // The contrast: step n's weights without its optimizer state, in a run of its own.
  train::SupervisedOptions weights_only = run_of(options, root / "weights-only", settings.continue_steps);
  weights_only.run.load_checkpoint_path = checkpoint_n;
  co_await train::train_supervised(service, data, std::move(weights_only));

  const std::vector<double> uninterrupted = losses_from(root / "uninterrupted", n);
  const std::vector<double> resumed = losses_from(root / "resumed", n);
  const std::vector<double> fresh_adam = losses_from(root / "weights-only", 0);
  for (const auto& [label, losses] : {std::pair{"uninterrupted", uninterrupted}, std::pair{"resumed", resumed},
                                      std::pair{"weights only", fresh_adam}}) {
    std::printf("%-14s", label);
    for (double loss : losses) std::printf("  %.9f", loss);
    std::printf("\n");
  }
  std::filesystem::remove_all(root);

  const double resumed_gap = largest_difference(uninterrupted, resumed);
  const double fresh_adam_gap = largest_difference(uninterrupted, fresh_adam);
  // The continuation resumed from step n's (final) checkpoint and ended with a final one of its own.
  const bool extended = continued.start_step == n && continued.final_checkpoint->step == total;
  const bool same = extended && resumed_gap <= settings.tolerance;
  // Without this, a server that ignored the optimizer state would pass unnoticed.
  const bool optimizer_matters = fresh_adam_gap > settings.tolerance;
  std::printf(
      "resumed at step %lld; largest relative difference to the uninterrupted run: resumed %.3e (%s %.3e), "
      "weights only %.3e (%s)\n",
      static_cast<long long>(continued.start_step), resumed_gap, same ? "within" : "EXCEEDS", settings.tolerance,
      fresh_adam_gap, optimizer_matters ? "differs, as it should" : "SAME: the optimizer state made no difference");
  co_return same&& optimizer_matters;
}

}  // namespace

int main(int argc, char** argv) {
  return samples::guarded_main([&] {
    const samples::Flags flags(
        argc, argv, {"--base-model", "--steps", "--continue-steps", "--learning-rate", "--tolerance", "--data-dir"});
    const samples::Backend backend("resume");
    Settings settings;
    train::SupervisedOptions& options = settings.options;
    options.run.base_model = backend.base_model(flags);
    options.run.seed = 0;
    options.learning_rate = flags.number("--learning-rate", 2e-3);
    options.lr_schedule = train::LrSchedule(train::LrShape::constant);  // the same rate whatever the run's length
    options.shuffle = false;
    options.eval_every = 0;
    options.evaluate_at_end = false;
    settings.conversations = samples::read_conversations(samples::data_file(flags, "chat_train.jsonl"));
    settings.steps = flags.integer("--steps", settings.steps);
    settings.continue_steps = flags.integer("--continue-steps", settings.continue_steps);
    settings.tolerance = flags.number("--tolerance", settings.tolerance);
    if (settings.steps < 1 || settings.continue_steps < 2) {
      throw std::invalid_argument("--steps must be at least 1 and --continue-steps at least 2");
    }
    return samples::run_async(backend, [&](tinker::ServiceClient& service) { return run_resume(service, settings); });
  });
}
