// distill_topk: off-policy distillation of a teacher's next-token distribution into a student,
// from the teacher's top-k prompt logprobs, on tinker::train's supervised trainer.
//
// `topk_distillation_dataset` has the teacher score each rendered conversation once (a sample
// request with `topk_prompt_logprobs`): at every position its K most likely next tokens,
// renormalised over the K, become the student's (N, K) cross-entropy targets, weighted by the
// assistant-token mask. `train_supervised` then trains on them with the built-in cross_entropy
// loss, which minimises -sum_t sum_k p_teacher(k | t) log p_student(k | t); the held-out NLL
// evaluator scores the same quantity on held-out conversations before and after.
//
// The teacher is `--teacher-model` when given (a base model of the service with the student's
// tokenizer); otherwise it is made here by fine-tuning a LoRA on the same data for 20 steps
// (also with train_supervised), which is what runs against tinker-local, whose untrained model
// would have nothing to teach. Exits non-zero unless the student's held-out loss fell.
//
//   distill_topk [--base-model NAME] [--teacher-model NAME] [--top-k K] [--steps N]
//                [--learning-rate LR] [--data-dir DIR] [--log-path DIR]
//
// Mirrors the cookbook's off-policy distillation (tinker_cookbook/distillation/train_off_policy.py),
// with top-k soft targets in place of sampled teacher text.
#include "common/sample_support.hpp"

#include <tinker/train/supervised.hpp>

#include <iomanip>
#include <iostream>

namespace {

namespace asio = boost::asio;
namespace renderers = tinker::renderers;
namespace train = tinker::train;

class Settings {
 public:
  std::string base_model;
  std::string teacher_model;  ///< empty: fine-tune a teacher
  int top_k = 8;
  int steps = 12;
  double learning_rate = 2e-3;
  std::filesystem::path log_path;
  std::vector<samples::Conversation> train;
  std::vector<samples::Conversation> test;
};

// Whole-dataset batches in file order, one fresh LoRA (rank 16) per run directory.
train::SupervisedOptions full_batch_options(const Settings& settings, const std::string& name, std::size_t size) {
  train::SupervisedOptions options;
  options.run.base_model = settings.base_model;
  options.run.log_path = settings.log_path / name;
  options.run.lora_rank = 16;
  options.run.if_exists = train::ExistingRun::overwrite;
  options.run.show_progress = false;
  options.batch_size = size;
  options.shuffle = false;
  options.learning_rate = settings.learning_rate;
  options.eval_every = 0;
  return options;
}

asio::awaitable<tinker::SamplingClient> make_teacher(tinker::ServiceClient& service, Settings settings,
                                                     std::shared_ptr<const renderers::Renderer> renderer) {
  if (!settings.teacher_model.empty()) {
    std::cout << "teacher: " << settings.teacher_model << "\n";
    const auto base = tinker::SamplingSource::from_base_model(settings.teacher_model);
    co_return co_await service.async_create_sampling_client(base, tinker::use_awaitable);
  }
  const train::DatumDataset data = train::render_conversations(*renderer, settings.train);
  train::SupervisedOptions options = full_batch_options(settings, "teacher", data.size());
  options.run.seed = 1;
  options.max_steps = 20;
  options.lr_schedule = train::LrSchedule(train::LrShape::constant);
  options.learning_rate = 2e-3;
  const train::SupervisedSummary summary = co_await train::train_supervised(service, data, options);
  std::cout << "teacher: " << settings.base_model << " fine-tuned for 20 steps on the training conversations\n";
  const auto tuned = tinker::SamplingSource::from_model_path(summary.final_checkpoint.value().sampler_path.value());
  co_return co_await service.async_create_sampling_client(tuned, tinker::use_awaitable);
}

asio::awaitable<bool> run_distillation(tinker::ServiceClient& service, Settings settings) {
  const auto base = tinker::SamplingSource::from_base_model(settings.base_model);
  const tinker::SamplingClient base_sampler =
      co_await service.async_create_sampling_client(base, tinker::use_awaitable);
  const auto tokenizer = co_await base_sampler.async_get_tokenizer(tinker::use_awaitable);
  const std::shared_ptr<const renderers::Renderer> renderer =
      renderers::make_renderer(renderers::recommended_renderer(settings.base_model), tokenizer);
  const tinker::SamplingClient teacher = co_await make_teacher(service, settings, renderer);

  train::TopkDistillationOptions targets;
  targets.top_k = settings.top_k;
  const train::DatumDataset train_data =
      co_await train::topk_distillation_dataset(teacher, renderer, settings.train, targets);
  const train::DatumDataset test_data =
      co_await train::topk_distillation_dataset(teacher, renderer, settings.test, targets);
  std::cout << "top-" << settings.top_k << " teacher distributions for " << train_data.size() << " training and "
            << test_data.size() << " held-out conversations\n";

  // The held-out NLL of (N, K) targets is the student's cross-entropy against the teacher per
  // distilled token (a token's K weights sum to its mask).
  train::SupervisedOptions options = full_batch_options(settings, "student", train_data.size());
  options.run.seed = 0;
  options.run.show_progress = true;
  options.max_steps = settings.steps;
  options.eval_every = settings.steps;  // before the first step (and after the last)
  train::SupervisedEvaluators evaluators;
  evaluators.training.push_back(std::make_shared<train::NllEvaluator>(test_data.data(), "teacher"));
  const train::SupervisedSummary summary = co_await train::train_supervised(service, train_data, options, evaluators);

  const double before = train::RunDirectory(options.run.log_path).read_metrics().front().get("teacher/nll").value();
  const double after = summary.final_evaluation.get("teacher/nll").value();
  const bool fell = after < before;
  std::cout << "held-out loss against the teacher " << std::fixed << std::setprecision(4) << before << " -> " << after
            << (fell ? " (fell)" : " (DID NOT FALL)") << "; its floor, the teacher's entropy, is "
            << train::topk_teacher_entropy(test_data.data(), settings.top_k) << "\n";
  co_return fell;
}

}  // namespace

int main(int argc, char** argv) {
  return samples::guarded_main([&] {
    const samples::Flags flags(
        argc, argv,
        {"--base-model", "--teacher-model", "--top-k", "--steps", "--learning-rate", "--data-dir", "--log-path"});
    const samples::Backend backend("distill-topk");
    Settings settings;
    settings.base_model = backend.base_model(flags);
    settings.teacher_model = flags.text("--teacher-model", "");
    settings.top_k = flags.integer("--top-k", settings.top_k);
    settings.steps = flags.integer("--steps", settings.steps);
    settings.learning_rate = flags.number("--learning-rate", backend.is_local() ? 2e-3 : 1e-4);
    const auto default_log_path = std::filesystem::temp_directory_path() / "tinker-distill-topk";
    settings.log_path = flags.text("--log-path", default_log_path.string());
    settings.train = samples::read_conversations(samples::data_file(flags, "chat_train.jsonl"));
    settings.test = samples::read_conversations(samples::data_file(flags, "chat_test.jsonl"));
    return samples::run_async(backend,
                              [&](tinker::ServiceClient& service) { return run_distillation(service, settings); });
  });
}
