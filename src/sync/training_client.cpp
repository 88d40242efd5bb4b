// tinker::sync::TrainingClient: blocking calls over tinker::TrainingClient (see
// include/tinker/sync/training_client.hpp and src/sync/blocking.hpp).
#include <tinker/sync/training_client.hpp>

#include "sync/blocking.hpp"
#include "sync/runtime.hpp"

namespace tinker::sync {

using detail::call_blocking;
using detail::PromiseHandler;
using detail::value_or_throw;

namespace {

template <class T>
using FutureResult = Result<Future<T>>;

}  // namespace

TrainingClient& TrainingClient::operator=(TrainingClient other) noexcept {
  std::swap(runtime_, other.runtime_);
  std::swap(client_, other.client_);
  return *this;
}

TrainingClient::~TrainingClient() {
  if (runtime_ && client_.valid()) runtime_->release(std::move(client_));
}

const std::string& TrainingClient::model_id() const {
  detail::checked(runtime_, "TrainingClient::model_id");
  return client_.model_id();
}

const OptimizerConfig& TrainingClient::optimizer() const {
  detail::checked(runtime_, "TrainingClient::optimizer");
  return client_.optimizer();
}

TelemetryInfo TrainingClient::telemetry() const {
  detail::checked(runtime_, "TrainingClient::telemetry");
  return client_.telemetry();
}

FutureResult<ForwardBackwardOutput> TrainingClient::try_forward(ForwardBackwardInput input) const {
  using T = Future<ForwardBackwardOutput>;
  return call_blocking<T>(runtime_, "TrainingClient::forward", [&](diagnostics& diag, PromiseHandler<T> handler) {
    client_.async_forward(std::move(input), diag, std::move(handler));
  });
}

Future<ForwardBackwardOutput> TrainingClient::forward(ForwardBackwardInput input) const {
  return value_or_throw(try_forward(std::move(input)));
}

FutureResult<ForwardBackwardOutput> TrainingClient::try_forward_backward(ForwardBackwardInput input) const {
  using T = Future<ForwardBackwardOutput>;
  return call_blocking<T>(runtime_, "TrainingClient::forward_backward",
                          [&](diagnostics& diag, PromiseHandler<T> handler) {
                            client_.async_forward_backward(std::move(input), diag, std::move(handler));
                          });
}

Future<ForwardBackwardOutput> TrainingClient::forward_backward(ForwardBackwardInput input) const {
  return value_or_throw(try_forward_backward(std::move(input)));
}

FutureResult<ForwardBackwardOutput> TrainingClient::try_forward_backward_custom(std::vector<Datum> data,
                                                                                CustomLossFunction loss) const {
  using T = Future<ForwardBackwardOutput>;
  return call_blocking<T>(
      runtime_, "TrainingClient::forward_backward_custom", [&](diagnostics& diag, PromiseHandler<T> handler) {
        client_.async_forward_backward_custom(std::move(data), std::move(loss), diag, std::move(handler));
      });
}

Future<ForwardBackwardOutput> TrainingClient::forward_backward_custom(std::vector<Datum> data,
                                                                      CustomLossFunction loss) const {
  return value_or_throw(try_forward_backward_custom(std::move(data), std::move(loss)));
}

FutureResult<OptimStepResponse> TrainingClient::try_optim_step(OptimParams params) const {
  using T = Future<OptimStepResponse>;
  return call_blocking<T>(runtime_, "TrainingClient::optim_step", [&](diagnostics& diag, PromiseHandler<T> handler) {
    client_.async_optim_step(std::move(params), diag, std::move(handler));
  });
}

Future<OptimStepResponse> TrainingClient::optim_step(OptimParams params) const {
  return value_or_throw(try_optim_step(std::move(params)));
}

FutureResult<SaveWeightsResponse> TrainingClient::try_save_state(std::string name, SaveStateOptions options) const {
  using T = Future<SaveWeightsResponse>;
  return call_blocking<T>(runtime_, "TrainingClient::save_state", [&](diagnostics& diag, PromiseHandler<T> handler) {
    client_.async_save_state(std::move(name), options, diag, std::move(handler));
  });
}

Future<SaveWeightsResponse> TrainingClient::save_state(std::string name, SaveStateOptions options) const {
  return value_or_throw(try_save_state(std::move(name), options));
}

FutureResult<LoadWeightsResponse> TrainingClient::try_load_state(std::string path,
                                                                 std::optional<std::string> access_token) const {
  using T = Future<LoadWeightsResponse>;
  return call_blocking<T>(runtime_, "TrainingClient::load_state", [&](diagnostics& diag, PromiseHandler<T> handler) {
    client_.async_load_state(std::move(path), false, std::move(access_token), diag, std::move(handler));
  });
}

Future<LoadWeightsResponse> TrainingClient::load_state(std::string path,
                                                       std::optional<std::string> access_token) const {
  return value_or_throw(try_load_state(std::move(path), std::move(access_token)));
}

FutureResult<LoadWeightsResponse> TrainingClient::try_load_state_with_optimizer(
    std::string path, std::optional<std::string> access_token) const {
  using T = Future<LoadWeightsResponse>;
  return call_blocking<T>(
      runtime_, "TrainingClient::load_state_with_optimizer", [&](diagnostics& diag, PromiseHandler<T> handler) {
        client_.async_load_state(std::move(path), true, std::move(access_token), diag, std::move(handler));
      });
}

Future<LoadWeightsResponse> TrainingClient::load_state_with_optimizer(std::string path,
                                                                      std::optional<std::string> access_token) const {
  return value_or_throw(try_load_state_with_optimizer(std::move(path), std::move(access_token)));
}

FutureResult<SaveWeightsForSamplerResponse> TrainingClient::try_save_weights_for_sampler(
    std::string name, std::optional<std::int64_t> ttl_seconds) const {
  using T = Future<SaveWeightsForSamplerResponse>;
  return call_blocking<T>(
      runtime_, "TrainingClient::save_weights_for_sampler", [&](diagnostics& diag, PromiseHandler<T> handler) {
        client_.async_save_weights_for_sampler(std::move(name), ttl_seconds, diag, std::move(handler));
      });
}

Future<SaveWeightsForSamplerResponse> TrainingClient::save_weights_for_sampler(
    std::string name, std::optional<std::int64_t> ttl_seconds) const {
  return value_or_throw(try_save_weights_for_sampler(std::move(name), ttl_seconds));
}

FutureResult<SaveWeightsExternalResponse> TrainingClient::try_save_weights_external(
    std::string name, SaveWeightsExternalOptions options) const {
  using T = Future<SaveWeightsExternalResponse>;
  return call_blocking<T>(
      runtime_, "TrainingClient::save_weights_external", [&](diagnostics& diag, PromiseHandler<T> handler) {
        client_.async_save_weights_external(std::move(name), std::move(options), diag, std::move(handler));
      });
}

Future<SaveWeightsExternalResponse> TrainingClient::save_weights_external(std::string name,
                                                                          SaveWeightsExternalOptions options) const {
  return value_or_throw(try_save_weights_external(std::move(name), std::move(options)));
}

Result<SamplingClient> TrainingClient::try_save_weights_and_get_sampling_client() const {
  using T = tinker::SamplingClient;
  auto created = call_blocking<T>(runtime_, "TrainingClient::save_weights_and_get_sampling_client",
                                  [&](diagnostics& diag, PromiseHandler<T> handler) {
                                    client_.async_save_weights_and_get_sampling_client(diag, std::move(handler));
                                  });
  if (created.has_error()) return Result<SamplingClient>(boost::system::in_place_error, created.error());
  return Result<SamplingClient>(boost::system::in_place_value, SamplingClient(runtime_, std::move(*created)));
}

SamplingClient TrainingClient::save_weights_and_get_sampling_client() const {
  return value_or_throw(try_save_weights_and_get_sampling_client());
}

Result<SamplingClient> TrainingClient::try_create_sampling_client(std::string model_path) const {
  using T = tinker::SamplingClient;
  auto created = call_blocking<T>(
      runtime_, "TrainingClient::create_sampling_client", [&](diagnostics& diag, PromiseHandler<T> handler) {
        client_.async_create_sampling_client(std::move(model_path), diag, std::move(handler));
      });
  if (created.has_error()) return Result<SamplingClient>(boost::system::in_place_error, created.error());
  return Result<SamplingClient>(boost::system::in_place_value, SamplingClient(runtime_, std::move(*created)));
}

SamplingClient TrainingClient::create_sampling_client(std::string model_path) const {
  return value_or_throw(try_create_sampling_client(std::move(model_path)));
}

Result<SamplingClient> TrainingClient::try_create_sampling_client(std::string model_path,
                                                                  SamplingClientOptions options) const {
  using T = tinker::SamplingClient;
  auto created = call_blocking<T>(
      runtime_, "TrainingClient::create_sampling_client", [&](diagnostics& diag, PromiseHandler<T> handler) {
        client_.async_create_sampling_client(std::move(model_path), std::move(options), diag, std::move(handler));
      });
  if (created.has_error()) return Result<SamplingClient>(boost::system::in_place_error, created.error());
  return Result<SamplingClient>(boost::system::in_place_value, SamplingClient(runtime_, std::move(*created)));
}

SamplingClient TrainingClient::create_sampling_client(std::string model_path, SamplingClientOptions options) const {
  return value_or_throw(try_create_sampling_client(std::move(model_path), std::move(options)));
}

Result<SamplingClient> TrainingClient::try_save_weights_and_get_sampling_client(
    std::optional<std::map<std::string, std::string>> user_metadata, SamplingClientOptions options) const {
  using T = tinker::SamplingClient;
  auto created = call_blocking<T>(runtime_, "TrainingClient::save_weights_and_get_sampling_client",
                                  [&](diagnostics& diag, PromiseHandler<T> handler) {
                                    if (user_metadata) {
                                      client_.async_save_weights_and_get_sampling_client(
                                          std::move(*user_metadata), std::move(options), diag, std::move(handler));
                                    } else {
                                      client_.async_save_weights_and_get_sampling_client(std::move(options), diag,
                                                                                         std::move(handler));
                                    }
                                  });
  if (created.has_error()) return Result<SamplingClient>(boost::system::in_place_error, created.error());
  return Result<SamplingClient>(boost::system::in_place_value, SamplingClient(runtime_, std::move(*created)));
}

SamplingClient TrainingClient::save_weights_and_get_sampling_client(
    std::optional<std::map<std::string, std::string>> user_metadata, SamplingClientOptions options) const {
  return value_or_throw(try_save_weights_and_get_sampling_client(std::move(user_metadata), std::move(options)));
}

Result<GetInfoResponse> TrainingClient::try_get_info() const {
  using T = GetInfoResponse;
  return call_blocking<T>(runtime_, "TrainingClient::get_info", [&](diagnostics& diag, PromiseHandler<T> handler) {
    client_.async_get_info(diag, std::move(handler));
  });
}

GetInfoResponse TrainingClient::get_info() const {
  return value_or_throw(try_get_info());
}

Result<std::shared_ptr<const Tokenizer>> TrainingClient::try_get_tokenizer() const {
  using T = std::shared_ptr<const Tokenizer>;
  return call_blocking<T>(runtime_, "TrainingClient::get_tokenizer", [&](diagnostics& diag, PromiseHandler<T> handler) {
    client_.async_get_tokenizer(diag, std::move(handler));
  });
}

std::shared_ptr<const Tokenizer> TrainingClient::get_tokenizer() const {
  return value_or_throw(try_get_tokenizer());
}

}  // namespace tinker::sync
