// tinker::sync::SamplingClient: blocking calls over tinker::SamplingClient (see
// include/tinker/sync/sampling_client.hpp and src/sync/blocking.hpp).
#include <tinker/sync/sampling_client.hpp>

#include "sync/blocking.hpp"
#include "sync/runtime.hpp"

namespace tinker::sync {

using detail::call_blocking;
using detail::PromiseHandler;
using detail::value_or_throw;

SamplingClient& SamplingClient::operator=(SamplingClient other) noexcept {
  std::swap(runtime_, other.runtime_);
  std::swap(client_, other.client_);
  return *this;
}

SamplingClient::~SamplingClient() {
  if (runtime_ && client_.valid()) runtime_->release(std::move(client_));
}

const std::string& SamplingClient::sampling_session_id() const {
  detail::checked(runtime_, "SamplingClient::sampling_session_id");
  return client_.sampling_session_id();
}

Result<Future<SampleResponse>> SamplingClient::try_sample(ModelInput prompt, std::int64_t num_samples,
                                                          SamplingParams params, SampleOptions options) const {
  using T = Future<SampleResponse>;
  return call_blocking<T>(runtime_, "SamplingClient::sample", [&](diagnostics& diag, PromiseHandler<T> handler) {
    client_.async_sample(std::move(prompt), num_samples, std::move(params), options, diag, std::move(handler));
  });
}

Future<SampleResponse> SamplingClient::sample(ModelInput prompt, std::int64_t num_samples, SamplingParams params,
                                              SampleOptions options) const {
  return value_or_throw(try_sample(std::move(prompt), num_samples, std::move(params), options));
}

Result<Future<PromptLogprobs>> SamplingClient::try_compute_logprobs(ModelInput prompt) const {
  using T = Future<PromptLogprobs>;
  return call_blocking<T>(runtime_, "SamplingClient::compute_logprobs",
                          [&](diagnostics& diag, PromiseHandler<T> handler) {
                            client_.async_compute_logprobs(std::move(prompt), diag, std::move(handler));
                          });
}

Future<PromptLogprobs> SamplingClient::compute_logprobs(ModelInput prompt) const {
  return value_or_throw(try_compute_logprobs(std::move(prompt)));
}

Result<std::shared_ptr<const Tokenizer>> SamplingClient::try_get_tokenizer() const {
  using T = std::shared_ptr<const Tokenizer>;
  return call_blocking<T>(runtime_, "SamplingClient::get_tokenizer", [&](diagnostics& diag, PromiseHandler<T> handler) {
    client_.async_get_tokenizer(diag, std::move(handler));
  });
}

Result<std::string> SamplingClient::try_get_base_model() const {
  using T = std::string;
  return call_blocking<T>(
      runtime_, "SamplingClient::get_base_model",
      [&](diagnostics& diag, PromiseHandler<T> handler) { client_.async_get_base_model(diag, std::move(handler)); });
}

std::string SamplingClient::get_base_model() const {
  return value_or_throw(try_get_base_model());
}

TelemetryInfo SamplingClient::telemetry() const {
  detail::checked(runtime_, "SamplingClient::telemetry");
  return client_.telemetry();
}

std::shared_ptr<const Tokenizer> SamplingClient::get_tokenizer() const {
  return value_or_throw(try_get_tokenizer());
}

}  // namespace tinker::sync
