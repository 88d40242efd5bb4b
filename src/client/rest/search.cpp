// RestClient's checkpoint search (one page, or every page by cursor) and the current checkpoint
// storage usage (doc/rest.md#search-checkpoints, doc/rest.md#checkpoint-storage-usage).
#include <tinker/rest_client.hpp>

#include "api/endpoints_rest.hpp"
#include "client/rest/operation.hpp"
#include "client/rest/search_paging.hpp"

#include <iterator>
#include <utility>

namespace tinker::client::rest {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

// Throws tinker::error (invalid_argument) naming the field, before anything is sent.
void check_checkpoint_search(const CheckpointSearchRequest& request) {
  check_search_limit_and_owner("search_checkpoints", request.limit, request.owner);
}

Op<CheckpointSearchResponse> search_checkpoints_op(HolderPtr holder, CheckpointSearchRequest request,
                                                   diagnostics& diag) {
  check_checkpoint_search(request);
  CheckpointSearchResponse out;
  if (auto ec = co_await holder->ensure_config(diag)) co_return OperationResult<CheckpointSearchResponse>(ec, out);
  const error_code ec = co_await api::search_checkpoints(holder->http(), request, out, diag, holder->retry_call());
  co_return OperationResult<CheckpointSearchResponse>(ec, std::move(out));
}

OperationResult<std::vector<Checkpoint>> checkpoint_search_failed(errc code, std::string message, diagnostics& diag) {
  diag.clear();
  diag.message = std::move(message);
  return OperationResult<std::vector<Checkpoint>>(make_error_code(code), std::vector<Checkpoint>());
}

// Follows next_cursor until a page has none, guarded by PageWalk.
Op<std::vector<Checkpoint>> search_all_checkpoints_op(HolderPtr holder, CheckpointSearchRequest request,
                                                      std::int64_t max_pages, diagnostics& diag) {
  check_checkpoint_search(request);
  PageWalk walk("search_all_checkpoints", max_pages);
  std::vector<Checkpoint> all;
  for (;;) {
    if (auto ec = co_await holder->ensure_config(diag)) {
      co_return OperationResult<std::vector<Checkpoint>>(ec, std::vector<Checkpoint>());
    }
    CheckpointSearchResponse response;
    const error_code ec =
        co_await api::search_checkpoints(holder->http(), request, response, diag, holder->retry_call());
    if (ec) co_return OperationResult<std::vector<Checkpoint>>(ec, std::vector<Checkpoint>());
    all.insert(all.end(), std::make_move_iterator(response.checkpoints.begin()),
               std::make_move_iterator(response.checkpoints.end()));
    if (!response.next_cursor) break;
    const CheckpointSearchCursor& next = *response.next_cursor;
    const std::string key = format_timestamp(next.last_created_at) + '\n' + next.last_checkpoint_uuid;
    if (auto stop = walk.next(key, "last_checkpoint_uuid \"" + next.last_checkpoint_uuid + "\"")) {
      co_return checkpoint_search_failed(errc::protocol_error, std::move(*stop), diag);
    }
    request.cursor = next;
  }
  co_return OperationResult<std::vector<Checkpoint>>(error_code(), std::move(all));
}

Op<CheckpointStorageUsageResponse> storage_usage_op(HolderPtr holder, std::optional<std::string> project_id,
                                                    diagnostics& diag) {
  if (project_id && project_id->empty()) {
    throw error(errc::invalid_argument, "get_checkpoint_storage_usage: project_id must not be empty when given");
  }
  CheckpointStorageUsageResponse out;
  if (auto ec = co_await holder->ensure_config(diag)) {
    co_return OperationResult<CheckpointStorageUsageResponse>(ec, out);
  }
  const error_code ec =
      co_await api::checkpoint_storage_usage(holder->http(), project_id, out, diag, holder->retry_call());
  co_return OperationResult<CheckpointStorageUsageResponse>(ec, std::move(out));
}

}  // namespace
}  // namespace tinker::client::rest

namespace tinker::detail {

using namespace client::rest;  // the operations above

void rest_search_checkpoints(HolderPtr h, CheckpointSearchRequest r, diagnostics* d,
                             Handler<CheckpointSearchResponse> c) {
  spawn_rest_call(std::move(h), d, std::move(c), &search_checkpoints_op, std::move(r));
}

void rest_search_all_checkpoints(HolderPtr h, CheckpointSearchRequest r, std::int64_t max_pages, diagnostics* d,
                                 Handler<std::vector<Checkpoint>> c) {
  spawn_rest_call(std::move(h), d, std::move(c), &search_all_checkpoints_op, std::move(r), max_pages);
}

void rest_get_checkpoint_storage_usage(HolderPtr h, std::optional<std::string> project_id, diagnostics* d,
                                       Handler<CheckpointStorageUsageResponse> c) {
  spawn_rest_call(std::move(h), d, std::move(c), &storage_usage_op, std::move(project_id));
}

}  // namespace tinker::detail
