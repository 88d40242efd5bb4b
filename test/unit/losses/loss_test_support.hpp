// Helpers for the custom-loss tests: data, random logprobs on a grid, and a central-difference
// check of a loss's gradient.
#pragma once

#include <tinker/error.hpp>
#include <tinker/training_client.hpp>
#include <tinker/types/datum.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace tinker::losses::test {

/// A datum whose targets are its input shifted by one: tokens[0..n-1] -> tokens[1..n].
inline Datum shifted_datum(const std::vector<TokenId>& tokens, std::vector<float> weights) {
  std::vector<TokenId> input(tokens.begin(), tokens.end() - 1);
  std::vector<TokenId> targets(tokens.begin() + 1, tokens.end());
  LossFnInputs inputs{{"target_tokens", TensorData::from_tokens(targets)}};
  if (!weights.empty()) inputs.emplace("weights", TensorData(std::move(weights)));
  return Datum(ModelInput::from_ints(input), std::move(inputs));
}

/// A datum of `n` target tokens with the given weights (empty: no weights).
inline Datum datum_of(std::size_t n, std::vector<float> weights) {
  std::vector<TokenId> tokens(n + 1);
  for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<TokenId>(i + 1);
  return shifted_datum(tokens, std::move(weights));
}

/// Values on a grid of 2^-10 in [lo, hi], so that adding or subtracting kStep is exact in float.
inline std::vector<float> grid_values(std::mt19937& rng, std::size_t n, double lo, double hi) {
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<float> out(n);
  for (float& v : out) v = static_cast<float>(std::round(dist(rng) * 1024.0) / 1024.0);
  return out;
}

/// The central-difference step (exactly representable; logprobs on the 2^-10 grid stay exact).
inline constexpr float kStep = 1.0f / 256.0f;

/// Tolerance of the finite-difference check: |numeric - analytic| <= kAbsTol + kRelTol |analytic|.
/// The central difference's truncation error is h^2/6 |f'''| (~3e-6 |f'''| for h = 2^-8); the
/// analytic gradient is stored as float (relative 6e-8).
inline constexpr double kAbsTol = 1e-5;
inline constexpr double kRelTol = 1e-3;

using LossOf = std::function<CustomLossOutput(const std::vector<std::vector<float>>&)>;

/// Checks every datum's and token's analytic gradient against (L(p + h) - L(p - h)) / 2h.
inline void expect_gradient_matches_finite_differences(const LossOf& loss, std::vector<std::vector<float>> logprobs) {
  const CustomLossOutput at = loss(logprobs);
  ASSERT_EQ(at.gradients.size(), logprobs.size());
  for (std::size_t i = 0; i < logprobs.size(); ++i) {
    ASSERT_EQ(at.gradients[i].size(), logprobs[i].size()) << "datum " << i;
    for (std::size_t t = 0; t < logprobs[i].size(); ++t) {
      const float saved = logprobs[i][t];
      logprobs[i][t] = saved + kStep;
      const double up = loss(logprobs).loss;
      logprobs[i][t] = saved - kStep;
      const double down = loss(logprobs).loss;
      logprobs[i][t] = saved;
      const double numeric = (up - down) / (2.0 * static_cast<double>(kStep));
      const double analytic = at.gradients[i][t];
      EXPECT_NEAR(numeric, analytic, kAbsTol + kRelTol * std::abs(analytic)) << "datum " << i << " token " << t;
    }
  }
}

/// Runs `f`, expecting tinker::error (invalid_argument) whose message contains every fragment.
template <class F>
void expect_invalid(F&& f, const std::vector<std::string>& fragments) {
  try {
    f();
    ADD_FAILURE() << "no error thrown";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument)) << e.what();
    const std::string what = e.what();
    for (const std::string& fragment : fragments) EXPECT_NE(what.find(fragment), std::string::npos) << what;
  }
}

}  // namespace tinker::losses::test
