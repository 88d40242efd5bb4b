/// \file
/// SamplingClient: samples from a base model or from saved LoRA weights (`doc/sampling.md`).
#pragma once

#include <tinker/async.hpp>
#include <tinker/future.hpp>
#include <tinker/types/model_input.hpp>
#include <tinker/types/sampling.hpp>
#include <tinker/types/telemetry.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tinker {

class Tokenizer;

/// Prompt log-probabilities to return with a sample (SampleResponse::prompt_logprobs and
/// topk_prompt_logprobs).
class SampleOptions {
 public:
  /// Neither.
  SampleOptions() = default;
  /// The prompt's logprobs when `include_prompt_logprobs_`, and the `topk_prompt_logprobs_`
  /// likeliest tokens per prompt position.
  explicit SampleOptions(bool include_prompt_logprobs_, std::int64_t topk_prompt_logprobs_ = 0)
      : include_prompt_logprobs(include_prompt_logprobs_), topk_prompt_logprobs(topk_prompt_logprobs_) {}

  bool include_prompt_logprobs = false;   ///< return the logprob of every prompt token
  std::int64_t topk_prompt_logprobs = 0;  ///< alternatives per prompt position; 0 = none
};

/// Sample resubmission of one SamplingClient (`doc/sampling.md#retry-settings`), the Python SDK's
/// `RetryConfig`: given to ServiceClient::async_create_sampling_client; the defaults are the
/// protocol's. validate() is called at creation: a bad value fails the creation with
/// invalid_argument naming the field.
class SamplingRetryConfig {
 public:
  /// The protocol's defaults.
  SamplingRetryConfig() = default;

  /// Most sample operations in flight end to end. Empty: the server's
  /// sample_max_concurrent_requests (2000 by default); set: at most that, and never more than
  /// the server allows. Must be positive.
  std::optional<std::int64_t> max_connections;
  /// With stuck detection on, no sample completing for this long fails the waiting ones
  /// (errc::timeout, "No progress made in ...s"). Must be positive.
  std::chrono::milliseconds progress_timeout{std::chrono::hours(2)};
  std::chrono::milliseconds retry_delay_base{500};    ///< delay before the first fresh attempt; >= 0
  std::chrono::milliseconds retry_delay_max{10'000};  ///< cap on the doubling delay; >= retry_delay_base
  double jitter_factor = 0.25;                        ///< delays vary by +- this fraction; in [0, 1]
  bool enable_retry_logic = true;                     ///< false: one attempt, failures go to the caller
  /** false: never give up on a request for lack of progress (also off when the server's
      sample_enable_stuck_detection is false). */
  bool enable_stuck_detection = true;

  /// Throws tinker::error (invalid_argument) naming the first invalid field and its value.
  void validate() const;
};

/// Settings of one SamplingClient, fixed at its creation (`doc/sampling.md#creating-a-sampler`):
/// given to ServiceClient::async_create_sampling_client, TrainingClient::async_create_sampling_client
/// and TrainingClient::async_save_weights_and_get_sampling_client.
class SamplingClientOptions {
 public:
  /// The defaults: the protocol's retry settings, no stability information.
  SamplingClientOptions() = default;
  /// `retry_` as the retry settings.
  explicit SamplingClientOptions(SamplingRetryConfig retry_) : retry(std::move(retry_)) {}

  /// Sample resubmission (`doc/sampling.md#retry-settings`); validated at creation.
  SamplingRetryConfig retry;
  /// Ask the server to record numerical-stability information for every request of this sampler
  /// (SampleRequest::record_stability_info; sent only when true). tinker-local keeps per-request
  /// statistics of the sampled logprobs in its audit log (`doc/local.md`).
  bool record_stability_info = false;
};

/// Per-token logprobs of a prompt; the first is always empty (nothing predicts it).
using PromptLogprobs = std::vector<std::optional<float>>;

namespace detail {
class SamplingState;
boost::asio::any_io_executor sampling_executor(const SamplingState& state) noexcept;
void sampling_sample(std::shared_ptr<const SamplingState> state, ModelInput prompt, std::int64_t num_samples,
                     SamplingParams params, SampleOptions options, diagnostics* diag,
                     Handler<Future<SampleResponse>> handler);
void sampling_compute_logprobs(std::shared_ptr<const SamplingState> state, ModelInput prompt, diagnostics* diag,
                               Handler<Future<PromptLogprobs>> handler);
void sampling_get_tokenizer(std::shared_ptr<const SamplingState> state, diagnostics* diag,
                            Handler<std::shared_ptr<const Tokenizer>> handler);
void sampling_get_base_model(std::shared_ptr<const SamplingState> state, diagnostics* diag,
                             Handler<std::string> handler);
const std::string& sampling_session_id(const SamplingState& state) noexcept;
TelemetryInfo sampling_telemetry(const SamplingState& state);
}  // namespace detail

/// Samples from a base model or from saved sampler weights. Get one from
/// ServiceClient::async_create_sampling_client, TrainingClient::async_create_sampling_client or
/// TrainingClient::async_save_weights_and_get_sampling_client.
///
/// A cheap handle: copies share one immutable configuration snapshot (session, sampler id, pools)
/// that the sampling path reads without locks, and one atomic request counter. Every call may
/// come from any thread (the work hops onto the client's io thread). Submitting completes with a
/// Future once the server accepted the request; a result the server lost (HTTP 410) is requested
/// again with a new seq_id inside the same Future.
///
/// Under load (`doc/sampling.md#backpressure-and-retries`): a 429 answer backs off every client
/// with the same base URL and API key for 1 s (5 s for prompts estimated above 128 KiB) and
/// re-sends the same seq_id; submissions are bounded in count and bytes per ServiceClient
/// (stricter for 10 s after a 429), operations end to end by the server's
/// sample_max_concurrent_requests, and connections by the pools (ClientOptions::pools), so
/// thousands of samples may be in flight at once.
///
/// Each operation has a second form taking a `diagnostics&` before the token, filled when it
/// fails; errors are tinker::errc codes (see tinker::Future for the result's). An empty handle
/// (valid() false) must not be used.
class SamplingClient {
 public:
  /// An empty handle (what a failed creation completes with); only assignable.
  SamplingClient() = default;
  /// Internal: the clients create samplers.
  explicit SamplingClient(std::shared_ptr<const detail::SamplingState> state) : state_(std::move(state)) {}

  /// The executor this client runs on (the one its ServiceClient was given), as Asio's I/O objects
  /// have: to post work next to the client's or to run a timer beside its operations.
  /// Not for a default-constructed client.
  boost::asio::any_io_executor get_executor() const noexcept { return detail::sampling_executor(*state_); }

  /// False for an empty handle.
  bool valid() const noexcept { return state_ != nullptr; }

  /// The server's id of this sampler ("<session>:sample:<n>").
  const std::string& sampling_session_id() const noexcept { return detail::sampling_session_id(*state_); }

  /// Draws `num_samples` continuations of `prompt` with `params`, plus the prompt logprobs
  /// `options` asks for. Completes with the Future of the SampleResponse once the server accepted
  /// the request.
  ///@{
  template <class Token = default_token>
  auto async_sample(ModelInput prompt, std::int64_t num_samples, SamplingParams params, SampleOptions options,
                    Token&& token = {}) const {
    return detail::start<Future<SampleResponse>>(std::forward<Token>(token), nullptr, &detail::sampling_sample, state_,
                                                 std::move(prompt), num_samples, std::move(params), options);
  }
  template <class Token = default_token>
  auto async_sample(ModelInput prompt, std::int64_t num_samples, SamplingParams params, SampleOptions options,
                    diagnostics& diag, Token&& token = {}) const {
    return detail::start<Future<SampleResponse>>(std::forward<Token>(token), &diag, &detail::sampling_sample, state_,
                                                 std::move(prompt), num_samples, std::move(params), options);
  }
  ///@}

  /// Log-probabilities of every prompt token under this sampler's weights (one token sampled
  /// and discarded). Completes with the Future of the PromptLogprobs, whose first entry is empty.
  ///@{
  template <class Token = default_token>
  auto async_compute_logprobs(ModelInput prompt, Token&& token = {}) const {
    return detail::start<Future<PromptLogprobs>>(std::forward<Token>(token), nullptr,
                                                 &detail::sampling_compute_logprobs, state_, std::move(prompt));
  }
  template <class Token = default_token>
  auto async_compute_logprobs(ModelInput prompt, diagnostics& diag, Token&& token = {}) const {
    return detail::start<Future<PromptLogprobs>>(std::forward<Token>(token), &diag, &detail::sampling_compute_logprobs,
                                                 state_, std::move(prompt));
  }
  ///@}

  /// The base model this sampler serves, e.g. "Qwen/Qwen3-8B": known at once for a sampler made
  /// from a base model, else GET /api/v1/samplers/{id} (transport and call retries).
  ///@{
  template <class Token = default_token>
  auto async_get_base_model(Token&& token = {}) const {
    return detail::start<std::string>(std::forward<Token>(token), nullptr, &detail::sampling_get_base_model, state_);
  }
  template <class Token = default_token>
  auto async_get_base_model(diagnostics& diag, Token&& token = {}) const {
    return detail::start<std::string>(std::forward<Token>(token), &diag, &detail::sampling_get_base_model, state_);
  }
  ///@}

  /// Whether telemetry is on, and the session and process ids it reports under
  /// (`doc/protocol.md#telemetry`). Any thread.
  TelemetryInfo telemetry() const { return detail::sampling_telemetry(*state_); }

  /// The tokenizer of the sampler's base model: GET /api/v1/samplers/{id}, then
  /// get_tokenizer_for (on disk or downloaded, `doc/tokenizers.md`). Loading happens off the io
  /// thread; a tokenizer that cannot be found fails with invalid_configuration naming the paths
  /// looked at.
  ///@{
  template <class Token = default_token>
  auto async_get_tokenizer(Token&& token = {}) const {
    return detail::start<std::shared_ptr<const Tokenizer>>(std::forward<Token>(token), nullptr,
                                                           &detail::sampling_get_tokenizer, state_);
  }
  template <class Token = default_token>
  auto async_get_tokenizer(diagnostics& diag, Token&& token = {}) const {
    return detail::start<std::shared_ptr<const Tokenizer>>(std::forward<Token>(token), &diag,
                                                           &detail::sampling_get_tokenizer, state_);
  }
  ///@}

 private:
  std::shared_ptr<const detail::SamplingState> state_;
};

}  // namespace tinker
