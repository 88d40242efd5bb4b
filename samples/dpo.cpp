// dpo: Direct Preference Optimization on chosen/rejected reply pairs with tinker::train.
//
// Each comparison shares a prompt (a conversation from the chat dataset without its last reply)
// and differs in the reply: the chosen one is the dataset's answer, the rejected one is the answer
// to another question of the dataset (fluent, but not an answer to this prompt). `train_dpo` runs
// the cookbook's DPO loop on a run directory: the initial weights saved as the frozen reference,
// per step the reference's logprobs of the batch, tinker::losses::dpo through
// forward_backward_custom, a linearly decaying learning rate, metrics.jsonl with the cookbook's
// keys (dpo_loss, margin, accuracy...). `evaluate_dpo` then scores held-out pairs with the final
// weights against the reference. It exits non-zero unless the training margin grew from the
// first step to the last and the held-out margin grew above 0 (its value before training).
//
//   dpo [--base-model NAME] [--steps N] [--beta B] [--learning-rate LR] [--data-dir DIR] [--log-path DIR]
//
// Mirrors the cookbook's DPO recipe (tinker_cookbook/preference/train_dpo.py).
#include "common/sample_support.hpp"

#include <tinker/train/preference.hpp>

#include <iomanip>
#include <iostream>

namespace {

namespace asio = boost::asio;
namespace renderers = tinker::renderers;
namespace train = tinker::train;

class Settings {
 public:
  train::PreferenceOptions options;
  std::vector<samples::Conversation> train;
  std::vector<samples::Conversation> test;
};

// The rejected reply of conversation i is the answer of conversation i + 1 (a different question).
std::vector<train::Comparison> comparisons_of(const std::vector<samples::Conversation>& conversations) {
  std::vector<train::Comparison> comparisons(conversations.size());
  for (std::size_t i = 0; i < conversations.size(); ++i) {
    comparisons[i].prompt.assign(conversations[i].begin(), conversations[i].end() - 1);
    comparisons[i].chosen = {conversations[i].back()};
    comparisons[i].rejected = {conversations[(i + 1) % conversations.size()].back()};
  }
  return comparisons;
}

asio::awaitable<bool> run_dpo(tinker::ServiceClient& service, Settings settings) {
  const std::string& model = settings.options.run.base_model;
  const auto base = tinker::SamplingSource::from_base_model(model);
  const tinker::SamplingClient base_sampler =
      co_await service.async_create_sampling_client(base, tinker::use_awaitable);
  settings.options.run.renderer_name = renderers::recommended_renderer(model);
  const auto tokenizer = co_await base_sampler.async_get_tokenizer(tinker::use_awaitable);
  const auto renderer = renderers::make_renderer(settings.options.run.renderer_name, tokenizer);
  std::vector<tinker::Datum> train_pairs = train::render_comparisons(*renderer, comparisons_of(settings.train));
  std::vector<tinker::Datum> test_pairs = train::render_comparisons(*renderer, comparisons_of(settings.test));
  settings.options.batch_size = train_pairs.size() / 2;  // every pair in every step
  std::cout << train_pairs.size() / 2 << " training pairs, " << test_pairs.size() / 2 << " held-out pairs, beta "
            << settings.options.beta << "\n";

  const train::PreferenceSummary summary = co_await train::train_dpo(service, train_pairs, settings.options);
  const auto policy = tinker::SamplingSource::from_model_path(summary.final_checkpoint.value().sampler_path.value());
  const auto frozen = tinker::SamplingSource::from_model_path(summary.reference.value().sampler_path.value());
  const tinker::SamplingClient tuned = co_await service.async_create_sampling_client(policy, tinker::use_awaitable);
  const tinker::SamplingClient reference = co_await service.async_create_sampling_client(frozen, tinker::use_awaitable);
  const train::StepMetrics held_out = co_await train::evaluate_dpo(tuned, reference, test_pairs, settings.options.beta);

  const double first = summary.first_margin.value();
  const double last = summary.last_margin.value();
  const bool train_grew = last > first;
  const bool held_out_grew = held_out.get("margin").value() > 0.0;
  std::cout << std::fixed << std::setprecision(4) << "training margin " << first << " -> " << last
            << (train_grew ? " (grew)" : " (DID NOT GROW)") << "\nheld-out margin 0.0000 -> "
            << held_out.get("margin").value() << ", accuracy " << held_out.get("accuracy").value()
            << (held_out_grew ? " (grew)" : " (DID NOT GROW)") << "; run directory "
            << settings.options.run.log_path.string() << "\n";
  co_return train_grew&& held_out_grew;
}

}  // namespace

int main(int argc, char** argv) {
  return samples::guarded_main([&] {
    const samples::Flags flags(argc, argv,
                               {"--base-model", "--steps", "--beta", "--learning-rate", "--data-dir", "--log-path"});
    const samples::Backend backend("dpo");
    Settings settings;
    train::PreferenceOptions& options = settings.options;
    options.run.base_model = backend.base_model(flags);
    options.run.log_path = flags.text("--log-path", (std::filesystem::temp_directory_path() / "tinker-dpo").string());
    options.run.lora_rank = 16;
    options.run.seed = 0;
    options.run.if_exists = train::ExistingRun::overwrite;  // each invocation is a fresh run
    options.max_steps = flags.integer("--steps", 10);
    options.beta = flags.number("--beta", options.beta);
    // tinker-local's tiny model moves visibly at 1e-3; 1e-5 is the cookbook's DPO default.
    options.learning_rate = flags.number("--learning-rate", backend.is_local() ? 1e-3 : 1e-5);
    options.shuffle = false;
    settings.train = samples::read_conversations(samples::data_file(flags, "chat_train.jsonl"));
    settings.test = samples::read_conversations(samples::data_file(flags, "chat_test.jsonl"));
    if (*options.max_steps < 2) throw std::invalid_argument("--steps must be at least 2");
    return samples::run_async(backend, [&](tinker::ServiceClient& service) { return run_dpo(service, settings); });
  });
}
