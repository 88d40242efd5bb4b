/// \file
/// Datum, loss-function inputs and outputs, forward/backward results
/// (`doc/protocol.md#core-types`).
#pragma once

#include <tinker/types/common.hpp>
#include <tinker/types/model_input.hpp>
#include <tinker/types/tensor.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace tinker {

/// Names of the built-in loss functions, for ForwardBackwardInput::loss_fn. The wire carries the
/// name as a string so that newer server-side losses stay usable. In the formulas, p is the
/// learner's logprob of a target token (computed by the server), q the sampler's (input
/// `logprobs`), A the advantage; each loss is summed over tokens and datums, and every one of them
/// returns per-datum `logprobs` (p) and the metric `loss:sum`.
namespace loss_fn {
/// -sum weights * p. Inputs: `target_tokens` (int64), `weights` (float32). The supervised loss;
/// `weights` masks the prompt.
inline constexpr const char* cross_entropy = "cross_entropy";
/// -sum exp(p - q) * A. Inputs: `target_tokens`, `logprobs`, `advantages`.
inline constexpr const char* importance_sampling = "importance_sampling";
/// -sum min(r A, clip(r, lo, hi) A) with r = exp(p - q). Inputs as importance_sampling; config
/// `clip_low_threshold` (default 0.8) and `clip_high_threshold` (1.2).
inline constexpr const char* ppo = "ppo";
/// -sum stopgrad(clip(r, lo, hi)) p A. Inputs and config as ppo.
inline constexpr const char* cispo = "cispo";
/// -sum (p A - beta (p - q)^2 / 2). Inputs as importance_sampling; config `beta`.
inline constexpr const char* dro = "dro";
}  // namespace loss_fn

/// Map from input name (`target_tokens`, `weights`, `advantages`, `logprobs`, ...) to tensor.
using LossFnInputs = std::map<std::string, TensorData>;
/// Per-datum outputs of a loss function (at least `logprobs`).
using LossFnOutput = std::map<std::string, TensorData>;
/// Scalar loss configuration (e.g. `clip_low_threshold`, `beta`).
using LossFnConfig = std::map<std::string, double>;
/// Metrics keyed `<name>:<reduction>` (such as `loss:sum`). The reduction (mean, sum, min, max,
/// slack, hash_unordered, unique) says how the results of a chunked batch combine
/// (`doc/training.md#chunking`).
using Metrics = std::map<std::string, double>;

/// Positions [offset, offset + length) of the prompt of the sampled sequence `sequence_id`
/// (SampledSequence::sequence_id): where a run of a datum's positions came from. Wire tag
/// `"type": "prompt"` (`doc/protocol.md#choices-where-the-protocol-was-open`).
class PromptProvenanceSpan {
 public:
  /// An empty span.
  PromptProvenanceSpan() = default;
  /// `length_` prompt positions of `sequence_id_` from `offset_`.
  PromptProvenanceSpan(std::string sequence_id_, std::int64_t offset_, std::int64_t length_)
      : sequence_id(std::move(sequence_id_)), offset(offset_), length(length_) {}

  std::string sequence_id;  ///< a sequence sampled in the same session
  std::int64_t offset = 0;  ///< first prompt position, from 0
  std::int64_t length = 1;  ///< positions covered; at least 1

  /// Equal when every field is equal.
  friend bool operator==(const PromptProvenanceSpan&, const PromptProvenanceSpan&) = default;
};

/// Positions [offset, offset + length) of the sampled tokens of `sequence_id`. Wire tag
/// `"type": "sampled"`.
class SampledProvenanceSpan {
 public:
  /// An empty span.
  SampledProvenanceSpan() = default;
  /// `length_` sampled positions of `sequence_id_` from `offset_`.
  SampledProvenanceSpan(std::string sequence_id_, std::int64_t offset_, std::int64_t length_)
      : sequence_id(std::move(sequence_id_)), offset(offset_), length(length_) {}

  std::string sequence_id;  ///< a sequence sampled in the same session
  std::int64_t offset = 0;  ///< first sampled position, from 0
  std::int64_t length = 1;  ///< positions covered; at least 1

  /// Equal when every field is equal.
  friend bool operator==(const SampledProvenanceSpan&, const SampledProvenanceSpan&) = default;
};

/// Where a run of a datum's positions came from.
using ProvenanceSpan = std::variant<PromptProvenanceSpan, SampledProvenanceSpan>;

/// One training example: the model input and the per-token loss inputs aligned with it.
///
/// Position i of `model_input` predicts token i+1 of the full sequence: for a sequence S the
/// datum is `model_input` = S[0, n-1) and `target_tokens` = S[1, n), and every per-token input
/// has the same length n-1.
class Datum {
 public:
  /// An empty datum.
  Datum() = default;
  /// A datum of `model_input_` and its loss inputs.
  Datum(ModelInput model_input_, LossFnInputs loss_fn_inputs_)
      : model_input(std::move(model_input_)), loss_fn_inputs(std::move(loss_fn_inputs_)) {}

  /// The tokens (and other chunks) the model reads.
  ModelInput model_input;
  /// The loss function's inputs by name (`target_tokens`, `weights`, ...), each as long as
  /// `model_input`.
  LossFnInputs loss_fn_inputs;
  /// Where the positions of `model_input` came from: runs covering its length exactly, in order
  /// (`doc/training.md#provenance`). Empty: not said (not sent).
  std::optional<std::vector<ProvenanceSpan>> model_input_spans;
  /// Where the positions of the loss inputs came from: runs covering their common length exactly,
  /// in order. Empty: not said (not sent).
  std::optional<std::vector<ProvenanceSpan>> loss_fn_input_spans;

  /// A copy of this datum with these spans (validate_provenance checks them; forward_backward
  /// does too, before anything is sent).
  Datum with_provenance(std::vector<ProvenanceSpan> model_input_spans_,
                        std::optional<std::vector<ProvenanceSpan>> loss_fn_input_spans_ = std::nullopt) const {
    Datum copy = *this;
    copy.model_input_spans = std::move(model_input_spans_);
    copy.loss_fn_input_spans = std::move(loss_fn_input_spans_);
    return copy;
  }

  /// Equal when every field is equal.
  friend bool operator==(const Datum&, const Datum&) = default;
};

/// Throws tinker::error (invalid_argument) naming the datum (`data[index]`), the field and the span
/// when `datum`'s provenance spans do not cover their field exactly, in order, each of length >= 1
/// with a non-empty sequence id and a non-negative offset. Nothing for a datum without spans.
void validate_provenance(const Datum& datum, std::size_t index);

/// The batch and loss of one forward(+backward) pass.
class ForwardBackwardInput {
 public:
  /// An empty batch with the cross_entropy loss.
  ForwardBackwardInput() = default;
  /// The batch `data_` under the loss named `loss_fn_` (see tinker::loss_fn).
  ForwardBackwardInput(std::vector<Datum> data_, std::string loss_fn_,
                       std::optional<LossFnConfig> loss_fn_config_ = std::nullopt)
      : data(std::move(data_)), loss_fn(std::move(loss_fn_)), loss_fn_config(std::move(loss_fn_config_)) {}

  /// The batch. Must not be empty; the client splits it into chunks the server accepts.
  std::vector<Datum> data;
  /// The loss function's name (tinker::loss_fn, or any name the server knows).
  std::string loss_fn = loss_fn::cross_entropy;
  /// Scalar settings of the loss (e.g. `clip_low_threshold`); empty: the server's defaults.
  std::optional<LossFnConfig> loss_fn_config;

  /// Equal when every field is equal.
  friend bool operator==(const ForwardBackwardInput&, const ForwardBackwardInput&) = default;
};

/// Result of forward / forward_backward.
class ForwardBackwardOutput {
 public:
  /// An empty result.
  ForwardBackwardOutput() = default;
  /// A result of the given parts.
  ForwardBackwardOutput(std::string loss_fn_output_type_, std::vector<LossFnOutput> loss_fn_outputs_, Metrics metrics_)
      : loss_fn_output_type(std::move(loss_fn_output_type_)),
        loss_fn_outputs(std::move(loss_fn_outputs_)),
        metrics(std::move(metrics_)) {}

  /// Class name of the output records (e.g. "ArrayRecord"); informational.
  std::string loss_fn_output_type = "ArrayRecord";
  /// One entry per datum, in request order.
  std::vector<LossFnOutput> loss_fn_outputs;
  /// The loss's metrics, e.g. `loss:sum` (the server's loss, summed over tokens and datums).
  Metrics metrics;

  /// Equal when every field is equal.
  friend bool operator==(const ForwardBackwardOutput&, const ForwardBackwardOutput&) = default;
};

TINKER_DECLARE_PRINTABLE(PromptProvenanceSpan);
TINKER_DECLARE_PRINTABLE(SampledProvenanceSpan);
TINKER_DECLARE_PRINTABLE(Datum);
TINKER_DECLARE_PRINTABLE(ForwardBackwardInput);
TINKER_DECLARE_PRINTABLE(ForwardBackwardOutput);

}  // namespace tinker
