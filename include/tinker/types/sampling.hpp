// Sampling: parameters, the asample request and its result (spec 8.9, 9.10, 9.11).
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

/// Sampling parameters (spec 9.10). `temperature`, `top_k` and `top_p` are always sent.
class SamplingParams {
 public:
  SamplingParams() = default;
  explicit SamplingParams(std::int64_t max_tokens_, double temperature_ = 1.0)
      : max_tokens(max_tokens_), temperature(temperature_) {}

  std::optional<std::int64_t> max_tokens;
  /// Any 64-bit value; the server folds it into its range.
  std::optional<std::uint64_t> seed;
  std::optional<StopCondition> stop;
  double temperature = 1.0;
  std::int64_t top_k = -1;  ///< -1 = no limit
  double top_p = 1.0;

  friend bool operator==(const SamplingParams&, const SamplingParams&) = default;
};

/// POST /api/v1/asample (future; result SampleResponse).
class SampleRequest {
 public:
  SampleRequest() = default;
  SampleRequest(std::string sampling_session_id_, std::int64_t seq_id_, ModelInput prompt_,
                SamplingParams sampling_params_, std::int64_t num_samples_ = 1)
      : num_samples(num_samples_),
        prompt(std::move(prompt_)),
        sampling_params(std::move(sampling_params_)),
        sampling_session_id(std::move(sampling_session_id_)),
        seq_id(seq_id_) {}

  std::int64_t num_samples = 1;
  ModelInput prompt;
  SamplingParams sampling_params;
  std::optional<std::string> base_model;
  std::optional<std::string> model_path;
  std::optional<std::string> sampling_session_id;
  std::optional<std::int64_t> seq_id;
  std::optional<bool> prompt_logprobs;
  std::int64_t topk_prompt_logprobs = 0;

  friend bool operator==(const SampleRequest&, const SampleRequest&) = default;
};

enum class StopReason { stop, length };
const char* to_string(StopReason reason) noexcept;

/// One generated sequence.
class SampledSequence {
 public:
  SampledSequence() = default;
  SampledSequence(StopReason stop_reason_, std::vector<TokenId> tokens_,
                  std::optional<std::vector<float>> logprobs_ = std::nullopt)
      : stop_reason(stop_reason_), tokens(std::move(tokens_)), logprobs(std::move(logprobs_)) {}

  StopReason stop_reason = StopReason::length;
  std::vector<TokenId> tokens;
  std::optional<std::vector<float>> logprobs;  ///< one per generated token

  friend bool operator==(const SampledSequence&, const SampledSequence&) = default;
};

/// One alternative at a prompt position: (token id, logprob).
using TopkEntry = std::pair<TokenId, float>;

/// Result of asample.
class SampleResponse {
 public:
  SampleResponse() = default;
  explicit SampleResponse(std::vector<SampledSequence> sequences_) : sequences(std::move(sequences_)) {}

  std::vector<SampledSequence> sequences;
  /// One per prompt token when requested; the first is always empty (nothing predicts it).
  std::optional<std::vector<std::optional<float>>> prompt_logprobs;
  /// Up to k alternatives per prompt position when requested; empty optional = not computed.
  std::optional<std::vector<std::optional<std::vector<TopkEntry>>>> topk_prompt_logprobs;
  std::int64_t prompt_cache_hit_tokens = 0;

  friend bool operator==(const SampleResponse&, const SampleResponse&) = default;
};

TINKER_DECLARE_PRINTABLE(SamplingParams);
TINKER_DECLARE_PRINTABLE(SampleRequest);
TINKER_DECLARE_PRINTABLE(SampledSequence);
TINKER_DECLARE_PRINTABLE(SampleResponse);

}  // namespace tinker
