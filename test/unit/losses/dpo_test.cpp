// tinker::losses::dpo: values against hand-computed numbers, gradients against central
// differences, and input errors naming the datum and field.
#include "unit/losses/loss_test_support.hpp"

#include <tinker/losses.hpp>

namespace tinker::losses {
namespace {

using test::datum_of;
using test::expect_invalid;

// One pair, beta 0.1: chosen weighted log-ratio 1*(-2 - -2.5) = 0.5 (its first token has weight
// 0), rejected 1*(-3 - -2) = -1, so z = 0.1 * 1.5 = 0.15, loss = log(1 + e^-0.15) and
// d loss / d chosen logprob = -sigmoid(-0.15) * 0.1 * w.
TEST(DpoLoss, OnePairMatchesHandComputedValues) {
  const std::vector<Datum> data{datum_of(2, {0.0f, 1.0f}), datum_of(1, {1.0f})};
  const CustomLossOutput out = dpo_loss(data, {{-1.0f, -2.0f}, {-3.0f}}, {{-1.5f, -2.5f}, {-2.0f}}, 0.1);
  EXPECT_NEAR(out.loss, 0.6209570477895321, 1e-12);
  ASSERT_EQ(out.gradients.size(), 2u);
  EXPECT_FLOAT_EQ(out.gradients[0][0], 0.0f);
  EXPECT_FLOAT_EQ(out.gradients[0][1], -0.04625701546562505f);
  EXPECT_FLOAT_EQ(out.gradients[1][0], 0.04625701546562505f);
  EXPECT_NEAR(out.metrics.at("dpo_loss"), 0.6209570477895321, 1e-12);
  EXPECT_DOUBLE_EQ(out.metrics.at("accuracy"), 1.0);
  EXPECT_NEAR(out.metrics.at("margin"), 0.15, 1e-12);
  EXPECT_NEAR(out.metrics.at("chosen_reward"), 0.05, 1e-12);
  EXPECT_NEAR(out.metrics.at("rejected_reward"), -0.1, 1e-12);
  EXPECT_DOUBLE_EQ(out.metrics.at("num_pairs"), 1.0);
  for (const auto& [name, value] : out.metrics) EXPECT_EQ(name.find(':'), std::string::npos) << name;
}

// Two pairs: the loss is the mean over pairs, accuracy the fraction of pairs ranked right.
TEST(DpoLoss, AveragesOverPairs) {
  // Pair 0: z = 1 * (1 - 0) = 1; pair 1: z = 1 * (0 - 2) = -2 (ranked wrong).
  const std::vector<Datum> data{datum_of(1, {1.0f}), datum_of(1, {1.0f}), datum_of(1, {1.0f}), datum_of(1, {1.0f})};
  const CustomLossOutput out =
      dpo_loss(data, {{-1.0f}, {-1.0f}, {-1.0f}, {-1.0f}}, {{-2.0f}, {-1.0f}, {-1.0f}, {-3.0f}}, 1.0);
  const double expected = 0.5 * (std::log1p(std::exp(-1.0)) + std::log1p(std::exp(2.0)));
  EXPECT_NEAR(out.loss, expected, 1e-12);
  EXPECT_DOUBLE_EQ(out.metrics.at("accuracy"), 0.5);
  EXPECT_NEAR(out.metrics.at("margin"), -0.5, 1e-12);
  // Pair 1's gradient: -sigmoid(2) / 2 on its chosen token.
  EXPECT_FLOAT_EQ(out.gradients[2][0], static_cast<float>(-0.5 / (1.0 + std::exp(-2.0))));
}

TEST(DpoLoss, StableForHugeMargins) {
  const std::vector<Datum> data{datum_of(1, {1.0f}), datum_of(1, {1.0f})};
  const CustomLossOutput wrong = dpo_loss(data, {{-1.0f}, {-1.0f}}, {{-1.0f}, {-5001.0f}}, 1.0);
  EXPECT_NEAR(wrong.loss, 5000.0, 1e-9);
  EXPECT_FLOAT_EQ(wrong.gradients[0][0], -1.0f);
  const CustomLossOutput right = dpo_loss(data, {{-1.0f}, {-1.0f}}, {{-5001.0f}, {-1.0f}}, 1.0);
  EXPECT_GE(right.loss, 0.0);
  EXPECT_LT(right.loss, 1e-300);
  EXPECT_FLOAT_EQ(right.gradients[0][0], 0.0f);
}

// Random batches of 3 pairs with varied lengths and weights (some zero): every datum's and
// token's gradient equals the central difference of the loss (tolerance in loss_test_support.hpp).
TEST(DpoLoss, GradientMatchesFiniteDifferences) {
  std::mt19937 rng(1234);
  for (double beta : {0.05, 0.1, 1.0}) {
    std::vector<Datum> data;
    std::vector<std::vector<float>> logprobs;
    ReferenceLogprobs reference;
    for (std::size_t i = 0; i < 6; ++i) {
      const std::size_t n = 1 + (i * 3) % 5;
      std::vector<float> weights = test::grid_values(rng, n, 0.0, 1.0);
      weights[0] = 0.0f;  // a prompt token
      data.push_back(datum_of(n, weights));
      logprobs.push_back(test::grid_values(rng, n, -6.0, -0.01));
      reference.push_back(test::grid_values(rng, n, -6.0, -0.01));
    }
    test::expect_gradient_matches_finite_differences(
        [&](const std::vector<std::vector<float>>& lp) { return dpo_loss(data, lp, reference, beta); }, logprobs);
  }
}

TEST(DpoLoss, CustomLossFunctionBindsReferenceAndBeta) {
  const std::vector<Datum> data{datum_of(2, {0.0f, 1.0f}), datum_of(1, {1.0f})};
  const std::vector<std::vector<float>> logprobs{{-1.0f, -2.0f}, {-3.0f}};
  const ReferenceLogprobs reference{{-1.5f, -2.5f}, {-2.0f}};
  const CustomLossFunction loss = dpo(reference, 0.1);
  const CustomLossOutput out = loss(data, logprobs);
  EXPECT_EQ(out.loss, dpo_loss(data, logprobs, reference, 0.1).loss);
  EXPECT_EQ(out.gradients, dpo_loss(data, logprobs, reference, 0.1).gradients);
  EXPECT_EQ(kDefaultDpoBeta, 0.1);
}

TEST(DpoLoss, BadInputNamesTheDatumAndField) {
  const std::vector<float> one{-1.0f};
  std::vector<Datum> data{datum_of(1, {1.0f}), datum_of(1, {1.0f}), datum_of(1, {1.0f}), datum_of(2, {1.0f, 1.0f})};
  const std::vector<std::vector<float>> logprobs{one, one, one, {-1.0f, -1.0f}};
  expect_invalid(
      [&] {
        dpo_loss(data, logprobs, {one, one, one, one});
      },
      {"dpo", "data[3]", "reference logprobs", "length 1 != 2"});
  expect_invalid([&] { dpo_loss(data, logprobs, {one, one, one}); }, {"reference logprobs", "3 entries for 4 datums"});
  expect_invalid(
      [&] {
        dpo_loss(data, {one, one, one, one}, {one, one, one, {-1.0f, -1.0f}});
      },
      {"data[3]", "logprobs", "length 1 != 2"});
  expect_invalid(
      [&] {
        dpo_loss({data[0], data[1], data[2]}, {one, one, one}, {one, one, one});
      },
      {"3 datums", "pairs"});
  expect_invalid([&] { dpo_loss({}, {}, {}); }, {"empty"});
  expect_invalid([&] { dpo(ReferenceLogprobs{}, 0.0); }, {"beta"});
  data[2] = datum_of(1, {});
  expect_invalid(
      [&] {
        dpo_loss(data, logprobs, {one, one, one, {-1.0f, -1.0f}});
      },
      {"data[2].loss_fn_inputs.weights", "missing"});
  data[2] = datum_of(1, {1.0f, 1.0f});
  expect_invalid(
      [&] {
        dpo_loss(data, logprobs, {one, one, one, {-1.0f, -1.0f}});
      },
      {"data[2].loss_fn_inputs.weights", "length 2 != 1"});
  data[2] = Datum(ModelInput::from_ints(std::vector<TokenId>{1}), LossFnInputs{});
  expect_invalid(
      [&] {
        dpo_loss(data, logprobs, {one, one, one, {-1.0f, -1.0f}});
      },
      {"data[2].loss_fn_inputs.target_tokens", "missing"});
}

}  // namespace
}  // namespace tinker::losses
