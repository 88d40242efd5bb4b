/// @file
/// Learning rates: schedules with warmup, the cookbook's recommended LoRA learning rate per model
/// (`get_lr`), and LoRA parameter counts (doc/training-loops.md#hyperparameters).
#pragma once

#include <cstdint>
#include <string_view>

namespace tinker::train {

/// The shape of a learning-rate schedule after its warmup.
enum class LrShape {
  constant,  ///< the base rate throughout
  linear,    ///< from the base rate down to `min_ratio` of it at the last step
  cosine,    ///< half a cosine from the base rate down to `min_ratio` of it at the last step
};

/// A learning-rate schedule: `warmup_steps` of linear rise from 0 (exclusive) to the base rate,
/// then `shape` over the remaining steps.
class LrSchedule {
 public:
  /// Constant, no warmup.
  LrSchedule() = default;
  /// `shape_` after `warmup_steps_` of warmup, ending at `min_ratio_` of the base rate.
  explicit LrSchedule(LrShape shape_, std::int64_t warmup_steps_ = 0, double min_ratio_ = 0.0)
      : shape(shape_), warmup_steps(warmup_steps_), min_ratio(min_ratio_) {}

  LrShape shape = LrShape::constant;  ///< the shape after warmup
  std::int64_t warmup_steps = 0;      ///< steps of linear warmup, >= 0
  double min_ratio = 0.0;             ///< where linear and cosine end, as a fraction of the base rate, in [0, 1]

  /// The factor on the base learning rate at `step` (0-based) of `total_steps`. Throws
  /// tinker::error (invalid_argument) naming the field for a negative warmup, a min_ratio outside
  /// [0, 1], total_steps < 1 or a step outside [0, total_steps).
  double multiplier(std::int64_t step, std::int64_t total_steps) const;
  /// `base_lr * multiplier(step, total_steps)`.
  double learning_rate(double base_lr, std::int64_t step, std::int64_t total_steps) const;
};

/// The name of `shape` ("constant", "linear", "cosine").
std::string_view to_string(LrShape shape) noexcept;
/// The shape named `name`; tinker::error (invalid_argument) listing the names for another.
LrShape parse_lr_shape(std::string_view name);

/// The cookbook's recommended learning rate for LoRA fine-tuning of `model_name` (its
/// `hyperparam_utils.get_lr` formula and constants). A `:peft:<context>` suffix is ignored.
/// Throws tinker::error (invalid_argument) for a model family the formula does not cover.
double get_lr(std::string_view model_name, bool is_lora = true);

/// How many parameters a LoRA of rank `rank` adds to `model_name` (the cookbook's
/// `get_lora_param_count`, with experts counted). Throws tinker::error (invalid_argument) for a
/// model whose shape is not known or a rank < 1.
std::int64_t lora_param_count(std::string_view model_name, int rank = 32);

}  // namespace tinker::train
