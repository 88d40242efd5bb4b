/// \file
/// Ready-made custom losses for TrainingClient::async_forward_backward_custom (tinker::losses,
/// `doc/training.md#custom-losses`).
#pragma once

#include <tinker/async.hpp>
#include <tinker/sampling_client.hpp>
#include <tinker/training_client.hpp>
#include <tinker/types/datum.hpp>
#include <tinker/types/model_input.hpp>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tinker {

namespace sync {
class SamplingClient;
}

/// Ready-made custom losses for TrainingClient::async_forward_backward_custom.
///
/// A custom loss receives each datum's per-token logprobs and returns the loss and its gradient
/// with respect to those logprobs. The losses here write that gradient out analytically, so no
/// autodiff library is needed.
///
/// DPO (Rafailov et al. 2023, sigmoid form), with the data laid out as the Tinker cookbook's
/// train_dpo does: datums come in pairs, chosen at even indices and rejected at odd ones; each
/// response's log-probability is the sum of its token logprobs weighted by the datum's `weights`.
///
///     std::vector<tinker::Datum> pairs = ...;  // chosen0, rejected0, chosen1, rejected1, ...
///     tinker::SamplingClient reference = co_await training.async_save_weights_and_get_sampling_client(
///         tinker::use_awaitable);  // before the first step: the reference is the initial policy
///     tinker::losses::ReferenceLogprobs ref =
///         co_await tinker::losses::async_reference_logprobs(reference, pairs, tinker::use_awaitable);
///     auto fb = co_await training.async_forward_backward_custom(pairs, tinker::losses::dpo(ref, 0.1),
///                                                               tinker::use_awaitable);
///
/// A sum of per-token terms that users compose:
///
///     using namespace tinker::losses;
///     TokenLoss loss = policy_gradient() + 0.05 * kl_to_reference();
///     std::vector<TokenInputs> inputs = ...;  // advantages, sampling and reference logprobs per datum
///     training.async_forward_backward_custom(data, per_token(loss, inputs), token);
///
/// Errors: a loss that finds bad input throws tinker::error (errc::invalid_argument) naming the
/// datum index and the field, e.g. "losses::dpo: data[3]: reference logprobs: length 6 != 7
/// target tokens"; async_forward_backward_custom then fails with that message.
namespace losses {

/// One vector per datum, aligned with its `target_tokens`: the reference model's logprob of each
/// target token.
using ReferenceLogprobs = std::vector<std::vector<float>>;

// ---------------------------------------------------------------------------------------------
// DPO

/// The DPO temperature the cookbook's train_dpo uses by default (Config.dpo_beta = 0.1).
inline constexpr double kDefaultDpoBeta = 0.1;

/// The DPO loss of a batch of pairs, evaluated directly (what `dpo` returns calls this).
///
/// For pair p of P (datums 2p chosen, 2p+1 rejected), with weighted log-ratios c_p over the
/// chosen datum and r_p likewise over the rejected one, the loss is the mean over pairs of
/// -log sigmoid(z_p):
///
///     c_p = sum_t w_t (logprob_t - ref_t)
///     z_p = beta (c_p - r_p)
///     d loss / d chosen logprob_t   = -sigmoid(-z_p) beta w_t / P
///     d loss / d rejected logprob_t = +sigmoid(-z_p) beta w_t / P
///
/// Metrics (the cookbook's names): dpo_loss, accuracy (fraction of pairs with c_p > r_p), margin
/// (mean beta (c_p - r_p)), chosen_reward (mean beta c_p), rejected_reward (mean beta r_p),
/// num_pairs.
///
/// Each datum needs `weights` as long as its `target_tokens`. Throws tinker::error
/// (invalid_argument) for an odd number of datums, beta <= 0 or not finite, and any length mismatch.
CustomLossOutput dpo_loss(const std::vector<Datum>& data, const std::vector<std::vector<float>>& logprobs,
                          const ReferenceLogprobs& reference, double beta = kDefaultDpoBeta);

/// The DPO loss as a CustomLossFunction for async_forward_backward_custom. `reference` holds one
/// vector per datum of the batch it will be called with.
CustomLossFunction dpo(ReferenceLogprobs reference, double beta = kDefaultDpoBeta);

// ---------------------------------------------------------------------------------------------
// Reference logprobs from a SamplingClient (the cookbook's way: compute_logprobs on each datum's
// full sequence)

/// The sequence a datum was cut from: its model_input followed by its last target token (the
/// model_input alone when it has no targets).
ModelInput full_sequence(const Datum& datum);

/// Aligns compute_logprobs results of each datum's full_sequence with its target_tokens: drops
/// the first (empty) entry. Throws tinker::error (invalid_argument) naming the datum when the
/// counts differ, a position has no logprob, or (for text inputs) the targets are not the
/// model_input shifted by one token, which this alignment assumes.
ReferenceLogprobs align_reference_logprobs(const std::vector<Datum>& data, const std::vector<PromptLogprobs>& computed);

namespace detail {
void reference_logprobs_op(SamplingClient reference, std::vector<Datum> data, diagnostics* diag,
                           tinker::detail::Handler<ReferenceLogprobs> handler);
}  // namespace detail

/// Runs `reference.async_compute_logprobs` on every datum's full_sequence (all submitted at
/// once) and completes with the aligned result (align_reference_logprobs). A failure names the
/// datum in its message; the form with `diag` also fills it.
///@{
template <class Token = default_token>
auto async_reference_logprobs(const SamplingClient& reference, std::vector<Datum> data, Token&& token = {}) {
  return tinker::detail::start<ReferenceLogprobs>(std::forward<Token>(token), nullptr, &detail::reference_logprobs_op,
                                                  reference, std::move(data));
}
template <class Token = default_token>
auto async_reference_logprobs(const SamplingClient& reference, std::vector<Datum> data, diagnostics& diag,
                              Token&& token = {}) {
  return tinker::detail::start<ReferenceLogprobs>(std::forward<Token>(token), &diag, &detail::reference_logprobs_op,
                                                  reference, std::move(data));
}
///@}

/// Blocking form (tinker::sync): submits every compute_logprobs, then waits for all of them.
/// Throws tinker::error; not on the client's io thread.
ReferenceLogprobs reference_logprobs(const sync::SamplingClient& reference, const std::vector<Datum>& data);

// ---------------------------------------------------------------------------------------------
// A weighted sum of per-token terms
//
//   loss = sum over terms j of scale_j * sum over datums i and tokens t of term_j(token i,t)
//
// Each term gives its value at a token and the derivative of that value with respect to the
// token's logprob; the gradient of the loss is the scaled sum of those derivatives. Terms compose
// with +, - and scalar * and /; dividing by the number of trained tokens gives a mean.

/// Per-token inputs of one datum besides its logprobs, each as long as its target_tokens; leave a
/// vector empty when no term needs it. (`weights` come from the datum itself.)
class TokenInputs {
 public:
  /// No inputs.
  TokenInputs() = default;
  /// The given per-token inputs of one datum.
  TokenInputs(std::vector<float> advantages_, std::vector<float> sampling_logprobs_,
              std::vector<float> reference_logprobs_ = {})
      : advantages(std::move(advantages_)),
        sampling_logprobs(std::move(sampling_logprobs_)),
        reference_logprobs(std::move(reference_logprobs_)) {}

  std::vector<float> advantages;          ///< per-token advantages (policy gradient)
  std::vector<float> sampling_logprobs;   ///< the sampler's logprobs of the tokens (importance sampling)
  std::vector<float> reference_logprobs;  ///< a reference model's logprobs (KL penalty)
};

/// The inputs a term reads besides the logprob and the weight.
enum class TokenInput {
  advantages,          ///< TokenInputs::advantages, seen as TokenView::advantage
  sampling_logprobs,   ///< TokenInputs::sampling_logprobs, seen as TokenView::sampling_logprob
  reference_logprobs,  ///< TokenInputs::reference_logprobs, seen as TokenView::reference_logprob
};

/// What a term sees at one token.
class TokenView {
 public:
  std::size_t datum = 0;     ///< index in the batch
  std::size_t position = 0;  ///< index in target_tokens
  double logprob = 0.0;      ///< the learner's logprob of the target token (the variable)
  double weight = 1.0;       ///< the datum's `weights` at this token; 1 when the datum has none
  /// Present exactly when the term declared it needs the input (likewise the next two).
  std::optional<double> advantage;
  std::optional<double> sampling_logprob;   ///< the sampler's logprob of the token (TokenInput::sampling_logprobs)
  std::optional<double> reference_logprob;  ///< the reference's logprob of the token (TokenInput::reference_logprobs)
};

/// A function of one token: its value, or its derivative with respect to TokenView::logprob.
using TokenFunction = std::function<double(const TokenView&)>;

/// One named per-token term with a scale.
class Term {
 public:
  /// A term without validation; prefer losses::term(), which checks the name and functions.
  Term(std::string name_, TokenFunction value_, TokenFunction derivative_, std::vector<TokenInput> needs_ = {},
       double scale_ = 1.0)
      : name(std::move(name_)),
        value(std::move(value_)),
        derivative(std::move(derivative_)),
        needs(std::move(needs_)),
        scale(scale_) {}

  std::string name;               ///< its metric name (no ':')
  TokenFunction value;            ///< its value at a token
  TokenFunction derivative;       ///< d value / d logprob at a token
  std::vector<TokenInput> needs;  ///< the inputs it reads
  double scale = 1.0;             ///< factor applied to its value and derivative
};

/// A sum of scaled per-token terms. Compose with `+`, `-`, and `*` or `/` by a scalar, which
/// scales every term.
class TokenLoss {
 public:
  /// The zero loss (no terms).
  TokenLoss() = default;
  /// The loss of one term.
  explicit TokenLoss(Term term) { terms.push_back(std::move(term)); }

  /// The terms, summed.
  std::vector<Term> terms;

  /// The sum of both losses' terms.
  friend TokenLoss operator+(TokenLoss a, const TokenLoss& b) {
    a.terms.insert(a.terms.end(), b.terms.begin(), b.terms.end());
    return a;
  }
  /// Every term scaled by `factor`.
  friend TokenLoss operator*(double factor, TokenLoss loss) {
    for (Term& term : loss.terms) term.scale *= factor;
    return loss;
  }
  /// Every term scaled by `factor`.
  friend TokenLoss operator*(TokenLoss loss, double factor) { return factor * std::move(loss); }
  /// Every term scaled by 1 / `divisor` (e.g. the number of trained tokens, for a mean).
  friend TokenLoss operator/(TokenLoss loss, double divisor) { return (1.0 / divisor) * std::move(loss); }
  /// Every term negated.
  friend TokenLoss operator-(TokenLoss loss) { return -1.0 * std::move(loss); }
  /// `a` plus the negated terms of `b`.
  friend TokenLoss operator-(TokenLoss a, TokenLoss b) { return std::move(a) + -std::move(b); }
};

/// Negative log-likelihood: -weight * logprob ("nll"). The built-in cross_entropy loss, per token.
TokenLoss nll();

/// Importance-sampled policy gradient: -weight * exp(logprob - sampling_logprob) * advantage
/// ("policy_gradient"); the built-in importance_sampling loss, per token (weight 1 when the datum
/// has no weights). Needs advantages and sampling_logprobs.
TokenLoss policy_gradient();

/// Per-token estimators of KL(policy || reference) from the sampled token, with d = logprob -
/// reference_logprob (Schulman, "Approximating KL divergence", 2020).
enum class KlEstimator {
  k1,  ///< d: unbiased, but its gradient ignores the reference
  k2,  ///< d^2 / 2: derivative d
  k3,  ///< exp(-d) - 1 + d: GRPO's penalty; >= 0, derivative 1 - exp(-d)
};

/// A KL-to-reference penalty: weight * estimator(logprob - reference_logprob) ("kl_to_reference").
/// Needs reference_logprobs. Scale it by the penalty coefficient: `0.05 * kl_to_reference()`.
TokenLoss kl_to_reference(KlEstimator estimator = KlEstimator::k3);

/// A user term: its value and its derivative with respect to the logprob (both per token), and
/// the inputs it reads. Throws tinker::error (invalid_argument) for an empty name, a name with
/// ':' or the name "loss" (metric names), or an empty function.
TokenLoss term(std::string name, TokenFunction value, TokenFunction derivative, std::vector<TokenInput> needs = {});

/// Evaluates `loss` on a batch: the summed loss, each datum's gradient, and metrics "loss" (the
/// total) and one per term name (its scaled sum; terms sharing a name add up). `inputs` has one
/// entry per datum, or is empty when no term needs any input. Throws tinker::error
/// (invalid_argument) naming the datum and field for missing inputs and length mismatches.
CustomLossOutput evaluate(const TokenLoss& loss, const std::vector<Datum>& data,
                          const std::vector<std::vector<float>>& logprobs, const std::vector<TokenInputs>& inputs = {});

/// `loss` as a CustomLossFunction for async_forward_backward_custom.
CustomLossFunction per_token(TokenLoss loss, std::vector<TokenInputs> inputs = {});

}  // namespace losses
}  // namespace tinker
