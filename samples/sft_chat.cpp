// sft_chat: supervised fine-tuning on a chat dataset with tinker::train, then a reply sampled
// from the tuned model.
//
// The dataset (samples/data/chat_{train,test}.jsonl) holds short conversations in the cookbook's
// {"messages": [...]} shape. `render_conversations` turns each into a next-token datum through
// the model's chat renderer (weight 1 on what the assistant wrote, 0 on prompts and role
// headers); `train_supervised` runs the loop: fixed-size batches, a linearly decaying learning
// rate, forward_backward and optim_step pipelined one step ahead, the held-out NLL evaluated
// before the first step and after the last, metrics.jsonl and checkpoints.jsonl in the run
// directory. The program exits non-zero unless the held-out loss fell. Finally it asks the
// tuned model a held-out question and parses the reply back into a message.
//
//   sft_chat [--base-model NAME] [--steps N] [--batch-size B] [--learning-rate LR] [--data-dir DIR]
//            [--log-path DIR]
//
// Mirrors the cookbook's supervised recipe (tinker_cookbook/recipes/sl_loop.py and
// supervised/train.py).
#include "common/sample_support.hpp"

#include <tinker/train/supervised.hpp>

#include <algorithm>
#include <iomanip>
#include <iostream>

namespace {

namespace asio = boost::asio;
namespace renderers = tinker::renderers;
namespace train = tinker::train;

class Settings {
 public:
  train::SupervisedOptions options;
  std::vector<samples::Conversation> train;
  std::vector<samples::Conversation> test;
};

// The held-out question of `conversation`, answered greedily by the final checkpoint's weights.
asio::awaitable<void> ask(tinker::ServiceClient& service, std::string sampler_path,
                          std::shared_ptr<const renderers::Renderer> renderer, samples::Conversation conversation) {
  const std::vector<renderers::Message> prompt_messages(conversation.begin(), conversation.end() - 1);
  const tinker::ModelInput prompt = renderer->build_generation_prompt(prompt_messages);
  tinker::SamplingParams params(32, 0.0);
  params.stop = renderer->stop_sequences();
  const tinker::SampleOptions options;
  const auto source = tinker::SamplingSource::from_model_path(std::move(sampler_path));
  const tinker::SamplingClient sampler = co_await service.async_create_sampling_client(source, tinker::use_awaitable);
  auto sampling = co_await sampler.async_sample(prompt, 1, params, options, tinker::use_awaitable);
  const tinker::SampleResponse response = co_await sampling.async_get(tinker::use_awaitable);
  const renderers::ParsedResponse reply = renderer->parse_response(response.sequences.at(0).tokens);
  std::cout << "user:      " << prompt_messages.back().text() << "\n"
            << "assistant: " << reply.message.text() << "   [ended by " << renderers::to_string(reply.termination)
            << "]\n"
            << "reference: " << conversation.back().text() << "\n";
}

asio::awaitable<bool> run_sft(tinker::ServiceClient& service, Settings settings) {
  const std::string& model = settings.options.run.base_model;
  const auto base = tinker::SamplingSource::from_base_model(model);
  const tinker::SamplingClient base_sampler =
      co_await service.async_create_sampling_client(base, tinker::use_awaitable);
  const auto tokenizer = co_await base_sampler.async_get_tokenizer(tinker::use_awaitable);
  settings.options.run.renderer_name = renderers::recommended_renderer(model);
  const std::shared_ptr<const renderers::Renderer> renderer =
      renderers::make_renderer(settings.options.run.renderer_name, tokenizer);
  std::cout << "model " << model << ", renderer " << renderer->name() << "\n";

  const train::DatumDataset train_data = train::render_conversations(*renderer, settings.train);
  const train::DatumDataset test_data = train::render_conversations(*renderer, settings.test);
  std::cout << train_data.size() << " training and " << test_data.size() << " held-out conversations\n";
  train::SupervisedEvaluators evaluators;
  evaluators.training.push_back(std::make_shared<train::NllEvaluator>(test_data.data()));

  const train::SupervisedSummary summary =
      co_await train::train_supervised(service, train_data, settings.options, evaluators);
  const std::vector<train::StepMetrics> metrics = train::RunDirectory(settings.options.run.log_path).read_metrics();
  const double before = metrics.front().get("test/nll").value();
  const double after = summary.final_evaluation.get("test/nll").value();

  co_await ask(service, summary.final_checkpoint.value().sampler_path.value(), renderer, settings.test.front());
  const bool fell = after < before;
  std::cout << "held-out loss " << std::fixed << std::setprecision(4) << before << " -> " << after
            << (fell ? " (fell)" : " (DID NOT FALL)") << "; run directory " << settings.options.run.log_path.string()
            << "\n";
  co_return fell;
}

}  // namespace

int main(int argc, char** argv) {
  return samples::guarded_main([&] {
    const samples::Flags flags(
        argc, argv, {"--base-model", "--steps", "--batch-size", "--learning-rate", "--data-dir", "--log-path"});
    const samples::Backend backend("sft-chat");
    Settings settings;
    train::SupervisedOptions& options = settings.options;
    options.run.base_model = backend.base_model(flags);
    const auto default_log_path = std::filesystem::temp_directory_path() / "tinker-sft-chat";
    options.run.log_path = flags.text("--log-path", default_log_path.string());
    options.run.lora_rank = 16;
    options.run.seed = 0;
    options.run.if_exists = train::ExistingRun::overwrite;  // each invocation is a fresh run
    options.max_steps = flags.integer("--steps", 20);
    options.batch_size = static_cast<std::size_t>(std::max(0, flags.integer("--batch-size", 20)));
    // tinker-local's tiny model learns visibly at 2e-3; 1e-4 is the cookbook's LoRA default.
    options.learning_rate = flags.number("--learning-rate", backend.is_local() ? 2e-3 : 1e-4);
    options.shuffle = false;                  // file order, cycling: the numbers of doc/recipes.md
    options.eval_every = *options.max_steps;  // before the first step (and after the last)
    settings.train = samples::read_conversations(samples::data_file(flags, "chat_train.jsonl"));
    settings.test = samples::read_conversations(samples::data_file(flags, "chat_test.jsonl"));
    return samples::run_async(backend, [&](tinker::ServiceClient& service) { return run_sft(service, settings); });
  });
}
