// tinker-cpp quickstart: supervised fine-tuning of a LoRA adapter, then sampling from it.
//
// With TINKER_API_KEY unset it starts tinker-local in-process (a Tinker-compatible server with a
// real tiny language model) and trains there; with a key it uses the service at
// TINKER_BASE_URL (or the default) and the base model given by --base-model.
//
//   quickstart [--steps N] [--base-model NAME] [--learning-rate LR]
//
// Each step submits forward_backward and optim_step back to back and only then awaits both, so
// the server always has the next operation queued. The program exits with status 1 if the loss
// did not fall, which is how the test suite runs it.
#include "common/sample_support.hpp"

#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace asio = boost::asio;

// The training text: Aesop, "The Hare and the Tortoise" (Townsend's translation, 1867, public
// domain), repeated in small windows.
constexpr const char* training_text =
    "A Hare one day ridiculed the short feet and slow pace of the Tortoise, who replied, laughing: "
    "\"Though you be swift as the wind, I will beat you in a race.\" The Hare, believing her assertion "
    "to be simply impossible, assented to the proposal; and they agreed that the Fox should choose the "
    "course and fix the goal. On the day appointed for the race the two started together. The Tortoise "
    "never for a moment stopped, but went on with a slow but steady pace straight to the end of the "
    "course. The Hare, lying down by the wayside, fell fast asleep. At last waking up, and moving as "
    "fast as he could, he saw the Tortoise had reached the goal, and was comfortably dozing after her "
    "fatigue. Slow but steady wins the race.";

class Settings {
 public:
  int steps = 30;
  std::string base_model;
  double learning_rate = 2e-3;
  std::size_t window = 24;  ///< tokens per training example
};

// Next-token examples: overlapping windows of the tokenized text, every target weighted 1.
std::vector<tinker::Datum> make_batch(const std::vector<tinker::TokenId>& tokens, std::size_t window) {
  std::vector<tinker::Datum> batch;
  for (std::size_t start = 0; start + window + 1 <= tokens.size(); start += window / 2) {
    const std::vector<tinker::TokenId> input(tokens.begin() + start, tokens.begin() + start + window);
    const std::vector<tinker::TokenId> targets(tokens.begin() + start + 1, tokens.begin() + start + window + 1);
    const std::vector<float> weights(window, 1.0f);
    tinker::LossFnInputs inputs{{"target_tokens", tinker::TensorData::from_tokens(targets)},
                                {"weights", tinker::TensorData::from_floats(weights)}};
    batch.emplace_back(tinker::ModelInput::from_ints(input), std::move(inputs));
  }
  return batch;
}

// Mean negative log-likelihood per target token.
double mean_loss(const tinker::ForwardBackwardOutput& output) {
  double total = 0.0;
  std::size_t count = 0;
  for (const auto& record : output.loss_fn_outputs) {
    for (float logprob : record.at("logprobs").to_dense_floats()) {
      total -= logprob;
      ++count;
    }
  }
  return count == 0 ? 0.0 : total / static_cast<double>(count);
}

asio::awaitable<std::vector<double>> train(tinker::TrainingClient& training, const std::vector<tinker::Datum>& batch,
                                           const Settings& settings) {
  std::vector<double> losses;
  for (int step = 1; step <= settings.steps; ++step) {
    const tinker::ForwardBackwardInput input(batch, tinker::loss_fn::cross_entropy);
    const tinker::AdamParams adam(settings.learning_rate);
    // Submitted back to back: both are queued on the server before either result is awaited.
    auto gradients = co_await training.async_forward_backward(input, tinker::use_awaitable);
    auto update = co_await training.async_optim_step(adam, tinker::use_awaitable);
    const tinker::ForwardBackwardOutput output = co_await gradients.async_get(tinker::use_awaitable);
    co_await update.async_get(tinker::use_awaitable);
    losses.push_back(mean_loss(output));
    std::cout << "step " << std::setw(3) << step << "  loss " << std::fixed << std::setprecision(4) << losses.back()
              << "\n";
  }
  co_return losses;
}

asio::awaitable<void> print_samples(tinker::SamplingClient& sampler, const tinker::Tokenizer& tokenizer) {
  const std::vector<std::string> prompts{"The Hare, lying down", "Slow but steady", "On the day appointed"};
  tinker::SamplingParams params(20, 0.7);
  params.seed = 1;
  for (const std::string& prompt : prompts) {
    const tinker::ModelInput input = tinker::ModelInput::from_ints(tokenizer.encode(prompt));
    auto sampling = co_await sampler.async_sample(input, 1, params, tinker::SampleOptions(), tinker::use_awaitable);
    const tinker::SampleResponse response = co_await sampling.async_get(tinker::use_awaitable);
    std::cout << "  " << prompt << " -> " << tokenizer.decode(response.sequences.at(0).tokens, true) << "\n";
  }
}

asio::awaitable<bool> run_quickstart(tinker::ServiceClient& service, Settings settings) {
  tinker::LoraTrainingOptions options(settings.base_model, 16);
  options.seed = 0;
  tinker::TrainingClient training = co_await service.async_create_lora_training_client(options, tinker::use_awaitable);
  std::cout << "model " << training.model_id() << " on " << settings.base_model << "\n";

  std::shared_ptr<const tinker::Tokenizer> tokenizer = co_await training.async_get_tokenizer(tinker::use_awaitable);
  const std::vector<tinker::Datum> batch = make_batch(tokenizer->encode(training_text), settings.window);
  std::cout << "training on " << batch.size() << " windows of " << settings.window << " tokens\n";

  const std::vector<double> losses = co_await train(training, batch, settings);

  auto saving = co_await training.async_save_weights_for_sampler("quickstart", std::nullopt, tinker::use_awaitable);
  const tinker::SaveWeightsForSamplerResponse saved = co_await saving.async_get(tinker::use_awaitable);
  std::cout << "saved sampler weights: " << saved.path.value_or("(ephemeral)") << "\nsamples:\n";
  const auto source = tinker::SamplingSource::from_model_path(saved.path.value_or(""));
  tinker::SamplingClient sampler = co_await service.async_create_sampling_client(source, tinker::use_awaitable);
  co_await print_samples(sampler, *tokenizer);

  const bool fell = losses.back() < losses.front();
  std::cout << "loss " << losses.front() << " -> " << losses.back() << (fell ? " (fell)" : " (DID NOT FALL)") << "\n";
  co_return fell;
}

}  // namespace

int main(int argc, char** argv) {
  return samples::guarded_main([&] {
    const samples::Flags flags(argc, argv, {"--steps", "--base-model", "--learning-rate"});
    const samples::Backend backend("quickstart");
    Settings settings;
    settings.steps = flags.integer("--steps", settings.steps);
    settings.base_model = backend.base_model(flags);
    settings.learning_rate = flags.number("--learning-rate", settings.learning_rate);
    if (settings.steps < 2) throw std::invalid_argument("--steps must be at least 2");
    return samples::run_async(backend,
                              [&](tinker::ServiceClient& service) { return run_quickstart(service, settings); });
  });
}
