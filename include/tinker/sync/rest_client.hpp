// tinker::sync::RestClient: the blocking form of tinker::RestClient (spec 14). Calls may be made
// from several threads at once; on the client's io thread they throw tinker::error
// (invalid_argument) instead of deadlocking. Each call has a `try_` form returning Result<T>.
#pragma once

#include <tinker/rest_client.hpp>
#include <tinker/sync/result.hpp>
#include <tinker/types/checkpoint.hpp>
#include <tinker/types/session.hpp>

#include <optional>
#include <string>

namespace tinker::sync {

class ServiceClient;

class RestClient {
 public:
  /// An empty handle; every call on it fails with errc::invalid_argument.
  RestClient() = default;
  RestClient(const RestClient&) = default;
  RestClient(RestClient&&) noexcept = default;
  RestClient& operator=(RestClient other) noexcept;
  /// Releases the async handle on the io thread; the last sync object shuts the runtime down.
  ~RestClient();

  bool valid() const noexcept { return client_.has_value(); }

  /// Base model and LoRA settings of a `tinker://` checkpoint.
  WeightsInfoResponse get_weights_info(std::string tinker_path) const;
  Result<WeightsInfoResponse> try_get_weights_info(std::string tinker_path) const;

  /// The base model (and checkpoint) a sampler serves.
  GetSamplerResponse get_sampler(std::string sampler_id) const;
  Result<GetSamplerResponse> try_get_sampler(std::string sampler_id) const;

 private:
  friend class ServiceClient;
  RestClient(detail::RuntimePtr runtime, tinker::RestClient client)
      : runtime_(std::move(runtime)), client_(std::move(client)) {}

  detail::RuntimePtr runtime_;
  std::optional<tinker::RestClient> client_;  // tinker::RestClient has no empty state
};

}  // namespace tinker::sync
