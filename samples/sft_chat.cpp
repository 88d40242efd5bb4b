// sft_chat: supervised fine-tuning on a chat dataset, then a reply sampled from the tuned model.
//
// The dataset (samples/data/chat_{train,test}.jsonl) holds short conversations in the cookbook's
// {"messages": [{"role": ..., "content": ...}]} shape. Each conversation goes through the
// model's chat renderer into tokens with a weight per token (1 on what the assistant wrote, 0
// on prompts and role headers), and from there into a next-token datum. Training pipelines
// forward_backward and optim_step (both submitted before either is awaited, so the server never
// idles between them) with a linearly decaying learning rate. The held-out conversations are
// scored with `forward` (no gradients) before and after training; the program exits non-zero
// unless that evaluation loss fell. Finally it asks the tuned model a held-out question, with
// the renderer's generation prompt and stop sequences, and parses the reply back into a message.
//
//   sft_chat [--base-model NAME] [--steps N] [--batch-size B] [--learning-rate LR] [--data-dir DIR]
//
// Mirrors the cookbook's supervised recipe (tinker_cookbook/recipes/sl_loop.py and
// supervised/train.py: conversations rendered with TrainOn.ALL_ASSISTANT_MESSAGES, a linear
// learning-rate schedule, evaluation on a held-out split).
#include "common/sample_support.hpp"

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace renderers = tinker::renderers;

class Settings {
 public:
  std::string base_model;
  int steps = 20;
  int batch_size = 20;
  double learning_rate = 2e-3;
  std::vector<samples::Conversation> train;
  std::vector<samples::Conversation> test;
};

// Minibatch `step` of `data`, cycling through it in order.
std::vector<tinker::Datum> minibatch(const std::vector<tinker::Datum>& data, int step, int batch_size) {
  std::vector<tinker::Datum> batch;
  for (int i = 0; i < batch_size; ++i) {
    batch.push_back(data[(static_cast<std::size_t>(step) * batch_size + i) % data.size()]);
  }
  return batch;
}

asio::awaitable<void> train(const tinker::TrainingClient& training, const std::vector<tinker::Datum>& data,
                            const Settings& settings) {
  for (int step = 0; step < settings.steps; ++step) {
    const std::vector<tinker::Datum> batch = minibatch(data, step, settings.batch_size);
    const tinker::ForwardBackwardInput input(batch, tinker::loss_fn::cross_entropy);
    const tinker::AdamParams adam(samples::linear_decay(settings.learning_rate, step, settings.steps));
    // Both requests are queued on the server before either result is awaited.
    auto gradients = co_await training.async_forward_backward(input, tinker::use_awaitable);
    auto update = co_await training.async_optim_step(adam, tinker::use_awaitable);
    const tinker::ForwardBackwardOutput output = co_await gradients.async_get(tinker::use_awaitable);
    co_await update.async_get(tinker::use_awaitable);
    std::cout << "step " << std::setw(3) << step + 1 << "  lr " << std::scientific << std::setprecision(2)
              << adam.learning_rate << "  train loss " << std::fixed << std::setprecision(4)
              << samples::mean_nll(batch, output) << "\n";
  }
}

// The held-out question of the first test conversation, answered by the tuned model.
asio::awaitable<void> ask(const tinker::TrainingClient& training, const renderers::Renderer& renderer,
                          const samples::Conversation& conversation) {
  // Everything up to (not including) the final assistant message is the prompt.
  const std::vector<renderers::Message> prompt_messages(conversation.begin(), conversation.end() - 1);
  const tinker::ModelInput prompt = renderer.build_generation_prompt(prompt_messages);
  tinker::SamplingParams params(32, 0.0);  // greedy: the reply the model finds most likely
  params.stop = renderer.stop_sequences();
  const tinker::SampleOptions options;

  tinker::SamplingClient sampler = co_await training.async_save_weights_and_get_sampling_client(tinker::use_awaitable);
  auto sampling = co_await sampler.async_sample(prompt, 1, params, options, tinker::use_awaitable);
  const tinker::SampleResponse response = co_await sampling.async_get(tinker::use_awaitable);
  const renderers::ParsedResponse reply = renderer.parse_response(response.sequences.at(0).tokens);

  std::cout << "user:      " << prompt_messages.back().text() << "\n"
            << "assistant: " << reply.message.text() << "   [ended by " << renderers::to_string(reply.termination)
            << "]\n"
            << "reference: " << conversation.back().text() << "\n";
}

asio::awaitable<bool> run_sft(tinker::ServiceClient& service, Settings settings) {
  tinker::LoraTrainingOptions options(settings.base_model, 16);
  options.seed = 0;
  const tinker::TrainingClient training =
      co_await service.async_create_lora_training_client(options, tinker::use_awaitable);
  const auto tokenizer = co_await training.async_get_tokenizer(tinker::use_awaitable);
  const std::string renderer_name = renderers::recommended_renderer(settings.base_model);
  const std::unique_ptr<renderers::Renderer> renderer = renderers::make_renderer(renderer_name, tokenizer);
  std::cout << "model " << settings.base_model << ", renderer " << renderer_name << "\n";

  const std::vector<tinker::Datum> train_data = samples::supervised_data(*renderer, settings.train);
  const std::vector<tinker::Datum> test_data = samples::supervised_data(*renderer, settings.test);
  std::cout << train_data.size() << " training and " << test_data.size() << " held-out conversations\n";

  const double before = co_await samples::forward_nll(training, test_data);
  std::cout << "held-out loss before training " << std::fixed << std::setprecision(4) << before << "\n";
  co_await train(training, train_data, settings);
  const double after = co_await samples::forward_nll(training, test_data);

  co_await ask(training, *renderer, settings.test.front());
  const bool fell = after < before;
  std::cout << "held-out loss " << std::fixed << std::setprecision(4) << before << " -> " << after
            << (fell ? " (fell)" : " (DID NOT FALL)") << "\n";
  co_return fell;
}

}  // namespace

int main(int argc, char** argv) {
  return samples::guarded_main([&] {
    const samples::Flags flags(argc, argv,
                               {"--base-model", "--steps", "--batch-size", "--learning-rate", "--data-dir"});
    const samples::Backend backend("sft-chat");
    Settings settings;
    settings.base_model = backend.base_model(flags);
    settings.steps = flags.integer("--steps", settings.steps);
    settings.batch_size = flags.integer("--batch-size", settings.batch_size);
    // tinker-local's tiny model learns visibly at 2e-3; 1e-4 is the cookbook's LoRA default.
    settings.learning_rate = flags.number("--learning-rate", backend.is_local() ? 2e-3 : 1e-4);
    settings.train = samples::read_conversations(samples::data_file(flags, "chat_train.jsonl"));
    settings.test = samples::read_conversations(samples::data_file(flags, "chat_test.jsonl"));
    if (settings.steps < 1 || settings.batch_size < 1) {
      throw std::invalid_argument("--steps and --batch-size must be positive");
    }
    return samples::run_async(backend, [&](tinker::ServiceClient& service) { return run_sft(service, settings); });
  });
}
