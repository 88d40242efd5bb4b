/// @file
/// Single-turn problems as RL environments (`doc/training-loops.md#rl`), as the cookbook's
/// `rl/problem_env.py`: a question rendered as a chat prompt, one reply sampled, the reply graded
/// by a callback, minus a format penalty when it is not well formed. ProblemGroupBuilder rolls
/// the same problem out several times (a GRPO group); ProblemDataset makes batches of such groups
/// from a function of the batch index.
#pragma once

#include <tinker/renderers.hpp>
#include <tinker/train/rl_env.hpp>

#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tinker::train {

/// One problem: the question and the answer a grader compares the reply with.
class Problem {
 public:
  /// An empty problem.
  Problem() = default;
  /// `question_` with reference answer `answer_`.
  Problem(std::string question_, std::string answer_) : question(std::move(question_)), answer(std::move(answer_)) {}

  std::string question;  ///< the user message
  std::string answer;    ///< the reference answer, handed to the checks
};

/// A check of a reply's text against a problem (its answer, or its format).
using ProblemCheck = std::function<bool(const std::string& reply_text, const Problem& problem)>;

/// What makes a reply well formed, besides ProblemEnvOptions::check_format.
enum class FormatTermination {
  stop_sequence,  ///< it ended with the renderer's stop sequence (the cookbook's default)
  clean,          ///< it ended with the stop sequence or end-of-sequence (not cut off)
  any,            ///< termination does not matter
};

/// How a ProblemEnv renders and rewards.
class ProblemEnvOptions {
 public:
  /// The cookbook's defaults: no prefix, format coefficient 0.1, stop-sequence termination.
  ProblemEnvOptions() = default;

  std::vector<renderers::Message> convo_prefix;  ///< messages before the question (few-shot examples)
  double format_coef = 0.1;                      ///< what a badly formed reply loses
  FormatTermination termination = FormatTermination::stop_sequence;  ///< part of being well formed
  ProblemCheck check_format;  ///< the rest of being well formed; empty: any reply
};

/// One attempt at one problem: reward = format_coef * (well_formed - 1) + correct, with step
/// metrics `format` and `correct` (0 or 1).
class ProblemEnv : public Env {
 public:
  /// An env asking `problem` through `renderer`, graded by `check_answer`. Throws tinker::error
  /// (invalid_argument) for a null renderer or an empty check_answer.
  ProblemEnv(std::shared_ptr<const renderers::Renderer> renderer, Problem problem, ProblemCheck check_answer,
             ProblemEnvOptions options = {});
  /// The prefix and the question as a generation prompt, stopping at the renderer's stop sequences.
  boost::asio::awaitable<Observation> initial_observation() override;
  /// Grades the parsed reply; the episode ends.
  boost::asio::awaitable<StepResult> step(const std::vector<TokenId>& action) override;

  /// The reward of a reply: what step() answers, without the coroutine.
  StepResult grade(const std::vector<TokenId>& action) const;

 private:
  std::shared_ptr<const renderers::Renderer> renderer_;
  Problem problem_;
  ProblemCheck check_answer_;
  ProblemEnvOptions options_;
};

/// `group_size` ProblemEnvs of one problem (the cookbook's ProblemGroupBuilder); tagged with the
/// dataset's name.
class ProblemGroupBuilder : public EnvGroupBuilder {
 public:
  /// Throws tinker::error (invalid_argument) for group_size < 1 or what ProblemEnv refuses.
  ProblemGroupBuilder(std::shared_ptr<const renderers::Renderer> renderer, Problem problem, ProblemCheck check_answer,
                      std::size_t group_size, ProblemEnvOptions options = {}, std::string dataset_name = "problems");
  /// The group's envs.
  boost::asio::awaitable<std::vector<std::unique_ptr<Env>>> make_envs() override;
  /// {dataset_name}.
  std::vector<std::string> logging_tags() const override { return {dataset_name_}; }

 private:
  std::shared_ptr<const renderers::Renderer> renderer_;
  Problem problem_;
  ProblemCheck check_answer_;
  std::size_t group_size_;
  ProblemEnvOptions options_;
  std::string dataset_name_;
};

/// Makes problem `index` (0 <= index < problems_per_batch) of batch `batch`; must be
/// deterministic in its arguments so a resumed run sees the same problems.
using ProblemSource = std::function<Problem(std::size_t batch, std::size_t index)>;

/// An RLDataset of `batches` batches, each `problems_per_batch` ProblemGroupBuilders of
/// `group_size` envs, the problems made by `source`.
class ProblemDataset : public RLDataset {
 public:
  /// Throws tinker::error (invalid_argument) naming the first zero count or empty callback.
  ProblemDataset(std::shared_ptr<const renderers::Renderer> renderer, ProblemSource source, ProblemCheck check_answer,
                 std::size_t batches, std::size_t problems_per_batch, std::size_t group_size,
                 ProblemEnvOptions options = {}, std::string dataset_name = "problems");
  /// `batches`.
  std::size_t size() const override { return batches_; }
  /// The groups of batch `index`; tinker::error (invalid_argument) when index >= size().
  std::vector<std::shared_ptr<EnvGroupBuilder>> get_batch(std::size_t index) override;

 private:
  std::shared_ptr<const renderers::Renderer> renderer_;
  ProblemSource source_;
  ProblemCheck check_answer_;
  std::size_t batches_;
  std::size_t problems_per_batch_;
  std::size_t group_size_;
  ProblemEnvOptions options_;
  std::string dataset_name_;
};

}  // namespace tinker::train
