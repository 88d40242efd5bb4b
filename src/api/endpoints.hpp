// One function per endpoint (doc/protocol.md#endpoints): typed request -> typed response, with the per-endpoint
// retry layers of doc/protocol.md#endpoints (transport retries, call retries by execute_with_retries) and the wire form
// of the official 0.25 client. Every function completes with an error code; `diag` receives the details of a failure
// (HTTP status, request id, server message).
//
// Future endpoints (doc/protocol.md#futures) complete with the ticket (UntypedAPIFuture); their results are
// fetched by client/futures/poll.
#pragma once

#include "api/execute_with_retries.hpp"
#include "http/client.hpp"

#include <tinker/types.hpp>

#include <boost/asio/awaitable.hpp>

namespace tinker::api {

using boost::asio::awaitable;
using boost::system::error_code;

/// How bulk requests travel: protobuf (as 0.25) or JSON (older servers), and zstd when the
/// server's client/config sets proto_compress_fwdbwd.
class BulkWire {
 public:
  BulkWire() = default;
  bool json = false;
  bool zstd = false;
};

// Direct endpoints.
awaitable<error_code> client_config(http::HttpClient& client, const ClientConfigRequest& request,
                                    ClientConfigResponse& out, diagnostics& diag, CallRetrySettings call_retry);
awaitable<error_code> auth_token(http::HttpClient& client, AuthTokenResponse& out, diagnostics& diag,
                                 CallRetrySettings call_retry);
/// 404 = the server has none: `out` keeps its defaults and the result is success.
/// `retry_call` false for the background refresh (doc/protocol.md#endpoints: call retries on the initial fetch only).
awaitable<error_code> dynamic_config(http::HttpClient& client, DynamicConfigResponse& out, diagnostics& diag,
                                     CallRetrySettings call_retry, bool retry_call = true);
awaitable<error_code> create_session(http::HttpClient& client, const CreateSessionRequest& request,
                                     CreateSessionResponse& out, diagnostics& diag);
awaitable<error_code> session_heartbeat(http::HttpClient& client, const SessionHeartbeatRequest& request,
                                        diagnostics& diag);
/// `retry_call` false at shutdown, where one bounded attempt is all there is time for.
awaitable<error_code> finish_session(http::HttpClient& client, const FinishSessionRequest& request, diagnostics& diag,
                                     CallRetrySettings call_retry, bool retry_call = true);
awaitable<error_code> create_sampling_session(http::HttpClient& client, const CreateSamplingSessionRequest& request,
                                              CreateSamplingSessionResponse& out, diagnostics& diag);
awaitable<error_code> get_server_capabilities(http::HttpClient& client, GetServerCapabilitiesResponse& out,
                                              diagnostics& diag, CallRetrySettings call_retry);
/// get_server_capabilities sent exactly once: no transport retry, no call retry, no billing pause
/// (ServiceClient::async_check_access: a 402 or 401 is reported at once).
awaitable<error_code> get_server_capabilities_once(http::HttpClient& client, GetServerCapabilitiesResponse& out,
                                                   diagnostics& diag);
/// `retry_call` false for the internal call of get_tokenizer (doc/protocol.md#endpoints footnote).
awaitable<error_code> get_info(http::HttpClient& client, const GetInfoRequest& request, GetInfoResponse& out,
                               diagnostics& diag, CallRetrySettings call_retry, bool retry_call = true);
awaitable<error_code> weights_info(http::HttpClient& client, const WeightsInfoRequest& request,
                                   WeightsInfoResponse& out, diagnostics& diag, CallRetrySettings call_retry);
awaitable<error_code> get_sampler(http::HttpClient& client, const std::string& sampler_id, GetSamplerResponse& out,
                                  diagnostics& diag, CallRetrySettings call_retry);
/// POST /api/v1/copy_weights: synchronous (the answer is the copy, no future). Retried like the
/// others: a re-send carries the same model_seq_id, which the server dedupes on.
awaitable<error_code> copy_weights(http::HttpClient& client, const CopyWeightsRequest& request,
                                   CopyWeightsResponse& out, diagnostics& diag, CallRetrySettings call_retry);
awaitable<error_code> telemetry(http::HttpClient& client, const TelemetryRequest& request, diagnostics& diag);

// Future endpoints: complete with the ticket.
awaitable<error_code> create_model(http::HttpClient& client, const CreateModelRequest& request,
                                   UntypedAPIFuture& ticket, diagnostics& diag);
/// forward_only with JSON bulk paths goes to the legacy /api/v1/forward as a ForwardRequest.
awaitable<error_code> forward_backward(http::HttpClient& client, const ForwardBackwardRequest& request, BulkWire wire,
                                       UntypedAPIFuture& ticket, diagnostics& diag, CallRetrySettings call_retry);
awaitable<error_code> optim_step(http::HttpClient& client, const OptimStepRequest& request, UntypedAPIFuture& ticket,
                                 diagnostics& diag, CallRetrySettings call_retry);
awaitable<error_code> save_weights(http::HttpClient& client, const SaveWeightsRequest& request,
                                   UntypedAPIFuture& ticket, diagnostics& diag, CallRetrySettings call_retry);
awaitable<error_code> load_weights(http::HttpClient& client, const LoadWeightsRequest& request,
                                   UntypedAPIFuture& ticket, diagnostics& diag, CallRetrySettings call_retry);
awaitable<error_code> save_weights_for_sampler(http::HttpClient& client, const SaveWeightsForSamplerRequest& request,
                                               UntypedAPIFuture& ticket, diagnostics& diag,
                                               CallRetrySettings call_retry);
awaitable<error_code> save_weights_external(http::HttpClient& client, const SaveWeightsExternalRequest& request,
                                            UntypedAPIFuture& ticket, diagnostics& diag, CallRetrySettings call_retry);
/// The sample submit, on the hot path of every sample: not a coroutine itself, it encodes the body
/// and returns the retried call's awaitable, which owns everything it needs (one coroutine frame
/// of about 1.2 KB less per sample). `ticket` is filled when the outcome's code is success; the
/// response is the last answer's. `call_retry` is moved into the call (taken by reference so that the
/// caller's coroutine frame holds no second copy of it).
awaitable<CallOutcome> asample(http::HttpClient& client, const SampleRequest& request, UntypedAPIFuture& ticket,
                               diagnostics& diag, CallRetrySettings&& call_retry);

}  // namespace tinker::api
