// Finite-difference checks of the analytic LoRA gradients for every loss and every trained part.
#include "programs/local/model/losses.hpp"
#include "programs/local/model/tiny_lm_internal.hpp"
#include "unit/programs/local/model/model_test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace tinker::local::model {
namespace {

using namespace testing;

// A fresh adapter has B = 0, which makes dL/dA vanish; give every B a non-trivial value so that
// both factors of every part are exercised. Every parameter is then snapped to a multiple of
// 2^-20, so that the finite-difference points p +- h, p +- 2h (h = 2^-13) are exact floats.
void randomize_adapters(LoraState& lora, std::uint64_t seed) {
  LoraState::Impl& s = lora.impl();
  Rng rng(seed);
  for (const LoraPart& part : s.parts) {
    for (std::size_t i = part.b_offset; i < part.b_offset + static_cast<std::size_t>(part.out) * s.settings.rank; ++i) {
      s.params[i] = static_cast<float>(0.004 * rng.normal());
    }
  }
  for (float& p : s.params) p = std::ldexp(std::round(std::ldexp(p, 20)), -20);
}

// Indices of a spread of A and B entries of every part.
std::vector<std::size_t> sample_indices(const LoraState::Impl& s, int per_factor) {
  std::vector<std::size_t> indices;
  for (const LoraPart& part : s.parts) {
    const std::size_t a_size = static_cast<std::size_t>(s.settings.rank) * part.in;
    const std::size_t b_size = static_cast<std::size_t>(part.out) * s.settings.rank;
    for (int k = 0; k < per_factor; ++k) {
      indices.push_back(part.a_offset + (a_size * k * 7 / 11 + k) % a_size);
      indices.push_back(part.b_offset + (b_size * k * 5 / 13 + 3 * k) % b_size);
    }
  }
  return indices;
}

std::vector<double> analytic_gradient(const BaseModel& base, LoraState lora, const ForwardBackwardInput& batch) {
  forward_backward(base, lora, batch, false);
  return lora.impl().grads;
}

// Fourth-order central differences of loss:sum (truncation error O(h^4)).
double numeric_derivative(const BaseModel& base, LoraState& lora, const ForwardBackwardInput& batch, std::size_t i) {
  float& param = lora.impl().params[i];
  const float original = param;
  const float h = 0x1.0p-13f;
  auto loss_at = [&](float offset) {
    param = original + offset;
    return loss_sum(forward_backward(base, lora, batch, true));
  };
  const double derivative = (loss_at(-2 * h) - 8 * loss_at(-h) + 8 * loss_at(h) - loss_at(2 * h)) / (12.0 * h);
  param = original;
  return derivative;
}

// Relative error ||numeric - analytic|| / ||analytic|| per part, over the sampled entries.
void expect_gradients_match(const BaseModel& base, LoraState& lora, const ForwardBackwardInput& batch) {
  const std::vector<double> analytic = analytic_gradient(base, lora, batch);
  const LoraState::Impl& s = lora.impl();
  ASSERT_EQ(s.parts.size(), 5u);
  for (const LoraPart& part : s.parts) {
    double diff2 = 0.0;
    double norm2 = 0.0;
    for (std::size_t i : sample_indices(s, 6)) {
      const bool in_part =
          i >= part.a_offset && i < part.b_offset + static_cast<std::size_t>(part.out) * s.settings.rank;
      if (!in_part) continue;
      const double numeric = numeric_derivative(base, lora, batch, i);
      diff2 += (numeric - analytic[i]) * (numeric - analytic[i]);
      norm2 += analytic[i] * analytic[i];
    }
    SCOPED_TRACE(peft_module(part.target));
    ASSERT_GT(std::sqrt(norm2), 1e-6) << "gradient vanishes, the check would prove nothing";
    EXPECT_LT(std::sqrt(diff2 / norm2), 1e-3);
  }
}

class TinyLmGradient : public ::testing::Test {
 protected:
  TinyLmGradient() : base("grad-check", small_arch(61)), lora(base, lora_settings(4, 3)) {
    randomize_adapters(lora, 5);
  }

  // Learner logprobs of `sequences` under the current adapters, to place q relative to them.
  std::vector<std::vector<float>> current_logprobs(const std::vector<std::vector<TokenId>>& sequences) {
    std::vector<Datum> data;
    for (const auto& s : sequences) data.push_back(cross_entropy_datum(s));
    const auto out = forward_backward(base, lora, ForwardBackwardInput(std::move(data), loss_fn::cross_entropy), true);
    std::vector<std::vector<float>> result;
    for (std::size_t i = 0; i < sequences.size(); ++i) result.push_back(logprobs_of(out, i));
    return result;
  }

  // An RL batch whose ratios r = exp(p - q) sit at exp(offset) for offsets cycling through
  // `offsets`: well inside or well outside the clip range, never near its edges.
  ForwardBackwardInput rl_batch(const std::string& loss, const std::vector<double>& offsets) {
    const std::vector<std::vector<TokenId>> sequences = {random_tokens(21, 9, 61), random_tokens(22, 7, 61)};
    const auto p = current_logprobs(sequences);
    std::vector<Datum> data;
    int k = 0;
    for (std::size_t d = 0; d < sequences.size(); ++d) {
      std::vector<float> q;
      std::vector<float> advantages;
      for (float logprob : p[d]) {
        q.push_back(static_cast<float>(logprob - offsets[k % offsets.size()]));
        advantages.push_back(k % 3 == 0 ? -1.0f : (k % 3 == 1 ? 0.5f : 1.5f));
        ++k;
      }
      data.push_back(rl_datum(sequences[d], q, advantages));
    }
    return ForwardBackwardInput(std::move(data), loss);
  }

  BaseModel base;
  LoraState lora;
};

TEST_F(TinyLmGradient, CrossEntropy) {
  ForwardBackwardInput batch = sft_batch(61, 2, 10);
  batch.data[1] = cross_entropy_datum(random_tokens(99, 8, 61), 0.7f);
  expect_gradients_match(base, lora, batch);
}

// Top-k distillation: (N, K) targets and weights, loss -sum w[n,k] logprob(target[n,k]).
TEST_F(TinyLmGradient, TopKCrossEntropy) {
  std::vector<Datum> data{topk_datum(random_tokens(31, 9, 61), 3, 61, 1),
                          topk_datum(random_tokens(32, 6, 61), 1, 61, 2)};
  expect_gradients_match(base, lora, ForwardBackwardInput(std::move(data), loss_fn::cross_entropy));
}

TEST_F(TinyLmGradient, ImportanceSampling) {
  expect_gradients_match(base, lora, rl_batch(loss_fn::importance_sampling, {0.3, -0.2, 0.05, -0.6}));
}

TEST_F(TinyLmGradient, PpoInsideAndOutsideTheClipRange) {
  expect_gradients_match(base, lora, rl_batch(loss_fn::ppo, {0.05, -0.5, 0.5, -0.08, 0.0}));
}

TEST_F(TinyLmGradient, PpoWithCustomClipThresholds) {
  ForwardBackwardInput batch = rl_batch(loss_fn::ppo, {0.05, -0.5, 0.5, -0.08});
  batch.loss_fn_config = LossFnConfig{{"clip_low_threshold", 0.5}, {"clip_high_threshold", 1.5}};
  expect_gradients_match(base, lora, batch);
}

// Where the ratio is clipped, clip(r) is constant, so the loss's own derivative equals the
// stop-gradient derivative and finite differences of loss:sum check it directly. With the
// service's defaults (clip range [0, 4]) only ratios above 4 are clipped.
TEST_F(TinyLmGradient, CispoWhereTheClipFactorIsConstant) {
  expect_gradients_match(base, lora, rl_batch(loss_fn::cispo, {1.6, 1.9, 2.2, 1.7}));
  ForwardBackwardInput two_sided = rl_batch(loss_fn::cispo, {0.5, -0.5, 0.7, -0.4});
  two_sided.loss_fn_config = LossFnConfig{{"clip_low_threshold", 0.8}, {"clip_high_threshold", 1.2}};
  expect_gradients_match(base, lora, two_sided);
}

// Inside the clip range the stop-gradient factor c = r is frozen: the gradient must be that of
// -sum c A p with c held fixed, i.e. cross_entropy with weights c A. Ratios from e^-1.5 to e^1
// are inside the default range [0, 4] (and many outside the PPO-like [0.8, 1.2]).
TEST_F(TinyLmGradient, CispoHoldsTheRatioConstantInsideTheClipRange) {
  const ForwardBackwardInput cispo = rl_batch(loss_fn::cispo, {0.05, -1.5, 1.0, 0.0, -0.6});
  std::vector<Datum> frozen;
  for (const Datum& datum : cispo.data) {
    const auto q = datum.loss_fn_inputs.at("logprobs").floats();
    const auto advantages = datum.loss_fn_inputs.at("advantages").floats();
    const auto p = logprobs_of(forward_backward(base, lora, ForwardBackwardInput({datum}, loss_fn::cispo), true), 0);
    std::vector<float> weights;
    for (std::size_t i = 0; i < p.size(); ++i) {
      const double ratio = std::exp(double{p[i]} - q[i]);
      weights.push_back(
          static_cast<float>(std::clamp(ratio, kDefaultCispoClipLow, kDefaultCispoClipHigh) * advantages[i]));
    }
    LossFnInputs inputs;
    inputs.emplace("target_tokens", datum.loss_fn_inputs.at("target_tokens"));
    inputs.emplace("weights", TensorData(weights));
    frozen.emplace_back(datum.model_input, std::move(inputs));
  }
  const std::vector<double> cispo_grad = analytic_gradient(base, lora, cispo);
  const std::vector<double> frozen_grad =
      analytic_gradient(base, lora, ForwardBackwardInput(std::move(frozen), loss_fn::cross_entropy));
  double diff2 = 0.0;
  double norm2 = 0.0;
  for (std::size_t i = 0; i < cispo_grad.size(); ++i) {
    diff2 += (cispo_grad[i] - frozen_grad[i]) * (cispo_grad[i] - frozen_grad[i]);
    norm2 += frozen_grad[i] * frozen_grad[i];
  }
  ASSERT_GT(norm2, 0.0);
  // The weights went through float32, so agreement is to float precision.
  EXPECT_LT(std::sqrt(diff2 / norm2), 1e-6);
}

TEST_F(TinyLmGradient, DroDefaultBeta) {
  expect_gradients_match(base, lora, rl_batch(loss_fn::dro, {0.3, -0.2, 0.05, -0.6}));
}

TEST_F(TinyLmGradient, DroCustomBeta) {
  ForwardBackwardInput batch = rl_batch(loss_fn::dro, {0.9, -1.2, 0.05, -0.6});
  batch.loss_fn_config = LossFnConfig{{"beta", 2.0}};
  expect_gradients_match(base, lora, batch);
}

TEST_F(TinyLmGradient, GradientsAccumulateAcrossCallsUntilOptimStep) {
  const ForwardBackwardInput first = sft_batch(61, 2, 9, 1);
  const ForwardBackwardInput second = rl_batch(loss_fn::ppo, {0.05, -0.5});
  const std::vector<double> g1 = analytic_gradient(base, lora, first);
  const std::vector<double> g2 = analytic_gradient(base, lora, second);
  LoraState both = lora;
  forward_backward(base, both, first, false);
  forward_backward(base, both, second, false);
  const std::vector<double>& sum = both.impl().grads;
  for (std::size_t i = 0; i < sum.size(); ++i) ASSERT_NEAR(sum[i], g1[i] + g2[i], 1e-12 * (1.0 + std::abs(sum[i])));
  optim_step(both, AdamParams(1e-3));
  for (double g : both.impl().grads) ASSERT_EQ(g, 0.0);
}

}  // namespace
}  // namespace tinker::local::model
