/// @file
/// Sampling evaluators (`doc/training-loops.md#evaluators`): a set of prompts run through the
/// current weights, each reply graded by a callback, reported as accuracy and mean score. The
/// cookbook's `SamplingClientEvaluator` with a grader function, plus its two usual graders: exact
/// match and the numeric answer of its math benchmarks.
#pragma once

#include <tinker/renderers.hpp>
#include <tinker/sampling_client.hpp>
#include <tinker/train/run.hpp>
#include <tinker/train/run_dir.hpp>

#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::train {

/// A grader's verdict on one reply.
class Grade {
 public:
  /// Wrong, score 0.
  Grade() = default;
  /// `correct_`, with score 1 when correct and 0 otherwise.
  explicit Grade(bool correct_) : correct(correct_), score(correct_ ? 1.0 : 0.0) {}
  /// `correct_` with its own `score_` (partial credit).
  Grade(bool correct_, double score_) : correct(correct_), score(score_) {}

  bool correct = false;  ///< counted in the accuracy
  double score = 0.0;    ///< averaged into the mean score
};

/// Grades a reply (the renderer's parse of the sampled tokens) against the prompt's reference
/// answer. Called on the io thread: it must not block for long.
using Grader = std::function<Grade(const renderers::Message& reply, const std::string& reference)>;

/// Correct when the reply's text and the reference are equal after trimming ASCII whitespace at
/// both ends (case and inner spaces count).
Grader exact_match_grader();

/// Correct when the last number in the reply's text (last_number()) is within `tolerance` of the
/// reference read as a number; a reference that is not a number is compared as text with the
/// extracted digits, as the cookbook's GSM8K check does. Throws tinker::error (invalid_argument)
/// for a negative or non-finite tolerance.
Grader numeric_answer_grader(double tolerance = 1e-5);

/// The last number in `text`, as the cookbook's math graders extract it: the last match of an
/// optional '-', digits, then digits and commas, then an optional '.' and digits; commas are
/// dropped ("1,250.5" is 1250.5; "3." is 3). Empty when the text holds no digit.
std::optional<double> last_number(std::string_view text);

/// One prompt of an evaluation set.
class EvalPrompt {
 public:
  /// An empty prompt.
  EvalPrompt() = default;
  /// The conversation `conversation_` to answer, graded against `reference_`.
  EvalPrompt(std::vector<renderers::Message> conversation_, std::string reference_)
      : conversation(std::move(conversation_)), reference(std::move(reference_)) {}
  /// One user message `question`, graded against `reference_`.
  EvalPrompt(std::string question, std::string reference_)
      : conversation{renderers::Message("user", std::move(question))}, reference(std::move(reference_)) {}

  std::vector<renderers::Message> conversation;  ///< rendered as a generation prompt for the assistant
  std::string reference;                         ///< what the grader compares the reply with
};

/// How a GradedSamplingEvaluator samples and names its results.
class SamplingEvaluatorOptions {
 public:
  /// The defaults.
  SamplingEvaluatorOptions() = default;

  /// Prepended to the metric names: "<prefix>accuracy", "<prefix>mean_score".
  std::string metric_prefix = "test/";
  std::int64_t max_tokens = 64;  ///< per reply
  /// 0 = greedy, so an evaluation of the same weights always gives the same numbers.
  double temperature = 0.0;
  std::optional<std::uint64_t> seed;  ///< the sampling seed (matters when temperature > 0)
  /// Most sample requests in flight at once (the prompts run concurrently in windows of this size).
  std::size_t max_in_flight = 64;
};

/// One graded reply.
class GradedReply {
 public:
  std::size_t prompt_index = 0;  ///< into the evaluator's prompts
  renderers::Message reply;      ///< the parsed reply
  Grade grade;                   ///< the grader's verdict
};

/// A SamplingEvaluator over a fixed set of prompts: each prompt rendered with the renderer,
/// sampled once with its stop sequences, parsed, and graded. Reports "<prefix>accuracy" (the
/// fraction graded correct) and "<prefix>mean_score".
class GradedSamplingEvaluator : public SamplingEvaluator {
 public:
  /// Throws tinker::error (invalid_argument) naming the argument for a null renderer or grader,
  /// no prompts, max_tokens < 1, a negative temperature or max_in_flight 0. Every prompt is
  /// rendered here, so a conversation the renderer cannot render fails now, naming its index.
  GradedSamplingEvaluator(std::shared_ptr<const renderers::Renderer> renderer, std::vector<EvalPrompt> prompts,
                          Grader grader, SamplingEvaluatorOptions options = {});

  /// Samples and grades every prompt with `sampler` and returns the metrics.
  boost::asio::awaitable<StepMetrics> evaluate(const SamplingClient& sampler) override;
  /// Every prompt's reply and grade, in prompt order (what evaluate() summarises).
  boost::asio::awaitable<std::vector<GradedReply>> sample_and_grade(const SamplingClient& sampler) const;

  /// The prompts.
  const std::vector<EvalPrompt>& prompts() const noexcept { return prompts_; }
  /// The options.
  const SamplingEvaluatorOptions& options() const noexcept { return options_; }

 private:
  std::shared_ptr<const renderers::Renderer> renderer_;
  std::vector<EvalPrompt> prompts_;
  std::vector<ModelInput> rendered_;
  Grader grader_;
  SamplingEvaluatorOptions options_;
};

}  // namespace tinker::train
