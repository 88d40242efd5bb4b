/// \file
/// ServiceClient: the entry point of the asynchronous API (`doc/service.md`).
#pragma once

#include <tinker/async.hpp>
#include <tinker/config.hpp>
#include <tinker/events.hpp>
#include <tinker/log.hpp>
#include <tinker/rest_client.hpp>
#include <tinker/sampling_client.hpp>
#include <tinker/training_client.hpp>
#include <tinker/types/session.hpp>
#include <tinker/types/session_status.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>

namespace tinker {

/// Everything a ServiceClient needs besides its executor.
class ServiceClientOptions {
 public:
  /// Default client options (no credential: set one, or use ClientOptions::from_environment()).
  ServiceClientOptions() = default;
  /// The given client options, defaults for the rest.
  explicit ServiceClientOptions(ClientOptions client_) : client(std::move(client_)) {}

  ClientOptions client;                              ///< base URL, key, timeouts, pools (or from the environment)
  std::map<std::string, std::string> user_metadata;  ///< sent with create_session
  /// The session's name in the console and in session searches (need not be unique), sent with
  /// create_session; empty: none is sent (`doc/service.md#sessions`).
  std::optional<std::string> display_name;
  LogSink log;  ///< empty: stderr at client.log_level
  /// Receives typed events (requests, retries, back-offs, futures, heartbeats) on the io thread
  /// (doc/observability.md). Empty: none are made.
  EventHook on_event;
  /// Send forward/forward_backward as JSON and ask for JSON results, for servers older than
  /// 0.25's protobuf paths. Default: protobuf, as the official 0.25 client.
  bool json_bulk_paths = false;
};

/// Arguments of ServiceClient::async_create_lora_training_client (see LoraConfig).
class LoraTrainingOptions {
 public:
  /// No base model yet (required), rank 32.
  LoraTrainingOptions() = default;
  /// A rank-`rank_` adapter on `base_model_`.
  explicit LoraTrainingOptions(std::string base_model_, std::int64_t rank_ = 32)
      : base_model(std::move(base_model_)), rank(rank_) {}

  std::string base_model;                            ///< a supported model, e.g. "Qwen/Qwen3-8B"
  std::int64_t rank = 32;                            ///< the adapter's rank
  std::optional<std::int64_t> seed;                  ///< initialisation seed; empty: random
  bool train_mlp = true;                             ///< LoRA on the MLP (or MoE) layers
  bool train_attn = true;                            ///< LoRA on the attention layers
  bool train_unembed = true;                         ///< LoRA on the unembedding layer
  std::map<std::string, std::string> user_metadata;  ///< free-form, shown by the REST listings
  /// The optimizer, fixed for the training client's life (`doc/training.md#optimizers`). AdamW
  /// (the default) is not sent, so servers of the 0.25 protocol see the same request; any other
  /// needs a newer server.
  OptimizerConfig optimizer;
};

/// Arguments of ServiceClient::async_create_training_client_from_state besides the path.
class FromStateOptions {
 public:
  /// The checkpoint's own settings.
  FromStateOptions() = default;

  std::optional<std::string> base_model;             ///< overrides the checkpoint's base model (a compatible one)
  std::map<std::string, std::string> user_metadata;  ///< the new model's metadata
  std::optional<std::string> weights_access_token;   ///< for a checkpoint of another user
  /// The new model's optimizer (`doc/training.md#optimizers`). Empty: with the optimizer state,
  /// the checkpoint's optimizer (a full-state resume keeps Dimuon); without it, AdamW. Loading
  /// optimizer state saved by another optimizer fails, naming both.
  std::optional<OptimizerConfig> optimizer;
};

/// Arguments of ServiceClient::async_create_sampling_client: exactly one of the two.
class SamplingSource {
 public:
  /// Neither (not a valid source).
  SamplingSource() = default;
  /// Saved sampler weights at `path` (`tinker://.../sampler_weights/<name>`).
  static SamplingSource from_model_path(std::string path) { return SamplingSource(std::move(path), {}); }
  /// The base model `name` without an adapter, e.g. "Qwen/Qwen3-8B".
  static SamplingSource from_base_model(std::string name) { return SamplingSource({}, std::move(name)); }

  std::optional<std::string> model_path;  ///< `tinker://.../sampler_weights/<name>`
  std::optional<std::string> base_model;  ///< a supported base model

 private:
  SamplingSource(std::optional<std::string> path, std::optional<std::string> base)
      : model_path(std::move(path)), base_model(std::move(base)) {}
};

/// Cumulative counts of the HTTP requests of one ServiceClient and every client it made (ServiceClient::counters(),
/// `doc/bench.md#request-counters`). Downloads of checkpoint archives are not counted.
class RequestCounters {
 public:
  /// All zero.
  RequestCounters() = default;

  std::uint64_t requests = 0;  ///< HTTP requests sent (every attempt, polls included)
  /// Requests sent again by a retry (`doc/protocol.md#retries`): a transport re-attempt or a reused
  /// connection found closed, a call re-send, a sample re-sent after backpressure or as a fresh attempt, a poll
  /// after a failed poll.
  std::uint64_t retries = 0;
  std::uint64_t rate_limited = 0;      ///< answers with HTTP status 429
  std::uint64_t server_errors = 0;     ///< answers with an HTTP status of 500 or above
  std::uint64_t transport_errors = 0;  ///< attempts that got no answer: connection failures, resets, timeouts
};

namespace detail {
void service_get_server_capabilities(HolderPtr h, diagnostics* d, Handler<GetServerCapabilitiesResponse> handler);
void service_check_access(HolderPtr h, diagnostics* d, Handler<GetServerCapabilitiesResponse> handler);
void service_create_lora_training_client(HolderPtr h, LoraTrainingOptions o, diagnostics* d,
                                         Handler<TrainingClient> handler);
void service_create_training_client_from_state(HolderPtr h, std::string path, bool with_optimizer, FromStateOptions o,
                                               diagnostics* d, Handler<TrainingClient> handler);
void service_create_sampling_client(HolderPtr h, SamplingSource source, SamplingClientOptions options, diagnostics* d,
                                    Handler<SamplingClient> handler);
TelemetryInfo holder_telemetry(const ClientHolder& h);
void service_copy_weights(HolderPtr h, std::string path, CopyWeightsOptions o, diagnostics* d,
                          Handler<std::string> handler);
void service_finish_session(HolderPtr h, ClientSessionFinishReason reason, std::optional<std::string> detail,
                            diagnostics* d, Handler<std::monostate> handler);
/// The reason the holder's shutdown finishes the session with, unless a finish was requested
/// before (`doc/service.md#finishing-a-session`). Any thread.
void set_shutdown_finish_reason(const HolderPtr& h, ClientSessionFinishReason reason);
}  // namespace detail

/// The entry point: creates training, sampling and REST clients, and owns the session they share.
///
/// Construction does no I/O; the first call that needs a session bootstraps it in the
/// protocol's order (client/config, auth/token when the server uses JWTs, dynamic_config,
/// create_session, `doc/protocol.md#bootstrap-and-lifecycle`), then a heartbeat keeps the
/// session alive every 10 s.
///
///     boost::asio::io_context io;
///     tinker::ServiceClient service(io.get_executor());  // TINKER_API_KEY, TINKER_BASE_URL, ...
///     boost::asio::co_spawn(io, [&]() -> boost::asio::awaitable<void> {
///       tinker::TrainingClient training = co_await service.async_create_lora_training_client(
///           tinker::LoraTrainingOptions("Qwen/Qwen3-8B"), tinker::use_awaitable);
///       // ...
///     }, boost::asio::detached);
///     io.run();
///
/// Threading: the client runs on the executor it is given (one io_context, one thread running
/// it; `doc/architecture.md#threading-and-ordering`); calls may be initiated from any thread.
/// Destroy it on that thread, or after the io_context has stopped; destruction stops the
/// heartbeat, telemetry and every poll still running. The blocking facade in
/// <tinker/sync/service_client.hpp> owns an io_context and a thread for scripts.
///
/// Every operation has a second form taking a `diagnostics&` before the token, filled when it
/// fails. A failed bootstrap fails the call that needed it (and the next call tries again).
class ServiceClient {
 public:
  /// Throws tinker::error (invalid_configuration) for bad options, naming the option; the API
  /// key's form is checked here (`doc/protocol.md#authentication`).
  ServiceClient(boost::asio::any_io_executor executor, ServiceClientOptions options);
  /// Options from the environment (ClientOptions::from_environment); throws as above.
  explicit ServiceClient(boost::asio::any_io_executor executor);
  /// Stops the heartbeat, telemetry and every poll still running (see the class comment).
  ~ServiceClient();
  /// Not copyable: one client owns one session.
  ServiceClient(const ServiceClient&) = delete;
  /// Not copyable.
  ServiceClient& operator=(const ServiceClient&) = delete;
  /// Takes over `other`'s session; `other` is left empty.
  ServiceClient(ServiceClient&&) noexcept;
  /// Shuts this client's session down, then takes over `other`'s.
  ServiceClient& operator=(ServiceClient&&) noexcept;

  /// The session id once bootstrapped (empty before).
  std::string session_id() const;

  /// The request counters so far (see RequestCounters). Any thread; cheap (a few relaxed loads). All zero for a
  /// moved-from client.
  RequestCounters counters() const;

  /// The base models the server offers (no session needed).
  ///@{
  template <class Token = default_token>
  auto async_get_server_capabilities(Token&& token = {}) const {
    return detail::start<GetServerCapabilitiesResponse>(std::forward<Token>(token), nullptr,
                                                        &detail::service_get_server_capabilities, holder_);
  }
  template <class Token = default_token>
  auto async_get_server_capabilities(diagnostics& diag, Token&& token = {}) const {
    return detail::start<GetServerCapabilitiesResponse>(std::forward<Token>(token), &diag,
                                                        &detail::service_get_server_capabilities, holder_);
  }
  ///@}

  /// Whether the service can be used with this client's credential (`doc/service.md#checking-access`):
  /// after the usual bootstrap, one get_server_capabilities request sent exactly once, without
  /// transport or call retries and without the billing pause, so a refused key fails at once
  /// (errc::authentication_failed) and so does a billing hold (errc::payment_required). Completes
  /// with the capabilities on success. `tinker auth login` and `tinker auth status` use it.
  ///@{
  template <class Token = default_token>
  auto async_check_access(Token&& token = {}) const {
    return detail::start<GetServerCapabilitiesResponse>(std::forward<Token>(token), nullptr,
                                                        &detail::service_check_access, holder_);
  }
  template <class Token = default_token>
  auto async_check_access(diagnostics& diag, Token&& token = {}) const {
    return detail::start<GetServerCapabilitiesResponse>(std::forward<Token>(token), &diag,
                                                        &detail::service_check_access, holder_);
  }
  ///@}

  /// Creates a LoRA model (create_model) and completes with its TrainingClient once the server
  /// has made it; queue pauses meanwhile are logged as warnings.
  ///@{
  template <class Token = default_token>
  auto async_create_lora_training_client(LoraTrainingOptions options, Token&& token = {}) const {
    return detail::start<TrainingClient>(std::forward<Token>(token), nullptr,
                                         &detail::service_create_lora_training_client, holder_, std::move(options));
  }
  template <class Token = default_token>
  auto async_create_lora_training_client(LoraTrainingOptions options, diagnostics& diag, Token&& token = {}) const {
    return detail::start<TrainingClient>(std::forward<Token>(token), &diag,
                                         &detail::service_create_lora_training_client, holder_, std::move(options));
  }
  ///@}

  /// A new model from the training checkpoint at `path` (`tinker://.../weights/<name>`), with a
  /// fresh optimizer state; LoRA settings from the checkpoint (`doc/service.md`).
  template <class Token = default_token>
  auto async_create_training_client_from_state(std::string path, FromStateOptions options = {},
                                               Token&& token = {}) const {
    return detail::start<TrainingClient>(std::forward<Token>(token), nullptr,
                                         &detail::service_create_training_client_from_state, holder_, std::move(path),
                                         false, std::move(options));
  }
  /// As async_create_training_client_from_state, also restoring the checkpoint's optimizer state.
  template <class Token = default_token>
  auto async_create_training_client_from_state_with_optimizer(std::string path, FromStateOptions options = {},
                                                              Token&& token = {}) const {
    return detail::start<TrainingClient>(std::forward<Token>(token), nullptr,
                                         &detail::service_create_training_client_from_state, holder_, std::move(path),
                                         true, std::move(options));
  }
  /// Either form, chosen by `with_optimizer`, with `diag` filled on failure.
  template <class Token = default_token>
  auto async_create_training_client_from_state(std::string path, bool with_optimizer, FromStateOptions options,
                                               diagnostics& diag, Token&& token = {}) const {
    return detail::start<TrainingClient>(std::forward<Token>(token), &diag,
                                         &detail::service_create_training_client_from_state, holder_, std::move(path),
                                         with_optimizer, std::move(options));
  }

  /// A SamplingClient on a base model or on saved sampler weights (create_sampling_session).
  /// A source with neither or both fails with invalid_argument.
  ///@{
  template <class Token = default_token>
  auto async_create_sampling_client(SamplingSource source, Token&& token = {}) const {
    return detail::start<SamplingClient>(std::forward<Token>(token), nullptr, &detail::service_create_sampling_client,
                                         holder_, std::move(source), SamplingClientOptions());
  }
  template <class Token = default_token>
  auto async_create_sampling_client(SamplingSource source, diagnostics& diag, Token&& token = {}) const {
    return detail::start<SamplingClient>(std::forward<Token>(token), &diag, &detail::service_create_sampling_client,
                                         holder_, std::move(source), SamplingClientOptions());
  }
  ///@}
  /// The same with the sampler's own retry settings (`doc/sampling.md#retry-settings`); an invalid
  /// `retry` fails with invalid_argument naming the field.
  ///@{
  template <class Token = default_token>
  auto async_create_sampling_client(SamplingSource source, SamplingRetryConfig retry, Token&& token = {}) const {
    return detail::start<SamplingClient>(std::forward<Token>(token), nullptr, &detail::service_create_sampling_client,
                                         holder_, std::move(source), SamplingClientOptions(std::move(retry)));
  }
  template <class Token = default_token>
  auto async_create_sampling_client(SamplingSource source, SamplingRetryConfig retry, diagnostics& diag,
                                    Token&& token = {}) const {
    return detail::start<SamplingClient>(std::forward<Token>(token), &diag, &detail::service_create_sampling_client,
                                         holder_, std::move(source), SamplingClientOptions(std::move(retry)));
  }
  ///@}
  /// The same with all of the sampler's settings (`doc/sampling.md#creating-a-sampler`): retry settings and
  /// record_stability_info. An invalid `options.retry` fails with invalid_argument naming the field.
  ///@{
  template <class Token = default_token>
  auto async_create_sampling_client(SamplingSource source, SamplingClientOptions options, Token&& token = {}) const {
    return detail::start<SamplingClient>(std::forward<Token>(token), nullptr, &detail::service_create_sampling_client,
                                         holder_, std::move(source), std::move(options));
  }
  template <class Token = default_token>
  auto async_create_sampling_client(SamplingSource source, SamplingClientOptions options, diagnostics& diag,
                                    Token&& token = {}) const {
    return detail::start<SamplingClient>(std::forward<Token>(token), &diag, &detail::service_create_sampling_client,
                                         holder_, std::move(source), std::move(options));
  }
  ///@}

  /// Finishes the session with `reason` (success, errored or interrupted) and an optional
  /// `detail_text` (POST /api/v1/finish_session, `doc/service.md#finishing-a-session`). The heartbeat
  /// stops, and later calls that need the session fail with invalid_argument; REST calls keep
  /// working. Without a session yet, or once a finish was sent (explicitly or by shutdown), it
  /// fails with invalid_argument and sends nothing. Without this call, destruction finishes the
  /// session: `errored` while an exception unwinds the stack, else `success`.
  ///@{
  template <class Token = default_token>
  auto async_finish_session(ClientSessionFinishReason reason, std::optional<std::string> detail_text = std::nullopt,
                            Token&& token = {}) const {
    return detail::start<std::monostate>(std::forward<Token>(token), nullptr, &detail::service_finish_session, holder_,
                                         std::move(reason), std::move(detail_text));
  }
  template <class Token = default_token>
  auto async_finish_session(ClientSessionFinishReason reason, std::optional<std::string> detail_text, diagnostics& diag,
                            Token&& token = {}) const {
    return detail::start<std::monostate>(std::forward<Token>(token), &diag, &detail::service_finish_session, holder_,
                                         std::move(reason), std::move(detail_text));
  }
  ///@}

  /// Copies the checkpoint at `path` (training or sampler weights, the caller's or, with
  /// `options.weights_access_token`, someone else's) into a new training run of this client's
  /// project, and completes with the copy's `tinker://` path (POST /api/v1/copy_weights,
  /// `doc/service.md#copying-weights`). Storage is shared, no bytes are duplicated; the new run
  /// cannot be trained on. One synchronous request, no future; it takes a number from the
  /// session's training-client counter. A malformed path or `options.ttl_seconds` outside
  /// 3600 s .. 10 years fails with invalid_argument before anything is sent.
  ///@{
  template <class Token = default_token>
  auto async_copy_weights(std::string path, CopyWeightsOptions options = {}, Token&& token = {}) const {
    return detail::start<std::string>(std::forward<Token>(token), nullptr, &detail::service_copy_weights, holder_,
                                      std::move(path), std::move(options));
  }
  template <class Token = default_token>
  auto async_copy_weights(std::string path, CopyWeightsOptions options, diagnostics& diag, Token&& token = {}) const {
    return detail::start<std::string>(std::forward<Token>(token), &diag, &detail::service_copy_weights, holder_,
                                      std::move(path), std::move(options));
  }
  ///@}

  /// Whether telemetry is on, and the session and process ids it reports under
  /// (`doc/protocol.md#telemetry`). Any thread; telemetry off for a moved-from client.
  TelemetryInfo telemetry() const { return holder_ ? detail::holder_telemetry(*holder_) : TelemetryInfo(); }

  /// REST calls on this client's pools (no session needed, no I/O here).
  RestClient create_rest_client() const { return RestClient(holder_); }

  /// The executor this client runs on (the one its ServiceClient was given), as Asio's I/O objects
  /// have: to post work next to the client's or to run a timer beside its operations.
  boost::asio::any_io_executor get_executor() const noexcept { return detail::holder_executor(*holder_); }

  /// Internal, for tests and tools: the shared state.
  const detail::HolderPtr& holder() const noexcept { return holder_; }

 private:
  detail::HolderPtr holder_;
  /// std::uncaught_exceptions() at construction: more at destruction means an exception is
  /// unwinding through the client's scope, and the session is finished as `errored`.
  int uncaught_at_construction_ = 0;
};

}  // namespace tinker
