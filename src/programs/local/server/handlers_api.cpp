// The direct and future endpoints of /api/v1/ (doc/protocol.md#endpoints).
#include "programs/local/server/frontend.hpp"

#include <boost/asio/use_awaitable.hpp>

#include <functional>
#include <type_traits>

namespace tinker::local::front {
namespace {

void answer_ticket(Exchange& ex, const UntypedAPIFuture& ticket) {
  ex.request_id = ticket.request_id;
  if (!ex.model_id && ticket.model_id) ex.model_id = ticket.model_id;
  ex.reply.json(ticket);
}

bool is_protobuf_body(const Exchange& ex) {
  return iequals(media_type(ex.header("Content-Type")), kProtobuf);
}

// Only forward_backward and forward take protobuf bodies (doc/protocol.md#protobuf); elsewhere it
// is refused rather than misread as JSON.
bool refuse_protobuf(Exchange& ex) {
  if (!is_protobuf_body(ex)) return false;
  ex.reply.error(415,
                 std::string("application/x-protobuf bodies are accepted only by forward_backward and forward, not ") +
                     endpoint_name(ex.route.endpoint));
  return true;
}

// forward_backward (JSON or protobuf) and the legacy forward (JSON ForwardRequest, or protobuf
// ForwardBackwardRequest), which always runs forward-only.
bool decode_forward_backward(Exchange& ex, ForwardBackwardRequest& request) {
  const bool legacy_forward = ex.route.endpoint == Endpoint::forward;
  if (is_protobuf_body(ex)) {
    try {
      request = from_protobuf<ForwardBackwardRequest>(ex.body);
    } catch (const error& e) {
      ex.reply.error(422, e.diag().message.empty() ? std::string(e.what()) : e.diag().message);
      return false;
    }
  } else if (legacy_forward) {
    ForwardRequest forward;
    if (!decode_json(ex, forward)) return false;
    request = ForwardBackwardRequest(std::move(forward.model_id), forward.seq_id, std::move(forward.forward_input));
  } else if (!decode_json(ex, request)) {
    return false;
  }
  if (legacy_forward) request.forward_only = true;
  return true;
}

// A request body as its endpoint reads it: JSON, except forward_backward's (above).
template <class Request>
bool decode_request(Exchange& ex, Request& request) {
  return decode_json(ex, request);
}

bool decode_request(Exchange& ex, ForwardBackwardRequest& request) {
  return decode_forward_backward(ex, request);
}

// The ids a request carries, for the arrival log: its model_id and seq_id, where its type has them.
template <class Request>
void note_request_ids(Exchange& ex, const Request& request) {
  if constexpr (requires { request.model_id; }) ex.model_id = request.model_id;
  if constexpr (requires { request.seq_id; }) ex.seq_id = request.seq_id;
}

// Every endpoint of /api/v1/ with a body: decode it (422 when it does not decode), note its ids, run
// `engine_call(engine, request, who)` guarded (an HttpError becomes its status, anything else 500)
// and answer the result: a future endpoint's ticket, or a direct endpoint's response.
template <class Request, class EngineCall>
void serve_request_body(Frontend& fe, Exchange& ex, EngineCall engine_call) {
  Request request;
  if (!decode_request(ex, request)) return;
  note_request_ids(ex, request);
  guarded(fe, ex, [&] {
    auto result = std::invoke(engine_call, fe.engine, std::move(request), ex.principal);
    if constexpr (std::is_same_v<decltype(result), UntypedAPIFuture>) {
      answer_ticket(ex, result);
    } else {
      ex.reply.json(result);
    }
  });
}

// asample: the engine also learns whether the client asked for backpressure.
auto sample_with_backpressure(const Exchange& ex) {
  const bool backpressure = ex.header("X-Tinker-Sampling-Backpressure") == "1";
  return [backpressure](Engine& engine, SampleRequest request, const Principal& who) {
    return engine.sample(std::move(request), who, backpressure);
  };
}

// telemetry: the engine keeps the batch as received.
auto telemetry_with_body(const Exchange& ex) {
  return [body = ex.body](Engine& engine, const TelemetryRequest& request, const Principal& who) {
    return engine.telemetry(request, body, who);
  };
}

ClientConfigResponse client_config(const ClientConfigFlags& flags) {
  ClientConfigResponse config;
  config.pjwt_auth_enabled = flags.pjwt_auth_enabled;
  config.proto_compress_fwdbwd = flags.proto_compress_fwdbwd;
  config.parallel_fwdbwd_chunks = flags.parallel_fwdbwd_chunks;
  config.create_model_via_load_weights = flags.create_model_via_load_weights;
  config.fwdbwd_max_chunk_len = flags.fwdbwd_max_chunk_len;
  config.fwdbwd_max_chunk_bytes_count = flags.fwdbwd_max_chunk_bytes_count;
  config.sample_max_concurrent_requests = flags.sample_max_concurrent_requests;
  config.sample_no_retries = flags.sample_no_retries;
  config.sample_enable_stuck_detection = flags.sample_enable_stuck_detection;
  config.sample_use_retrieve_futures = flags.sample_use_retrieve_futures;
  // The Python SDK's optional native transport is usually not installed: plain httpx it is.
  config.use_pyqwest_transport = false;
  return config;
}

// Points the queue-pause hook at this exchange while its future is submitted.
class PauseNote {
 public:
  PauseNote(Frontend& fe, Exchange& ex) : fe_(fe) { fe_.pause_note = &ex.fault; }
  ~PauseNote() { fe_.pause_note = nullptr; }
  PauseNote(const PauseNote&) = delete;
  PauseNote& operator=(const PauseNote&) = delete;

 private:
  Frontend& fe_;
};

void handle_future_endpoint(Frontend& fe, Exchange& ex) {
  const PauseNote note(fe, ex);
  switch (ex.route.endpoint) {
    case Endpoint::create_model: return serve_request_body<CreateModelRequest>(fe, ex, &Engine::create_model);
    case Endpoint::unload_model: return serve_request_body<UnloadModelRequest>(fe, ex, &Engine::unload_model);
    case Endpoint::forward_backward:
    case Endpoint::forward: return serve_request_body<ForwardBackwardRequest>(fe, ex, &Engine::forward_backward);
    case Endpoint::optim_step: return serve_request_body<OptimStepRequest>(fe, ex, &Engine::optim_step);
    case Endpoint::save_weights: return serve_request_body<SaveWeightsRequest>(fe, ex, &Engine::save_weights);
    case Endpoint::load_weights: return serve_request_body<LoadWeightsRequest>(fe, ex, &Engine::load_weights);
    case Endpoint::save_weights_for_sampler:
      return serve_request_body<SaveWeightsForSamplerRequest>(fe, ex, &Engine::save_weights_for_sampler);
    case Endpoint::save_weights_external:
      return serve_request_body<SaveWeightsExternalRequest>(fe, ex, &Engine::save_weights_external);
    case Endpoint::asample: return serve_request_body<SampleRequest>(fe, ex, sample_with_backpressure(ex));
    default: ex.reply.error(404, "Not Found");
  }
}

}  // namespace

void handle_api(Frontend& fe, Exchange& ex) {
  Engine& engine = fe.engine;
  const Principal& who = ex.principal;
  const Endpoint endpoint = ex.route.endpoint;
  if (endpoint != Endpoint::forward_backward && endpoint != Endpoint::forward && refuse_protobuf(ex)) return;
  switch (endpoint) {
    case Endpoint::healthz: return ex.reply.json(HealthResponse());
    case Endpoint::get_server_capabilities: return guarded(fe, ex, [&] { ex.reply.json(engine.capabilities()); });
    case Endpoint::auth_token: {
      // JWT exchange only when client/config announces it (pjwt_auth_enabled); otherwise the
      // endpoint does not exist.
      if (!fe.options.client_config.pjwt_auth_enabled) return ex.reply.error(404, "Not Found");
      return ex.reply.json(AuthTokenResponse(fe.authenticator.mint(who, engine.clock().now())));
    }
    case Endpoint::client_config: return ex.reply.json(client_config(fe.options.client_config));
    case Endpoint::dynamic_config: {
      if (!fe.options.client_config.dynamic_config_enabled) return ex.reply.error(404, "Not Found");
      return ex.reply.json(DynamicConfigResponse(fe.options.client_config.dynamic_refresh_interval_sec));
    }
    case Endpoint::create_session: return serve_request_body<CreateSessionRequest>(fe, ex, &Engine::create_session);
    case Endpoint::session_heartbeat: return serve_request_body<SessionHeartbeatRequest>(fe, ex, &Engine::heartbeat);
    case Endpoint::create_sampling_session:
      return serve_request_body<CreateSamplingSessionRequest>(fe, ex, &Engine::create_sampling_session);
    case Endpoint::get_info: return serve_request_body<GetInfoRequest>(fe, ex, &Engine::get_info);
    case Endpoint::telemetry: return serve_request_body<TelemetryRequest>(fe, ex, telemetry_with_body(ex));
    case Endpoint::create_model:
    case Endpoint::unload_model:
    case Endpoint::forward_backward:
    case Endpoint::forward:
    case Endpoint::optim_step:
    case Endpoint::save_weights:
    case Endpoint::load_weights:
    case Endpoint::save_weights_for_sampler:
    case Endpoint::save_weights_external:
    case Endpoint::asample: return handle_future_endpoint(fe, ex);
    default: return handle_rest(fe, ex);
  }
}

boost::asio::awaitable<void> handle_retrieve_future(Frontend& fe, Exchange& ex) {
  if (refuse_protobuf(ex)) co_return;
  RetrieveFutureRequest request;
  if (!decode_json(ex, request)) co_return;
  ex.request_id = request.request_id;
  const bool accept_protobuf = icontains(ex.header("Accept"), kProtobuf);
  try {
    RetrieveOutcome outcome =
        co_await fe.engine.retrieve(request.request_id, request.allow_metadata_only, accept_protobuf, ex.principal);
    ex.reply.status = outcome.status;
    ex.reply.content_type = std::move(outcome.content_type);
    ex.reply.body = std::move(outcome.body);
  } catch (const HttpError& e) {
    ex.reply.error(e.status(), e.what());
  } catch (const std::exception& e) {
    fe.logger.error(std::string("internal error in retrieve_future: ") + e.what());
    ex.reply.error(500, "internal server error");
  }
}

boost::asio::awaitable<void> handle_retrieve_futures(Frontend& fe, Exchange& ex) {
  if (refuse_protobuf(ex)) co_return;
  FuturesRetrieveRequest request;
  if (!decode_json(ex, request)) co_return;
  try {
    const FuturesRetrieveResponse answer = co_await fe.engine.retrieve_futures(std::move(request), ex.principal);
    ex.reply.json(answer);
  } catch (const HttpError& e) {
    ex.reply.error(e.status(), e.what());
  } catch (const std::exception& e) {
    fe.logger.error(std::string("internal error in retrieve_futures: ") + e.what());
    ex.reply.error(500, "internal server error");
  }
}

}  // namespace tinker::local::front
