/// \file
/// The optimizer of a training model (`doc/training.md#optimizers`): its configuration, chosen once
/// when the model is created, and the hyper-parameters of each optimizer step.
#pragma once

#include <tinker/types/common.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace tinker {

/// AdamW hyper-parameters of one optimizer step; all fields are always sent.
class AdamParams {
 public:
  /// The defaults below.
  AdamParams() = default;
  /// The defaults with learning rate `learning_rate_`.
  explicit AdamParams(double learning_rate_) : learning_rate(learning_rate_) {}

  double learning_rate = 1e-4;  ///< step size
  double beta1 = 0.9;           ///< decay of the first-moment (mean) estimate
  double beta2 = 0.95;          ///< decay of the second-moment (variance) estimate
  double eps = 1e-12;           ///< added to the denominator for numerical stability
  double weight_decay = 0.0;    ///< decoupled (AdamW)
  double grad_clip_norm = 0.0;  ///< global-norm clip; 0 = off

  /// Equal when every field is equal.
  friend bool operator==(const AdamParams&, const AdamParams&) = default;
};

/// Dimuon hyper-parameters of one optimizer step (wire: `{"type": "dimuon", ...}`). Settings left
/// empty are omitted, so the server applies its defaults on that step; an override applies to its
/// step only and does not carry forward.
class DimuonParams {
 public:
  /// Learning rate 0 (set one); the other settings at their defaults.
  DimuonParams() = default;
  /// The defaults with learning rate `learning_rate_`.
  explicit DimuonParams(double learning_rate_) : learning_rate(learning_rate_) {}

  /// Step size (>= 0), applied to a direction of Frobenius norm sqrt(rank) per LoRA matrix, with
  /// the rank correction applied to every LoRA matrix alike. Always sent.
  double learning_rate = 0.0;
  double grad_clip_norm = 0.0;  ///< maximum global gradient norm; 0 (or less) = no clipping
  double beta1 = 0.9;           ///< momentum: decay of the running average of gradients, in [0, 1)
  /// Positive damping that smooths the row and column preconditioner; empty: the server's default.
  std::optional<double> damping;
  /// Exponent of the learning-rate correction relative to rank 32 (0 disables); empty: the
  /// server's default.
  std::optional<double> rank_lr_correction_exponent;

  /// Equal when every field is equal.
  friend bool operator==(const DimuonParams&, const DimuonParams&) = default;
};

/// The hyper-parameters of one optimizer step, matching the training client's optimizer.
using OptimParams = std::variant<AdamParams, DimuonParams>;

/// AdamW, the default optimizer (wire: `{"type": "adamw"}`).
class AdamOptimizerConfig {
 public:
  /// AdamW (it has no settings; each step's AdamParams carry them).
  AdamOptimizerConfig() = default;

  /// All AdamW configurations are equal.
  friend bool operator==(const AdamOptimizerConfig&, const AdamOptimizerConfig&) = default;
};

/// Dimuon (wire: `{"type": "dimuon", "version": 1}`): a matrix-aware optimizer for the LoRA
/// factors, stepped with DimuonParams. A training checkpoint saved with its optimizer state keeps
/// it: resuming from it restores Dimuon.
class DimuonOptimizerConfig {
 public:
  /// Version 1, the only one defined.
  DimuonOptimizerConfig() = default;
  /// Version `version_` (the server refuses a version it does not know).
  explicit DimuonOptimizerConfig(std::int64_t version_) : version(version_) {}

  std::int64_t version = 1;  ///< the method's version

  /// Equal when the versions are equal.
  friend bool operator==(const DimuonOptimizerConfig&, const DimuonOptimizerConfig&) = default;
};

/// An optimizer this SDK does not know, as a server described it: kept, never an error.
class UnknownOptimizerConfig {
 public:
  /// No type.
  UnknownOptimizerConfig() = default;
  /// Type `type_` with its other fields `fields_`.
  explicit UnknownOptimizerConfig(std::string type_, JsonObject fields_ = {})
      : type(std::move(type_)), fields(std::move(fields_)) {}

  std::string type;   ///< the wire `type`
  JsonObject fields;  ///< every other field, as received (written back unchanged)

  /// Equal when the type and every field are equal.
  friend bool operator==(const UnknownOptimizerConfig&, const UnknownOptimizerConfig&) = default;
};

/// The optimizer of a training model, fixed for its life. Default: AdamW.
using OptimizerConfig = std::variant<AdamOptimizerConfig, DimuonOptimizerConfig, UnknownOptimizerConfig>;

/// The wire type of `config`: "adamw", "dimuon", or the unknown type as received.
std::string_view optimizer_type(const OptimizerConfig& config) noexcept;
/// The wire type of the optimizer that `params` are for: "adamw" or "dimuon".
std::string_view optimizer_type(const OptimParams& params) noexcept;

/// True when `params` are the step parameters of `config`'s optimizer (AdamParams for AdamW,
/// DimuonParams for Dimuon; nothing matches an unknown optimizer).
bool params_match(const OptimizerConfig& config, const OptimParams& params) noexcept;

/// The first problem with DimuonParams as a client checks them before sending, naming the field
/// (e.g. "dimuon_params.beta1: must be in [0, 1), got 1"), or empty when there is none; NaN and
/// infinities are refused in every field. AdamParams are left to the server, as in 0.25 (the
/// encoder refuses NaN and infinities).
std::string optim_params_problem(const OptimParams& params);

TINKER_DECLARE_PRINTABLE(AdamParams);
TINKER_DECLARE_PRINTABLE(DimuonParams);
TINKER_DECLARE_PRINTABLE(AdamOptimizerConfig);
TINKER_DECLARE_PRINTABLE(DimuonOptimizerConfig);
TINKER_DECLARE_PRINTABLE(UnknownOptimizerConfig);

}  // namespace tinker
