// distill_topk: off-policy distillation of a teacher's next-token distribution into a student,
// from the teacher's top-k prompt logprobs.
//
// For each conversation of the chat dataset, the teacher scores the whole rendered conversation
// once (a sample request with `topk_prompt_logprobs`, whose generated token is ignored): at every
// position it returns its K most likely next tokens and their logprobs. Renormalised over those
// K, they become the student's (N, K) cross-entropy inputs: `target_tokens[t]` the teacher's K
// candidates, `weights[t]` their probabilities (times the assistant-token mask, so only replies
// are distilled). The built-in cross_entropy loss then minimises
//   -sum_t sum_k p_teacher(k | t) * log p_student(k | t),
// the cross-entropy from the teacher's (truncated) distribution to the student's: a richer
// signal per token than the single sampled or reference token of supervised training.
//
// The teacher is `--teacher-model` when given (a base model of the service, e.g. a larger model
// with the student's tokenizer); otherwise it is made here by briefly fine-tuning a LoRA on the
// same data, which is what runs against tinker-local, whose untrained model would be a teacher
// with nothing to teach. The program prints the student's loss against the teacher on the
// held-out conversations before and after distillation and exits non-zero unless it fell.
//
//   distill_topk [--base-model NAME] [--teacher-model NAME] [--top-k K] [--steps N]
//                [--learning-rate LR] [--data-dir DIR]
//
// Mirrors the cookbook's off-policy distillation (tinker_cookbook/distillation/train_off_policy.py
// and recipes/distillation/off_policy_reasoning.py), with top-k soft targets in place of sampled
// teacher text.
#include "common/sample_support.hpp"

#include <cmath>
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
  std::string teacher_model;  ///< empty: fine-tune a teacher
  int top_k = 8;
  int steps = 12;
  double learning_rate = 2e-3;
  std::vector<samples::Conversation> train;
  std::vector<samples::Conversation> test;
};

// A few supervised steps on `data`: the local teacher.
asio::awaitable<void> fine_tune(const tinker::TrainingClient& training, const std::vector<tinker::Datum>& data,
                                int steps, double learning_rate) {
  for (int step = 0; step < steps; ++step) {
    const tinker::ForwardBackwardInput input(data, tinker::loss_fn::cross_entropy);
    const tinker::AdamParams adam(learning_rate);
    auto gradients = co_await training.async_forward_backward(input, tinker::use_awaitable);
    auto update = co_await training.async_optim_step(adam, tinker::use_awaitable);
    co_await gradients.async_get(tinker::use_awaitable);
    co_await update.async_get(tinker::use_awaitable);
  }
}

asio::awaitable<tinker::SamplingClient> make_teacher(tinker::ServiceClient& service, const Settings& settings,
                                                     const std::vector<tinker::Datum>& supervised) {
  if (!settings.teacher_model.empty()) {
    std::cout << "teacher: " << settings.teacher_model << "\n";
    const auto source = tinker::SamplingSource::from_base_model(settings.teacher_model);
    co_return co_await service.async_create_sampling_client(source, tinker::use_awaitable);
  }
  tinker::LoraTrainingOptions options(settings.base_model, 16);
  options.seed = 1;
  const tinker::TrainingClient teacher =
      co_await service.async_create_lora_training_client(options, tinker::use_awaitable);
  co_await fine_tune(teacher, supervised, 20, 2e-3);
  std::cout << "teacher: " << settings.base_model << " fine-tuned for 20 steps on the training conversations\n";
  co_return co_await teacher.async_save_weights_and_get_sampling_client(tinker::use_awaitable);
}

// The teacher's top-k candidates at each target position of `datum` (rows of `teacher`, one
// per token of the full conversation), as an (N, K) datum for the student, weighted by the
// teacher's probabilities renormalised over the K, on the positions `datum` trains.
tinker::Datum soft_target_datum(const tinker::Datum& datum, const tinker::SampleResponse& teacher, int top_k) {
  const std::vector<float> mask = datum.loss_fn_inputs.at("weights").to_dense_floats();
  const auto& rows = teacher.topk_prompt_logprobs.value();  // row i: candidates for token i
  std::vector<std::int64_t> targets;
  std::vector<float> weights;
  for (std::size_t t = 0; t < mask.size(); ++t) {
    const std::vector<tinker::TopkEntry> row = rows.at(t + 1).value_or(std::vector<tinker::TopkEntry>{});
    double total = 0.0;
    for (const tinker::TopkEntry& entry : row) total += std::exp(static_cast<double>(entry.second));
    for (std::size_t k = 0; k < static_cast<std::size_t>(top_k); ++k) {
      const bool present = k < row.size();  // absent candidates: token 0 with weight 0
      targets.push_back(present ? row[k].first : 0);
      weights.push_back(present ? static_cast<float>(mask[t] * std::exp(row[k].second) / total) : 0.0f);
    }
  }
  const std::vector<std::int64_t> shape{static_cast<std::int64_t>(mask.size()), top_k};
  tinker::LossFnInputs inputs{{"target_tokens", tinker::TensorData(targets, shape)},
                              {"weights", tinker::TensorData(weights, shape)}};
  return tinker::Datum(datum.model_input, std::move(inputs));
}

// One teacher request per conversation, all in flight at once.
asio::awaitable<std::vector<tinker::Datum>> distillation_data(const tinker::SamplingClient& teacher,
                                                              const renderers::Renderer& renderer,
                                                              const std::vector<samples::Conversation>& conversations,
                                                              int top_k) {
  const tinker::SamplingParams params(1, 1.0);  // the one generated token is not used
  const tinker::SampleOptions options(true, top_k);
  std::vector<renderers::SupervisedExample> examples;
  std::vector<tinker::Future<tinker::SampleResponse>> pending;
  for (const samples::Conversation& conversation : conversations) {
    examples.push_back(renderer.build_supervised_example(conversation, renderers::TrainOn::all_assistant_messages));
    pending.push_back(
        co_await teacher.async_sample(examples.back().model_input, 1, params, options, tinker::use_awaitable));
  }
  std::vector<tinker::Datum> data;
  for (std::size_t i = 0; i < examples.size(); ++i) {
    const tinker::SampleResponse response = co_await pending[i].async_get(tinker::use_awaitable);
    data.push_back(soft_target_datum(examples[i].to_datum(), response, top_k));
  }
  co_return data;
}

// The lowest loss a student can reach: the entropy of the teacher's renormalised top-k
// distributions, per distilled token (the cross-entropy equals it when the student matches).
double teacher_entropy(const std::vector<tinker::Datum>& data, int top_k) {
  double entropy = 0.0;
  double tokens = 0.0;
  for (const tinker::Datum& datum : data) {
    const std::vector<float> weights = datum.loss_fn_inputs.at("weights").to_dense_floats();
    for (std::size_t row = 0; row < weights.size(); row += static_cast<std::size_t>(top_k)) {
      double mask = 0.0;  // the K weights of a row sum to its mask
      for (int k = 0; k < top_k; ++k) mask += weights[row + k];
      if (mask <= 0.0) continue;
      for (int k = 0; k < top_k; ++k) {
        const double p = weights[row + k] / mask;
        if (p > 0.0) entropy -= mask * p * std::log(p);
      }
      tokens += mask;
    }
  }
  return tokens == 0.0 ? 0.0 : entropy / tokens;
}

asio::awaitable<void> distill(const tinker::TrainingClient& student, const std::vector<tinker::Datum>& data,
                              const Settings& settings) {
  for (int step = 0; step < settings.steps; ++step) {
    const tinker::ForwardBackwardInput input(data, tinker::loss_fn::cross_entropy);
    const tinker::AdamParams adam(samples::linear_decay(settings.learning_rate, step, settings.steps));
    auto gradients = co_await student.async_forward_backward(input, tinker::use_awaitable);
    auto update = co_await student.async_optim_step(adam, tinker::use_awaitable);
    const tinker::ForwardBackwardOutput output = co_await gradients.async_get(tinker::use_awaitable);
    co_await update.async_get(tinker::use_awaitable);
    std::cout << "step " << std::setw(3) << step + 1 << "  loss against the teacher " << std::fixed
              << std::setprecision(4) << samples::mean_nll(data, output) << "\n";
  }
}

asio::awaitable<bool> run_distillation(tinker::ServiceClient& service, Settings settings) {
  tinker::LoraTrainingOptions options(settings.base_model, 16);
  options.seed = 0;
  const tinker::TrainingClient student =
      co_await service.async_create_lora_training_client(options, tinker::use_awaitable);
  const auto tokenizer = co_await student.async_get_tokenizer(tinker::use_awaitable);
  const auto renderer = renderers::make_renderer(renderers::recommended_renderer(settings.base_model), tokenizer);

  const tinker::SamplingClient teacher =
      co_await make_teacher(service, settings, samples::supervised_data(*renderer, settings.train));
  const std::vector<tinker::Datum> train_data =
      co_await distillation_data(teacher, *renderer, settings.train, settings.top_k);
  const std::vector<tinker::Datum> test_data =
      co_await distillation_data(teacher, *renderer, settings.test, settings.top_k);
  std::cout << "top-" << settings.top_k << " teacher distributions for " << train_data.size() << " training and "
            << test_data.size() << " held-out conversations\n";

  // The student's cross-entropy against the teacher's distribution, per distilled token (the
  // (N, K) weights of a token sum to its mask, so mean_nll's per-token mean still applies).
  const double before = co_await samples::forward_nll(student, test_data);
  co_await distill(student, train_data, settings);
  const double after = co_await samples::forward_nll(student, test_data);
  const bool fell = after < before;
  std::cout << "held-out loss against the teacher " << std::fixed << std::setprecision(4) << before << " -> " << after
            << (fell ? " (fell)" : " (DID NOT FALL)") << "; its floor, the teacher's entropy, is "
            << teacher_entropy(test_data, settings.top_k) << "\n";
  co_return fell;
}

}  // namespace

int main(int argc, char** argv) {
  return samples::guarded_main([&] {
    const samples::Flags flags(
        argc, argv, {"--base-model", "--teacher-model", "--top-k", "--steps", "--learning-rate", "--data-dir"});
    const samples::Backend backend("distill-topk");
    Settings settings;
    settings.base_model = backend.base_model(flags);
    settings.teacher_model = flags.text("--teacher-model", "");
    settings.top_k = flags.integer("--top-k", settings.top_k);
    settings.steps = flags.integer("--steps", settings.steps);
    settings.learning_rate = flags.number("--learning-rate", backend.is_local() ? 2e-3 : 1e-4);
    settings.train = samples::read_conversations(samples::data_file(flags, "chat_train.jsonl"));
    settings.test = samples::read_conversations(samples::data_file(flags, "chat_test.jsonl"));
    if (settings.top_k < 1 || settings.steps < 1) throw std::invalid_argument("--top-k and --steps must be positive");
    return samples::run_async(backend,
                              [&](tinker::ServiceClient& service) { return run_distillation(service, settings); });
  });
}
