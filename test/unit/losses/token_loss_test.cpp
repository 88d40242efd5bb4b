// tinker::losses per-token terms: hand-computed values, composition, central differences for
// every ready-made term and for sums of them, and input errors naming the datum and field.
#include "unit/losses/loss_test_support.hpp"

#include <tinker/losses.hpp>

namespace tinker::losses {
namespace {

using test::datum_of;
using test::expect_invalid;

TEST(TokenLoss, NllIsMinusWeightedLogprob) {
  const CustomLossOutput out = evaluate(nll(), {datum_of(2, {1.0f, 0.5f})}, {{-1.0f, -2.0f}});
  EXPECT_DOUBLE_EQ(out.loss, 2.0);
  EXPECT_EQ(out.gradients, (std::vector<std::vector<float>>{{-1.0f, -0.5f}}));
  EXPECT_DOUBLE_EQ(out.metrics.at("nll"), 2.0);
  EXPECT_DOUBLE_EQ(out.metrics.at("loss"), 2.0);
}

TEST(TokenLoss, NllWithoutWeightsCountsEveryToken) {
  const CustomLossOutput out = evaluate(nll(), {datum_of(2, {})}, {{-1.0f, -2.0f}});
  EXPECT_DOUBLE_EQ(out.loss, 3.0);
  EXPECT_EQ(out.gradients, (std::vector<std::vector<float>>{{-1.0f, -1.0f}}));
}

// -exp(p - q) A at p = -1, q = -1.2, A = 2: -2 e^0.2; its derivative is the same number.
TEST(TokenLoss, PolicyGradientIsImportanceWeightedAdvantage) {
  const std::vector<TokenInputs> inputs{TokenInputs({2.0f}, {-1.2f})};
  const CustomLossOutput out = evaluate(policy_gradient(), {datum_of(1, {})}, {{-1.0f}}, inputs);
  EXPECT_NEAR(out.loss, -2.4428055163203397, 1e-6);  // inputs are float: -1.2f is not -1.2
  EXPECT_NEAR(out.gradients[0][0], -2.4428055163203397, 1e-5);
  EXPECT_NEAR(out.metrics.at("policy_gradient"), out.loss, 1e-12);
}

// d = p - ref = 0.5: k1 = 0.5, k2 = 0.125, k3 = e^-0.5 - 1 + 0.5; derivatives 1, 0.5, 1 - e^-0.5.
TEST(TokenLoss, KlEstimatorsMatchHandComputedValues) {
  const std::vector<TokenInputs> inputs{TokenInputs({}, {}, {-1.5f})};
  const std::vector<Datum> data{datum_of(1, {})};
  const CustomLossOutput k1 = evaluate(kl_to_reference(KlEstimator::k1), data, {{-1.0f}}, inputs);
  EXPECT_DOUBLE_EQ(k1.loss, 0.5);
  EXPECT_FLOAT_EQ(k1.gradients[0][0], 1.0f);
  const CustomLossOutput k2 = evaluate(kl_to_reference(KlEstimator::k2), data, {{-1.0f}}, inputs);
  EXPECT_DOUBLE_EQ(k2.loss, 0.125);
  EXPECT_FLOAT_EQ(k2.gradients[0][0], 0.5f);
  const CustomLossOutput k3 = evaluate(kl_to_reference(), data, {{-1.0f}}, inputs);
  EXPECT_NEAR(k3.loss, 0.10653065971263342, 1e-12);
  EXPECT_FLOAT_EQ(k3.gradients[0][0], 0.3934693402873666f);
  EXPECT_DOUBLE_EQ(k3.metrics.at("kl_to_reference"), k3.loss);
}

TEST(TokenLoss, ScalingAndSumsCombineValuesGradientsAndMetrics) {
  const std::vector<TokenInputs> inputs{TokenInputs({}, {}, {-1.5f, -2.0f})};
  const std::vector<Datum> data{datum_of(2, {1.0f, 0.5f})};
  const std::vector<std::vector<float>> logprobs{{-1.0f, -2.0f}};
  const CustomLossOutput a = evaluate(nll(), data, logprobs, inputs);
  const CustomLossOutput b = evaluate(kl_to_reference(KlEstimator::k2), data, logprobs, inputs);
  const CustomLossOutput sum = evaluate(nll() / 4.0 + 2.0 * kl_to_reference(KlEstimator::k2), data, logprobs, inputs);
  EXPECT_NEAR(sum.loss, a.loss / 4.0 + 2.0 * b.loss, 1e-12);
  EXPECT_NEAR(sum.metrics.at("nll"), a.loss / 4.0, 1e-12);
  EXPECT_NEAR(sum.metrics.at("kl_to_reference"), 2.0 * b.loss, 1e-12);
  for (std::size_t t = 0; t < 2; ++t) {
    EXPECT_FLOAT_EQ(sum.gradients[0][t], a.gradients[0][t] / 4.0f + 2.0f * b.gradients[0][t]);
  }
  const CustomLossOutput diff = evaluate(nll() - nll() * 3.0, data, logprobs, inputs);
  EXPECT_NEAR(diff.loss, -2.0 * a.loss, 1e-12);
  EXPECT_NEAR(diff.metrics.at("nll"), -2.0 * a.loss, 1e-12);
}

TEST(TokenLoss, UserTermSeesTokenAndDeclaredInputs) {
  // An entropy-bonus-like term: advantage * logprob^2, derivative 2 * advantage * logprob.
  TokenLoss squared = term(
      "squared", [](const TokenView& v) { return *v.advantage * v.logprob * v.logprob; },
      [](const TokenView& v) { return 2.0 * *v.advantage * v.logprob; }, {TokenInput::advantages});
  const std::vector<TokenInputs> inputs{TokenInputs({1.0f, 3.0f}, {}), TokenInputs({2.0f}, {})};
  const CustomLossOutput out = evaluate(squared, {datum_of(2, {}), datum_of(1, {})}, {{-1.0f, -2.0f}, {-0.5f}}, inputs);
  EXPECT_DOUBLE_EQ(out.loss, 1.0 + 12.0 + 0.5);
  EXPECT_EQ(out.gradients, (std::vector<std::vector<float>>{{-2.0f, -12.0f}, {-2.0f}}));

  std::vector<std::pair<std::size_t, std::size_t>> seen;
  TokenLoss probe = term(
      "probe",
      [&seen](const TokenView& v) {
        EXPECT_FALSE(v.sampling_logprob.has_value());  // not declared
        seen.emplace_back(v.datum, v.position);
        return 0.0;
      },
      [](const TokenView&) { return 0.0; });
  evaluate(probe, {datum_of(2, {}), datum_of(1, {})}, {{-1.0f, -2.0f}, {-0.5f}}, inputs);
  EXPECT_EQ(seen, (std::vector<std::pair<std::size_t, std::size_t>>{{0, 0}, {0, 1}, {1, 0}}));
}

// Random batches: nll + policy_gradient + each KL estimator + a user term, every datum and token
// checked against central differences (tolerance in loss_test_support.hpp).
TEST(TokenLoss, GradientsMatchFiniteDifferences) {
  std::mt19937 rng(99);
  std::vector<Datum> data;
  std::vector<std::vector<float>> logprobs;
  std::vector<TokenInputs> inputs;
  for (std::size_t i = 0; i < 4; ++i) {
    const std::size_t n = 1 + (i * 2) % 5;
    data.push_back(datum_of(n, i % 2 == 0 ? test::grid_values(rng, n, 0.0, 1.0) : std::vector<float>{}));
    logprobs.push_back(test::grid_values(rng, n, -4.0, -0.01));
    inputs.emplace_back(test::grid_values(rng, n, -2.0, 2.0), test::grid_values(rng, n, -4.0, -0.01),
                        test::grid_values(rng, n, -4.0, -0.01));
  }
  TokenLoss cubic = term(
      "cubic", [](const TokenView& v) { return v.weight * v.logprob * v.logprob * v.logprob / 3.0; },
      [](const TokenView& v) { return v.weight * v.logprob * v.logprob; });
  const std::vector<TokenLoss> losses{nll(),
                                      policy_gradient(),
                                      kl_to_reference(KlEstimator::k1),
                                      kl_to_reference(KlEstimator::k2),
                                      kl_to_reference(KlEstimator::k3),
                                      cubic,
                                      0.5 * nll() + policy_gradient() - 0.1 * cubic + 0.05 * kl_to_reference()};
  for (const TokenLoss& loss : losses) {
    SCOPED_TRACE(loss.terms.front().name);
    test::expect_gradient_matches_finite_differences(
        [&](const std::vector<std::vector<float>>& lp) { return evaluate(loss, data, lp, inputs); }, logprobs);
  }
}

TEST(TokenLoss, PerTokenReturnsTheSameAsEvaluate) {
  const std::vector<TokenInputs> inputs{TokenInputs({2.0f}, {-1.2f})};
  const CustomLossFunction loss = per_token(policy_gradient() + nll(), inputs);
  const CustomLossOutput out = loss({datum_of(1, {1.0f})}, {{-1.0f}});
  const CustomLossOutput expected = evaluate(policy_gradient() + nll(), {datum_of(1, {1.0f})}, {{-1.0f}}, inputs);
  EXPECT_EQ(out.loss, expected.loss);
  EXPECT_EQ(out.gradients, expected.gradients);
  EXPECT_EQ(out.metrics, expected.metrics);
}

TEST(TokenLoss, BadInputNamesTheDatumAndField) {
  const std::vector<Datum> data{datum_of(1, {}), datum_of(1, {}), datum_of(1, {}), datum_of(2, {})};
  const std::vector<std::vector<float>> logprobs{{-1.0f}, {-1.0f}, {-1.0f}, {-1.0f, -1.0f}};
  std::vector<TokenInputs> inputs(4, TokenInputs({1.0f}, {-1.0f}));
  expect_invalid([&] { evaluate(policy_gradient(), data, logprobs, inputs); },
                 {"data[3]", "advantages", "length 1 != 2"});
  inputs[3] = TokenInputs({1.0f, 1.0f}, {});
  expect_invalid([&] { evaluate(policy_gradient(), data, logprobs, inputs); },
                 {"data[3]", "missing sampling_logprobs", "policy_gradient"});
  expect_invalid([&] { evaluate(kl_to_reference(), data, logprobs, inputs); },
                 {"data[0]", "missing reference_logprobs", "kl_to_reference"});
  expect_invalid([&] { evaluate(policy_gradient(), data, logprobs); }, {"inputs", "0 entries for 4 datums"});
  expect_invalid([&] { evaluate(nll(), data, {{-1.0f}}); }, {"logprobs", "1 entries for 4 datums"});
  expect_invalid(
      [&] {
        evaluate(nll(), data, {{-1.0f}, {-1.0f}, {-1.0f}, {-1.0f}});
      },
      {"data[3]", "logprobs", "length 1 != 2"});
  expect_invalid([&] { evaluate(TokenLoss(), data, logprobs); }, {"no terms"});
  expect_invalid(
      [&] {
        evaluate(nll(), {datum_of(1, {1.0f, 2.0f})}, {{-1.0f}});
      },
      {"data[0].loss_fn_inputs.weights", "length 2 != 1"});
  const auto zero = [](const TokenView&) { return 0.0; };
  expect_invalid([&] { term("a:b", zero, zero); }, {"a:b", "':'"});
  expect_invalid([&] { term("", zero, zero); }, {"empty"});
  expect_invalid([&] { term("loss", zero, zero); }, {"'loss'"});
  expect_invalid([&] { term("x", zero, nullptr); }, {"derivative"});
  const TokenLoss blows_up = term(
      "blows_up", [](const TokenView& v) { return 1.0 / (v.logprob + 1.0); }, zero);
  expect_invalid([&] { evaluate(blows_up, {datum_of(1, {})}, {{-1.0f}}); },
                 {"data[0]", "blows_up", "non-finite value", "token 0"});
}

}  // namespace
}  // namespace tinker::losses
