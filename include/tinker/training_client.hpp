/// \file
/// TrainingClient: one LoRA model on the server (`doc/training.md`).
#pragma once

#include <tinker/async.hpp>
#include <tinker/future.hpp>
#include <tinker/sampling_client.hpp>
#include <tinker/types/datum.hpp>
#include <tinker/types/external_weights.hpp>
#include <tinker/types/telemetry.hpp>
#include <tinker/types/training.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tinker {

class Tokenizer;

/// What a custom loss returns (`doc/training.md#custom-losses`): the loss, its metrics (names
/// need no ':'), and the gradient of the loss with respect to each datum's per-token logprobs.
class CustomLossOutput {
 public:
  /// A zero loss without gradients.
  CustomLossOutput() = default;
  /// Loss `loss_` with `gradients_` and `metrics_`.
  CustomLossOutput(double loss_, std::vector<std::vector<float>> gradients_, Metrics metrics_ = {})
      : loss(loss_), metrics(std::move(metrics_)), gradients(std::move(gradients_)) {}

  double loss = 0.0;  ///< the loss's value (reported as metric `loss`)
  /// Extra metrics, merged into the result's metrics.
  Metrics metrics;
  std::vector<std::vector<float>> gradients;  ///< one vector per datum, as long as its target_tokens
};

/// Receives the batch and each datum's per-token logprobs (from a forward pass). Runs on the
/// client's io thread: it must not block or call the blocking API. A tinker::error it throws
/// fails the operation with that code and message.
using CustomLossFunction =
    std::function<CustomLossOutput(const std::vector<Datum>& data, const std::vector<std::vector<float>>& logprobs)>;

/// Options of TrainingClient::async_save_state.
class SaveStateOptions {
 public:
  /// Kept until deleted; an existing checkpoint of the name is not replaced.
  SaveStateOptions() = default;
  /// Expire after `ttl_seconds_`; replace an existing checkpoint when `overwrite_`.
  explicit SaveStateOptions(std::optional<std::int64_t> ttl_seconds_, bool overwrite_ = false)
      : ttl_seconds(ttl_seconds_), overwrite(overwrite_) {}

  std::optional<std::int64_t> ttl_seconds;  ///< lifetime in seconds (3600 s .. 10 years); empty: kept until deleted
  bool overwrite = false;                   ///< replace an existing checkpoint of the same name
  /// String pairs stored with the checkpoint (`doc/training.md#checkpoint-metadata`); empty: none
  /// sent. With `overwrite`, the whole map replaces the old one, so none given deletes it.
  std::optional<std::map<std::string, std::string>> user_metadata;
};

/// Options of TrainingClient::async_save_weights_for_sampler.
class SaveWeightsForSamplerOptions {
 public:
  /// Kept until deleted, no metadata.
  SaveWeightsForSamplerOptions() = default;
  /// Expire after `ttl_seconds_` (3600 s .. 10 years; empty: never), with `user_metadata_`.
  explicit SaveWeightsForSamplerOptions(std::optional<std::int64_t> ttl_seconds_,
                                        std::optional<std::map<std::string, std::string>> user_metadata_ = std::nullopt)
      : ttl_seconds(ttl_seconds_), user_metadata(std::move(user_metadata_)) {}

  std::optional<std::int64_t> ttl_seconds;  ///< lifetime in seconds; empty: kept until deleted
  /// String pairs stored with the checkpoint; empty: none sent.
  std::optional<std::map<std::string, std::string>> user_metadata;
};

namespace detail {
class TrainingState;
using TrainingPtr = std::shared_ptr<TrainingState>;
boost::asio::any_io_executor training_executor(const TrainingState& state) noexcept;
void training_forward(TrainingPtr t, ForwardBackwardInput input, diagnostics* d,
                      Handler<Future<ForwardBackwardOutput>> h);
void training_forward_backward(TrainingPtr t, ForwardBackwardInput input, diagnostics* d,
                               Handler<Future<ForwardBackwardOutput>> h);
void training_forward_backward_custom(TrainingPtr t, std::vector<Datum> data, CustomLossFunction loss, diagnostics* d,
                                      Handler<Future<ForwardBackwardOutput>> h);
void training_optim_step(TrainingPtr t, OptimParams params, diagnostics* d, Handler<Future<OptimStepResponse>> h);
void training_save_state(TrainingPtr t, std::string name, SaveStateOptions options, diagnostics* d,
                         Handler<Future<SaveWeightsResponse>> h);
void training_load_state(TrainingPtr t, std::string path, bool with_optimizer, std::optional<std::string> access_token,
                         diagnostics* d, Handler<Future<LoadWeightsResponse>> h);
void training_save_weights_for_sampler(TrainingPtr t, std::string name, SaveWeightsForSamplerOptions options,
                                       diagnostics* d, Handler<Future<SaveWeightsForSamplerResponse>> h);
void training_save_weights_and_get_sampling_client(TrainingPtr t, std::optional<std::map<std::string, std::string>> m,
                                                   SamplingClientOptions o, diagnostics* d, Handler<SamplingClient> h);
std::string training_console_url(const TrainingState& t);
void training_save_weights_external(TrainingPtr t, std::string name, SaveWeightsExternalOptions options, diagnostics* d,
                                    Handler<Future<SaveWeightsExternalResponse>> h);
void training_create_sampling_client(TrainingPtr t, std::string model_path, SamplingClientOptions o, diagnostics* d,
                                     Handler<SamplingClient> h);
void training_get_info(TrainingPtr t, diagnostics* d, Handler<GetInfoResponse> h);
void training_get_tokenizer(TrainingPtr t, diagnostics* d, Handler<std::shared_ptr<const Tokenizer>> h);
const std::string& training_model_id(const TrainingState& t) noexcept;
const OptimizerConfig& training_optimizer(const TrainingState& t) noexcept;
TelemetryInfo training_telemetry(const TrainingState& t);
}  // namespace detail

/// One LoRA model on the server. Get one from ServiceClient::async_create_lora_training_client
/// or ServiceClient::async_create_training_client_from_state.
///
/// Operations are submitted in the order they are initiated (a turnstile hands out seq_ids in
/// turn order) and their results are awaited concurrently, so a loop can submit forward_backward
/// and optim_step back to back before awaiting either (`doc/training.md#ordering-and-pipelining`).
/// With the default token (`deferred`) an operation is initiated when it is first awaited, with
/// `tinker::use_awaitable` when it is co_awaited, with a callback or `use_future` at the call.
/// Each `async_x` completes with a Future once the server accepted the request. If a submission
/// fails for good after its retries, the server would wait forever for the missing seq_id; every
/// later operation then fails at once with an error naming it (continue from a checkpoint with a
/// new TrainingClient).
///
/// A cheap handle: copies refer to the same model and the same turnstile, and calls may come
/// from any thread. Every operation has a second form taking a `diagnostics&` just before the
/// token, filled when it fails. An empty handle (valid() false) must not be used.
class TrainingClient {
 public:
  /// An empty handle (what a failed creation completes with); only assignable.
  TrainingClient() = default;
  /// Internal: the ServiceClient creates training clients.
  explicit TrainingClient(detail::TrainingPtr state) : state_(std::move(state)) {}

  /// The executor this client runs on (the one its ServiceClient was given), as Asio's I/O objects
  /// have: to post work next to the client's or to run a timer beside its operations.
  /// Not for a default-constructed client.
  boost::asio::any_io_executor get_executor() const noexcept { return detail::training_executor(*state_); }

  /// False for an empty handle.
  bool valid() const noexcept { return state_ != nullptr; }

  /// "<session_id>:train:<n>", also the training run id.
  const std::string& model_id() const noexcept { return detail::training_model_id(*state_); }

  /// The training run's page in the Tinker console, `https://tinker.thinkingmachines.ai/training_runs/<model_id>`
  /// (`doc/rest.md#console-urls`).
  std::string console_url() const { return detail::training_console_url(*state_); }

  /// The model's optimizer, fixed for this client's life (`doc/training.md#optimizers`): what the
  /// client was created with, or for a full-state resume the checkpoint's.
  const OptimizerConfig& optimizer() const noexcept { return detail::training_optimizer(*state_); }

  /// Whether telemetry is on, and the session and process ids it reports under
  /// (`doc/protocol.md#telemetry`). Any thread.
  TelemetryInfo telemetry() const { return detail::training_telemetry(*state_); }

  /// A forward pass only (no gradients): per-datum logprobs and the loss's metrics.
  ///@{
  template <class Token = default_token>
  auto async_forward(ForwardBackwardInput input, Token&& token = {}) const {
    return detail::start<Future<ForwardBackwardOutput>>(std::forward<Token>(token), nullptr, &detail::training_forward,
                                                        state_, std::move(input));
  }
  template <class Token = default_token>
  auto async_forward(ForwardBackwardInput input, diagnostics& diag, Token&& token = {}) const {
    return detail::start<Future<ForwardBackwardOutput>>(std::forward<Token>(token), &diag, &detail::training_forward,
                                                        state_, std::move(input));
  }
  ///@}

  /// Forward and backward pass; gradients accumulate until the next optim_step. A batch over
  /// the server's limits is split into chunks whose results are combined
  /// (`doc/training.md#chunking`). An empty batch fails with invalid_argument.
  ///@{
  template <class Token = default_token>
  auto async_forward_backward(ForwardBackwardInput input, Token&& token = {}) const {
    return detail::start<Future<ForwardBackwardOutput>>(std::forward<Token>(token), nullptr,
                                                        &detail::training_forward_backward, state_, std::move(input));
  }
  template <class Token = default_token>
  auto async_forward_backward(ForwardBackwardInput input, diagnostics& diag, Token&& token = {}) const {
    return detail::start<Future<ForwardBackwardOutput>>(std::forward<Token>(token), &diag,
                                                        &detail::training_forward_backward, state_, std::move(input));
  }
  ///@}

  /// A loss computed by the caller from per-token logprobs (`doc/training.md#custom-losses`): a
  /// forward pass, then `loss`, then a forward_backward whose weights are minus the returned
  /// gradients. Uses two seq_ids. Each datum needs `target_tokens` and may have `weights`,
  /// nothing else (invalid_argument otherwise); tinker::losses has ready-made losses.
  ///@{
  template <class Token = default_token>
  auto async_forward_backward_custom(std::vector<Datum> data, CustomLossFunction loss, Token&& token = {}) const {
    return detail::start<Future<ForwardBackwardOutput>>(std::forward<Token>(token), nullptr,
                                                        &detail::training_forward_backward_custom, state_,
                                                        std::move(data), std::move(loss));
  }
  template <class Token = default_token>
  auto async_forward_backward_custom(std::vector<Datum> data, CustomLossFunction loss, diagnostics& diag,
                                     Token&& token = {}) const {
    return detail::start<Future<ForwardBackwardOutput>>(std::forward<Token>(token), &diag,
                                                        &detail::training_forward_backward_custom, state_,
                                                        std::move(data), std::move(loss));
  }
  ///@}

  /// One optimizer step with the gradients accumulated since the last one, which are then
  /// cleared. `params` must match optimizer(): AdamParams for AdamW, DimuonParams for Dimuon;
  /// otherwise, or for DimuonParams a server of the 0.25 protocol cannot take, it fails with
  /// errc::invalid_argument before anything is sent (`doc/training.md#optimizers`).
  ///@{
  template <class Token = default_token>
  auto async_optim_step(OptimParams params, Token&& token = {}) const {
    return detail::start<Future<OptimStepResponse>>(std::forward<Token>(token), nullptr, &detail::training_optim_step,
                                                    state_, std::move(params));
  }
  template <class Token = default_token>
  auto async_optim_step(OptimParams params, diagnostics& diag, Token&& token = {}) const {
    return detail::start<Future<OptimStepResponse>>(std::forward<Token>(token), &diag, &detail::training_optim_step,
                                                    state_, std::move(params));
  }
  ///@}

  /// Saves weights and optimizer state as `tinker://<model_id>/weights/<name>`. A retry after a
  /// save that did succeed is not an error.
  ///@{
  template <class Token = default_token>
  auto async_save_state(std::string name, SaveStateOptions options, Token&& token = {}) const {
    return detail::start<Future<SaveWeightsResponse>>(std::forward<Token>(token), nullptr, &detail::training_save_state,
                                                      state_, std::move(name), options);
  }
  template <class Token = default_token>
  auto async_save_state(std::string name, SaveStateOptions options, diagnostics& diag, Token&& token = {}) const {
    return detail::start<Future<SaveWeightsResponse>>(std::forward<Token>(token), &diag, &detail::training_save_state,
                                                      state_, std::move(name), options);
  }
  ///@}

  /// Loads the weights of a training checkpoint (`tinker://.../weights/<name>`) into this model,
  /// keeping its optimizer state.
  template <class Token = default_token>
  auto async_load_state(std::string path, Token&& token = {}) const {
    return detail::start<Future<LoadWeightsResponse>>(std::forward<Token>(token), nullptr, &detail::training_load_state,
                                                      state_, std::move(path), false, std::optional<std::string>{});
  }
  /// Loads weights and optimizer state.
  template <class Token = default_token>
  auto async_load_state_with_optimizer(std::string path, Token&& token = {}) const {
    return detail::start<Future<LoadWeightsResponse>>(std::forward<Token>(token), nullptr, &detail::training_load_state,
                                                      state_, std::move(path), true, std::optional<std::string>{});
  }
  /// Either form, with a weights access token for another user's checkpoint.
  template <class Token = default_token>
  auto async_load_state(std::string path, bool with_optimizer, std::optional<std::string> access_token,
                        diagnostics& diag, Token&& token = {}) const {
    return detail::start<Future<LoadWeightsResponse>>(std::forward<Token>(token), &diag, &detail::training_load_state,
                                                      state_, std::move(path), with_optimizer, std::move(access_token));
  }

  /// Saves sampler weights as `tinker://<model_id>/sampler_weights/<name>`.
  ///@{
  template <class Token = default_token>
  auto async_save_weights_for_sampler(std::string name, std::optional<std::int64_t> ttl_seconds = std::nullopt,
                                      Token&& token = {}) const {
    return detail::start<Future<SaveWeightsForSamplerResponse>>(
        std::forward<Token>(token), nullptr, &detail::training_save_weights_for_sampler, state_, std::move(name),
        SaveWeightsForSamplerOptions(ttl_seconds));
  }
  template <class Token = default_token>
  auto async_save_weights_for_sampler(std::string name, std::optional<std::int64_t> ttl_seconds, diagnostics& diag,
                                      Token&& token = {}) const {
    return detail::start<Future<SaveWeightsForSamplerResponse>>(
        std::forward<Token>(token), &diag, &detail::training_save_weights_for_sampler, state_, std::move(name),
        SaveWeightsForSamplerOptions(ttl_seconds));
  }
  /// With a lifetime and user_metadata (`doc/training.md#checkpoint-metadata`).
  template <class Token = default_token>
  auto async_save_weights_for_sampler(std::string name, SaveWeightsForSamplerOptions options,
                                      Token&& token = {}) const {
    return detail::start<Future<SaveWeightsForSamplerResponse>>(std::forward<Token>(token), nullptr,
                                                                &detail::training_save_weights_for_sampler, state_,
                                                                std::move(name), std::move(options));
  }
  template <class Token = default_token>
  auto async_save_weights_for_sampler(std::string name, SaveWeightsForSamplerOptions options, diagnostics& diag,
                                      Token&& token = {}) const {
    return detail::start<Future<SaveWeightsForSamplerResponse>>(std::forward<Token>(token), &diag,
                                                                &detail::training_save_weights_for_sampler, state_,
                                                                std::move(name), std::move(options));
  }
  ///@}

  /// Exports the weights in an external (Hugging Face PEFT) format as
  /// `tinker://<model_id>/external_weights/<name>`, listed and deleted like any checkpoint; fetch
  /// the files with RestClient::async_download_external_weights (`doc/training.md#external-weights`).
  /// Ordered like every operation. `options.ttl_seconds` outside 3600 s .. 10 years or an empty
  /// recipient list fails with invalid_argument, naming the field, before anything is sent.
  ///@{
  template <class Token = default_token>
  auto async_save_weights_external(std::string name, SaveWeightsExternalOptions options = {},
                                   Token&& token = {}) const {
    return detail::start<Future<SaveWeightsExternalResponse>>(std::forward<Token>(token), nullptr,
                                                              &detail::training_save_weights_external, state_,
                                                              std::move(name), std::move(options));
  }
  template <class Token = default_token>
  auto async_save_weights_external(std::string name, SaveWeightsExternalOptions options, diagnostics& diag,
                                   Token&& token = {}) const {
    return detail::start<Future<SaveWeightsExternalResponse>>(std::forward<Token>(token), &diag,
                                                              &detail::training_save_weights_external, state_,
                                                              std::move(name), std::move(options));
  }
  ///@}

  /// Saves ephemeral (unnamed) sampler weights and completes with a SamplingClient on them,
  /// once the save is done.
  ///@{
  template <class Token = default_token>
  auto async_save_weights_and_get_sampling_client(Token&& token = {}) const {
    return detail::start<SamplingClient>(std::forward<Token>(token), nullptr,
                                         &detail::training_save_weights_and_get_sampling_client, state_,
                                         std::optional<std::map<std::string, std::string>>(), SamplingClientOptions());
  }
  template <class Token = default_token>
  auto async_save_weights_and_get_sampling_client(diagnostics& diag, Token&& token = {}) const {
    return detail::start<SamplingClient>(std::forward<Token>(token), &diag,
                                         &detail::training_save_weights_and_get_sampling_client, state_,
                                         std::optional<std::map<std::string, std::string>>(), SamplingClientOptions());
  }
  /// With `user_metadata` sent on the ephemeral save.
  template <class Token = default_token>
  auto async_save_weights_and_get_sampling_client(std::map<std::string, std::string> user_metadata,
                                                  Token&& token = {}) const {
    return detail::start<SamplingClient>(
        std::forward<Token>(token), nullptr, &detail::training_save_weights_and_get_sampling_client, state_,
        std::optional<std::map<std::string, std::string>>(std::move(user_metadata)), SamplingClientOptions());
  }
  template <class Token = default_token>
  auto async_save_weights_and_get_sampling_client(std::map<std::string, std::string> user_metadata, diagnostics& diag,
                                                  Token&& token = {}) const {
    return detail::start<SamplingClient>(
        std::forward<Token>(token), &diag, &detail::training_save_weights_and_get_sampling_client, state_,
        std::optional<std::map<std::string, std::string>>(std::move(user_metadata)), SamplingClientOptions());
  }
  /// With the sampler's settings (SamplingClientOptions: retry settings, record_stability_info).
  template <class Token = default_token>
  auto async_save_weights_and_get_sampling_client(SamplingClientOptions options, Token&& token = {}) const {
    return detail::start<SamplingClient>(std::forward<Token>(token), nullptr,
                                         &detail::training_save_weights_and_get_sampling_client, state_,
                                         std::optional<std::map<std::string, std::string>>(), std::move(options));
  }
  template <class Token = default_token>
  auto async_save_weights_and_get_sampling_client(SamplingClientOptions options, diagnostics& diag,
                                                  Token&& token = {}) const {
    return detail::start<SamplingClient>(std::forward<Token>(token), &diag,
                                         &detail::training_save_weights_and_get_sampling_client, state_,
                                         std::optional<std::map<std::string, std::string>>(), std::move(options));
  }
  /// With `user_metadata` sent on the ephemeral save and the sampler's settings.
  template <class Token = default_token>
  auto async_save_weights_and_get_sampling_client(std::map<std::string, std::string> user_metadata,
                                                  SamplingClientOptions options, Token&& token = {}) const {
    return detail::start<SamplingClient>(
        std::forward<Token>(token), nullptr, &detail::training_save_weights_and_get_sampling_client, state_,
        std::optional<std::map<std::string, std::string>>(std::move(user_metadata)), std::move(options));
  }
  template <class Token = default_token>
  auto async_save_weights_and_get_sampling_client(std::map<std::string, std::string> user_metadata,
                                                  SamplingClientOptions options, diagnostics& diag,
                                                  Token&& token = {}) const {
    return detail::start<SamplingClient>(
        std::forward<Token>(token), &diag, &detail::training_save_weights_and_get_sampling_client, state_,
        std::optional<std::map<std::string, std::string>>(std::move(user_metadata)), std::move(options));
  }
  ///@}

  /// A SamplingClient on saved sampler weights (`tinker://.../sampler_weights/<name>`).
  ///@{
  template <class Token = default_token>
  auto async_create_sampling_client(std::string model_path, Token&& token = {}) const {
    return detail::start<SamplingClient>(std::forward<Token>(token), nullptr, &detail::training_create_sampling_client,
                                         state_, std::move(model_path), SamplingClientOptions());
  }
  template <class Token = default_token>
  auto async_create_sampling_client(std::string model_path, diagnostics& diag, Token&& token = {}) const {
    return detail::start<SamplingClient>(std::forward<Token>(token), &diag, &detail::training_create_sampling_client,
                                         state_, std::move(model_path), SamplingClientOptions());
  }
  /// With the sampler's settings (SamplingClientOptions: retry settings, record_stability_info).
  template <class Token = default_token>
  auto async_create_sampling_client(std::string model_path, SamplingClientOptions options, Token&& token = {}) const {
    return detail::start<SamplingClient>(std::forward<Token>(token), nullptr, &detail::training_create_sampling_client,
                                         state_, std::move(model_path), std::move(options));
  }
  template <class Token = default_token>
  auto async_create_sampling_client(std::string model_path, SamplingClientOptions options, diagnostics& diag,
                                    Token&& token = {}) const {
    return detail::start<SamplingClient>(std::forward<Token>(token), &diag, &detail::training_create_sampling_client,
                                         state_, std::move(model_path), std::move(options));
  }
  ///@}

  /// Model name, LoRA rank and tokenizer id (not an ordered operation: no seq_id).
  ///@{
  template <class Token = default_token>
  auto async_get_info(Token&& token = {}) const {
    return detail::start<GetInfoResponse>(std::forward<Token>(token), nullptr, &detail::training_get_info, state_);
  }
  template <class Token = default_token>
  auto async_get_info(diagnostics& diag, Token&& token = {}) const {
    return detail::start<GetInfoResponse>(std::forward<Token>(token), &diag, &detail::training_get_info, state_);
  }
  ///@}

  /// The model's tokenizer: get_info, then get_tokenizer_for with its model name and tokenizer
  /// id (on disk or downloaded, `doc/tokenizers.md`). Loading happens off the io thread; a
  /// tokenizer that cannot be found fails with invalid_configuration naming the paths looked at.
  ///@{
  template <class Token = default_token>
  auto async_get_tokenizer(Token&& token = {}) const {
    return detail::start<std::shared_ptr<const Tokenizer>>(std::forward<Token>(token), nullptr,
                                                           &detail::training_get_tokenizer, state_);
  }
  template <class Token = default_token>
  auto async_get_tokenizer(diagnostics& diag, Token&& token = {}) const {
    return detail::start<std::shared_ptr<const Tokenizer>>(std::forward<Token>(token), &diag,
                                                           &detail::training_get_tokenizer, state_);
  }
  ///@}

 private:
  detail::TrainingPtr state_;
};

}  // namespace tinker
