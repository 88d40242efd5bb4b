// optim_step: AdamW over the LoRA parameters with every AdamParams field.
#include "programs/local/model/tiny_lm_internal.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace tinker::local::model {
namespace {

void check_param(bool ok, const char* field, const char* requirement, double value) {
  if (!ok) throw UserError(std::string("adam_params.") + field + ": " + std::to_string(value) + " " + requirement);
}

void validate(const AdamParams& p) {
  check_param(std::isfinite(p.learning_rate) && p.learning_rate >= 0.0, "learning_rate", "must be finite and >= 0",
              p.learning_rate);
  check_param(p.beta1 >= 0.0 && p.beta1 < 1.0, "beta1", "must be in [0, 1)", p.beta1);
  check_param(p.beta2 >= 0.0 && p.beta2 < 1.0, "beta2", "must be in [0, 1)", p.beta2);
  check_param(std::isfinite(p.eps) && p.eps >= 0.0, "eps", "must be finite and >= 0", p.eps);
  check_param(std::isfinite(p.weight_decay) && p.weight_decay >= 0.0, "weight_decay", "must be finite and >= 0",
              p.weight_decay);
  check_param(std::isfinite(p.grad_clip_norm) && p.grad_clip_norm >= 0.0, "grad_clip_norm",
              "must be finite and >= 0 (0 = no clipping)", p.grad_clip_norm);
}

}  // namespace

// PyTorch AdamW semantics: clip the global gradient norm first (when grad_clip_norm > 0), then
//   param *= 1 - lr * weight_decay                       (decoupled weight decay)
//   m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
//   param -= lr * (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps)
// Arithmetic is double; parameters and moments are stored as float (they are what is saved).
OptimStepResponse optim_step(LoraState& lora, const AdamParams& params) {
  validate(params);
  LoraState::Impl& s = lora.impl();

  double squared_norm = 0.0;
  for (double g : s.grads) squared_norm += g * g;
  const double grad_norm = std::sqrt(squared_norm);
  double grad_factor = 1.0;
  if (params.grad_clip_norm > 0.0 && grad_norm > params.grad_clip_norm) grad_factor = params.grad_clip_norm / grad_norm;

  s.adam_step += 1;
  const double t = static_cast<double>(s.adam_step);
  const double bias1 = 1.0 - std::pow(params.beta1, t);
  const double bias2 = 1.0 - std::pow(params.beta2, t);
  const double decay = 1.0 - params.learning_rate * params.weight_decay;
  for (std::size_t i = 0; i < s.params.size(); ++i) {
    const double g = s.grads[i] * grad_factor;
    const double m = params.beta1 * s.adam_m[i] + (1.0 - params.beta1) * g;
    const double v = params.beta2 * s.adam_v[i] + (1.0 - params.beta2) * g * g;
    s.adam_m[i] = static_cast<float>(m);
    s.adam_v[i] = static_cast<float>(v);
    const double denominator = std::sqrt(static_cast<double>(s.adam_v[i]) / bias2) + params.eps;
    const double update = denominator > 0.0 ? (static_cast<double>(s.adam_m[i]) / bias1) / denominator : 0.0;
    s.params[i] = static_cast<float>(s.params[i] * decay - params.learning_rate * update);
  }
  std::fill(s.grads.begin(), s.grads.end(), 0.0);

  Metrics metrics;
  metrics["grad_norm:mean"] = grad_norm;
  return OptimStepResponse(std::move(metrics));
}

}  // namespace tinker::local::model
