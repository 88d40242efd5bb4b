// LrSchedule: warmup, then the cookbook's linear, cosine or constant decay.
#include <tinker/error.hpp>
#include <tinker/train/hyperparams.hpp>

#include <cmath>
#include <numbers>
#include <string>

namespace tinker::train {

double LrSchedule::multiplier(std::int64_t step, std::int64_t total_steps) const {
  if (warmup_steps < 0) {
    throw error(errc::invalid_argument, "LrSchedule::warmup_steps must be >= 0, got " + std::to_string(warmup_steps));
  }
  if (!(min_ratio >= 0.0 && min_ratio <= 1.0)) {
    throw error(errc::invalid_argument, "LrSchedule::min_ratio must be in [0, 1], got " + std::to_string(min_ratio));
  }
  if (total_steps < 1) {
    throw error(errc::invalid_argument, "LrSchedule: total_steps must be >= 1, got " + std::to_string(total_steps));
  }
  if (step < 0 || step >= total_steps) {
    throw error(errc::invalid_argument,
                "LrSchedule: step must be in [0, " + std::to_string(total_steps) + "), got " + std::to_string(step));
  }
  if (step < warmup_steps) {
    // Step 0 already trains, so warmup starts one increment above zero.
    return static_cast<double>(step + 1) / static_cast<double>(warmup_steps);
  }
  const double progress = static_cast<double>(step - warmup_steps) / static_cast<double>(total_steps - warmup_steps);
  double decay = 1.0;
  switch (shape) {
    case LrShape::constant: return 1.0;
    case LrShape::linear: decay = 1.0 - progress; break;
    case LrShape::cosine: decay = 0.5 * (1.0 + std::cos(std::numbers::pi * progress)); break;
  }
  return min_ratio + (1.0 - min_ratio) * decay;
}

double LrSchedule::learning_rate(double base_lr, std::int64_t step, std::int64_t total_steps) const {
  return base_lr * multiplier(step, total_steps);
}

std::string_view to_string(LrShape shape) noexcept {
  switch (shape) {
    case LrShape::constant: return "constant";
    case LrShape::linear: return "linear";
    case LrShape::cosine: return "cosine";
  }
  return "constant";
}

LrShape parse_lr_shape(std::string_view name) {
  for (const auto shape : {LrShape::constant, LrShape::linear, LrShape::cosine}) {
    if (name == to_string(shape)) return shape;
  }
  throw error(errc::invalid_argument,
              "unknown learning-rate schedule \"" + std::string(name) + "\" (known: constant, linear, cosine)");
}

}  // namespace tinker::train
