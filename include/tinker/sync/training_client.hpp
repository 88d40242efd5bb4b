/// \file
/// tinker::sync::TrainingClient: the blocking form of tinker::TrainingClient (`doc/training.md`).
#pragma once

#include <tinker/future.hpp>
#include <tinker/sync/result.hpp>
#include <tinker/sync/sampling_client.hpp>
#include <tinker/training_client.hpp>
#include <tinker/types/datum.hpp>
#include <tinker/types/training.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tinker {

class Tokenizer;

namespace sync {

class ServiceClient;

/// The blocking form of tinker::TrainingClient; get one from
/// sync::ServiceClient::create_lora_training_client or create_training_client_from_state.
///
/// The submitting calls (forward, forward_backward, optim_step, save/load, ...) return a
/// tinker::Future as soon as the server accepted the request; `get()` on it blocks for the
/// result. Operations are ordered by call order (the turnstile takes its ticket inside the call,
/// on the caller's thread), so a script can pipeline a step before waiting for either result:
///
///     tinker::sync::TrainingClient training = service.create_lora_training_client("Qwen/Qwen3-8B", 32);
///     auto fb = training.forward_backward({batch, tinker::loss_fn::cross_entropy});
///     auto step = training.optim_step(tinker::AdamParams(1e-4));
///     double loss = fb.get().metrics.at("loss:sum");
///     step.get();
///
/// A cheap handle: copies share the model and its turnstile; every method may be called from
/// several threads at once (concurrent calls are ordered by when each took its ticket). Calling
/// a method on the client's io thread (inside a callback, a Future continuation or a custom loss
/// function) throws tinker::error (invalid_argument) instead of deadlocking. Errors are
/// tinker::error with diagnostics, as the async call would complete; each call has a `try_` form
/// returning Result<T> instead.
class TrainingClient {
 public:
  /// An empty handle; every call on it fails with errc::invalid_argument.
  TrainingClient() = default;
  /// Another handle on the same model (shares the runtime).
  TrainingClient(const TrainingClient&) = default;
  /// Takes over `other`'s handle; `other` is left empty.
  TrainingClient(TrainingClient&&) noexcept = default;
  /// Replaces this handle (the old one is released as by the destructor).
  TrainingClient& operator=(TrainingClient other) noexcept;
  /// Releases the async handle on the io thread; the last sync object shuts the runtime down.
  ~TrainingClient();

  /// False for an empty handle.
  bool valid() const noexcept { return client_.valid(); }

  /// "<session_id>:train:<n>". Throws tinker::error (invalid_argument) on an empty handle.
  const std::string& model_id() const;
  /// The training run's console page (tinker::TrainingClient::console_url).
  std::string console_url() const;
  /// The model's optimizer, fixed for this client's life (tinker::TrainingClient::optimizer).
  /// Throws tinker::error (invalid_argument) on an empty handle.
  const OptimizerConfig& optimizer() const;
  /// Whether telemetry is on, and the session and process ids it reports under.
  TelemetryInfo telemetry() const;

  /// A forward pass only: per-datum logprobs and the loss's metrics
  /// (tinker::TrainingClient::async_forward).
  ///@{
  Future<ForwardBackwardOutput> forward(ForwardBackwardInput input) const;
  Result<Future<ForwardBackwardOutput>> try_forward(ForwardBackwardInput input) const;
  ///@}

  /// Forward and backward pass; gradients accumulate until the next optim_step. Large batches
  /// are chunked (tinker::TrainingClient::async_forward_backward).
  ///@{
  Future<ForwardBackwardOutput> forward_backward(ForwardBackwardInput input) const;
  Result<Future<ForwardBackwardOutput>> try_forward_backward(ForwardBackwardInput input) const;
  ///@}

  /// A loss computed by `loss` from per-token logprobs (`doc/training.md#custom-losses`,
  /// tinker::TrainingClient::async_forward_backward_custom). `loss` runs on the io thread: it
  /// must not call this facade.
  ///@{
  Future<ForwardBackwardOutput> forward_backward_custom(std::vector<Datum> data, CustomLossFunction loss) const;
  Result<Future<ForwardBackwardOutput>> try_forward_backward_custom(std::vector<Datum> data,
                                                                    CustomLossFunction loss) const;
  ///@}

  /// One optimizer step with the gradients accumulated since the last one; `params` must match
  /// optimizer() (tinker::TrainingClient::async_optim_step, `doc/training.md#optimizers`).
  ///@{
  Future<OptimStepResponse> optim_step(OptimParams params) const;
  Result<Future<OptimStepResponse>> try_optim_step(OptimParams params) const;
  ///@}

  /// Saves weights and optimizer state as `tinker://<model_id>/weights/<name>`.
  ///@{
  Future<SaveWeightsResponse> save_state(std::string name, SaveStateOptions options = {}) const;
  Result<Future<SaveWeightsResponse>> try_save_state(std::string name, SaveStateOptions options = {}) const;
  ///@}

  /// Loads a training checkpoint's weights, keeping this model's optimizer state; with
  /// `access_token` for another user's checkpoint.
  ///@{
  Future<LoadWeightsResponse> load_state(std::string path, std::optional<std::string> access_token = {}) const;
  Result<Future<LoadWeightsResponse>> try_load_state(std::string path,
                                                     std::optional<std::string> access_token = {}) const;
  ///@}
  /// Loads weights and optimizer state.
  ///@{
  Future<LoadWeightsResponse> load_state_with_optimizer(std::string path,
                                                        std::optional<std::string> access_token = {}) const;
  Result<Future<LoadWeightsResponse>> try_load_state_with_optimizer(std::string path,
                                                                    std::optional<std::string> access_token = {}) const;
  ///@}

  /// Saves sampler weights as `tinker://<model_id>/sampler_weights/<name>`, expiring after
  /// `ttl_seconds` when given.
  ///@{
  Future<SaveWeightsForSamplerResponse> save_weights_for_sampler(
      std::string name, std::optional<std::int64_t> ttl_seconds = std::nullopt) const;
  Result<Future<SaveWeightsForSamplerResponse>> try_save_weights_for_sampler(
      std::string name, std::optional<std::int64_t> ttl_seconds = std::nullopt) const;
  ///@}
  /// The same with a lifetime and user_metadata (`doc/training.md#checkpoint-metadata`).
  ///@{
  Future<SaveWeightsForSamplerResponse> save_weights_for_sampler(std::string name,
                                                                 SaveWeightsForSamplerOptions options) const;
  Result<Future<SaveWeightsForSamplerResponse>> try_save_weights_for_sampler(
      std::string name, SaveWeightsForSamplerOptions options) const;
  ///@}

  /// Exports the weights in Hugging Face (PEFT) format as
  /// `tinker://<model_id>/external_weights/<name>` (`doc/training.md#external-weights`).
  ///@{
  Future<SaveWeightsExternalResponse> save_weights_external(std::string name,
                                                            SaveWeightsExternalOptions options = {}) const;
  Result<Future<SaveWeightsExternalResponse>> try_save_weights_external(std::string name,
                                                                        SaveWeightsExternalOptions options = {}) const;
  ///@}

  /// Saves ephemeral (unnamed) sampler weights and returns a SamplingClient on them, once saved.
  ///@{
  SamplingClient save_weights_and_get_sampling_client() const;
  Result<SamplingClient> try_save_weights_and_get_sampling_client() const;
  ///@}
  /// The same, sending `user_metadata` with the ephemeral save.
  ///@{
  SamplingClient save_weights_and_get_sampling_client(std::map<std::string, std::string> user_metadata) const;
  Result<SamplingClient> try_save_weights_and_get_sampling_client(
      std::map<std::string, std::string> user_metadata) const;
  ///@}
  /// The same with the sampler's settings (retry settings, record_stability_info), sending
  /// `user_metadata` with the ephemeral save when given.
  ///@{
  SamplingClient save_weights_and_get_sampling_client(std::optional<std::map<std::string, std::string>> user_metadata,
                                                      SamplingClientOptions options) const;
  Result<SamplingClient> try_save_weights_and_get_sampling_client(
      std::optional<std::map<std::string, std::string>> user_metadata, SamplingClientOptions options) const;
  ///@}

  /// A SamplingClient on saved sampler weights (`tinker://.../sampler_weights/<name>`).
  ///@{
  SamplingClient create_sampling_client(std::string model_path) const;
  Result<SamplingClient> try_create_sampling_client(std::string model_path) const;
  ///@}
  /// The same with the sampler's settings (retry settings, record_stability_info).
  ///@{
  SamplingClient create_sampling_client(std::string model_path, SamplingClientOptions options) const;
  Result<SamplingClient> try_create_sampling_client(std::string model_path, SamplingClientOptions options) const;
  ///@}

  /// Model name, LoRA rank and tokenizer id.
  ///@{
  GetInfoResponse get_info() const;
  Result<GetInfoResponse> try_get_info() const;
  ///@}

  /// The model's tokenizer, on disk or downloaded (`doc/tokenizers.md`).
  ///@{
  std::shared_ptr<const Tokenizer> get_tokenizer() const;
  Result<std::shared_ptr<const Tokenizer>> try_get_tokenizer() const;
  ///@}

  /// The async handle, for code running on the io thread (or co_await elsewhere).
  const tinker::TrainingClient& async_client() const noexcept { return client_; }

 private:
  friend class ServiceClient;
  TrainingClient(detail::RuntimePtr runtime, tinker::TrainingClient client)
      : runtime_(std::move(runtime)), client_(std::move(client)) {}

  detail::RuntimePtr runtime_;
  tinker::TrainingClient client_;
};

}  // namespace sync
}  // namespace tinker
