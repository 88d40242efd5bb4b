/// \file
/// tinker::sync::SamplingClient: the blocking form of tinker::SamplingClient (`doc/sampling.md`).
#pragma once

#include <tinker/future.hpp>
#include <tinker/sampling_client.hpp>
#include <tinker/sync/result.hpp>
#include <tinker/types/model_input.hpp>
#include <tinker/types/sampling.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace tinker {

class Tokenizer;

namespace sync {

class ServiceClient;
class TrainingClient;

/// The blocking form of tinker::SamplingClient; get one from
/// sync::ServiceClient::create_sampling_client or the sync::TrainingClient.
///
///     tinker::sync::SamplingClient sampler = service.create_sampling_client(
///         tinker::SamplingSource::from_base_model("Qwen/Qwen3-8B"));
///     tinker::Future<tinker::SampleResponse> pending = sampler.sample(prompt, 4, params);
///     tinker::SampleResponse response = pending.get();
///
/// `sample` and `compute_logprobs` return once the server accepted the request; the Future's
/// `get()` blocks for the result. A cheap handle: copies share the sampler, and every method may
/// be called from several threads at once. Calling a method on the client's io thread (inside a
/// callback or a Future continuation) throws tinker::error (invalid_argument) instead of
/// deadlocking. Errors are tinker::error with diagnostics; each call has a `try_` form returning
/// Result<T> instead.
class SamplingClient {
 public:
  /// An empty handle; every call on it fails with errc::invalid_argument.
  SamplingClient() = default;
  /// Another handle on the same sampler (shares the runtime).
  SamplingClient(const SamplingClient&) = default;
  /// Takes over `other`'s handle; `other` is left empty.
  SamplingClient(SamplingClient&&) noexcept = default;
  /// Replaces this handle (the old one is released as by the destructor).
  SamplingClient& operator=(SamplingClient other) noexcept;
  /// Releases the async handle on the io thread; the last sync object shuts the runtime down.
  ~SamplingClient();

  /// False for an empty handle.
  bool valid() const noexcept { return client_.valid(); }

  /// The server's id of this sampler ("<session>:sample:<n>"). Throws tinker::error
  /// (invalid_argument) on an empty handle.
  const std::string& sampling_session_id() const;

  /// Draws `num_samples` continuations of `prompt` (tinker::SamplingClient::async_sample).
  ///@{
  Future<SampleResponse> sample(ModelInput prompt, std::int64_t num_samples, SamplingParams params,
                                SampleOptions options = {}) const;
  Result<Future<SampleResponse>> try_sample(ModelInput prompt, std::int64_t num_samples, SamplingParams params,
                                            SampleOptions options = {}) const;
  ///@}

  /// Log-probabilities of every prompt token (the first is always empty).
  ///@{
  Future<PromptLogprobs> compute_logprobs(ModelInput prompt) const;
  Result<Future<PromptLogprobs>> try_compute_logprobs(ModelInput prompt) const;
  ///@}

  /// The base model this sampler serves (tinker::SamplingClient::async_get_base_model).
  ///@{
  std::string get_base_model() const;
  Result<std::string> try_get_base_model() const;
  ///@}

  /// Whether telemetry is on, and the session and process ids it reports under. Throws
  /// tinker::error (invalid_argument) on an empty handle.
  TelemetryInfo telemetry() const;

  /// The tokenizer of the sampler's base model.
  ///@{
  std::shared_ptr<const Tokenizer> get_tokenizer() const;
  Result<std::shared_ptr<const Tokenizer>> try_get_tokenizer() const;
  ///@}

  /// The async handle, for code running on the io thread (or co_await elsewhere).
  const tinker::SamplingClient& async_client() const noexcept { return client_; }

 private:
  friend class ServiceClient;
  friend class TrainingClient;
  SamplingClient(detail::RuntimePtr runtime, tinker::SamplingClient client)
      : runtime_(std::move(runtime)), client_(std::move(client)) {}

  detail::RuntimePtr runtime_;
  tinker::SamplingClient client_;
};

}  // namespace sync
}  // namespace tinker
