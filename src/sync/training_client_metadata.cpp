// tinker::sync::TrainingClient: the saves with user_metadata and the console link
// (include/tinker/sync/training_client.hpp), each a call_blocking of the async call.
#include <tinker/sync/training_client.hpp>

#include "sync/blocking.hpp"
#include "sync/runtime.hpp"

namespace tinker::sync {

using detail::call_blocking;
using detail::PromiseHandler;
using detail::value_or_throw;

Result<Future<SaveWeightsForSamplerResponse>> TrainingClient::try_save_weights_for_sampler(
    std::string name, SaveWeightsForSamplerOptions options) const {
  using T = Future<SaveWeightsForSamplerResponse>;
  return call_blocking<T>(
      runtime_, "TrainingClient::save_weights_for_sampler", [&](diagnostics& diag, PromiseHandler<T> handler) {
        client_.async_save_weights_for_sampler(std::move(name), std::move(options), diag, std::move(handler));
      });
}

Future<SaveWeightsForSamplerResponse> TrainingClient::save_weights_for_sampler(
    std::string name, SaveWeightsForSamplerOptions options) const {
  return value_or_throw(try_save_weights_for_sampler(std::move(name), std::move(options)));
}

Result<SamplingClient> TrainingClient::try_save_weights_and_get_sampling_client(
    std::map<std::string, std::string> user_metadata) const {
  using T = tinker::SamplingClient;
  auto created = call_blocking<T>(runtime_, "TrainingClient::save_weights_and_get_sampling_client",
                                  [&](diagnostics& diag, PromiseHandler<T> handler) {
                                    client_.async_save_weights_and_get_sampling_client(std::move(user_metadata), diag,
                                                                                       std::move(handler));
                                  });
  if (created.has_error()) return Result<SamplingClient>(boost::system::in_place_error, created.error());
  return Result<SamplingClient>(boost::system::in_place_value, SamplingClient(runtime_, std::move(*created)));
}

SamplingClient TrainingClient::save_weights_and_get_sampling_client(
    std::map<std::string, std::string> user_metadata) const {
  return value_or_throw(try_save_weights_and_get_sampling_client(std::move(user_metadata)));
}

std::string TrainingClient::console_url() const {
  detail::checked(runtime_, "TrainingClient::console_url");
  return client_.console_url();
}

}  // namespace tinker::sync
