// ServiceClient (spec 13): the entry point. Construction does no I/O; the first call that needs
// a session bootstraps it in the spec's order (client/config, auth/token when the server uses
// JWTs, dynamic_config, create_session), then a heartbeat keeps the session alive every 10 s.
//
// Threading: the client runs on the executor it is given (one io_context, one thread running
// it). Destroy it on that thread, or after the io_context has stopped; destruction stops the
// heartbeat, telemetry and every poll still running. The blocking facade in
// <tinker/sync/service_client.hpp> owns an io_context and a thread for scripts.
#pragma once

#include <tinker/async.hpp>
#include <tinker/config.hpp>
#include <tinker/log.hpp>
#include <tinker/rest_client.hpp>
#include <tinker/sampling_client.hpp>
#include <tinker/training_client.hpp>
#include <tinker/types/session.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace tinker {

/// Everything a ServiceClient needs besides its executor.
class ServiceClientOptions {
 public:
  ServiceClientOptions() = default;
  explicit ServiceClientOptions(ClientOptions client_) : client(std::move(client_)) {}

  ClientOptions client;                              ///< base URL, key, timeouts, pools (or from the environment)
  std::map<std::string, std::string> user_metadata;  ///< sent with create_session
  LogSink log;                                       ///< empty: stderr at client.log_level
  /// Send forward/forward_backward as JSON and ask for JSON results, for servers older than
  /// 0.25's protobuf paths. Default: protobuf, as the official 0.25 client.
  bool json_bulk_paths = false;
};

/// create_lora_training_client arguments (spec 13.3).
class LoraTrainingOptions {
 public:
  LoraTrainingOptions() = default;
  explicit LoraTrainingOptions(std::string base_model_, std::int64_t rank_ = 32)
      : base_model(std::move(base_model_)), rank(rank_) {}

  std::string base_model;
  std::int64_t rank = 32;
  std::optional<std::int64_t> seed;
  bool train_mlp = true;
  bool train_attn = true;
  bool train_unembed = true;
  std::map<std::string, std::string> user_metadata;
};

/// create_training_client_from_state arguments.
class FromStateOptions {
 public:
  FromStateOptions() = default;

  std::optional<std::string> base_model;  ///< overrides the checkpoint's base model
  std::map<std::string, std::string> user_metadata;
  std::optional<std::string> weights_access_token;  ///< for a checkpoint of another user
};

/// create_sampling_client: exactly one of the two.
class SamplingSource {
 public:
  SamplingSource() = default;
  static SamplingSource from_model_path(std::string path) { return SamplingSource(std::move(path), {}); }
  static SamplingSource from_base_model(std::string name) { return SamplingSource({}, std::move(name)); }

  std::optional<std::string> model_path;  ///< tinker://.../sampler_weights/<name>
  std::optional<std::string> base_model;

 private:
  SamplingSource(std::optional<std::string> path, std::optional<std::string> base)
      : model_path(std::move(path)), base_model(std::move(base)) {}
};

namespace detail {
class ClientHolder;
using HolderPtr = std::shared_ptr<ClientHolder>;
void service_get_server_capabilities(HolderPtr h, diagnostics* d, Handler<GetServerCapabilitiesResponse> handler);
void service_create_lora_training_client(HolderPtr h, LoraTrainingOptions o, diagnostics* d,
                                         Handler<TrainingClient> handler);
void service_create_training_client_from_state(HolderPtr h, std::string path, bool with_optimizer, FromStateOptions o,
                                               diagnostics* d, Handler<TrainingClient> handler);
void service_create_sampling_client(HolderPtr h, SamplingSource source, diagnostics* d,
                                    Handler<SamplingClient> handler);
}  // namespace detail

class ServiceClient {
 public:
  /// Throws tinker::error (invalid_configuration) for bad options, naming the option; the key
  /// check of spec 2.2 happens here.
  ServiceClient(boost::asio::any_io_executor executor, ServiceClientOptions options);
  /// Options from the environment (spec 1.1).
  explicit ServiceClient(boost::asio::any_io_executor executor);
  ~ServiceClient();
  ServiceClient(const ServiceClient&) = delete;
  ServiceClient& operator=(const ServiceClient&) = delete;
  ServiceClient(ServiceClient&&) noexcept;
  ServiceClient& operator=(ServiceClient&&) noexcept;

  /// The session id once bootstrapped (empty before).
  std::string session_id() const;

  /// The base models the server offers (no session needed).
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

  /// create_model, then waits for the model (spec 13.3).
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

  /// A new model from a training checkpoint's weights (optimizer state fresh).
  template <class Token = default_token>
  auto async_create_training_client_from_state(std::string path, FromStateOptions options = {},
                                               Token&& token = {}) const {
    return detail::start<TrainingClient>(std::forward<Token>(token), nullptr,
                                         &detail::service_create_training_client_from_state, holder_, std::move(path),
                                         false, std::move(options));
  }
  /// The same with the checkpoint's optimizer state.
  template <class Token = default_token>
  auto async_create_training_client_from_state_with_optimizer(std::string path, FromStateOptions options = {},
                                                              Token&& token = {}) const {
    return detail::start<TrainingClient>(std::forward<Token>(token), nullptr,
                                         &detail::service_create_training_client_from_state, holder_, std::move(path),
                                         true, std::move(options));
  }
  template <class Token = default_token>
  auto async_create_training_client_from_state(std::string path, bool with_optimizer, FromStateOptions options,
                                               diagnostics& diag, Token&& token = {}) const {
    return detail::start<TrainingClient>(std::forward<Token>(token), &diag,
                                         &detail::service_create_training_client_from_state, holder_, std::move(path),
                                         with_optimizer, std::move(options));
  }

  /// A SamplingClient on a base model or on saved sampler weights.
  template <class Token = default_token>
  auto async_create_sampling_client(SamplingSource source, Token&& token = {}) const {
    return detail::start<SamplingClient>(std::forward<Token>(token), nullptr, &detail::service_create_sampling_client,
                                         holder_, std::move(source));
  }
  template <class Token = default_token>
  auto async_create_sampling_client(SamplingSource source, diagnostics& diag, Token&& token = {}) const {
    return detail::start<SamplingClient>(std::forward<Token>(token), &diag, &detail::service_create_sampling_client,
                                         holder_, std::move(source));
  }

  /// REST calls on this client's pools (no session).
  RestClient create_rest_client() const { return RestClient(holder_); }

  /// For tests and tools: the shared state.
  const detail::HolderPtr& holder() const noexcept { return holder_; }

 private:
  detail::HolderPtr holder_;
};

}  // namespace tinker
