// GradedSamplingEvaluator (include/tinker/train/evaluators.hpp): prompts sampled concurrently,
// replies parsed by the renderer and graded.
#include <tinker/error.hpp>
#include <tinker/future.hpp>
#include <tinker/train/evaluators.hpp>

#include "train/rl/concurrency.hpp"

#include <algorithm>
#include <string>
#include <utility>

namespace tinker::train {
namespace {

void check_evaluator_arguments(const renderers::Renderer* renderer, const std::vector<EvalPrompt>& prompts,
                               const Grader& grader, const SamplingEvaluatorOptions& options) {
  const auto refuse = [](const std::string& what) {
    throw tinker::error(errc::invalid_argument, "GradedSamplingEvaluator: " + what);
  };
  if (renderer == nullptr) refuse("renderer must not be null");
  if (!grader) refuse("grader must not be empty");
  if (prompts.empty()) refuse("prompts must not be empty");
  if (options.max_tokens < 1) {
    refuse("SamplingEvaluatorOptions::max_tokens must be >= 1, got " + std::to_string(options.max_tokens));
  }
  if (!(options.temperature >= 0.0)) {
    refuse("SamplingEvaluatorOptions::temperature must be >= 0, got " + std::to_string(options.temperature));
  }
  if (options.max_in_flight == 0) refuse("SamplingEvaluatorOptions::max_in_flight must be >= 1, got 0");
}

std::vector<ModelInput> render_eval_prompts(const renderers::Renderer& renderer,
                                            const std::vector<EvalPrompt>& prompts) {
  std::vector<ModelInput> rendered;
  rendered.reserve(prompts.size());
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    try {
      rendered.push_back(renderer.build_generation_prompt(prompts[i].conversation));
    } catch (const tinker::error& failure) {
      throw tinker::error(errc::invalid_argument,
                          "GradedSamplingEvaluator: prompts[" + std::to_string(i) + "]: " + failure.diag().message);
    }
  }
  return rendered;
}

// One prompt's request, submitted and awaited in its own coroutine (arguments by value): the
// submission itself can wait on the service, so each prompt needs its own to be in flight at once.
boost::asio::awaitable<SampleResponse> sample_eval_prompt(SamplingClient client, ModelInput prompt,
                                                          SamplingParams params) {
  auto pending = co_await client.async_sample(std::move(prompt), 1, std::move(params), SampleOptions(), use_awaitable);
  co_return co_await pending.async_get(use_awaitable);
}

}  // namespace

GradedSamplingEvaluator::GradedSamplingEvaluator(std::shared_ptr<const renderers::Renderer> renderer,
                                                 std::vector<EvalPrompt> prompts, Grader grader,
                                                 SamplingEvaluatorOptions options)
    : renderer_(std::move(renderer)),
      prompts_(std::move(prompts)),
      grader_(std::move(grader)),
      options_(std::move(options)) {
  check_evaluator_arguments(renderer_.get(), prompts_, grader_, options_);
  rendered_ = render_eval_prompts(*renderer_, prompts_);
}

boost::asio::awaitable<std::vector<GradedReply>> GradedSamplingEvaluator::sample_and_grade(
    const SamplingClient& sampler) const {
  const SamplingClient client = sampler;  // a copy: the caller's reference need not outlive the awaits
  SamplingParams params(options_.max_tokens, options_.temperature);
  params.stop = renderer_->stop_sequences();
  params.seed = options_.seed;

  std::vector<GradedReply> graded;
  graded.reserve(prompts_.size());
  // Windows of max_in_flight requests, each request in its own coroutine, so the prompts of a
  // window are in flight together.
  for (std::size_t first = 0; first < prompts_.size(); first += options_.max_in_flight) {
    const std::size_t last = std::min(prompts_.size(), first + options_.max_in_flight);
    std::vector<boost::asio::awaitable<SampleResponse>> requests;
    requests.reserve(last - first);
    for (std::size_t i = first; i < last; ++i) requests.push_back(sample_eval_prompt(client, rendered_[i], params));
    const std::vector<SampleResponse> responses = co_await rl_detail::gather(std::move(requests));
    for (std::size_t i = first; i < last; ++i) {
      const SampleResponse& response = responses[i - first];
      if (response.sequences.empty()) {
        throw tinker::error(
            errc::invalid_argument,
            "GradedSamplingEvaluator: the sampler returned no sequence for prompts[" + std::to_string(i) + "]");
      }
      GradedReply reply;
      reply.prompt_index = i;
      reply.reply = renderer_->parse_response(response.sequences.front().tokens).message;
      reply.grade = grader_(reply.reply, prompts_[i].reference);
      graded.push_back(std::move(reply));
    }
  }
  co_return graded;
}

boost::asio::awaitable<StepMetrics> GradedSamplingEvaluator::evaluate(const SamplingClient& sampler) {
  const std::vector<GradedReply> graded = co_await sample_and_grade(sampler);
  double correct = 0.0;
  double score = 0.0;
  for (const GradedReply& reply : graded) {
    correct += reply.grade.correct ? 1.0 : 0.0;
    score += reply.grade.score;
  }
  const double count = static_cast<double>(graded.size());
  StepMetrics metrics;
  metrics.set(options_.metric_prefix + "accuracy", correct / count);
  metrics.set(options_.metric_prefix + "mean_score", score / count);
  co_return metrics;
}

}  // namespace tinker::train
