// One function per endpoint (doc/protocol.md#endpoints): the request's path, pool
// (doc/protocol.md#pools-timeouts-and-throttles), transport retries and call-retry wrapping (doc/protocol.md#endpoints
// table), body encoding and response decoding.
#include "api/endpoints.hpp"

#include "api/response.hpp"
#include "core/types/exception_error.hpp"
#include "core/wire/borrowed_runs.hpp"
#include "core/wire/endpoint_paths.hpp"
#include "core/wire/sample_body.hpp"

#include <tinker/codec.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tinker::api {
namespace {

namespace asio = boost::asio;
namespace paths = wire::paths;
using http::Method;
using http::PoolKind;

constexpr const char* json_type = "application/json";
constexpr const char* protobuf_type = "application/x-protobuf";

// How one call is retried: transport retry count (empty = the client's default of 10) and whether
// the call retries wrap it.
class RetryPlan {
 public:
  RetryPlan(std::optional<int> transport_retries_, const CallRetrySettings* call_retry_)
      : transport_retries(transport_retries_), call_retry(call_retry_) {}
  std::optional<int> transport_retries;
  const CallRetrySettings* call_retry;  ///< null = transport retries only
};

// The absolute path of an endpoint, as the request owns it.
std::string path_of(const wire::paths::EndpointPath& endpoint) {
  return std::string(endpoint.full());
}

http::Request make_request(Method method, std::string path, PoolKind pool) {
  http::Request request(method, std::move(path), pool);
  return request;
}

http::Request json_post(std::string path, PoolKind pool, std::string body) {
  http::Request request = make_request(Method::post, std::move(path), pool);
  request.body = std::move(body);
  request.content_type = json_type;
  return request;
}

// Encodes a request body; an unencodable value (NaN in a tensor, an image_asset_pointer in the
// protobuf form, ...) fails the call before anything is sent, naming the field.
template <class Encode, class Body>
error_code encode_body(Encode encode, Body& out, diagnostics& diag, OperationCost* cost = nullptr) {
  try {
    out = timed_encode(cost, encode);
    return {};
  } catch (const error& e) {
    const error_code ec = detail::current_exception_error(diag);
    if (diag.message.empty()) diag.message = e.what();
    return ec;
  }
}

// A protobuf body whose large arrays are sent from the caller's batch instead of being copied
// (wire/borrowed_runs.hpp): one copy of the batch fewer per training step.
class GatheredBody {
 public:
  std::string spine;
  std::vector<wire::BorrowedRun> borrowed;
  std::size_t size() const noexcept { return wire::gathered_size(spine, borrowed); }
};

// Where a call records its body encoding (tinker::FutureStatus::encode_time), if anywhere.
OperationCost* cost_of(const RetryPlan& plan) {
  return plan.call_retry != nullptr ? plan.call_retry->cost : nullptr;
}

// Transport retries only: this frame keeps the request alive for HttpClient::send.
awaitable<CallOutcome> send_layer_one(http::HttpClient& client, http::Request request, diagnostics& diag) {
  diag.clear();
  co_return co_await client.send(request, &diag);
}

// Sends through the call retries when the plan says so, else straight through the client (transport retries). Not
// a coroutine itself: it returns the awaitable that owns the request (one frame less per call).
awaitable<CallOutcome> send(http::HttpClient& client, http::Request request, diagnostics& diag, RetryPlan plan) {
  request.max_retries = plan.transport_retries;
  if (plan.call_retry != nullptr) return execute_with_retries(client, std::move(request), diag, *plan.call_retry);
  return send_layer_one(client, std::move(request), diag);
}

// The plan's call-retry settings, or for a transport-retry-only call settings that only send an unreadable
// answer's call again.
CallRetrySettings settings_of(const RetryPlan& plan) {
  if (plan.call_retry != nullptr) return *plan.call_retry;
  CallRetrySettings settings;
  settings.retry_failures = false;
  return settings;
}

// Decodes `out` inside the retry loop, so that an answer that cannot be read is asked for again
// (doc/protocol.md#call-retries).
template <class Out>
awaitable<error_code> call_json(http::HttpClient& client, http::Request request, Out& out, diagnostics& diag,
                                RetryPlan plan) {
  CallRetrySettings settings = settings_of(plan);
  settings.accept = [&out](const http::Response& response, diagnostics& decode_diag) {
    return decode_json_response(response, out, decode_diag);
  };
  request.max_retries = plan.transport_retries;
  auto [ec, response] = co_await execute_with_retries(client, std::move(request), diag, std::move(settings));
  co_return ec;
}

// Calls whose answer carries nothing the SDK uses (heartbeat, telemetry): only the status counts.
awaitable<error_code> call_ignoring_body(http::HttpClient& client, http::Request request, diagnostics& diag,
                                         RetryPlan plan) {
  auto [ec, response] = co_await send(client, std::move(request), diag, plan);
  co_return ec;
}

template <class Body>
awaitable<error_code> submit_future(http::HttpClient& client, std::string path, const Body& body,
                                    UntypedAPIFuture& ticket, diagnostics& diag, RetryPlan plan) {
  std::string encoded;
  if (const auto ec = encode_body([&] { return to_json(body); }, encoded, diag, cost_of(plan))) co_return ec;
  http::Request request = json_post(std::move(path), PoolKind::training, std::move(encoded));
  co_return co_await call_json(client, std::move(request), ticket, diag, plan);
}

}  // namespace

awaitable<error_code> client_config(http::HttpClient& client, const ClientConfigRequest& request,
                                    ClientConfigResponse& out, diagnostics& diag, CallRetrySettings call_retry) {
  // doc/protocol.md#pools-timeouts-and-throttles: a one-off call; the session pool serves such small control calls.
  http::Request http_request = json_post(path_of(paths::client_config), PoolKind::session, to_json(request));
  co_return co_await call_json(client, std::move(http_request), out, diag, RetryPlan(std::nullopt, &call_retry));
}

awaitable<error_code> auth_token(http::HttpClient& client, AuthTokenResponse& out, diagnostics& diag,
                                 CallRetrySettings call_retry) {
  const AuthTokenRequest body;
  http::Request http_request = json_post(path_of(paths::auth_token), PoolKind::session, to_json(body));
  co_return co_await call_json(client, std::move(http_request), out, diag, RetryPlan(std::nullopt, &call_retry));
}

awaitable<error_code> dynamic_config(http::HttpClient& client, DynamicConfigResponse& out, diagnostics& diag,
                                     CallRetrySettings call_retry, bool retry_call) {
  const ClientConfigRequest body;
  http::Request http_request = json_post(path_of(paths::dynamic_config), PoolKind::session, to_json(body));
  http_request.timeout = client.options().timeouts.dynamic_config;
  DynamicConfigResponse decoded;
  const RetryPlan plan(0, retry_call ? &call_retry : nullptr);
  const error_code ec = co_await call_json(client, std::move(http_request), decoded, diag, plan);
  if (ec == errc::not_found) {  // doc/protocol.md#endpoints: a server without dynamic config gives the defaults
    diag.clear();
    out = DynamicConfigResponse();
    co_return error_code{};
  }
  if (!ec) out = std::move(decoded);
  co_return ec;
}

awaitable<error_code> create_session(http::HttpClient& client, const CreateSessionRequest& request,
                                     CreateSessionResponse& out, diagnostics& diag) {
  http::Request http_request = json_post(path_of(paths::create_session), PoolKind::session, to_json(request));
  co_return co_await call_json(client, std::move(http_request), out, diag, RetryPlan(std::nullopt, nullptr));
}

awaitable<error_code> session_heartbeat(http::HttpClient& client, const SessionHeartbeatRequest& request,
                                        diagnostics& diag) {
  http::Request http_request = json_post(path_of(paths::session_heartbeat), PoolKind::session, to_json(request));
  http_request.timeout = client.options().timeouts.heartbeat;
  co_return co_await call_ignoring_body(client, std::move(http_request), diag, RetryPlan(0, nullptr));
}

awaitable<error_code> finish_session(http::HttpClient& client, const FinishSessionRequest& request, diagnostics& diag,
                                     CallRetrySettings call_retry, bool retry_call) {
  http::Request http_request = json_post(path_of(paths::finish_session), PoolKind::session, to_json(request));
  const RetryPlan plan(retry_call ? std::nullopt : std::optional<int>(0), retry_call ? &call_retry : nullptr);
  co_return co_await call_ignoring_body(client, std::move(http_request), diag, plan);
}

awaitable<error_code> create_sampling_session(http::HttpClient& client, const CreateSamplingSessionRequest& request,
                                              CreateSamplingSessionResponse& out, diagnostics& diag) {
  http::Request http_request = json_post(path_of(paths::create_sampling_session), PoolKind::session, to_json(request));
  co_return co_await call_json(client, std::move(http_request), out, diag, RetryPlan(std::nullopt, nullptr));
}

awaitable<error_code> get_server_capabilities(http::HttpClient& client, GetServerCapabilitiesResponse& out,
                                              diagnostics& diag, CallRetrySettings call_retry) {
  http::Request http_request = make_request(Method::get, path_of(paths::get_server_capabilities), PoolKind::training);
  co_return co_await call_json(client, std::move(http_request), out, diag, RetryPlan(std::nullopt, &call_retry));
}

awaitable<error_code> get_server_capabilities_once(http::HttpClient& client, GetServerCapabilitiesResponse& out,
                                                   diagnostics& diag) {
  http::Request http_request = make_request(Method::get, path_of(paths::get_server_capabilities), PoolKind::training);
  co_return co_await call_json(client, std::move(http_request), out, diag, RetryPlan(0, nullptr));
}

awaitable<error_code> get_info(http::HttpClient& client, const GetInfoRequest& request, GetInfoResponse& out,
                               diagnostics& diag, CallRetrySettings call_retry, bool retry_call) {
  http::Request http_request = json_post(path_of(paths::get_info), PoolKind::training, to_json(request));
  const RetryPlan plan(std::nullopt, retry_call ? &call_retry : nullptr);
  co_return co_await call_json(client, std::move(http_request), out, diag, plan);
}

awaitable<error_code> weights_info(http::HttpClient& client, const WeightsInfoRequest& request,
                                   WeightsInfoResponse& out, diagnostics& diag, CallRetrySettings call_retry) {
  http::Request http_request = json_post(path_of(paths::weights_info), PoolKind::training, to_json(request));
  co_return co_await call_json(client, std::move(http_request), out, diag, RetryPlan(std::nullopt, &call_retry));
}

awaitable<error_code> copy_weights(http::HttpClient& client, const CopyWeightsRequest& request,
                                   CopyWeightsResponse& out, diagnostics& diag, CallRetrySettings call_retry) {
  http::Request http_request = json_post(path_of(paths::copy_weights), PoolKind::training, to_json(request));
  co_return co_await call_json(client, std::move(http_request), out, diag, RetryPlan(std::nullopt, &call_retry));
}

awaitable<error_code> get_sampler(http::HttpClient& client, const std::string& sampler_id, GetSamplerResponse& out,
                                  diagnostics& diag, CallRetrySettings call_retry) {
  // doc/protocol.md#endpoints: path parameters are inserted verbatim.
  http::Request http_request =
      make_request(Method::get, path_of(paths::samplers) + "/" + sampler_id, PoolKind::training);
  co_return co_await call_json(client, std::move(http_request), out, diag, RetryPlan(std::nullopt, &call_retry));
}

awaitable<error_code> telemetry(http::HttpClient& client, const TelemetryRequest& request, diagnostics& diag) {
  // doc/protocol.md#endpoints: transport retries with the default count; the telemetry loop is its own outer retry.
  std::string body;
  if (const auto ec = encode_body([&] { return to_json(request); }, body, diag)) co_return ec;
  http::Request http_request = json_post(path_of(paths::telemetry), PoolKind::session, std::move(body));
  http_request.timeout = client.options().timeouts.telemetry;
  co_return co_await call_ignoring_body(client, std::move(http_request), diag, RetryPlan(std::nullopt, nullptr));
}

awaitable<error_code> create_model(http::HttpClient& client, const CreateModelRequest& request,
                                   UntypedAPIFuture& ticket, diagnostics& diag) {
  co_return co_await submit_future(client, path_of(paths::create_model), request, ticket, diag,
                                   RetryPlan(std::nullopt, nullptr));
}

awaitable<error_code> forward_backward(http::HttpClient& client, const ForwardBackwardRequest& request, BulkWire wire,
                                       UntypedAPIFuture& ticket, diagnostics& diag, CallRetrySettings call_retry) {
  const RetryPlan plan(std::nullopt, &call_retry);
  if (wire.json) {
    if (request.forward_only) {
      // doc/protocol.md#endpoints: the JSON form has no forward_only; older servers take /api/v1/forward.
      const ForwardRequest forward(request.model_id, request.seq_id, request.forward_backward_input);
      co_return co_await submit_future(client, path_of(paths::forward), forward, ticket, diag, plan);
    }
    co_return co_await submit_future(client, path_of(paths::forward_backward), request, ticket, diag, plan);
  }
  // doc/protocol.md#protobuf: the protobuf form (as the 0.25 client), one zstd frame when the server asks.
  // The runs point into `request`, which the caller keeps until this call has completed.
  const auto encode = [&request] {
    GatheredBody gathered;
    gathered.spine = wire::to_protobuf_borrowing(request, gathered.borrowed);
    return gathered;
  };
  GatheredBody body;
  if (const auto ec = encode_body(encode, body, diag, call_retry.cost)) co_return ec;
  http::Request http_request = make_request(Method::post, path_of(paths::forward_backward), PoolKind::training);
  http_request.body = std::move(body.spine);
  http_request.borrowed = body.borrowed;  // `body` stays in this frame until the call has completed
  http_request.content_type = protobuf_type;
  http_request.compress_zstd = wire.zstd;
  co_return co_await call_json(client, std::move(http_request), ticket, diag, plan);
}

awaitable<error_code> optim_step(http::HttpClient& client, const OptimStepRequest& request, UntypedAPIFuture& ticket,
                                 diagnostics& diag, CallRetrySettings call_retry) {
  co_return co_await submit_future(client, path_of(paths::optim_step), request, ticket, diag,
                                   RetryPlan(std::nullopt, &call_retry));
}

awaitable<error_code> save_weights(http::HttpClient& client, const SaveWeightsRequest& request,
                                   UntypedAPIFuture& ticket, diagnostics& diag, CallRetrySettings call_retry) {
  co_return co_await submit_future(client, path_of(paths::save_weights), request, ticket, diag,
                                   RetryPlan(0, &call_retry));
}

awaitable<error_code> load_weights(http::HttpClient& client, const LoadWeightsRequest& request,
                                   UntypedAPIFuture& ticket, diagnostics& diag, CallRetrySettings call_retry) {
  co_return co_await submit_future(client, path_of(paths::load_weights), request, ticket, diag,
                                   RetryPlan(std::nullopt, &call_retry));
}

awaitable<error_code> save_weights_for_sampler(http::HttpClient& client, const SaveWeightsForSamplerRequest& request,
                                               UntypedAPIFuture& ticket, diagnostics& diag,
                                               CallRetrySettings call_retry) {
  co_return co_await submit_future(client, path_of(paths::save_weights_for_sampler), request, ticket, diag,
                                   RetryPlan(0, &call_retry));
}

awaitable<error_code> save_weights_external(http::HttpClient& client, const SaveWeightsExternalRequest& request,
                                            UntypedAPIFuture& ticket, diagnostics& diag, CallRetrySettings call_retry) {
  // As the other saves: no blind transport retry of a non-idempotent save; the call retries
  // re-send the same seq_id, which the server dedupes (doc/training.md#operations).
  co_return co_await submit_future(client, path_of(paths::save_weights_external), request, ticket, diag,
                                   RetryPlan(0, &call_retry));
}

namespace {

// The outcome of a call refused before anything was sent.
awaitable<CallOutcome> refused_call(error_code ec) {
  co_return CallOutcome(ec, http::Response());
}

}  // namespace

awaitable<CallOutcome> asample(http::HttpClient& client, const SampleRequest& request, UntypedAPIFuture& ticket,
                               diagnostics& diag, CallRetrySettings&& call_retry) {
  std::string body;
  const auto encode = [&] {
    // A sample body with a short prompt takes 300-500 bytes: one allocation, not three.
    std::string out;
    out.reserve(512);
    wire::append_sample_body(request, out);
    return out;
  };
  if (const auto ec = encode_body(encode, body, diag, call_retry.cost)) return refused_call(ec);
  http::Request http_request = json_post(path_of(paths::asample), PoolKind::sampling, std::move(body));
  // doc/protocol.md#headers, doc/sampling.md#backpressure-and-retries: this client handles 429 backpressure itself.
  http_request.headers.emplace_back(http::HeaderName("X-Tinker-Sampling-Backpressure"), "1");
  // Call retries only (no transport retries), as send() with RetryPlan(0, ...) does, but the settings are moved into
  // the call's frame rather than copied (three std::function copies and destructions less per sample). The decoder
  // writes to the caller's ticket.
  call_retry.accept = [&ticket](const http::Response& response, diagnostics& decode_diag) {
    return decode_json_response(response, ticket, decode_diag);
  };
  http_request.max_retries = 0;
  return execute_with_retries(client, std::move(http_request), diag, std::move(call_retry));
}

}  // namespace tinker::api
