// dpo: Direct Preference Optimization on chosen/rejected reply pairs.
//
// Each pair shares a prompt (a conversation from the chat dataset without its last reply) and
// differs in the reply: the chosen one is the dataset's answer, the rejected one is the answer
// to another question of the dataset (fluent, but not an answer to this prompt). DPO raises the
// policy's log-probability of the chosen reply relative to the rejected one, measured against a
// frozen reference model (here the starting weights), without a reward model:
//   loss = -log sigmoid(beta * ((chosen - chosen_ref) - (rejected - rejected_ref))).
// The loss and its gradient with respect to every token's logprob come from tinker::losses::dpo,
// run through forward_backward_custom; the reference logprobs are computed once, before
// training, with compute_logprobs on a sampler of the initial weights.
//
// It prints the DPO loss, the margin beta * (chosen - rejected log-ratio) and the pair accuracy
// of each step, and the margin on held-out pairs (scored with `forward` and
// tinker::losses::dpo_loss) before and after training. It exits non-zero unless the training
// margin grew from the first step to the last and the held-out margin grew too.
//
//   dpo [--base-model NAME] [--steps N] [--beta B] [--learning-rate LR] [--data-dir DIR]
//
// Mirrors the cookbook's DPO recipe (tinker_cookbook/preference/train_dpo.py: chosen and
// rejected datums interleaved, reference logprobs from the initial weights, dpo_beta 0.1, the
// same metric names).
#include "common/sample_support.hpp"

#include <tinker/losses.hpp>

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
  int steps = 10;
  double beta = tinker::losses::kDefaultDpoBeta;
  double learning_rate = 1e-3;
  std::vector<samples::Conversation> train;
  std::vector<samples::Conversation> test;
};

// The conversation with its last reply replaced by `reply`, trained on that reply only.
tinker::Datum reply_datum(const renderers::Renderer& renderer, const samples::Conversation& conversation,
                          const std::string& reply) {
  samples::Conversation with_reply(conversation.begin(), conversation.end() - 1);
  with_reply.emplace_back("assistant", reply);
  return renderer.build_supervised_example(with_reply, renderers::TrainOn::last_assistant_message).to_datum();
}

// chosen0, rejected0, chosen1, rejected1, ...: the layout tinker::losses::dpo expects. The
// rejected reply of conversation i is the answer of conversation i + 1 (a different question).
std::vector<tinker::Datum> preference_pairs(const renderers::Renderer& renderer,
                                            const std::vector<samples::Conversation>& conversations) {
  std::vector<tinker::Datum> data;
  for (std::size_t i = 0; i < conversations.size(); ++i) {
    const samples::Conversation& other = conversations[(i + 1) % conversations.size()];
    data.push_back(reply_datum(renderer, conversations[i], conversations[i].back().text()));
    data.push_back(reply_datum(renderer, conversations[i], other.back().text()));
  }
  return data;
}

// The DPO metrics of `pairs` under the current weights, without training: a forward pass for
// the logprobs, then the same loss function the training uses, evaluated directly.
asio::awaitable<tinker::Metrics> evaluate(const tinker::TrainingClient& training,
                                          const std::vector<tinker::Datum>& pairs,
                                          const tinker::losses::ReferenceLogprobs& reference, double beta) {
  const tinker::ForwardBackwardInput input(pairs, tinker::loss_fn::cross_entropy);
  auto scoring = co_await training.async_forward(input, tinker::use_awaitable);
  const tinker::ForwardBackwardOutput output = co_await scoring.async_get(tinker::use_awaitable);
  std::vector<std::vector<float>> logprobs;
  for (const tinker::LossFnOutput& record : output.loss_fn_outputs) {
    logprobs.push_back(record.at("logprobs").to_dense_floats());
  }
  co_return tinker::losses::dpo_loss(pairs, logprobs, reference, beta).metrics;
}

// The training steps; returns the margin each step's forward pass saw.
asio::awaitable<std::vector<double>> train(const tinker::TrainingClient& training,
                                           const std::vector<tinker::Datum>& pairs,
                                           const tinker::losses::ReferenceLogprobs& reference,
                                           const Settings& settings) {
  std::vector<double> margins;
  for (int step = 0; step < settings.steps; ++step) {
    const tinker::AdamParams adam(samples::linear_decay(settings.learning_rate, step, settings.steps));
    // A custom loss takes two server round trips (a forward for the logprobs, then a backward
    // with the loss's gradients); the optimizer step is queued behind them.
    auto gradients = co_await training.async_forward_backward_custom(
        pairs, tinker::losses::dpo(reference, settings.beta), tinker::use_awaitable);
    auto update = co_await training.async_optim_step(adam, tinker::use_awaitable);
    const tinker::ForwardBackwardOutput output = co_await gradients.async_get(tinker::use_awaitable);
    co_await update.async_get(tinker::use_awaitable);
    margins.push_back(output.metrics.at("margin"));
    std::cout << "step " << std::setw(3) << step + 1 << std::fixed << std::setprecision(4) << "  dpo_loss "
              << output.metrics.at("dpo_loss") << "  margin " << margins.back() << "  accuracy "
              << output.metrics.at("accuracy") << "\n";
  }
  co_return margins;
}

asio::awaitable<bool> run_dpo(tinker::ServiceClient& service, Settings settings) {
  tinker::LoraTrainingOptions options(settings.base_model, 16);
  options.seed = 0;
  const tinker::TrainingClient training =
      co_await service.async_create_lora_training_client(options, tinker::use_awaitable);
  const auto tokenizer = co_await training.async_get_tokenizer(tinker::use_awaitable);
  const auto renderer = renderers::make_renderer(renderers::recommended_renderer(settings.base_model), tokenizer);
  const std::vector<tinker::Datum> train_pairs = preference_pairs(*renderer, settings.train);
  const std::vector<tinker::Datum> test_pairs = preference_pairs(*renderer, settings.test);
  std::cout << train_pairs.size() / 2 << " training pairs, " << test_pairs.size() / 2 << " held-out pairs, beta "
            << settings.beta << "\n";

  // The reference policy: the weights before any DPO step, frozen in a sampler.
  const tinker::SamplingClient reference =
      co_await training.async_save_weights_and_get_sampling_client(tinker::use_awaitable);
  const tinker::losses::ReferenceLogprobs train_reference =
      co_await tinker::losses::async_reference_logprobs(reference, train_pairs, tinker::use_awaitable);
  const tinker::losses::ReferenceLogprobs test_reference =
      co_await tinker::losses::async_reference_logprobs(reference, test_pairs, tinker::use_awaitable);

  const tinker::Metrics before = co_await evaluate(training, test_pairs, test_reference, settings.beta);
  const std::vector<double> margins = co_await train(training, train_pairs, train_reference, settings);
  const tinker::Metrics after = co_await evaluate(training, test_pairs, test_reference, settings.beta);

  const bool train_grew = margins.back() > margins.front();
  const bool held_out_grew = after.at("margin") > before.at("margin");
  std::cout << std::fixed << std::setprecision(4) << "training margin " << margins.front() << " -> " << margins.back()
            << (train_grew ? " (grew)" : " (DID NOT GROW)") << "\nheld-out margin " << before.at("margin") << " -> "
            << after.at("margin") << ", accuracy " << before.at("accuracy") << " -> " << after.at("accuracy")
            << (held_out_grew ? " (grew)" : " (DID NOT GROW)") << "\n";
  co_return train_grew&& held_out_grew;
}

}  // namespace

int main(int argc, char** argv) {
  return samples::guarded_main([&] {
    const samples::Flags flags(argc, argv, {"--base-model", "--steps", "--beta", "--learning-rate", "--data-dir"});
    const samples::Backend backend("dpo");
    Settings settings;
    settings.base_model = backend.base_model(flags);
    settings.steps = flags.integer("--steps", settings.steps);
    settings.beta = flags.number("--beta", settings.beta);
    // tinker-local's tiny model moves visibly at 1e-3; 1e-5 is the cookbook's DPO default.
    settings.learning_rate = flags.number("--learning-rate", backend.is_local() ? 1e-3 : 1e-5);
    settings.train = samples::read_conversations(samples::data_file(flags, "chat_train.jsonl"));
    settings.test = samples::read_conversations(samples::data_file(flags, "chat_test.jsonl"));
    if (settings.steps < 2) throw std::invalid_argument("--steps must be at least 2");
    return samples::run_async(backend, [&](tinker::ServiceClient& service) { return run_dpo(service, settings); });
  });
}
