/// @file
/// Learning rates: schedules with warmup, the cookbook's recommended LoRA learning rate per model
/// (`get_lr`), and LoRA parameter counts (`doc/training-loops.md#hyperparameters`).
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
/// then `shape` over the remaining steps. The decay follows the cookbook's
/// `compute_schedule_lr_multiplier` over those steps (at step `warmup_steps + t` of
/// `n = total_steps - warmup_steps` decay steps, linear is `1 - t/n` and cosine
/// `(1 + cos(pi t/n)) / 2`), scaled to end at `min_ratio`: without warmup and with min_ratio 0 it
/// is the cookbook's schedule exactly, whose value reaches `min_ratio` at `total_steps`, one past
/// the last step.
class LrSchedule {
 public:
  /// Constant, no warmup.
  LrSchedule() = default;
  /// `shape_` after `warmup_steps_` of warmup, ending at `min_ratio_` of the base rate.
  explicit LrSchedule(LrShape shape_, std::int64_t warmup_steps_ = 0, double min_ratio_ = 0.0)
      : shape(shape_), warmup_steps(warmup_steps_), min_ratio(min_ratio_) {}

  LrShape shape = LrShape::constant;  ///< the shape after warmup
  std::int64_t warmup_steps = 0;      ///< steps of linear warmup, >= 0
  double min_ratio = 0.0;             ///< where linear and cosine head, as a fraction of the base rate, in [0, 1]

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

/// Which parts of the model a LoRA adapts (the flags of `create_lora_training_client`).
class LoraTargets {
 public:
  /// All three, Tinker's default.
  LoraTargets() = default;

  bool mlp = true;      ///< the MLP (and expert) projections
  bool attn = true;     ///< the attention projections
  bool unembed = true;  ///< the unembedding (LM head)
};

/// How many parameters a LoRA of rank `rank` adds to `model_name` (the cookbook's
/// `get_lora_param_count`: the per-rank counts Tinker measured for the models it serves, with
/// MoE experts sharing the LoRA factor on the hidden side). A `:peft:<context>` suffix is
/// ignored. Throws tinker::error (invalid_argument) for a model not in the table (count it from
/// its config.json with lora_param_count_from_config), a rank < 1 or no target.
std::int64_t lora_param_count(std::string_view model_name, int rank = 32, LoraTargets targets = {});

/// The same count computed from a Hugging Face `config.json` text (dense and MoE decoders:
/// `hidden_size`, `num_hidden_layers`, `intermediate_size`, `num_attention_heads`,
/// `num_key_value_heads`, `head_dim`, `vocab_size`, `num_experts`/`n_routed_experts`,
/// `moe_intermediate_size`, shared experts, `first_k_dense_replace`, MLA's `kv_lora_rank`; the
/// fields may sit under `text_config`). Throws tinker::error (invalid_argument) naming a missing
/// field.
std::int64_t lora_param_count_from_config(std::string_view config_json, int rank = 32, LoraTargets targets = {});

}  // namespace tinker::train
