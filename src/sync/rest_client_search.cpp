// tinker::sync::RestClient: the blocking checkpoint search and storage usage calls
// (include/tinker/sync/rest_client.hpp), each a call_blocking of the async call.
#include <tinker/sync/rest_client.hpp>

#include "sync/blocking.hpp"
#include "sync/runtime.hpp"

namespace tinker::sync {

using detail::call_blocking;
using detail::PromiseHandler;
using detail::value_or_throw;

Result<CheckpointSearchResponse> RestClient::try_search_checkpoints(CheckpointSearchRequest request) const {
  using T = CheckpointSearchResponse;
  return call_blocking<T>(runtime_, "RestClient::search_checkpoints",
                          [&](diagnostics& diag, PromiseHandler<T> handler) {
                            client_->async_search_checkpoints(std::move(request), diag, std::move(handler));
                          });
}

CheckpointSearchResponse RestClient::search_checkpoints(CheckpointSearchRequest request) const {
  return value_or_throw(try_search_checkpoints(std::move(request)));
}

Result<std::vector<Checkpoint>> RestClient::try_search_all_checkpoints(CheckpointSearchRequest request,
                                                                       std::int64_t max_pages) const {
  using T = std::vector<Checkpoint>;
  return call_blocking<T>(
      runtime_, "RestClient::search_all_checkpoints", [&](diagnostics& diag, PromiseHandler<T> handler) {
        client_->async_search_all_checkpoints(std::move(request), max_pages, diag, std::move(handler));
      });
}

std::vector<Checkpoint> RestClient::search_all_checkpoints(CheckpointSearchRequest request,
                                                           std::int64_t max_pages) const {
  return value_or_throw(try_search_all_checkpoints(std::move(request), max_pages));
}

Result<CheckpointStorageUsageResponse> RestClient::try_get_checkpoint_storage_usage(
    std::optional<std::string> project_id) const {
  using T = CheckpointStorageUsageResponse;
  return call_blocking<T>(
      runtime_, "RestClient::get_checkpoint_storage_usage", [&](diagnostics& diag, PromiseHandler<T> handler) {
        client_->async_get_checkpoint_storage_usage(std::move(project_id), diag, std::move(handler));
      });
}

CheckpointStorageUsageResponse RestClient::get_checkpoint_storage_usage(std::optional<std::string> project_id) const {
  return value_or_throw(try_get_checkpoint_storage_usage(std::move(project_id)));
}

}  // namespace tinker::sync
