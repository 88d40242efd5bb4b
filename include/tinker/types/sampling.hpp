/// \file
/// Sampling on the wire: parameters, the asample request and its result
/// (`doc/protocol.md#core-types`, `doc/sampling.md`).
#pragma once

#include <tinker/types/common.hpp>
#include <tinker/types/model_input.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace tinker {

/// Where generation stops: one stop string, several stop strings, or stop token ids.
using StopCondition = std::variant<std::string, std::vector<std::string>, std::vector<TokenId>>;

/// How to sample. `temperature`, `top_k` and `top_p` are always sent; the optional fields only
/// when set.
class SamplingParams {
 public:
  /// The defaults: no token limit sent, temperature 1, no top-k or top-p cut.
  SamplingParams() = default;
  /// At most `max_tokens_` new tokens at `temperature_`.
  explicit SamplingParams(std::int64_t max_tokens_, double temperature_ = 1.0)
      : max_tokens(max_tokens_), temperature(temperature_) {}

  /// Most tokens to generate per sequence. Empty: the server's default (tinker-local: 16).
  std::optional<std::int64_t> max_tokens;
  /// Random seed for reproducible samples; any 64-bit value (the server folds it into its
  /// range). Empty: random.
  std::optional<std::uint64_t> seed;
  /// Where generation stops besides max_tokens. Empty (not sent): the server's implicit
  /// end-of-sequence stop applies. Set: these conditions only; an empty list (sent as `[]`)
  /// disables every stop token, end-of-sequence included, so generation runs to max_tokens.
  std::optional<StopCondition> stop;
  /// Softmax temperature: below 1 sharpens the distribution, above 1 flattens it.
  double temperature = 1.0;
  std::int64_t top_k = -1;  ///< sample among the k likeliest tokens; -1 = no limit
  double top_p = 1.0;       ///< nucleus sampling: the smallest set of tokens with this much mass; 1 = all

  /// Equal when every field is equal.
  friend bool operator==(const SamplingParams&, const SamplingParams&) = default;
};

/// POST /api/v1/asample (future; result SampleResponse). SamplingClient builds it: users call
/// SamplingClient::async_sample.
class SampleRequest {
 public:
  /// An empty request.
  SampleRequest() = default;
  /// `num_samples_` samples of `prompt_` from the sampler `sampling_session_id_`, as its request
  /// `seq_id_`.
  SampleRequest(std::string sampling_session_id_, std::int64_t seq_id_, ModelInput prompt_,
                SamplingParams sampling_params_, std::int64_t num_samples_ = 1)
      : num_samples(num_samples_),
        prompt(std::move(prompt_)),
        sampling_params(std::move(sampling_params_)),
        sampling_session_id(std::move(sampling_session_id_)),
        seq_id(seq_id_) {}

  std::int64_t num_samples = 1;                    ///< sequences to generate
  ModelInput prompt;                               ///< what to continue
  SamplingParams sampling_params;                  ///< how to sample
  std::optional<std::string> base_model;           ///< alternative addressing: a base model (unused by the SDK)
  std::optional<std::string> model_path;           ///< alternative addressing: a `tinker://` path (unused by the SDK)
  std::optional<std::string> sampling_session_id;  ///< the sampler, as created by create_sampling_session
  std::optional<std::int64_t> seq_id;              ///< the sampler's request counter, from 0; required with the id
  std::optional<bool> prompt_logprobs;             ///< also return the prompt tokens' logprobs
  std::int64_t topk_prompt_logprobs = 0;           ///< also return the k likeliest tokens per prompt position; 0 = none
  /// Ask the server to record numerical-stability information for this request (sent only when
  /// true, as the Python SDK sends None otherwise). SamplingClientOptions::record_stability_info.
  std::optional<bool> record_stability_info;

  /// Equal when every field is equal.
  friend bool operator==(const SampleRequest&, const SampleRequest&) = default;
};

/// Why a sampled sequence ended.
enum class StopReason {
  stop,    ///< a stop condition or the end-of-sequence token was met
  length,  ///< max_tokens was reached
};
/// The wire name: "stop" or "length".
const char* to_string(StopReason reason) noexcept;

/// One generated sequence.
class SampledSequence {
 public:
  /// An empty sequence.
  SampledSequence() = default;
  /// A sequence of `tokens_` that ended for `stop_reason_`.
  SampledSequence(StopReason stop_reason_, std::vector<TokenId> tokens_,
                  std::optional<std::vector<float>> logprobs_ = std::nullopt)
      : stop_reason(stop_reason_), tokens(std::move(tokens_)), logprobs(std::move(logprobs_)) {}

  StopReason stop_reason = StopReason::length;  ///< why it ended
  std::vector<TokenId> tokens;                  ///< the generated ids (the prompt is not repeated)
  std::optional<std::vector<float>> logprobs;   ///< one per generated token
  /// The server's id of this sequence, unique within the session: what provenance spans
  /// (PromptProvenanceSpan, SampledProvenanceSpan) refer to. Empty when the server sent none.
  std::optional<std::string> sequence_id;

  /// Equal when every field is equal.
  friend bool operator==(const SampledSequence&, const SampledSequence&) = default;
};

/// One alternative at a prompt position: (token id, logprob).
using TopkEntry = std::pair<TokenId, float>;

/// Result of asample (SamplingClient::async_sample).
class SampleResponse {
 public:
  /// No sequences.
  SampleResponse() = default;
  /// A result of `sequences_`.
  explicit SampleResponse(std::vector<SampledSequence> sequences_) : sequences(std::move(sequences_)) {}

  /// num_samples sequences.
  std::vector<SampledSequence> sequences;
  /// One per prompt token when requested; the first is always empty (nothing predicts it).
  std::optional<std::vector<std::optional<float>>> prompt_logprobs;
  /// Up to k alternatives per prompt position when requested; empty optional = not computed.
  std::optional<std::vector<std::optional<std::vector<TopkEntry>>>> topk_prompt_logprobs;
  /// Prompt tokens served from the prefix cache (billed as cache hits; not multiplied by
  /// num_samples).
  std::int64_t prompt_cache_hit_tokens = 0;

  /// Equal when every field is equal.
  friend bool operator==(const SampleResponse&, const SampleResponse&) = default;
};

TINKER_DECLARE_PRINTABLE(SamplingParams);
TINKER_DECLARE_PRINTABLE(SampleRequest);
TINKER_DECLARE_PRINTABLE(SampledSequence);
TINKER_DECLARE_PRINTABLE(SampleResponse);

}  // namespace tinker
