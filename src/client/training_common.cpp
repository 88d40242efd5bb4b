// What every TrainingClient operation shares: the turn outcome of a failed submit, the poll of
// a ticket, and the result decoders.
#include "api/response.hpp"
#include "client/training_state.hpp"

namespace tinker::detail {

client::TurnOutcome turn_outcome_of_failed_submit(const boost::system::error_code& code, const diagnostics& diag,
                                                  std::int64_t seq_id) {
  const int status = diag.http_status;
  const bool refused_by_server = status >= 400 && status < 500 && status != 408 && status != 409 && status != 429;
  const bool never_sent = code == errc::invalid_argument || code == errc::invalid_configuration;
  if (refused_by_server || never_sent) return client::TurnOutcome::not_sent();
  std::string reason = code.message();
  if (!diag.message.empty()) reason += ": " + diag.message;
  if (!diag.request_id.empty()) reason += " (request id " + diag.request_id + ")";
  return client::TurnOutcome::lost(seq_id, std::move(reason));
}

template <class T>
ResultDecoder json_result_decoder() {
  return [](const http::Response& answer, ErasedResult& value, diagnostics& diag) {
    auto result = std::make_shared<T>();
    if (auto ec = api::decode_json_response(answer, *result, diag)) return ec;
    value = std::move(result);
    return boost::system::error_code{};
  };
}

template <class T>
ResultDecoder protobuf_result_decoder() {
  return [](const http::Response& answer, ErasedResult& value, diagnostics& diag) {
    auto result = std::make_shared<T>();
    if (auto ec = api::decode_protobuf_response(answer, *result, diag)) return ec;
    value = std::move(result);
    return boost::system::error_code{};
  };
}

template ResultDecoder json_result_decoder<ForwardBackwardOutput>();
template ResultDecoder json_result_decoder<OptimStepResponse>();
template ResultDecoder json_result_decoder<SaveWeightsResponse>();
template ResultDecoder json_result_decoder<LoadWeightsResponse>();
template ResultDecoder json_result_decoder<SaveWeightsForSamplerResponse>();
template ResultDecoder json_result_decoder<CreateModelResponse>();
template ResultDecoder json_result_decoder<SampleResponse>();
template ResultDecoder protobuf_result_decoder<ForwardBackwardOutput>();
template ResultDecoder protobuf_result_decoder<SampleResponse>();

bool protobuf_bulk(const TrainingState& t) {
  return !t.holder->options().json_bulk_paths;
}

client::PollRequest training_poll_request(const TrainingState& t, const UntypedAPIFuture& ticket,
                                          client::FutureType type, SteadyTime submit_started) {
  client::PollRequest request(ticket.request_id, type);
  const bool bulk = type == client::FutureType::forward_backward || type == client::FutureType::forward;
  if (bulk) request.protobuf_result = protobuf_bulk(t);
  request.create_roundtrip =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - submit_started);
  request.subject = client::QueueSubject::training;
  request.subject_id = t.model_id;
  return request;
}

std::shared_ptr<FutureCore> poll_training_ticket(const TrainingPtr& t, const UntypedAPIFuture& ticket,
                                                 client::FutureType type, SteadyTime submit_started,
                                                 ResultDecoder decode) {
  auto core = std::make_shared<FutureCore>(t->holder->executor(), ticket.request_id, submit_started);
  spawn_poll(t->holder, core, training_poll_request(*t, ticket, type, submit_started), std::move(decode));
  return core;
}

}  // namespace tinker::detail
