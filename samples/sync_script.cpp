// sync_script: the sft_chat loop written as a plain script with the blocking facade
// (tinker::sync): no coroutines, no io_context, every call returns when its result is there.
//
// The facade runs the asynchronous SDK on a thread of its own. A submitting call
// (forward_backward, optim_step, sample, ...) returns a tinker::Future as soon as the server
// accepted the request, and `get()` waits for the result, so a step is still pipelined: both
// requests are submitted before either result is awaited. Like sft_chat it trains on the chat
// dataset with a linearly decaying learning rate, exits non-zero unless the held-out loss fell,
// and prints a sampled reply parsed back into a message.
//
//   sync_script [--base-model NAME] [--steps N] [--batch-size B] [--learning-rate LR] [--data-dir DIR]
//
// Mirrors the cookbook's sl_loop.py, which is written against the Python SDK's blocking calls
// (`training_client.forward_backward(...).result()`).
#include "common/sample_support.hpp"

#include <tinker/sync/service_client.hpp>

#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

namespace {

namespace renderers = tinker::renderers;

// The mean loss per trained token of `data`, without training.
double evaluate(const tinker::sync::TrainingClient& training, const std::vector<tinker::Datum>& data) {
  const tinker::ForwardBackwardOutput output =
      training.forward(tinker::ForwardBackwardInput(data, tinker::loss_fn::cross_entropy)).get();
  return samples::mean_nll(data, output);
}

void train(const tinker::sync::TrainingClient& training, const std::vector<tinker::Datum>& data, int steps,
           int batch_size, double learning_rate) {
  for (int step = 0; step < steps; ++step) {
    std::vector<tinker::Datum> batch;
    for (int i = 0; i < batch_size; ++i) batch.push_back(data[(step * batch_size + i) % data.size()]);
    const tinker::AdamParams adam(samples::linear_decay(learning_rate, step, steps));
    // Both submitted before either is awaited: the server has the optimizer step queued.
    auto gradients = training.forward_backward(tinker::ForwardBackwardInput(batch, tinker::loss_fn::cross_entropy));
    auto update = training.optim_step(adam);
    const double loss = samples::mean_nll(batch, gradients.get());
    update.get();
    std::cout << "step " << std::setw(3) << step + 1 << "  lr " << std::scientific << std::setprecision(2)
              << adam.learning_rate << "  train loss " << std::fixed << std::setprecision(4) << loss << "\n";
  }
}

void ask(const tinker::sync::TrainingClient& training, const renderers::Renderer& renderer,
         const samples::Conversation& conversation) {
  const std::vector<renderers::Message> question(conversation.begin(), conversation.end() - 1);
  tinker::SamplingParams params(32, 0.0);
  params.stop = renderer.stop_sequences();
  const tinker::sync::SamplingClient sampler = training.save_weights_and_get_sampling_client();
  const tinker::SampleResponse response = sampler.sample(renderer.build_generation_prompt(question), 1, params).get();
  const renderers::ParsedResponse reply = renderer.parse_response(response.sequences.at(0).tokens);
  std::cout << "user:      " << question.back().text() << "\n"
            << "assistant: " << reply.message.text() << "   [ended by " << renderers::to_string(reply.termination)
            << "]\n";
}

}  // namespace

int main(int argc, char** argv) {
  return samples::guarded_main([&] {
    const samples::Flags flags(argc, argv,
                               {"--base-model", "--steps", "--batch-size", "--learning-rate", "--data-dir"});
    const samples::Backend backend("sync-script");
    const std::string base_model = backend.base_model(flags);
    const int steps = flags.integer("--steps", 20);
    const int batch_size = flags.integer("--batch-size", 20);
    const double learning_rate = flags.number("--learning-rate", backend.is_local() ? 2e-3 : 1e-4);
    const auto train_set = samples::read_conversations(samples::data_file(flags, "chat_train.jsonl"));
    const auto test_set = samples::read_conversations(samples::data_file(flags, "chat_test.jsonl"));

    tinker::sync::ServiceClient service(backend.service_options());
    tinker::LoraTrainingOptions options(base_model, 16);
    options.seed = 0;
    const tinker::sync::TrainingClient training = service.create_lora_training_client(options);
    const auto renderer =
        renderers::make_renderer(renderers::recommended_renderer(base_model), training.get_tokenizer());
    const std::vector<tinker::Datum> train_data = samples::supervised_data(*renderer, train_set);
    const std::vector<tinker::Datum> test_data = samples::supervised_data(*renderer, test_set);

    const double before = evaluate(training, test_data);
    train(training, train_data, steps, batch_size, learning_rate);
    const double after = evaluate(training, test_data);
    ask(training, *renderer, test_set.front());

    const bool fell = after < before;
    std::cout << "held-out loss " << std::fixed << std::setprecision(4) << before << " -> " << after
              << (fell ? " (fell)" : " (DID NOT FALL)") << "\n";
    return fell;
  });
}
