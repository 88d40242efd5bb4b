// tinker::sync::ServiceClient::copy_weights (include/tinker/sync/service_client.hpp), a
// call_blocking of tinker::ServiceClient::async_copy_weights.
#include <tinker/sync/service_client.hpp>

#include "sync/blocking.hpp"
#include "sync/runtime.hpp"

namespace tinker::sync {

Result<std::string> ServiceClient::try_copy_weights(std::string path, CopyWeightsOptions options) const {
  using T = std::string;
  return detail::call_blocking<T>(
      runtime_, "ServiceClient::copy_weights", [&](diagnostics& diag, detail::PromiseHandler<T> handler) {
        runtime_->service().async_copy_weights(std::move(path), std::move(options), diag, std::move(handler));
      });
}

std::string ServiceClient::copy_weights(std::string path, CopyWeightsOptions options) const {
  return detail::value_or_throw(try_copy_weights(std::move(path), std::move(options)));
}

}  // namespace tinker::sync
