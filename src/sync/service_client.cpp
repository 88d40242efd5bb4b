// tinker::sync::ServiceClient and tinker::sync::RestClient: blocking calls over the async clients
// (see include/tinker/sync/service_client.hpp and src/sync/blocking.hpp).
#include <tinker/sync/service_client.hpp>

#include "sync/blocking.hpp"
#include "sync/runtime.hpp"

#include <exception>
#include <variant>

namespace tinker::sync {

using detail::call_blocking;
using detail::PromiseHandler;
using detail::value_or_throw;

ServiceClient::ServiceClient(ServiceClientOptions options)
    : runtime_(std::make_shared<detail::Runtime>(std::move(options))),
      uncaught_at_construction_(std::uncaught_exceptions()) {}

ServiceClient::ServiceClient()
    : runtime_(std::make_shared<detail::Runtime>()), uncaught_at_construction_(std::uncaught_exceptions()) {}

ServiceClient::~ServiceClient() {
  // doc/service.md#finishing-a-session: destroyed by an exception, the session ends `errored`. Posted
  // before the runtime's own shutdown (which the last sync object posts), so it is seen first.
  if (runtime_ && std::uncaught_exceptions() > uncaught_at_construction_) {
    tinker::detail::set_shutdown_finish_reason(runtime_->service().holder(),
                                               ClientSessionFinishReason(ClientSessionFinishReason::Kind::errored));
  }
}
ServiceClient::ServiceClient(ServiceClient&&) noexcept = default;
ServiceClient& ServiceClient::operator=(ServiceClient&&) noexcept = default;

Result<void> ServiceClient::try_finish_session(ClientSessionFinishReason reason,
                                               std::optional<std::string> detail) const {
  using T = std::monostate;
  auto done =
      call_blocking<T>(runtime_, "ServiceClient::finish_session", [&](diagnostics& diag, PromiseHandler<T> handler) {
        runtime_->service().async_finish_session(std::move(reason), std::move(detail), diag, std::move(handler));
      });
  if (done.has_error()) return Result<void>(boost::system::in_place_error, done.error());
  return Result<void>();
}

void ServiceClient::finish_session(ClientSessionFinishReason reason, std::optional<std::string> detail) const {
  Result<void> done = try_finish_session(std::move(reason), std::move(detail));
  if (done.has_error()) done.error().raise();
}

std::string ServiceClient::session_id() const {
  return detail::checked(runtime_, "ServiceClient::session_id").service().session_id();
}

RequestCounters ServiceClient::counters() const {
  return detail::checked(runtime_, "ServiceClient::counters").service().counters();
}

TelemetryInfo ServiceClient::telemetry() const {
  return detail::checked(runtime_, "ServiceClient::telemetry").service().telemetry();
}

boost::asio::any_io_executor ServiceClient::executor() const {
  return detail::checked(runtime_, "ServiceClient::executor").executor();
}

const tinker::ServiceClient& ServiceClient::async_client() const {
  return detail::checked(runtime_, "ServiceClient::async_client").service();
}

Result<GetServerCapabilitiesResponse> ServiceClient::try_get_server_capabilities() const {
  using T = GetServerCapabilitiesResponse;
  return call_blocking<T>(runtime_, "ServiceClient::get_server_capabilities",
                          [this](diagnostics& diag, PromiseHandler<T> handler) {
                            runtime_->service().async_get_server_capabilities(diag, std::move(handler));
                          });
}

GetServerCapabilitiesResponse ServiceClient::get_server_capabilities() const {
  return value_or_throw(try_get_server_capabilities());
}

Result<GetServerCapabilitiesResponse> ServiceClient::try_check_access() const {
  using T = GetServerCapabilitiesResponse;
  return call_blocking<T>(runtime_, "ServiceClient::check_access",
                          [this](diagnostics& diag, PromiseHandler<T> handler) {
                            runtime_->service().async_check_access(diag, std::move(handler));
                          });
}

GetServerCapabilitiesResponse ServiceClient::check_access() const {
  return value_or_throw(try_check_access());
}

Result<TrainingClient> ServiceClient::try_create_lora_training_client(LoraTrainingOptions options) const {
  using T = tinker::TrainingClient;
  auto created = call_blocking<T>(
      runtime_, "ServiceClient::create_lora_training_client", [&](diagnostics& diag, PromiseHandler<T> handler) {
        runtime_->service().async_create_lora_training_client(std::move(options), diag, std::move(handler));
      });
  if (created.has_error()) return Result<TrainingClient>(boost::system::in_place_error, created.error());
  return Result<TrainingClient>(boost::system::in_place_value, TrainingClient(runtime_, std::move(*created)));
}

TrainingClient ServiceClient::create_lora_training_client(LoraTrainingOptions options) const {
  return value_or_throw(try_create_lora_training_client(std::move(options)));
}

TrainingClient ServiceClient::create_lora_training_client(std::string base_model, std::int64_t rank) const {
  return create_lora_training_client(LoraTrainingOptions(std::move(base_model), rank));
}

Result<TrainingClient> ServiceClient::try_create_from_state(const char* what, std::string path, bool with_optimizer,
                                                            FromStateOptions options) const {
  using T = tinker::TrainingClient;
  auto created = call_blocking<T>(runtime_, what, [&](diagnostics& diag, PromiseHandler<T> handler) {
    runtime_->service().async_create_training_client_from_state(std::move(path), with_optimizer, std::move(options),
                                                                diag, std::move(handler));
  });
  if (created.has_error()) return Result<TrainingClient>(boost::system::in_place_error, created.error());
  return Result<TrainingClient>(boost::system::in_place_value, TrainingClient(runtime_, std::move(*created)));
}

Result<TrainingClient> ServiceClient::try_create_training_client_from_state(std::string path,
                                                                            FromStateOptions options) const {
  return try_create_from_state("ServiceClient::create_training_client_from_state", std::move(path), false,
                               std::move(options));
}

TrainingClient ServiceClient::create_training_client_from_state(std::string path, FromStateOptions options) const {
  return value_or_throw(try_create_training_client_from_state(std::move(path), std::move(options)));
}

Result<TrainingClient> ServiceClient::try_create_training_client_from_state_with_optimizer(
    std::string path, FromStateOptions options) const {
  return try_create_from_state("ServiceClient::create_training_client_from_state_with_optimizer", std::move(path), true,
                               std::move(options));
}

TrainingClient ServiceClient::create_training_client_from_state_with_optimizer(std::string path,
                                                                               FromStateOptions options) const {
  return value_or_throw(try_create_training_client_from_state_with_optimizer(std::move(path), std::move(options)));
}

Result<SamplingClient> ServiceClient::try_create_sampling_client(SamplingSource source) const {
  return try_create_sampling_client(std::move(source), SamplingRetryConfig());
}

Result<SamplingClient> ServiceClient::try_create_sampling_client(SamplingSource source,
                                                                 SamplingRetryConfig retry) const {
  return try_create_sampling_client(std::move(source), SamplingClientOptions(std::move(retry)));
}

Result<SamplingClient> ServiceClient::try_create_sampling_client(SamplingSource source,
                                                                 SamplingClientOptions options) const {
  using T = tinker::SamplingClient;
  auto created = call_blocking<T>(runtime_, "ServiceClient::create_sampling_client",
                                  [&](diagnostics& diag, PromiseHandler<T> handler) {
                                    runtime_->service().async_create_sampling_client(
                                        std::move(source), std::move(options), diag, std::move(handler));
                                  });
  if (created.has_error()) return Result<SamplingClient>(boost::system::in_place_error, created.error());
  return Result<SamplingClient>(boost::system::in_place_value, SamplingClient(runtime_, std::move(*created)));
}

SamplingClient ServiceClient::create_sampling_client(SamplingSource source) const {
  return value_or_throw(try_create_sampling_client(std::move(source)));
}

SamplingClient ServiceClient::create_sampling_client(SamplingSource source, SamplingRetryConfig retry) const {
  return value_or_throw(try_create_sampling_client(std::move(source), std::move(retry)));
}

SamplingClient ServiceClient::create_sampling_client(SamplingSource source, SamplingClientOptions options) const {
  return value_or_throw(try_create_sampling_client(std::move(source), std::move(options)));
}

RestClient ServiceClient::create_rest_client() const {
  const auto& runtime = detail::checked(runtime_, "ServiceClient::create_rest_client");
  return RestClient(runtime_, runtime.service().create_rest_client());
}

// RestClient

RestClient& RestClient::operator=(RestClient other) noexcept {
  std::swap(runtime_, other.runtime_);
  std::swap(client_, other.client_);
  return *this;
}

RestClient::~RestClient() {
  if (runtime_ && client_) runtime_->release(std::move(*client_));
}

Result<WeightsInfoResponse> RestClient::try_get_weights_info(std::string tinker_path) const {
  using T = WeightsInfoResponse;
  return call_blocking<T>(runtime_, "RestClient::get_weights_info", [&](diagnostics& diag, PromiseHandler<T> handler) {
    client_->async_get_weights_info(std::move(tinker_path), diag, std::move(handler));
  });
}

WeightsInfoResponse RestClient::get_weights_info(std::string tinker_path) const {
  return value_or_throw(try_get_weights_info(std::move(tinker_path)));
}

Result<GetSamplerResponse> RestClient::try_get_sampler(std::string sampler_id) const {
  using T = GetSamplerResponse;
  return call_blocking<T>(runtime_, "RestClient::get_sampler", [&](diagnostics& diag, PromiseHandler<T> handler) {
    client_->async_get_sampler(std::move(sampler_id), diag, std::move(handler));
  });
}

GetSamplerResponse RestClient::get_sampler(std::string sampler_id) const {
  return value_or_throw(try_get_sampler(std::move(sampler_id)));
}

Result<WhoamiResponse> RestClient::try_whoami() const {
  using T = WhoamiResponse;
  return call_blocking<T>(runtime_, "RestClient::whoami", [&](diagnostics& diag, PromiseHandler<T> handler) {
    client_->async_whoami(diag, std::move(handler));
  });
}

WhoamiResponse RestClient::whoami() const {
  return value_or_throw(try_whoami());
}

TelemetryInfo RestClient::telemetry() const {
  detail::checked(runtime_, "RestClient::telemetry");
  return client_->telemetry();
}

}  // namespace tinker::sync
