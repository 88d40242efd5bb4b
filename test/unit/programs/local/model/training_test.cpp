// The tiny model learns: losses fall, train flags and every AdamParams field have their effect.
#include "programs/local/model/tiny_lm_internal.hpp"
#include "unit/programs/local/model/model_test_support.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>

namespace tinker::local::model {
namespace {

using namespace testing;

double train(const BaseModel& base, LoraState& lora, const ForwardBackwardInput& batch, const AdamParams& adam,
             int steps) {
  for (int i = 0; i < steps; ++i) {
    forward_backward(base, lora, batch, false);
    optim_step(lora, adam);
  }
  return loss_sum(forward_backward(base, lora, batch, true));
}

// Prints how far the loss falls in 40 steps per learning rate and rank at the server's real
// vocabulary size (run with --gtest_also_run_disabled_tests); the source of the documented range.
TEST(TinyLmTraining, DISABLED_LearningRateSweep) {
  const BaseModel base("sweep", small_arch(1000));
  const ForwardBackwardInput batch = sft_batch(1000);
  for (double lr : {5e-5, 1e-4, 3e-4, 1e-3, 3e-3, 5e-3, 1e-2}) {
    for (int rank : {4, 8, 32}) {
      LoraState lora(base, lora_settings(rank));
      const double before = loss_sum(forward_backward(base, lora, batch, true));
      const double after = train(base, lora, batch, AdamParams(lr), 40);
      std::printf("lr %g rank %d: %.3f -> %.3f (ratio %.3f)\n", lr, rank, before, after, after / before);
    }
  }
}

// The documented learning-rate range of the tiny model (see kLoraAlpha): 1e-4 .. 5e-3.
class TinyLmLearning : public ::testing::TestWithParam<double> {};

TEST_P(TinyLmLearning, CrossEntropyHalvesWithinFortySteps) {
  const BaseModel base("learn", small_arch(300));
  const ForwardBackwardInput batch = sft_batch(300, 4, 17);
  LoraState lora(base, lora_settings(8, 1));
  const double before = loss_sum(forward_backward(base, lora, batch, true));
  const double after = train(base, lora, batch, AdamParams(GetParam()), 40);
  EXPECT_LT(after, 0.5 * before) << "lr " << GetParam();
}

INSTANTIATE_TEST_SUITE_P(DocumentedRange, TinyLmLearning, ::testing::Values(1e-4, 1e-3, 5e-3));

TEST(TinyLmTraining, EveryLossDecreasesItsObjective) {
  const BaseModel base("rl", small_arch(61));
  for (const char* loss : {loss_fn::importance_sampling, loss_fn::ppo, loss_fn::cispo, loss_fn::dro}) {
    LoraState lora(base, lora_settings(4, 2));
    std::vector<Datum> data;
    for (int i = 0; i < 3; ++i) {
      // Positive advantages on some sequences, negative on others; q a little off p.
      const float advantage = i == 1 ? -1.0f : 1.0f;
      data.push_back(
          rl_datum(random_tokens(50 + i, 9, 61), std::vector<float>(8, -4.2f), std::vector<float>(8, advantage)));
    }
    ForwardBackwardInput batch(std::move(data), loss);
    // cispo's loss value -c p A with the stop-gradient c = clip(r) is no objective once r moves
    // inside the clip range (the default [0, 4]: c grows with r); with c pinned at 1.2 it is.
    if (std::string(loss) == loss_fn::cispo) {
      batch.loss_fn_config = LossFnConfig{{"clip_low_threshold", 0.8}, {"clip_high_threshold", 1.2}};
    }
    const std::vector<float> p_before = logprobs_of(forward_backward(base, lora, batch, true), 0);
    const double before = loss_sum(forward_backward(base, lora, batch, true));
    const double after = train(base, lora, batch, AdamParams(1e-3), 5);
    EXPECT_LT(after, before) << loss;
    // A positive advantage raises the sampled tokens' logprobs.
    const std::vector<float> p_after = logprobs_of(forward_backward(base, lora, batch, true), 0);
    EXPECT_GT(p_after[7], p_before[7]) << loss;
  }
}

// With the service's default clip range [0, 4], cispo still raises the logprobs of tokens with
// positive advantages and lowers those with negative ones.
TEST(TinyLmTraining, CispoWithDefaultClipRangeFollowsTheAdvantages) {
  const BaseModel base("rl", small_arch(61));
  LoraState lora(base, lora_settings(4, 2));
  std::vector<Datum> data;
  for (int i = 0; i < 2; ++i) {
    const float advantage = i == 1 ? -1.0f : 1.0f;
    data.push_back(
        rl_datum(random_tokens(70 + i, 9, 61), std::vector<float>(8, -4.2f), std::vector<float>(8, advantage)));
  }
  const ForwardBackwardInput batch(std::move(data), loss_fn::cispo);
  const ForwardBackwardOutput before = forward_backward(base, lora, batch, true);
  train(base, lora, batch, AdamParams(1e-3), 5);
  const ForwardBackwardOutput after = forward_backward(base, lora, batch, true);
  double raised = 0.0;
  double lowered = 0.0;
  for (std::size_t t = 0; t < 8; ++t) {
    raised += logprobs_of(after, 0)[t] - logprobs_of(before, 0)[t];
    lowered += logprobs_of(after, 1)[t] - logprobs_of(before, 1)[t];
  }
  EXPECT_GT(raised, 0.0);
  EXPECT_LT(lowered, 0.0);
}

std::size_t expected_parameter_count(const Architecture& a, const LoraSettings& s) {
  const std::size_t r = static_cast<std::size_t>(s.rank);
  const std::size_t d = static_cast<std::size_t>(a.d_model);
  const std::size_t m = static_cast<std::size_t>(a.d_mlp);
  const std::size_t v = static_cast<std::size_t>(a.vocab_size);
  std::size_t count = 0;
  if (s.train_attn) count += 2 * (r * d + d * r);
  if (s.train_mlp) count += (r * d + m * r) + (r * m + d * r);
  if (s.train_unembed) count += r * d + v * r;
  return count;
}

TEST(TinyLmTraining, TrainFlagsDecideWhichMatricesHaveAdaptersAndChange) {
  const BaseModel base("flags", small_arch(67));
  const ForwardBackwardInput batch = sft_batch(67, 2, 9);
  const std::vector<std::array<bool, 3>> combinations = {
      {true, false, false}, {false, true, false}, {false, false, true}, {true, true, true}, {true, false, true}};
  for (const auto& [attn, mlp, unembed] : combinations) {
    LoraSettings settings = lora_settings(4, 3);
    settings.train_attn = attn;
    settings.train_mlp = mlp;
    settings.train_unembed = unembed;
    LoraState lora(base, settings);
    SCOPED_TRACE(::testing::Message() << "attn " << attn << " mlp " << mlp << " unembed " << unembed);
    EXPECT_EQ(lora.parameter_count(), expected_parameter_count(base.arch(), settings));
    EXPECT_EQ(lora.export_adapters().size(), 2u * lora.impl().parts.size());
    train(base, lora, batch, AdamParams(1e-3), 2);
    const EffectiveWeights weights(base, &lora.impl());
    for (Target t : kAllTargets) {
      const bool enabled = (t == Target::query || t == Target::value)       ? attn
                           : (t == Target::mlp_up || t == Target::mlp_down) ? mlp
                                                                            : unembed;
      EXPECT_EQ(lora.impl().trains(t), enabled) << peft_module(t);
      if (enabled) {
        EXPECT_NE(weights.get(t).values, base.weights().target(t).values) << peft_module(t);
      } else {
        EXPECT_EQ(weights.get(t).values, base.weights().target(t).values) << peft_module(t);
      }
    }
  }
}

TEST(TinyLmTraining, ParameterCountScalesWithRank) {
  const BaseModel base("rank", small_arch(67));
  const std::size_t r1 = LoraState(base, lora_settings(1)).parameter_count();
  EXPECT_EQ(LoraState(base, lora_settings(8)).parameter_count(), 8 * r1);
  EXPECT_EQ(LoraState(base, lora_settings(32)).parameter_count(), 32 * r1);
  EXPECT_EQ(r1, expected_parameter_count(base.arch(), lora_settings(1)));
}

class TinyLmAdam : public ::testing::Test {
 protected:
  TinyLmAdam() : base("adam", small_arch(59)), batch(sft_batch(59, 2, 9)), with_moments(base, lora_settings(4, 8)) {
    // Trained adapters, so that A and B both have gradients; `fresh` has the same adapters and
    // gradients but no optimizer history, so its first step is lr * g / (|g| + eps).
    train(base, with_moments, batch, AdamParams(1e-3), 2);
    fresh = LoraState::deserialize(base, with_moments.serialize(false), false);
    forward_backward(base, with_moments, batch, false);
    forward_backward(base, *fresh, batch, false);
  }

  // Parameter change of one step with `params` from `start` (default: `fresh`).
  std::vector<double> delta(const AdamParams& params, OptimStepResponse* response = nullptr,
                            const LoraState* start = nullptr) {
    if (start == nullptr) start = &*fresh;
    LoraState lora = *start;
    const OptimStepResponse r = optim_step(lora, params);
    if (response != nullptr) *response = r;
    std::vector<double> d;
    for (std::size_t i = 0; i < lora.impl().params.size(); ++i) {
      d.push_back(double{lora.impl().params[i]} - start->impl().params[i]);
    }
    return d;
  }

  static double norm(const std::vector<double>& v) {
    double s = 0.0;
    for (double x : v) s += x * x;
    return std::sqrt(s);
  }

  double grad_norm() const { return norm(fresh->impl().grads); }

  BaseModel base;
  ForwardBackwardInput batch;
  LoraState with_moments;
  std::optional<LoraState> fresh;
};

// An independent transcription of the documented AdamW step, including float storage.
TEST_F(TinyLmAdam, StepFollowsTheDocumentedFormula) {
  AdamParams p(3e-3);
  p.beta1 = 0.8;
  p.beta2 = 0.9;
  p.eps = 1e-6;
  p.weight_decay = 0.1;
  p.grad_clip_norm = 0.5 * norm(with_moments.impl().grads);
  LoraState lora = with_moments;
  const LoraState::Impl& s = with_moments.impl();
  const double t = static_cast<double>(s.adam_step + 1);
  optim_step(lora, p);
  for (std::size_t i = 0; i < s.params.size(); ++i) {
    const double g = s.grads[i] * (0.5 * grad_norm() / norm(s.grads));
    const float m = static_cast<float>(p.beta1 * s.adam_m[i] + (1 - p.beta1) * g);
    const float v = static_cast<float>(p.beta2 * s.adam_v[i] + (1 - p.beta2) * g * g);
    const double m_hat = m / (1 - std::pow(p.beta1, t));
    const double v_hat = v / (1 - std::pow(p.beta2, t));
    const float expected = static_cast<float>(s.params[i] * (1 - p.learning_rate * p.weight_decay) -
                                              p.learning_rate * m_hat / (std::sqrt(v_hat) + p.eps));
    ASSERT_EQ(lora.impl().adam_m[i], m) << i;
    ASSERT_EQ(lora.impl().adam_v[i], v) << i;
    ASSERT_NEAR(lora.impl().params[i], expected, 1e-7 * (1 + std::abs(expected))) << i;
  }
  EXPECT_EQ(lora.impl().adam_step, s.adam_step + 1);
}

TEST_F(TinyLmAdam, LearningRateScalesTheStep) {
  const std::vector<double> small = delta(AdamParams(1e-3));
  const std::vector<double> large = delta(AdamParams(4e-3));
  EXPECT_GT(norm(small), 0.0);
  EXPECT_NEAR(norm(large) / norm(small), 4.0, 1e-3);
  EXPECT_EQ(norm(delta(AdamParams(0.0))), 0.0);
}

TEST_F(TinyLmAdam, WeightDecayShrinksTheParameters) {
  LoraState no_grads = with_moments;
  no_grads.impl().grads.assign(no_grads.impl().grads.size(), 0.0);
  no_grads.impl().adam_m.assign(no_grads.impl().adam_m.size(), 0.0f);
  AdamParams p(1e-2);
  p.weight_decay = 0.5;
  const std::vector<float> before = no_grads.impl().params;
  optim_step(no_grads, p);
  for (std::size_t i = 0; i < before.size(); ++i) {
    ASSERT_FLOAT_EQ(no_grads.impl().params[i], before[i] * (1 - 1e-2 * 0.5)) << i;
  }
  AdamParams no_decay(1e-2);
  LoraState untouched = with_moments;
  untouched.impl().grads.assign(untouched.impl().grads.size(), 0.0);
  untouched.impl().adam_m.assign(untouched.impl().adam_m.size(), 0.0f);
  optim_step(untouched, no_decay);
  EXPECT_EQ(untouched.impl().params, before);
}

TEST_F(TinyLmAdam, GradClipScalesTheGradientAndTheMetricReportsTheRawNorm) {
  AdamParams p(1e-3);
  LoraState unclipped = *fresh;
  const OptimStepResponse raw = optim_step(unclipped, p);
  EXPECT_NEAR(raw.metrics->at("grad_norm:mean"), grad_norm(), 1e-12 * grad_norm());
  std::vector<double> m(unclipped.impl().adam_m.begin(), unclipped.impl().adam_m.end());
  EXPECT_NEAR(norm(m), (1 - p.beta1) * grad_norm(), 1e-6 * grad_norm());

  // Clipped to a quarter of its norm: the first moment (1 - beta1) g shrinks accordingly.
  p.grad_clip_norm = 0.25 * grad_norm();
  LoraState clipped = *fresh;
  const OptimStepResponse reported = optim_step(clipped, p);
  EXPECT_NEAR(reported.metrics->at("grad_norm:mean"), grad_norm(), 1e-12 * grad_norm());
  m.assign(clipped.impl().adam_m.begin(), clipped.impl().adam_m.end());
  EXPECT_NEAR(norm(m), (1 - p.beta1) * p.grad_clip_norm, 1e-6 * grad_norm());
  // With optimizer history the smaller gradient changes the step itself.
  EXPECT_NE(delta(p, nullptr, &with_moments), delta(AdamParams(1e-3), nullptr, &with_moments));
  // A threshold above the norm changes nothing.
  p.grad_clip_norm = 2 * grad_norm();
  EXPECT_EQ(delta(p), delta(AdamParams(1e-3)));
}

TEST_F(TinyLmAdam, BetasAndEpsHaveTheirEffect) {
  const AdamParams defaults(1e-3);
  AdamParams beta1 = defaults;
  beta1.beta1 = 0.5;
  AdamParams beta2 = defaults;
  beta2.beta2 = 0.5;
  AdamParams eps = defaults;
  eps.eps = 1e3;
  // The betas weigh the history against the new gradient, so they show once there is history.
  const std::vector<double> reference = delta(defaults, nullptr, &with_moments);
  EXPECT_NE(delta(beta1, nullptr, &with_moments), reference);
  EXPECT_NE(delta(beta2, nullptr, &with_moments), reference);
  // eps bounds the step for small second moments: lr g / (|g| + eps) instead of lr sign(g).
  EXPECT_LT(norm(delta(eps)), 0.1 * norm(delta(defaults)));
}

TEST(TinyLmTraining, ForwardOnlyChangesNothing) {
  const BaseModel base("forward-only", small_arch(59));
  const ForwardBackwardInput batch = sft_batch(59, 2, 9);
  LoraState lora(base, lora_settings(4, 8));
  train(base, lora, batch, AdamParams(1e-3), 2);
  const std::string before = lora.serialize(true);
  const ForwardBackwardOutput forward = forward_backward(base, lora, batch, true);
  EXPECT_THAT(lora.impl().grads, ::testing::Each(0.0));
  EXPECT_EQ(lora.serialize(true), before);
  // The same outputs as a full forward_backward, which does accumulate.
  EXPECT_EQ(forward_backward(base, lora, batch, false), forward);
  EXPECT_THAT(lora.impl().grads, ::testing::Contains(::testing::Ne(0.0)));
}
}  // namespace
}  // namespace tinker::local::model
