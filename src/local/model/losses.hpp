// Validation of forward_backward inputs and the five per-token losses of spec 9.4.
#pragma once

#include "local/model/tiny_lm.hpp"

#include <string>
#include <vector>

namespace tinker::local::model {

enum class LossKind { cross_entropy, importance_sampling, ppo, cispo, dro };

/// Default `beta` of the dro loss (spec leaves it open): a mild quadratic pull towards the
/// sampling policy, small enough that the advantage term dominates for unit-order advantages.
inline constexpr double kDefaultDroBeta = 0.1;

struct LossConfig {
  LossKind kind = LossKind::cross_entropy;
  double clip_low = 0.8;   ///< ppo, cispo: clip_low_threshold
  double clip_high = 1.2;  ///< ppo, cispo: clip_high_threshold
  double beta = kDefaultDroBeta;
};

/// One validated datum, converted to the types the computation uses.
struct DatumInputs {
  std::vector<TokenId> tokens;            ///< model_input, all chunks concatenated (N)
  std::vector<TokenId> targets;           ///< target_tokens (N)
  std::vector<double> weights;            ///< cross_entropy (N)
  std::vector<double> sampling_logprobs;  ///< q: importance_sampling, ppo, cispo, dro (N)
  std::vector<double> advantages;         ///< A: importance_sampling, ppo, cispo, dro (N)
};

/// Parses loss_fn and loss_fn_config. Unknown config keys are ignored. Throws UserError.
LossConfig parse_loss_config(const ForwardBackwardInput& input);

/// Validates every datum of `input` (chunks, token ids, lengths, required keys and dtypes,
/// context length) and converts it. Throws UserError naming the offending path.
std::vector<DatumInputs> validate_data(const ForwardBackwardInput& input, const LossConfig& config,
                                       const Architecture& arch);

/// The concatenated tokens of a text-only model input; `path` names it in errors
/// (e.g. "data[3].model_input" or "prompt"). Throws UserError for other chunk kinds and for ids
/// outside [0, vocab).
std::vector<TokenId> text_tokens(const ModelInput& input, const std::string& path, int vocab_size);

/// The loss of one token and its derivative with respect to the learner logprob p.
struct TokenLoss {
  double loss = 0.0;
  double dloss_dlogprob = 0.0;
};

/// Token `i` of `datum` under `config` at learner logprob `logprob`. The cispo clip factor is a
/// stop-gradient: it is held constant in the derivative.
TokenLoss token_loss(const LossConfig& config, const DatumInputs& datum, std::size_t i, double logprob);

}  // namespace tinker::local::model
