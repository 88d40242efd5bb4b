/// \file
/// tinker::sync::ServiceClient: the blocking facade over the async SDK, for scripts, tools and
/// tests (`doc/architecture.md#async-api-shape`).
#pragma once

#include <tinker/service_client.hpp>
#include <tinker/sync/rest_client.hpp>
#include <tinker/sync/result.hpp>
#include <tinker/sync/sampling_client.hpp>
#include <tinker/sync/training_client.hpp>
#include <tinker/types/session.hpp>

#include <cstdint>
#include <string>

namespace tinker::sync {

/// The blocking facade over tinker::ServiceClient, for scripts, tools and tests.
///
///     int main() {
///       tinker::sync::ServiceClient service;  // TINKER_API_KEY, TINKER_BASE_URL, ...
///       tinker::sync::TrainingClient training = service.create_lora_training_client("Qwen/Qwen3-8B", 32);
///       for (auto& batch : batches) {
///         auto fb = training.forward_backward({batch, tinker::loss_fn::cross_entropy});
///         auto step = training.optim_step(tinker::AdamParams(1e-4));  // pipelined behind fb
///         std::cout << fb.get().metrics.at("loss:sum") << '\n';
///         step.get();
///       }
///     }
///
/// Threads: the ServiceClient owns a runtime — one io_context, a work guard and one thread
/// running it — where the async clients live. Each blocking call starts the async operation on
/// the caller's thread and waits for it, so calls may come from `main()` and from several threads
/// at once. A call made on the io thread itself (inside a callback, a Future continuation or a
/// custom loss function) throws tinker::error (invalid_argument) instead of deadlocking.
///
/// Lifetime (choice): every sync object made from this client (TrainingClient, SamplingClient,
/// RestClient, and their copies) shares the runtime, so the io thread runs while any of them
/// exists: a TrainingClient that outlives its ServiceClient keeps working. When the last one
/// goes, the async ServiceClient is shut down on the io thread (heartbeat, telemetry and every
/// poll stop), then the io_context is stopped and the thread joined: nothing is left running. A
/// tinker::Future does not hold the runtime: once every sync object is gone, its poll is stopped
/// and `get()` returns the result if it had already arrived, else fails with errc::cancelled
/// (`status()` still works; `async_get` and `cancel()` need a live client).
///
/// Errors: each call throws tinker::error carrying the diagnostics (HTTP status, request id,
/// server message, category), as the async call would complete; each has a `try_` form
/// returning tinker::sync::Result<T> instead.
class ServiceClient {
 public:
  /// Throws tinker::error (invalid_configuration) for bad options, naming the option; starts the
  /// io thread only when the options are good. No I/O until the first call.
  explicit ServiceClient(ServiceClientOptions options);
  /// Options from the environment (ClientOptions::from_environment); throws as above.
  ServiceClient();
  /// Drops this client's share of the runtime (see the class comment).
  ~ServiceClient();
  /// Not copyable: one client owns one session.
  ServiceClient(const ServiceClient&) = delete;
  /// Not copyable.
  ServiceClient& operator=(const ServiceClient&) = delete;
  /// Takes over `other`'s share of the runtime; `other` is left empty.
  ServiceClient(ServiceClient&&) noexcept;
  /// Drops this client's share of the runtime, then takes over `other`'s.
  ServiceClient& operator=(ServiceClient&&) noexcept;

  /// The session id once bootstrapped (empty before).
  std::string session_id() const;
  /// The request counters so far (tinker::ServiceClient::counters()). Any thread.
  RequestCounters counters() const;
  /// Whether telemetry is on, and the session and process ids it reports under. Any thread.
  TelemetryInfo telemetry() const;

  /// The base models the server offers (tinker::ServiceClient::async_get_server_capabilities).
  ///@{
  GetServerCapabilitiesResponse get_server_capabilities() const;
  Result<GetServerCapabilitiesResponse> try_get_server_capabilities() const;
  ///@}

  /// Whether the service can be used with this client's credential: one request, never retried
  /// (tinker::ServiceClient::async_check_access).
  ///@{
  GetServerCapabilitiesResponse check_access() const;
  Result<GetServerCapabilitiesResponse> try_check_access() const;
  ///@}

  /// Creates a LoRA model and returns its client once the server has made it
  /// (tinker::ServiceClient::async_create_lora_training_client).
  /// The second form is `LoraTrainingOptions(base_model, rank)` spelt out.
  ///@{
  TrainingClient create_lora_training_client(LoraTrainingOptions options) const;
  TrainingClient create_lora_training_client(std::string base_model, std::int64_t rank = 32) const;
  Result<TrainingClient> try_create_lora_training_client(LoraTrainingOptions options) const;
  ///@}

  /// A new model from the training checkpoint at `path`, with a fresh optimizer state
  /// (tinker::ServiceClient::async_create_training_client_from_state).
  ///@{
  TrainingClient create_training_client_from_state(std::string path, FromStateOptions options = {}) const;
  Result<TrainingClient> try_create_training_client_from_state(std::string path, FromStateOptions options = {}) const;
  ///@}
  /// As create_training_client_from_state, also restoring the checkpoint's optimizer state.
  ///@{
  TrainingClient create_training_client_from_state_with_optimizer(std::string path,
                                                                  FromStateOptions options = {}) const;
  Result<TrainingClient> try_create_training_client_from_state_with_optimizer(std::string path,
                                                                              FromStateOptions options = {}) const;
  ///@}

  /// A SamplingClient on a base model or on saved sampler weights; a source with neither or
  /// both is invalid_argument.
  ///@{
  SamplingClient create_sampling_client(SamplingSource source) const;
  Result<SamplingClient> try_create_sampling_client(SamplingSource source) const;
  ///@}
  /// The same with the sampler's own retry settings (`doc/sampling.md#retry-settings`).
  ///@{
  SamplingClient create_sampling_client(SamplingSource source, SamplingRetryConfig retry) const;
  Result<SamplingClient> try_create_sampling_client(SamplingSource source, SamplingRetryConfig retry) const;
  ///@}
  /// The same with all of the sampler's settings (retry settings, record_stability_info).
  ///@{
  SamplingClient create_sampling_client(SamplingSource source, SamplingClientOptions options) const;
  Result<SamplingClient> try_create_sampling_client(SamplingSource source, SamplingClientOptions options) const;
  ///@}

  /// Finishes the session with `reason` and an optional `detail`
  /// (tinker::ServiceClient::async_finish_session, `doc/service.md#finishing-a-session`).
  /// Without this call, destroying the last sync object finishes it: `errored` when this
  /// ServiceClient is destroyed while an exception unwinds, else `success`.
  ///@{
  void finish_session(ClientSessionFinishReason reason, std::optional<std::string> detail = std::nullopt) const;
  Result<void> try_finish_session(ClientSessionFinishReason reason,
                                  std::optional<std::string> detail = std::nullopt) const;
  ///@}

  /// Copies the checkpoint at `path` into a new run of this client's project and returns the
  /// copy's `tinker://` path (tinker::ServiceClient::async_copy_weights, `doc/service.md#copying-weights`).
  ///@{
  std::string copy_weights(std::string path, CopyWeightsOptions options = {}) const;
  Result<std::string> try_copy_weights(std::string path, CopyWeightsOptions options = {}) const;
  ///@}

  /// REST calls on this client's pools (no I/O here).
  RestClient create_rest_client() const;

  /// The io thread's executor, to run async code next to the facade (boost::asio::any_io_executor
  /// comes with <tinker/service_client.hpp>).
  boost::asio::any_io_executor executor() const;
  /// The async client, for code running on the io thread (or co_await elsewhere).
  const tinker::ServiceClient& async_client() const;

 private:
  Result<TrainingClient> try_create_from_state(const char* what, std::string path, bool with_optimizer,
                                               FromStateOptions options) const;

  detail::RuntimePtr runtime_;
  /// std::uncaught_exceptions() at construction (see finish_session).
  int uncaught_at_construction_ = 0;
};

}  // namespace tinker::sync
