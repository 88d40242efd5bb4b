// The external-weights endpoints (doc/rest.md#external-weights): paths, pools and retry layers.
#include "api/endpoints_external.hpp"

#include "api/response.hpp"
#include "core/wire/endpoint_paths.hpp"

#include <tinker/codec.hpp>

#include <utility>

namespace tinker::api {
namespace {

namespace paths = wire::paths;
using boost::asio::awaitable;
using boost::system::error_code;

// Decodes inside the retry loop, so an answer that cannot be read is asked for again.
template <class Out>
awaitable<error_code> call_external_json(http::HttpClient& client, http::Request request, Out& out, diagnostics& diag,
                                         CallRetrySettings call_retry) {
  call_retry.accept = [&out](const http::Response& response, diagnostics& decode_diag) {
    return decode_json_response(response, out, decode_diag);
  };
  auto [ec, response] = co_await execute_with_retries(client, std::move(request), diag, std::move(call_retry));
  co_return ec;
}

http::Request external_json_post(const paths::EndpointPath& endpoint, std::string body) {
  http::Request request(http::Method::post, std::string(endpoint.full()), http::PoolKind::training);
  request.body = std::move(body);
  request.content_type = "application/json";
  return request;
}

}  // namespace

awaitable<error_code> external_weights_urls(http::HttpClient& client, const std::string& run_id,
                                            const std::string& name, ExternalWeightsUrlsResponse& out,
                                            diagnostics& diag, CallRetrySettings call_retry) {
  // Path parameters verbatim, "external_weights/<name>" with its slash (doc/protocol.md#endpoints).
  std::string path(paths::training_runs.full());
  path += '/';
  path += run_id;
  path += '/';
  path += paths::segment::checkpoints;
  path += "/external_weights/";
  path += name;
  path += '/';
  path += paths::segment::external_weights_urls;
  http::Request request(http::Method::get, std::move(path), http::PoolKind::training);
  co_return co_await call_external_json(client, std::move(request), out, diag, std::move(call_retry));
}

awaitable<error_code> external_weights_upload_start(http::HttpClient& client,
                                                    const ExternalWeightsUploadStartRequest& request,
                                                    ExternalWeightsUploadStartResponse& out, diagnostics& diag,
                                                    CallRetrySettings call_retry) {
  http::Request http_request = external_json_post(paths::external_weights_upload_start, to_json(request));
  co_return co_await call_external_json(client, std::move(http_request), out, diag, std::move(call_retry));
}

awaitable<error_code> external_weights_upload_finish(http::HttpClient& client,
                                                     const ExternalWeightsUploadFinishRequest& request,
                                                     ExternalWeightsUploadFinishResponse& out, diagnostics& diag,
                                                     CallRetrySettings call_retry) {
  http::Request http_request = external_json_post(paths::external_weights_upload_finish, to_json(request));
  co_return co_await call_external_json(client, std::move(http_request), out, diag, std::move(call_retry));
}

}  // namespace tinker::api
