// cross_entropy with (N, K) target_tokens and weights (top-k distillation) and the loss-function
// defaults the service documents.
#include "programs/local/model/losses.hpp"
#include "programs/local/model/tiny_lm_internal.hpp"
#include "unit/programs/local/model/model_test_support.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

namespace tinker::local::model {
namespace {

using namespace testing;
using ::testing::HasSubstr;

constexpr int kTopkLossVocab = 59;

class TinyLmTopK : public ::testing::Test {
 protected:
  TinyLmTopK() : base("topk", small_arch(kTopkLossVocab)), lora(base, lora_settings(4, 9)) {
    // Train a little so that the adapters are not zero.
    for (int i = 0; i < 3; ++i) {
      forward_backward(base, lora, sft_batch(kTopkLossVocab, 2, 9), false);
      optim_step(lora, AdamParams(1e-2));
    }
  }

  // Column j of a top-k datum as a plain (N,) cross_entropy datum.
  static Datum column(const Datum& topk, std::size_t j) {
    const TensorData& targets = topk.loss_fn_inputs.at("target_tokens");
    const auto k = static_cast<std::size_t>((*targets.shape)[1]);
    const std::vector<std::int64_t> all_targets = targets.to_dense_ints();
    const std::vector<float> all_weights = topk.loss_fn_inputs.at("weights").to_dense_floats();
    std::vector<std::int64_t> column_targets;
    std::vector<float> column_weights;
    for (std::size_t i = j; i < all_targets.size(); i += k) {
      column_targets.push_back(all_targets[i]);
      column_weights.push_back(all_weights[i]);
    }
    LossFnInputs inputs;
    inputs.emplace("target_tokens", TensorData(std::move(column_targets)));
    inputs.emplace("weights", TensorData(std::move(column_weights)));
    return Datum(topk.model_input, std::move(inputs));
  }

  BaseModel base;
  LoraState lora;
};

TEST_F(TinyLmTopK, LogprobsAreShapedNByKAndEqualThoseOfEachColumn) {
  const Datum topk = topk_datum(random_tokens(5, 8, kTopkLossVocab), 4, kTopkLossVocab, 17);
  for (bool forward_only : {true, false}) {
    LoraState copy = lora;
    const ForwardBackwardOutput out =
        forward_backward(base, copy, ForwardBackwardInput({topk}, loss_fn::cross_entropy), forward_only);
    const TensorData& logprobs = out.loss_fn_outputs.at(0).at("logprobs");
    ASSERT_EQ(logprobs.shape, (std::vector<std::int64_t>{7, 4}));
    EXPECT_EQ(out.loss_fn_outputs.at(0).at("elementwise_loss").shape, (std::vector<std::int64_t>{7, 4}));
    double expected_loss = 0.0;
    for (std::size_t j = 0; j < 4; ++j) {
      const ForwardBackwardOutput single =
          forward_backward(base, lora, ForwardBackwardInput({column(topk, j)}, loss_fn::cross_entropy), true);
      const std::vector<float> column_logprobs = logprobs_of(single, 0);
      for (std::size_t t = 0; t < 7; ++t) EXPECT_EQ(logprobs.floats()[t * 4 + j], column_logprobs[t]);
      expected_loss += loss_sum(single);
    }
    EXPECT_NEAR(loss_sum(out), expected_loss, 1e-9 * std::abs(expected_loss));
  }
}

// One (N, K) datum accumulates the same gradient as its K columns as (N,) datums.
TEST_F(TinyLmTopK, GradientEqualsTheSumOverColumns) {
  const Datum topk = topk_datum(random_tokens(6, 10, kTopkLossVocab), 3, kTopkLossVocab, 23);
  LoraState together = lora;
  together.impl().grads.assign(together.impl().grads.size(), 0.0);
  forward_backward(base, together, ForwardBackwardInput({topk}, loss_fn::cross_entropy), false);
  LoraState apart = lora;
  apart.impl().grads.assign(apart.impl().grads.size(), 0.0);
  forward_backward(base, apart,
                   ForwardBackwardInput({column(topk, 0), column(topk, 1), column(topk, 2)}, loss_fn::cross_entropy),
                   false);
  double diff2 = 0.0;
  double norm2 = 0.0;
  for (std::size_t i = 0; i < together.impl().grads.size(); ++i) {
    const double d = together.impl().grads[i] - apart.impl().grads[i];
    diff2 += d * d;
    norm2 += apart.impl().grads[i] * apart.impl().grads[i];
  }
  ASSERT_GT(norm2, 0.0);
  EXPECT_LT(std::sqrt(diff2 / norm2), 1e-12);
}

// The top-k loss falls under training, as distillation needs.
TEST_F(TinyLmTopK, TrainingLowersTheTopKLoss) {
  std::vector<Datum> data;
  for (int i = 0; i < 3; ++i) {
    Datum datum = topk_datum(random_tokens(40 + i, 9, kTopkLossVocab), 5, kTopkLossVocab, 60 + i);
    // Soft targets: non-negative weights summing to one per position.
    std::vector<float> weights(8 * 5, 0.2f);
    datum.loss_fn_inputs["weights"] = TensorData(std::move(weights), std::vector<std::int64_t>{8, 5});
    data.push_back(std::move(datum));
  }
  const ForwardBackwardInput batch(std::move(data), loss_fn::cross_entropy);
  const double before = loss_sum(forward_backward(base, lora, batch, true));
  for (int step = 0; step < 10; ++step) {
    forward_backward(base, lora, batch, false);
    optim_step(lora, AdamParams(1e-3));
  }
  EXPECT_LT(loss_sum(forward_backward(base, lora, batch, true)), before);
}

TEST_F(TinyLmTopK, ForwardBaseTakesTopKInputs) {
  const Datum topk = topk_datum(random_tokens(7, 5, kTopkLossVocab), 2, kTopkLossVocab, 3);
  const ForwardBackwardOutput out = forward_base(base, ForwardBackwardInput({topk}, loss_fn::cross_entropy));
  EXPECT_EQ(out.loss_fn_outputs.at(0).at("logprobs").shape, (std::vector<std::int64_t>{4, 2}));
}

void expect_user_error(const BaseModel& base, const ForwardBackwardInput& input, const std::string& message) {
  try {
    forward_base(base, input);
    ADD_FAILURE() << "accepted, expected: " << message;
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr(message));
  }
}

TEST_F(TinyLmTopK, BadShapesNameTheDatumAndField) {
  const Datum good = topk_datum(random_tokens(8, 6, kTopkLossVocab), 3, kTopkLossVocab, 4);
  const auto with = [&](const std::string& key, TensorData tensor) {
    Datum datum = good;
    datum.loss_fn_inputs[key] = std::move(tensor);
    return ForwardBackwardInput({good, datum}, loss_fn::cross_entropy);
  };
  expect_user_error(base, with("weights", TensorData(std::vector<float>(15, 1.0f))),
                    "data[1].loss_fn_inputs.weights: shape (15,) != target_tokens shape (5, 3)");
  expect_user_error(base, with("weights", TensorData(std::vector<float>(15, 1.0f), std::vector<std::int64_t>{3, 5})),
                    "data[1].loss_fn_inputs.weights: shape (3, 5) != target_tokens shape (5, 3)");
  expect_user_error(
      base, with("target_tokens", TensorData(std::vector<std::int64_t>(12, 1), std::vector<std::int64_t>{4, 3})),
      "data[1].loss_fn_inputs.target_tokens: shape (4, 3), expected (5,) or, for cross_entropy, (5, K)");
  expect_user_error(base,
                    with("target_tokens", TensorData(std::vector<std::int64_t>{}, std::vector<std::int64_t>{5, 0})),
                    "data[1].loss_fn_inputs.target_tokens: shape (5, 0)");
  std::vector<std::int64_t> out_of_vocab(15, 1);
  out_of_vocab[7] = kTopkLossVocab;
  expect_user_error(base, with("target_tokens", TensorData(out_of_vocab, std::vector<std::int64_t>{5, 3})),
                    "data[1].loss_fn_inputs.target_tokens[2][1]: token id 59 is outside the vocabulary");

  Datum rl = rl_datum(random_tokens(9, 6, kTopkLossVocab), std::vector<float>(5, -3.0f), std::vector<float>(5, 1.0f));
  rl.loss_fn_inputs["target_tokens"] = TensorData(std::vector<std::int64_t>(10, 1), std::vector<std::int64_t>{5, 2});
  for (const char* loss : {loss_fn::importance_sampling, loss_fn::ppo, loss_fn::cispo, loss_fn::dro}) {
    expect_user_error(base, ForwardBackwardInput({rl}, loss),
                      "data[0].loss_fn_inputs.target_tokens: shape (5, 2); (N, K) targets are supported by "
                      "cross_entropy only");
  }
}

// Defaults as the service documents them (see losses.hpp for the sources).
TEST(LossDefaults, PpoClipsToPointEightOnePointTwo) {
  const LossConfig config = parse_loss_config(ForwardBackwardInput({}, loss_fn::ppo));
  EXPECT_EQ(config.clip_low, 0.8);
  EXPECT_EQ(config.clip_high, 1.2);
}

TEST(LossDefaults, CispoIsOneSidedZeroToFour) {
  const LossConfig config = parse_loss_config(ForwardBackwardInput({}, loss_fn::cispo));
  EXPECT_EQ(config.clip_low, 0.0);
  EXPECT_EQ(config.clip_high, 4.0);
  // The stop-gradient coefficient: ratios 0.1 and 3 pass unchanged, 5 is capped at 4.
  DatumInputs datum;
  datum.sampling_logprobs = {-2.0, -2.0, -2.0};
  datum.advantages = {1.0, 1.0, 1.0};
  EXPECT_NEAR(token_loss(config, datum, 0, -2.0 + std::log(0.1)).dloss_dlogprob, -0.1, 1e-12);
  EXPECT_NEAR(token_loss(config, datum, 1, -2.0 + std::log(3.0)).dloss_dlogprob, -3.0, 1e-12);
  EXPECT_NEAR(token_loss(config, datum, 2, -2.0 + std::log(5.0)).dloss_dlogprob, -4.0, 1e-12);
}

TEST(LossDefaults, ConfigOverridesTheDefaults) {
  ForwardBackwardInput input({}, loss_fn::cispo);
  input.loss_fn_config = LossFnConfig{{"clip_low_threshold", 0.5}, {"clip_high_threshold", 2.0}};
  const LossConfig config = parse_loss_config(input);
  EXPECT_EQ(config.clip_low, 0.5);
  EXPECT_EQ(config.clip_high, 2.0);
  input.loss_fn_config = LossFnConfig{{"clip_high_threshold", 8.0}};
  EXPECT_EQ(parse_loss_config(input).clip_low, 0.0);
  EXPECT_EQ(parse_loss_config(input).clip_high, 8.0);
}

TEST(LossDefaults, DroBeta) {
  EXPECT_EQ(parse_loss_config(ForwardBackwardInput({}, loss_fn::dro)).beta, kDefaultDroBeta);
}

}  // namespace
}  // namespace tinker::local::model
