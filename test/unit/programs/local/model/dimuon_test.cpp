// Dimuon on the tiny model (doc/local.md#dimuon): the defining properties of its step (direction
// norm sqrt(rank), orthogonal factors, momentum, clipping, rank correction, determinism), its
// state in checkpoints, and that it trains.
#include "programs/local/model/tiny_lm_internal.hpp"
#include "unit/programs/local/model/model_test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

namespace tinker::local::model {
namespace {

using namespace testing;

Matrix random_matrix(int rows, int cols, std::uint64_t seed) {
  Matrix m(rows, cols);
  std::uint64_t state = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (double& v : m.values) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    v = static_cast<double>(state >> 11) / static_cast<double>(1ULL << 53) - 0.5;
  }
  return m;
}

double frobenius_norm(const std::vector<double>& values) {
  double sum = 0.0;
  for (double v : values) sum += v * v;
  return std::sqrt(sum);
}

// max |(X X^T)_ij - c I_ij| for the wide orientation of X (rows <= cols), with c = sum of the
// diagonal / rows: how far X's rows are from orthogonal with equal norms.
double orthogonality_error(const Matrix& x_in) {
  Matrix x = x_in;
  if (x.rows > x.cols) {
    Matrix t(x.cols, x.rows);
    for (int r = 0; r < x.rows; ++r)
      for (int c = 0; c < x.cols; ++c) t.row(c)[r] = x.row(r)[c];
    x = t;
  }
  std::vector<double> gram(static_cast<std::size_t>(x.rows) * x.rows, 0.0);
  double trace = 0.0;
  for (int i = 0; i < x.rows; ++i) {
    for (int j = 0; j < x.rows; ++j) {
      double dot = 0.0;
      for (int k = 0; k < x.cols; ++k) dot += x.row(i)[k] * x.row(j)[k];
      gram[static_cast<std::size_t>(i) * x.rows + j] = dot;
    }
    trace += gram[static_cast<std::size_t>(i) * x.rows + i];
  }
  const double c = trace / x.rows;
  double worst = 0.0;
  for (int i = 0; i < x.rows; ++i)
    for (int j = 0; j < x.rows; ++j)
      worst = std::max(worst, std::abs(gram[static_cast<std::size_t>(i) * x.rows + j] - (i == j ? c : 0.0)));
  return worst / c;
}

TEST(Dimuon, DirectionHasNormSqrtRankAndOrthogonalFactors) {
  for (int rank : {4, 8}) {
    const Matrix a_momentum = random_matrix(rank, 32, 1);  // A: [rank, in]
    const Matrix b_momentum = random_matrix(64, rank, 2);  // B: [out, rank]
    for (const Matrix* m : {&a_momentum, &b_momentum}) {
      const Matrix d = dimuon_direction(*m, 0.1, rank);
      EXPECT_NEAR(frobenius_norm(d.values), std::sqrt(static_cast<double>(rank)), 1e-9) << "rank " << rank;
      EXPECT_LT(orthogonality_error(d), 1e-6) << "rank " << rank << ", " << m->rows << "x" << m->cols;
    }
  }
  // A zero momentum (A's first step: B starts at zero) has no direction.
  const Matrix zero(4, 32);
  const Matrix d = dimuon_direction(zero, 0.1, 4);
  EXPECT_EQ(frobenius_norm(d.values), 0.0);
}

TEST(Dimuon, DirectionIsScaleInvariantAndDampingMatters) {
  const Matrix m = random_matrix(4, 32, 3);
  Matrix scaled = m;
  for (double& v : scaled.values) v *= 1e-3;
  const Matrix d1 = dimuon_direction(m, 0.1, 4);
  const Matrix d2 = dimuon_direction(scaled, 0.1, 4);
  for (std::size_t i = 0; i < d1.values.size(); ++i) EXPECT_NEAR(d1.values[i], d2.values[i], 1e-9);
  // Row/column preconditioning changes the direction; strong damping approaches plain Muon.
  Matrix skewed = m;
  for (int c = 0; c < skewed.cols; ++c) skewed.row(0)[c] *= 20.0;  // one loud row
  const Matrix light = dimuon_direction(skewed, 1e-3, 4);
  const Matrix heavy = dimuon_direction(skewed, 1e3, 4);
  double difference = 0.0;
  for (std::size_t i = 0; i < light.values.size(); ++i) difference += std::abs(light.values[i] - heavy.values[i]);
  EXPECT_GT(difference, 1e-3);
}

TEST(Dimuon, RankCorrectionIsRelativeToRank32) {
  EXPECT_DOUBLE_EQ(dimuon_rank_factor(32, 0.5), 1.0);
  EXPECT_DOUBLE_EQ(dimuon_rank_factor(8, 0.5), 2.0);
  EXPECT_DOUBLE_EQ(dimuon_rank_factor(128, 1.0), 0.25);
  EXPECT_DOUBLE_EQ(dimuon_rank_factor(8, 0.0), 1.0);  // 0 disables
}

// One step's change of each B factor (A does not move on the first step: B is zero, so is A's gradient).
std::vector<std::vector<double>> b_steps(const LoraState& before, const LoraState& after) {
  std::vector<std::vector<double>> steps;
  const LoraState::Impl& s0 = before.impl();
  const LoraState::Impl& s1 = after.impl();
  for (const LoraPart& part : s0.parts) {
    std::vector<double> step;
    const std::size_t count = static_cast<std::size_t>(part.out) * s0.settings.rank;
    for (std::size_t i = 0; i < count; ++i) {
      step.push_back(static_cast<double>(s1.params[part.b_offset + i]) - s0.params[part.b_offset + i]);
    }
    steps.push_back(std::move(step));
  }
  return steps;
}

TEST(Dimuon, StepMovesEachFactorByLearningRateTimesSqrtRank) {
  const BaseModel base("dimuon", small_arch(120));
  const ForwardBackwardInput batch = sft_batch(120, 3, 11);
  for (double exponent : {0.0, 0.5}) {
    LoraState lora(base, lora_settings(8, 1));
    forward_backward(base, lora, batch, false);
    const LoraState before = lora;
    DimuonParams params(0.01);
    params.rank_lr_correction_exponent = exponent;
    optim_step(lora, params);
    const double expected = 0.01 * std::pow(8.0 / 32.0, -exponent) * std::sqrt(8.0);
    for (const std::vector<double>& step : b_steps(before, lora)) {
      EXPECT_NEAR(frobenius_norm(step), expected, 1e-4 * expected) << "exponent " << exponent;
    }
    // A's gradient was zero (B = 0): it did not move.
    const LoraState::Impl& s0 = before.impl();
    const LoraPart& part = s0.parts.front();
    EXPECT_EQ(lora.impl().params[part.a_offset], s0.params[part.a_offset]);
  }
}

TEST(Dimuon, MomentumIsTheRunningAverageOfClippedGradients) {
  const BaseModel base("dimuon", small_arch(120));
  const ForwardBackwardInput batch = sft_batch(120, 3, 11);
  LoraState lora(base, lora_settings(8, 1));
  forward_backward(base, lora, batch, false);
  const std::vector<double> g1 = lora.impl().grads;
  DimuonParams params(0.01);
  params.beta1 = 0.8;
  params.grad_clip_norm = 1e-3;  // well below the gradient's norm
  const OptimStepResponse response = optim_step(lora, params);
  const double norm = frobenius_norm(g1);
  ASSERT_GT(norm, 1e-3);
  EXPECT_NEAR(response.metrics->at("grad_norm:mean"), norm, 1e-9 * norm);  // reported before clipping
  const std::vector<float>& m1 = lora.impl().dimuon_momentum;
  for (std::size_t i = 0; i < g1.size(); ++i) EXPECT_NEAR(m1[i], 0.2 * g1[i] * 1e-3 / norm, 1e-9);
  EXPECT_EQ(lora.impl().adam_step, 0u);  // not Adam's state
  for (float v : lora.impl().adam_v) ASSERT_EQ(v, 0.0f);

  // Second step without clipping: m2 = beta1 m1 + (1 - beta1) g2.
  const std::vector<float> m1_copy = m1;
  forward_backward(base, lora, batch, false);
  const std::vector<double> g2 = lora.impl().grads;
  params.grad_clip_norm = 0.0;
  optim_step(lora, params);
  const std::vector<float>& m2 = lora.impl().dimuon_momentum;
  for (std::size_t i = 0; i < g2.size(); ++i) {
    EXPECT_NEAR(m2[i], 0.8 * m1_copy[i] + 0.2 * g2[i], 1e-6 * (1.0 + std::abs(g2[i])));
  }
  EXPECT_EQ(lora.impl().dimuon_step, 2u);
  for (double g : lora.impl().grads) ASSERT_EQ(g, 0.0);  // cleared
}

TEST(Dimuon, StepsAreDeterministic) {
  const BaseModel base("dimuon", small_arch(120));
  const ForwardBackwardInput batch = sft_batch(120, 3, 11);
  auto run = [&] {
    LoraState lora(base, lora_settings(4, 2));
    for (int i = 0; i < 3; ++i) {
      forward_backward(base, lora, batch, false);
      optim_step(lora, DimuonParams(0.02));
    }
    return lora.impl().params;
  };
  EXPECT_EQ(run(), run());
}

// Prints how far the loss falls in 40 Dimuon steps per learning rate and rank (run with
// --gtest_also_run_disabled_tests); the source of doc/local.md's learning-rate range.
TEST(Dimuon, DISABLED_LearningRateSweep) {
  const BaseModel base("learn", small_arch(300));
  const ForwardBackwardInput batch = sft_batch(300, 4, 17);
  for (double lr : {5e-4, 1e-3, 2e-3, 5e-3, 1e-2}) {
    for (int rank : {4, 8, 32}) {
      LoraState lora(base, lora_settings(rank, 1));
      const double before = loss_sum(forward_backward(base, lora, batch, true));
      for (int i = 0; i < 40; ++i) {
        forward_backward(base, lora, batch, false);
        optim_step(lora, DimuonParams(lr));
      }
      const double after = loss_sum(forward_backward(base, lora, batch, true));
      std::printf("lr %g rank %d: %.3f -> %.3f (ratio %.3f)\n", lr, rank, before, after, after / before);
    }
  }
}

TEST(Dimuon, LossFalls) {
  const BaseModel base("learn", small_arch(300));
  const ForwardBackwardInput batch = sft_batch(300, 4, 17);
  LoraState lora(base, lora_settings(8, 1));
  const double before = loss_sum(forward_backward(base, lora, batch, true));
  for (int i = 0; i < 40; ++i) {
    forward_backward(base, lora, batch, false);
    optim_step(lora, DimuonParams(1e-3));
  }
  const double after = loss_sum(forward_backward(base, lora, batch, true));
  EXPECT_LT(after, 0.5 * before);
}

TEST(Dimuon, StateSurvivesACheckpoint) {
  const BaseModel base("dimuon", small_arch(120));
  const ForwardBackwardInput batch = sft_batch(120, 3, 11);
  LoraState lora(base, lora_settings(4, 2));
  for (int i = 0; i < 2; ++i) {
    forward_backward(base, lora, batch, false);
    optim_step(lora, DimuonParams(0.02));
  }
  const LoraState restored = LoraState::deserialize(base, lora.serialize(true), true);
  EXPECT_EQ(restored.impl().dimuon_momentum, lora.impl().dimuon_momentum);
  EXPECT_EQ(restored.impl().dimuon_step, 2u);
  EXPECT_EQ(restored.impl().params, lora.impl().params);
  // Without the optimizer state: fresh.
  const LoraState weights_only = LoraState::deserialize(base, lora.serialize(false), false);
  EXPECT_TRUE(weights_only.impl().dimuon_momentum.empty());
}

TEST(Dimuon, InvalidSettingsNameTheField) {
  const BaseModel base("dimuon", small_arch(60));
  LoraState lora(base, lora_settings(4, 2));
  auto message_of = [&](DimuonParams p) {
    try {
      optim_step(lora, p);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  DimuonParams p(0.01);
  p.beta1 = 1.0;
  EXPECT_NE(message_of(p).find("optim_params.beta1"), std::string::npos);
  p = DimuonParams(std::nan(""));
  EXPECT_NE(message_of(p).find("optim_params.learning_rate"), std::string::npos);
  p = DimuonParams(0.01);
  p.damping = -1.0;
  EXPECT_NE(message_of(p).find("optim_params.damping"), std::string::npos);
}

}  // namespace
}  // namespace tinker::local::model
