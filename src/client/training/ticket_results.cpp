// From an accepted ticket to a TrainingClient result, for every operation: the poll of the ticket,
// the result decoders, and what a failed submission does to the turnstile.
#include "api/response.hpp"
#include "client/training/state.hpp"

namespace tinker::detail {

void TrainingState::start_earlier_polls() {
  for (auto& weak : unstarted_polls) {
    if (auto core = weak.lock()) core->start();
  }
  unstarted_polls.clear();
}

}  // namespace tinker::detail

namespace tinker::client::training {

using futures::PollStart;
using futures::ResultDecoder;

TurnOutcome turn_outcome_of_failed_submit(const boost::system::error_code& code, const diagnostics& diag,
                                          std::int64_t seq_id) {
  const int status = diag.http_status;
  const bool refused_by_server = status >= 400 && status < 500 && status != 408 && status != 409 && status != 429;
  const bool never_sent = code == errc::invalid_argument || code == errc::invalid_configuration;
  if (refused_by_server || never_sent) return TurnOutcome::not_sent();
  std::string reason = code.message();
  if (!diag.message.empty()) reason += ": " + diag.message;
  if (!diag.request_id.empty()) reason += " (request id " + diag.request_id + ")";
  return TurnOutcome::lost(seq_id, std::move(reason));
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
template ResultDecoder json_result_decoder<SaveWeightsExternalResponse>();
template ResultDecoder json_result_decoder<CreateModelResponse>();
template ResultDecoder json_result_decoder<SampleResponse>();
template ResultDecoder protobuf_result_decoder<ForwardBackwardOutput>();
template ResultDecoder protobuf_result_decoder<SampleResponse>();

bool protobuf_bulk(const TrainingState& t) {
  return !t.holder->options().json_bulk_paths;
}

futures::PollRequest training_poll_request(const TrainingState& t, const UntypedAPIFuture& ticket,
                                           futures::FutureType type, SteadyTime submit_started) {
  futures::PollRequest request(ticket.request_id, type);
  const bool bulk = type == futures::FutureType::forward_backward || type == futures::FutureType::forward;
  if (bulk) request.protobuf_result = protobuf_bulk(t);
  request.create_roundtrip =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - submit_started);
  request.subject = futures::QueueSubject::training;
  request.subject_id = t.model_id;
  return request;
}

std::shared_ptr<FutureCore> poll_training_ticket(const TrainingPtr& t, const UntypedAPIFuture& ticket,
                                                 futures::FutureType type, SteadyTime submit_started,
                                                 ResultDecoder decode) {
  auto core = std::make_shared<FutureCore>(t->holder->executor(), ticket.request_id, submit_started);
  t->start_earlier_polls();
  t->unstarted_polls.push_back(core);
  futures::spawn_poll(t->holder, core, training_poll_request(*t, ticket, type, submit_started), std::move(decode),
                      PollStart::deferred);
  return core;
}

}  // namespace tinker::client::training
