// GradedSamplingEvaluator (include/tinker/train/evaluators.hpp) against tinker-local: the metrics
// of a known set of right and wrong references, equality with prompts sampled one at a time, and
// the prompts really in flight together.
#include "integration/support/local_service.hpp"

#include <tinker/renderers.hpp>
#include <tinker/train/evaluators.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace tinker::test {
namespace {

namespace asio = boost::asio;
using train::EvalPrompt;
using train::GradedSamplingEvaluator;
using train::SamplingEvaluatorOptions;
using train::StepMetrics;

constexpr std::int64_t reply_tokens = 6;

std::vector<EvalPrompt> addition_prompts(int count) {
  std::vector<EvalPrompt> prompts;
  for (int i = 0; i < count; ++i) {
    prompts.emplace_back("What is " + std::to_string(i) + " + " + std::to_string(i + 1) + "?",
                         std::to_string(2 * i + 1));
  }
  return prompts;
}

SamplingEvaluatorOptions evaluator_options(std::string prefix) {
  SamplingEvaluatorOptions options;
  options.metric_prefix = std::move(prefix);
  options.max_tokens = reply_tokens;
  return options;
}

// Each prompt sampled on its own (greedy, the evaluator's parameters) and parsed: what the
// evaluator must see.
asio::awaitable<std::vector<std::string>> replies_one_at_a_time(SamplingClient sampler,
                                                                std::shared_ptr<const renderers::Renderer> renderer,
                                                                std::vector<EvalPrompt> prompts) {
  SamplingParams params(reply_tokens, 0.0);
  params.stop = renderer->stop_sequences();
  std::vector<std::string> replies;
  for (const EvalPrompt& prompt : prompts) {
    auto pending = co_await sampler.async_sample(renderer->build_generation_prompt(prompt.conversation), 1, params,
                                                 SampleOptions(), use_awaitable);
    const SampleResponse response = co_await pending.async_get(use_awaitable);
    replies.push_back(renderer->parse_response(response.sequences.at(0).tokens).message.text());
  }
  co_return replies;
}

// tiny-lm's ChatML tokenizer renders with qwen3_instruct.
asio::awaitable<std::shared_ptr<const renderers::Renderer>> renderer_of(SamplingClient sampler) {
  auto tokenizer = co_await sampler.async_get_tokenizer(use_awaitable);
  co_return std::shared_ptr<const renderers::Renderer>(renderers::make_renderer("qwen3_instruct", tokenizer));
}

class SamplingEvaluatorTest : public LocalService {};

TEST_F(SamplingEvaluatorTest, ReportsTheAccuracyOfKnownRightAndWrongReferences) {
  auto service = make_service_client();
  const auto [replies, metrics, graded_texts] =
      run([](ServiceClient& svc)
              -> asio::awaitable<std::tuple<std::vector<std::string>, StepMetrics, std::vector<std::string>>> {
        const SamplingClient sampler = co_await base_sampler(svc);
        const auto renderer = co_await renderer_of(sampler);
        std::vector<EvalPrompt> prompts = addition_prompts(6);
        const std::vector<std::string> replies = co_await replies_one_at_a_time(sampler, renderer, prompts);
        // The references of the first four are the replies themselves (right); the last two are
        // replies with an "x" added (wrong).
        for (std::size_t i = 0; i < prompts.size(); ++i) prompts[i].reference = replies[i] + (i >= 4 ? "x" : "");
        GradedSamplingEvaluator evaluator(renderer, prompts, train::exact_match_grader(), evaluator_options("eval/"));
        const StepMetrics metrics = co_await evaluator.evaluate(sampler);
        std::vector<std::string> graded_texts;
        for (const train::GradedReply& reply : co_await evaluator.sample_and_grade(sampler)) {
          graded_texts.push_back(reply.reply.text());
        }
        co_return std::make_tuple(replies, metrics, graded_texts);
      }(*service));
  ASSERT_EQ(metrics.values.size(), 2u);
  EXPECT_EQ(metrics.values[0].first, "eval/accuracy");
  EXPECT_EQ(metrics.values[1].first, "eval/mean_score");
  EXPECT_DOUBLE_EQ(*metrics.get("eval/accuracy"), 4.0 / 6.0);
  EXPECT_DOUBLE_EQ(*metrics.get("eval/mean_score"), 4.0 / 6.0);
  // Concurrent sampling gives each prompt the reply it gets alone, in prompt order.
  EXPECT_EQ(graded_texts, replies);
}

TEST_F(SamplingEvaluatorTest, PartialScoresAverageIntoTheMeanScore) {
  auto service = make_service_client();
  const StepMetrics metrics = run([](ServiceClient& svc) -> asio::awaitable<StepMetrics> {
    const SamplingClient sampler = co_await base_sampler(svc);
    const auto renderer = co_await renderer_of(sampler);
    // Prompt i scores i / 4 and is correct from 2 on, whatever the reply.
    const train::Grader by_reference = [](const renderers::Message&, const std::string& reference) {
      const double score = std::stod(reference) / 4.0;
      return train::Grade(score >= 0.5, score);
    };
    std::vector<EvalPrompt> prompts;
    for (int i = 0; i < 4; ++i) prompts.emplace_back("Say " + std::to_string(i), std::to_string(i));
    SamplingEvaluatorOptions options = evaluator_options("test/");
    options.max_in_flight = 3;  // two windows
    GradedSamplingEvaluator evaluator(renderer, prompts, by_reference, options);
    co_return co_await evaluator.evaluate(sampler);
  }(*service));
  EXPECT_DOUBLE_EQ(*metrics.get("test/accuracy"), 0.5);
  EXPECT_DOUBLE_EQ(*metrics.get("test/mean_score"), (0.0 + 0.25 + 0.5 + 0.75) / 4.0);
}

class DelayedSamplingEvaluatorTest : public SamplingEvaluatorTest {
 protected:
  local::ServerOptions server_options() const override {
    local::ServerOptions options = fast_server_options();
    local::FaultRule hold("asample", local::FaultKind::delay);
    hold.delay = std::chrono::milliseconds(1000);
    hold.probability = 1.0;
    options.faults.push_back(hold);
    return options;
  }
};

TEST_F(DelayedSamplingEvaluatorTest, ThePromptsAreInFlightTogether) {
  auto service = make_service_client();
  const StepMetrics metrics = run([](ServiceClient& svc) -> asio::awaitable<StepMetrics> {
    const SamplingClient sampler = co_await base_sampler(svc);
    const auto renderer = co_await renderer_of(sampler);
    GradedSamplingEvaluator evaluator(renderer, addition_prompts(4), train::numeric_answer_grader(),
                                      evaluator_options("test/"));
    co_return co_await evaluator.evaluate(sampler);
  }(*service));
  EXPECT_TRUE(metrics.get("test/accuracy").has_value());
  // Each asample is held 1 s: one at a time, their arrivals would spread over 3 s or more.
  std::vector<std::chrono::system_clock::time_point> arrivals;
  for (const local::RequestRecord& record : server->audit().requests) {
    if (record.path.ends_with("/asample")) arrivals.push_back(record.arrived);
  }
  ASSERT_EQ(arrivals.size(), 4u);
  const auto [first, last] = std::minmax_element(arrivals.begin(), arrivals.end());
  EXPECT_LT(*last - *first, std::chrono::milliseconds(900));
}

}  // namespace
}  // namespace tinker::test
