// The external-weights endpoints (doc/rest.md#external-weights): the signed URLs of an exported
// checkpoint's files and the upload's start and finish. The export itself is a future-returning
// training operation (api/endpoints.hpp save_weights_external).
#pragma once

#include "api/execute_with_retries.hpp"
#include "http/client.hpp"

#include <tinker/types.hpp>

#include <boost/asio/awaitable.hpp>

#include <string>

namespace tinker::api {

/// GET /api/v1/training_runs/{run}/checkpoints/external_weights/{name}/external_weights_urls
/// (the path a compatible server uses; doc/protocol.md#choices-where-the-protocol-was-open).
boost::asio::awaitable<boost::system::error_code> external_weights_urls(
    http::HttpClient& client, const std::string& run_id, const std::string& name, ExternalWeightsUrlsResponse& out,
    diagnostics& diag, CallRetrySettings call_retry);
/// POST /api/v1/external_weights_upload_start. A re-send only leaves an unused upload behind.
boost::asio::awaitable<boost::system::error_code> external_weights_upload_start(
    http::HttpClient& client, const ExternalWeightsUploadStartRequest& request, ExternalWeightsUploadStartResponse& out,
    diagnostics& diag, CallRetrySettings call_retry);
/// POST /api/v1/external_weights_upload_finish. Servers answer a repeated finish of the same
/// upload with the same path (tinker-local does), so it is retried like any call.
boost::asio::awaitable<boost::system::error_code> external_weights_upload_finish(
    http::HttpClient& client, const ExternalWeightsUploadFinishRequest& request,
    ExternalWeightsUploadFinishResponse& out, diagnostics& diag, CallRetrySettings call_retry);

}  // namespace tinker::api
