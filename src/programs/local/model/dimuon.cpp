// optim_step with Dimuon (doc/local.md#dimuon): a Muon-family optimizer over each LoRA factor.
//
// The service documents Dimuon's settings, not its formulas; what follows is tinker-local's reading
// of them. Per step:
//   1. g = accumulated gradient, scaled by grad_clip_norm / ||g|| when grad_clip_norm > 0 and the
//      global norm ||g|| (over every LoRA parameter) exceeds it.
//   2. m = beta1 m + (1 - beta1) g                      running average of gradients (momentum)
//   3. For each LoRA factor M (A [rank, in] and B [out, rank]) with momentum block m_M:
//        r_i = mean_j m_ij^2, c_j = mean_i m_ij^2      row and column second moments
//        X = diag(r + damping mean(r))^-1/2 m_M diag(c + damping mean(c))^-1/2
//          two-sided diagonal preconditioning; damping (relative, so it does not depend on the
//          gradient's scale) pulls it towards the identity, i.e. plain Muon
//        O = polar factor of X by the cubic Newton-Schulz matrix-sign iteration
//            X <- 1.5 X - 0.5 X X^T X, from X / ||X||_F, a fixed number of times
//        D = O sqrt(rank) / ||O||_F                    a direction of Frobenius norm sqrt(rank)
//        M -= learning_rate (rank / 32)^(-rank_lr_correction_exponent) D
// The polar factor of a full-rank [rank, n] matrix has rank unit singular values, so D's rows (or
// columns, for B) are orthonormal and ||D||_F = sqrt(rank) before the rescale; the rescale only
// matters when the factor's momentum is rank-deficient (B starts at zero, so A's first gradient
// is zero and A does not move). No weight decay: DimuonParams has none.
#include "programs/local/model/tiny_lm_internal.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace tinker::local::model {
namespace {

// Internal constants (the service's DimuonParams say the same of its own): the matrix-sign
// iteration count and the normalisation epsilon.
constexpr int kNewtonSchulzSteps = 40;
constexpr double kNormEpsilon = 1e-30;
constexpr double kReferenceRank = 32.0;

void check_dimuon(bool ok, const char* field, const char* requirement, double value) {
  if (!ok) throw UserError(std::string("optim_params.") + field + ": " + std::to_string(value) + " " + requirement);
}

void validate_dimuon(const DimuonParams& p) {
  check_dimuon(std::isfinite(p.learning_rate) && p.learning_rate >= 0.0, "learning_rate", "must be finite and >= 0",
               p.learning_rate);
  check_dimuon(std::isfinite(p.grad_clip_norm), "grad_clip_norm", "must be finite (0 or less: no clipping)",
               p.grad_clip_norm);
  check_dimuon(p.beta1 >= 0.0 && p.beta1 < 1.0, "beta1", "must be in [0, 1)", p.beta1);
  if (p.damping) check_dimuon(std::isfinite(*p.damping) && *p.damping > 0.0, "damping", "must be > 0", *p.damping);
  if (p.rank_lr_correction_exponent) {
    check_dimuon(std::isfinite(*p.rank_lr_correction_exponent), "rank_lr_correction_exponent", "must be finite",
                 *p.rank_lr_correction_exponent);
  }
}

double frobenius(const Matrix& x) {
  double sum = 0.0;
  for (double v : x.values) sum += v * v;
  return std::sqrt(sum);
}

Matrix transposed(const Matrix& x) {
  Matrix t(x.cols, x.rows);
  for (int r = 0; r < x.rows; ++r) {
    for (int c = 0; c < x.cols; ++c) t.row(c)[r] = x.row(r)[c];
  }
  return t;
}

// X <- 1.5 X - 0.5 (X X^T) X for a wide X (rows <= cols), so the Gram matrix is the small one.
void newton_schulz_step(Matrix& x) {
  Matrix gram(x.rows, x.rows);
  for (int i = 0; i < x.rows; ++i) {
    for (int j = 0; j <= i; ++j) {
      double dot = 0.0;
      for (int k = 0; k < x.cols; ++k) dot += x.row(i)[k] * x.row(j)[k];
      gram.row(i)[j] = dot;
      gram.row(j)[i] = dot;
    }
  }
  Matrix next(x.rows, x.cols);
  for (int i = 0; i < x.rows; ++i) {
    double* out = next.row(i);
    for (int k = 0; k < x.cols; ++k) out[k] = 1.5 * x.row(i)[k];
    for (int j = 0; j < x.rows; ++j) {
      const double w = 0.5 * gram.row(i)[j];
      for (int k = 0; k < x.cols; ++k) out[k] -= w * x.row(j)[k];
    }
  }
  x = std::move(next);
}

// Divides each row by sqrt(its mean square + damping * the mean over rows), then each column alike.
void precondition(Matrix& x, double damping) {
  std::vector<double> row_ms(static_cast<std::size_t>(x.rows), 0.0);
  std::vector<double> col_ms(static_cast<std::size_t>(x.cols), 0.0);
  for (int r = 0; r < x.rows; ++r) {
    for (int c = 0; c < x.cols; ++c) {
      const double sq = x.row(r)[c] * x.row(r)[c];
      row_ms[r] += sq / x.cols;
      col_ms[c] += sq / x.rows;
    }
  }
  auto scales = [damping](const std::vector<double>& ms) {
    double mean = 0.0;
    for (double v : ms) mean += v / static_cast<double>(ms.size());
    std::vector<double> s(ms.size(), 1.0);
    for (std::size_t i = 0; i < ms.size(); ++i) {
      const double d = ms[i] + damping * mean;
      s[i] = d > kNormEpsilon ? 1.0 / std::sqrt(d) : 1.0;
    }
    return s;
  };
  const std::vector<double> row_scale = scales(row_ms);
  const std::vector<double> col_scale = scales(col_ms);
  for (int r = 0; r < x.rows; ++r) {
    for (int c = 0; c < x.cols; ++c) x.row(r)[c] *= row_scale[r] * col_scale[c];
  }
}

}  // namespace

Matrix dimuon_direction(const Matrix& momentum, double damping, int rank) {
  Matrix x = momentum;
  precondition(x, damping);
  const bool tall = x.rows > x.cols;
  if (tall) x = transposed(x);
  double norm = frobenius(x);
  if (norm <= kNormEpsilon) return Matrix(momentum.rows, momentum.cols);  // nothing to follow
  for (double& v : x.values) v /= norm;
  for (int step = 0; step < kNewtonSchulzSteps; ++step) newton_schulz_step(x);
  if (tall) x = transposed(x);
  norm = frobenius(x);
  if (norm <= kNormEpsilon) return Matrix(momentum.rows, momentum.cols);
  const double to_target = std::sqrt(static_cast<double>(rank)) / norm;
  for (double& v : x.values) v *= to_target;
  return x;
}

double dimuon_rank_factor(int rank, double exponent) {
  return std::pow(static_cast<double>(rank) / kReferenceRank, -exponent);
}

OptimStepResponse optim_step(LoraState& lora, const DimuonParams& params) {
  validate_dimuon(params);
  LoraState::Impl& s = lora.impl();
  const double damping = params.damping.value_or(kDimuonDefaultDamping);
  const double exponent = params.rank_lr_correction_exponent.value_or(kDimuonDefaultRankExponent);

  double squared_norm = 0.0;
  for (double g : s.grads) squared_norm += g * g;
  const double grad_norm = std::sqrt(squared_norm);
  double grad_factor = 1.0;
  if (params.grad_clip_norm > 0.0 && grad_norm > params.grad_clip_norm) grad_factor = params.grad_clip_norm / grad_norm;

  if (s.dimuon_momentum.size() != s.params.size()) s.dimuon_momentum.assign(s.params.size(), 0.0f);
  for (std::size_t i = 0; i < s.params.size(); ++i) {
    const double m = params.beta1 * s.dimuon_momentum[i] + (1.0 - params.beta1) * s.grads[i] * grad_factor;
    s.dimuon_momentum[i] = static_cast<float>(m);
  }
  s.dimuon_step += 1;

  const int rank = s.settings.rank;
  const double step_size = params.learning_rate * dimuon_rank_factor(rank, exponent);
  auto update_factor = [&](std::size_t offset, int rows, int cols) {
    Matrix momentum(rows, cols);
    for (std::size_t i = 0; i < momentum.values.size(); ++i) momentum.values[i] = s.dimuon_momentum[offset + i];
    const Matrix direction = dimuon_direction(momentum, damping, rank);
    for (std::size_t i = 0; i < direction.values.size(); ++i) {
      s.params[offset + i] = static_cast<float>(s.params[offset + i] - step_size * direction.values[i]);
    }
  };
  for (const LoraPart& part : s.parts) {
    update_factor(part.a_offset, rank, part.in);
    update_factor(part.b_offset, part.out, rank);
  }
  std::fill(s.grads.begin(), s.grads.end(), 0.0);

  Metrics metrics;
  metrics["grad_norm:mean"] = grad_norm;
  return OptimStepResponse(std::move(metrics));
}

}  // namespace tinker::local::model
