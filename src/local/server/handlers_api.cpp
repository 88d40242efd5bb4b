// The direct and future endpoints of /api/v1/ (doc/protocol.md#endpoints).
#include "local/server/frontend.hpp"

#include <boost/asio/use_awaitable.hpp>

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
  ex.model_id = request.model_id;
  ex.seq_id = request.seq_id;
  return true;
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
  Engine& engine = fe.engine;
  const Principal& who = ex.principal;
  switch (ex.route.endpoint) {
    case Endpoint::create_model: {
      CreateModelRequest request;
      if (!decode_json(ex, request)) return;
      return guarded(fe, ex, [&] { answer_ticket(ex, engine.create_model(request, who)); });
    }
    case Endpoint::unload_model: {
      UnloadModelRequest request;
      if (!decode_json(ex, request)) return;
      ex.model_id = request.model_id;
      return guarded(fe, ex, [&] { answer_ticket(ex, engine.unload_model(request, who)); });
    }
    case Endpoint::forward_backward:
    case Endpoint::forward: {
      ForwardBackwardRequest request;
      if (!decode_forward_backward(ex, request)) return;
      return guarded(fe, ex, [&] { answer_ticket(ex, engine.forward_backward(std::move(request), who)); });
    }
    case Endpoint::optim_step: {
      OptimStepRequest request;
      if (!decode_json(ex, request)) return;
      ex.model_id = request.model_id;
      ex.seq_id = request.seq_id;
      return guarded(fe, ex, [&] { answer_ticket(ex, engine.optim_step(request, who)); });
    }
    case Endpoint::save_weights: {
      SaveWeightsRequest request;
      if (!decode_json(ex, request)) return;
      ex.model_id = request.model_id;
      ex.seq_id = request.seq_id;
      return guarded(fe, ex, [&] { answer_ticket(ex, engine.save_weights(request, who)); });
    }
    case Endpoint::load_weights: {
      LoadWeightsRequest request;
      if (!decode_json(ex, request)) return;
      ex.model_id = request.model_id;
      ex.seq_id = request.seq_id;
      return guarded(fe, ex, [&] { answer_ticket(ex, engine.load_weights(request, who)); });
    }
    case Endpoint::save_weights_for_sampler: {
      SaveWeightsForSamplerRequest request;
      if (!decode_json(ex, request)) return;
      ex.model_id = request.model_id;
      ex.seq_id = request.seq_id;
      return guarded(fe, ex, [&] { answer_ticket(ex, engine.save_weights_for_sampler(request, who)); });
    }
    case Endpoint::asample: {
      SampleRequest request;
      if (!decode_json(ex, request)) return;
      ex.seq_id = request.seq_id;
      const bool backpressure = ex.header("X-Tinker-Sampling-Backpressure") == "1";
      return guarded(fe, ex, [&] { answer_ticket(ex, engine.sample(std::move(request), who, backpressure)); });
    }
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
    case Endpoint::create_session: {
      CreateSessionRequest request;
      if (!decode_json(ex, request)) return;
      return guarded(fe, ex, [&] { ex.reply.json(engine.create_session(request, who)); });
    }
    case Endpoint::session_heartbeat: {
      SessionHeartbeatRequest request;
      if (!decode_json(ex, request)) return;
      return guarded(fe, ex, [&] { ex.reply.json(engine.heartbeat(request, who)); });
    }
    case Endpoint::create_sampling_session: {
      CreateSamplingSessionRequest request;
      if (!decode_json(ex, request)) return;
      return guarded(fe, ex, [&] { ex.reply.json(engine.create_sampling_session(request, who)); });
    }
    case Endpoint::get_info: {
      GetInfoRequest request;
      if (!decode_json(ex, request)) return;
      ex.model_id = request.model_id;
      return guarded(fe, ex, [&] { ex.reply.json(engine.get_info(request, who)); });
    }
    case Endpoint::telemetry: {
      TelemetryRequest request;
      if (!decode_json(ex, request)) return;
      return guarded(fe, ex, [&] { ex.reply.json(engine.telemetry(request, ex.body, who)); });
    }
    case Endpoint::create_model:
    case Endpoint::unload_model:
    case Endpoint::forward_backward:
    case Endpoint::forward:
    case Endpoint::optim_step:
    case Endpoint::save_weights:
    case Endpoint::load_weights:
    case Endpoint::save_weights_for_sampler:
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

}  // namespace tinker::local::front
