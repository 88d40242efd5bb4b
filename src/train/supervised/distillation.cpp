// Off-policy distillation targets: a teacher's top-k next-token distributions as (N, K)
// cross-entropy datums, trained by the supervised trainer.
#include "train/supervised/rendering.hpp"

#include <tinker/error.hpp>

#include <cmath>
#include <string>

namespace tinker::train {
namespace {

// The teacher's top-k candidates at each target position of `datum` (row t + 1 of `teacher`
// predicts target t), weighted by their probabilities renormalised over the K, times the mask.
Datum soft_target_datum(const Datum& datum, const SampleResponse& teacher, int top_k) {
  const std::vector<float> mask = datum.loss_fn_inputs.at("weights").to_dense_floats();
  if (!teacher.topk_prompt_logprobs) {
    throw tinker::error(errc::invalid_argument, "the teacher's response has no topk_prompt_logprobs");
  }
  const auto& rows = *teacher.topk_prompt_logprobs;
  std::vector<std::int64_t> targets;
  std::vector<float> weights;
  const auto k_count = static_cast<std::size_t>(top_k);
  for (std::size_t t = 0; t < mask.size(); ++t) {
    const std::vector<TopkEntry> row =
        t + 1 < rows.size() ? rows[t + 1].value_or(std::vector<TopkEntry>{}) : std::vector<TopkEntry>{};
    double total = 0.0;
    for (const TopkEntry& entry : row) total += std::exp(static_cast<double>(entry.second));
    for (std::size_t k = 0; k < k_count; ++k) {
      const bool present = k < row.size() && total > 0.0;  // absent candidates: token 0, weight 0
      targets.push_back(present ? row[k].first : 0);
      weights.push_back(present ? static_cast<float>(mask[t] * std::exp(row[k].second) / total) : 0.0f);
    }
  }
  const std::vector<std::int64_t> shape{static_cast<std::int64_t>(mask.size()), top_k};
  LossFnInputs inputs{{"target_tokens", TensorData(std::move(targets), shape)},
                      {"weights", TensorData(std::move(weights), shape)}};
  return Datum(datum.model_input, std::move(inputs));
}

}  // namespace

boost::asio::awaitable<DatumDataset> topk_distillation_dataset(SamplingClient teacher,
                                                               std::shared_ptr<const renderers::Renderer> renderer,
                                                               std::vector<Conversation> conversations,
                                                               TopkDistillationOptions options) {
  if (options.top_k < 1) {
    throw tinker::error(errc::invalid_argument,
                        "TopkDistillationOptions::top_k must be >= 1, got " + std::to_string(options.top_k));
  }
  if (!renderer) throw tinker::error(errc::invalid_argument, "topk_distillation_dataset: no renderer");
  std::vector<TruncationReport> reports;
  std::vector<detail::RenderedExample> examples =
      detail::render_examples(*renderer, conversations, options.render, reports);
  const SamplingParams params(1, 1.0);  // one generated token, unused: only the prompt is scored
  const SampleOptions sample_options(true, options.top_k);
  std::vector<Future<SampleResponse>> pending;
  for (const detail::RenderedExample& example : examples) {
    const ModelInput prompt = example.full_input;
    pending.push_back(co_await teacher.async_sample(prompt, 1, params, sample_options, use_awaitable));
  }
  for (std::size_t i = 0; i < examples.size(); ++i) {
    const SampleResponse response = co_await pending[i].async_get(use_awaitable);
    examples[i].datum = soft_target_datum(examples[i].datum, response, options.top_k);
  }
  co_return detail::dataset_of(std::move(examples), std::move(reports));
}

double topk_teacher_entropy(const std::vector<Datum>& data, int top_k) {
  if (top_k < 1) throw tinker::error(errc::invalid_argument, "topk_teacher_entropy: top_k must be >= 1");
  const auto k_count = static_cast<std::size_t>(top_k);
  double entropy = 0.0;
  double tokens = 0.0;
  for (const Datum& datum : data) {
    const std::vector<float> weights = datum.loss_fn_inputs.at("weights").to_dense_floats();
    for (std::size_t row = 0; row + k_count <= weights.size(); row += k_count) {
      double mask = 0.0;  // a row's K weights sum to its mask
      for (std::size_t k = 0; k < k_count; ++k) mask += weights[row + k];
      if (mask <= 0.0) continue;
      for (std::size_t k = 0; k < k_count; ++k) {
        const double p = weights[row + k] / mask;
        if (p > 0.0) entropy -= mask * p * std::log(p);
      }
      tokens += mask;
    }
  }
  return tokens == 0.0 ? 0.0 : entropy / tokens;
}

}  // namespace tinker::train
