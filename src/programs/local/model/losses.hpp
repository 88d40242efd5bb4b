// Validation of forward_backward inputs and the five per-token losses.
#pragma once

#include "programs/local/model/inputs.hpp"
#include "programs/local/model/tiny_lm.hpp"

#include <string>
#include <vector>

namespace tinker::local::model {

enum class LossKind { cross_entropy, importance_sampling, ppo, cispo, dro };

// Defaults of loss_fn_config, as the service documents them.
//
// ppo: the clip range [1 - 0.2, 1 + 0.2]. Tinker docs, "Loss Functions / PPO" (epsilon low and
// high "currently fixed to 0.2"), and the cookbook's tutorials/202_loss_functions.py ("PPO
// defaults to 0.8 and 1.2").
inline constexpr double kDefaultPpoClipLow = 0.8;
inline constexpr double kDefaultPpoClipHigh = 1.2;
// cispo: one-sided, lower bound disabled, upper bound 4. The cookbook's
// tutorials/202_loss_functions.py, "Custom clipping thresholds (PPO and CISPO)": CISPO "defaults
// to a one-sided clip ... {"clip_low_threshold": 0.0, "clip_high_threshold": 4.0}" (following
// MiniMax-M1 and ScaleRL's clip(ratio, 0, eps_max)).
inline constexpr double kDefaultCispoClipLow = 0.0;
inline constexpr double kDefaultCispoClipHigh = 4.0;
// dro: the Tinker docs ("Loss Functions / DRO") show loss_fn_config {"beta": 0.05} as an example
// but document no default; this is tinker-local's choice: a mild quadratic pull towards the
// sampling policy, small enough that the advantage term dominates for unit-order advantages.
inline constexpr double kDefaultDroBeta = 0.1;

struct LossConfig {
  LossKind kind = LossKind::cross_entropy;
  double clip_low = kDefaultPpoClipLow;    ///< ppo, cispo: clip_low_threshold
  double clip_high = kDefaultPpoClipHigh;  ///< ppo, cispo: clip_high_threshold
  double beta = kDefaultDroBeta;
};

/// One validated datum, converted to the types the computation uses.
///
/// cross_entropy also takes (N, K) target_tokens and weights (top-k distillation: K candidate
/// targets per position, loss -sum_k w[n,k] logprob(target[n,k]); Tinker docs, "Loss Functions /
/// Cross-Entropy", "Top-K distillation"). Per-target vectors are then N*K long, row-major.
struct DatumInputs {
  InputSequence sequence;                 ///< model_input, all chunks concatenated (N positions)
  std::vector<TokenId> targets;           ///< target_tokens (N * targets_per_position)
  std::size_t targets_per_position = 1;   ///< K; 1 for a 1-D target_tokens
  bool two_dimensional = false;           ///< target_tokens was (N, K): outputs are (N, K) too
  std::vector<double> weights;            ///< cross_entropy (N * K)
  std::vector<double> sampling_logprobs;  ///< q: importance_sampling, ppo, cispo, dro (N)
  std::vector<double> advantages;         ///< A: importance_sampling, ppo, cispo, dro (N)
};

/// Parses loss_fn and loss_fn_config. Unknown config keys are ignored. Throws UserError.
LossConfig parse_loss_config(const ForwardBackwardInput& input);

/// Validates every datum of `input` (chunks, token ids, images, lengths, required keys and dtypes,
/// context length) and converts it. Throws UserError naming the offending path. Image positions
/// take targets and weights like text ones (clients send weight 0 there: an image cell has no
/// token to predict).
std::vector<DatumInputs> validate_data(const ForwardBackwardInput& input, const LossConfig& config,
                                       const Architecture& arch);

/// The loss of one token and its derivative with respect to the learner logprob p.
struct TokenLoss {
  double loss = 0.0;
  double dloss_dlogprob = 0.0;
};

/// Target `i` (an index into `datum.targets`) of `datum` under `config` at learner logprob
/// `logprob`. The cispo clip factor is a stop-gradient: it is held constant in the derivative.
TokenLoss token_loss(const LossConfig& config, const DatumInputs& datum, std::size_t i, double logprob);

}  // namespace tinker::local::model
