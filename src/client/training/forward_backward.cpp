// forward, forward_backward and forward_backward_custom (doc/training.md#operations, doc/training.md#chunking,
// doc/training.md#custom-losses).
//
// A batch is split by the server's chunk limits before the turn (so bad input fails without
// using a seq_id). In its turn the operation takes one seq_id per chunk, submits chunks 2..n
// concurrently and chunk 1 last, once the others have their tickets: the server holds later
// seq_ids until the first arrives, so the whole batch is queued when chunk 1 lands. The
// returned Future polls every chunk and combines the results.
#include "api/endpoints.hpp"
#include "api/response.hpp"
#include "client/async/join.hpp"
#include "client/session/operation_launch.hpp"
#include "client/training/chunking.hpp"
#include "client/training/combine.hpp"
#include "client/training/state.hpp"
#include "client/training/submit_cost.hpp"
#include "core/types/exception_error.hpp"
#include "core/types/tensor_checks.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace tinker::client::training {

namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using FbFuture = Future<ForwardBackwardOutput>;
using FbOutcome = async::OperationResult<FbFuture>;

// One chunk's submit and what came of it.
class ChunkSubmit {
 public:
  ForwardBackwardRequest request;
  UntypedAPIFuture ticket;
  error_code error;
  diagnostics diag;
  bool done = false;
};

bool carries_provenance(const ForwardBackwardInput& input) {
  return std::any_of(input.data.begin(), input.data.end(), [](const Datum& d) {
    return d.model_input_spans.has_value() || d.loss_fn_input_spans.has_value();
  });
}

asio::awaitable<void> submit_chunk(TrainingState& t, ChunkSubmit& chunk) {
  api::BulkWire wire;
  // doc/training.md#provenance: the protobuf form has no provenance fields, so a chunk carrying spans goes as JSON.
  wire.json = !protobuf_bulk(t) || carries_provenance(chunk.request.forward_backward_input);
  wire.zstd = t.holder->config().proto_compress_fwdbwd;
  const api::CallRetrySettings call_retry = t.retry_call();
  try {
    // doc/protocol.md#pools-timeouts-and-throttles: the chunk's estimated bytes are held in the dispatch budget while
    // it is posted.
    std::int64_t bytes = 0;
    for (const Datum& datum : chunk.request.forward_backward_input.data) bytes += estimate_datum_bytes(datum);
    async::ByteBudget& budget = t.holder->fwdbwd_budget();
    co_await budget.acquire(bytes);
    const async::BudgetReservation held(budget, bytes);
    chunk.error =
        co_await api::forward_backward(t.holder->http(), chunk.request, wire, chunk.ticket, chunk.diag, call_retry);
  } catch (const boost::system::system_error&) {
    // A tinker::error: encoding failed, nothing was sent; any other: cancelled waiting for the budget.
    detail::ExceptionMapping cancelled;
    cancelled.system_error = errc::cancelled;
    chunk.error = detail::current_exception_error(chunk.diag, cancelled);
  }
  chunk.done = true;
}

// How the turn ends when some chunk was not accepted (see turn_outcome_of_failed_submit).
TurnOutcome turn_outcome_of_chunks(const std::vector<ChunkSubmit>& chunks, std::size_t& first_failure) {
  bool any_accepted = false;
  std::optional<std::size_t> lowest_missing;
  std::optional<TurnOutcome> failure_outcome;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const ChunkSubmit& chunk = chunks[i];
    if (chunk.done && !chunk.error) {
      any_accepted = true;
      continue;
    }
    if (!lowest_missing) lowest_missing = i;
    if (chunk.error && !failure_outcome) {
      first_failure = i;
      failure_outcome = turn_outcome_of_failed_submit(chunk.error, chunk.diag, chunk.request.seq_id);
    }
  }
  const std::int64_t missing_seq = chunks[*lowest_missing].request.seq_id;
  if (!any_accepted && failure_outcome->kind() == TurnOutcome::Kind::not_sent) return *failure_outcome;
  const std::string reason = failure_outcome->kind() == TurnOutcome::Kind::lost
                                 ? failure_outcome->reason()
                                 : chunks[first_failure].error.message() + ": " + chunks[first_failure].diag.message;
  return TurnOutcome::lost(missing_seq, reason);
}

futures::ResultCombiner chunk_combiner(bool protobuf, std::vector<std::size_t> datum_counts) {
  return [protobuf, counts = std::move(datum_counts)](std::vector<http::Response>& answers, ErasedResult& value,
                                                      diagnostics& diag) {
    std::vector<ForwardBackwardOutput> outputs(answers.size());
    for (std::size_t i = 0; i < answers.size(); ++i) {
      const error_code ec = protobuf ? api::decode_protobuf_response(answers[i], outputs[i], diag)
                                     : api::decode_json_response(answers[i], outputs[i], diag);
      if (ec) return ec;
    }
    try {
      value = std::make_shared<ForwardBackwardOutput>(combine_chunk_outputs(std::move(outputs), counts));
    } catch (const error&) {
      return detail::current_exception_error(diag);
    }
    return error_code();
  };
}

ChunkLimits chunk_limits(const TrainingState& t) {
  const ClientConfigResponse& config = t.holder->config();
  return ChunkLimits(config.fwdbwd_max_chunk_len, config.fwdbwd_max_chunk_bytes_count);
}

// Submits every chunk in one turn: 2..n concurrently, then 1. Returns the index of the first
// failed chunk, or nothing.
// With the server flag parallel_fwdbwd_chunks off, one after the other in seq_id order instead.
asio::awaitable<std::optional<std::size_t>> submit_chunks(TrainingPtr t, Ticket ticket,
                                                          std::vector<ChunkSubmit>& chunks) {
  bool later_ok = true;
  if (t->holder->config().parallel_fwdbwd_chunks) {
    std::vector<asio::awaitable<void>> later_chunks;
    for (std::size_t i = 1; i < chunks.size(); ++i) later_chunks.push_back(submit_chunk(*t, chunks[i]));
    co_await async::run_all(std::move(later_chunks));
    for (std::size_t i = 1; i < chunks.size(); ++i) later_ok = later_ok && !chunks[i].error;
    if (later_ok) co_await submit_chunk(*t, chunks[0]);
  } else {
    for (std::size_t i = 0; i < chunks.size() && later_ok; ++i) {
      co_await submit_chunk(*t, chunks[i]);
      later_ok = !chunks[i].error;
    }
  }
  if (later_ok && !chunks[0].error) {
    t->turnstile.finish_turn(ticket, TurnOutcome::submitted());
    co_return std::nullopt;
  }
  std::size_t first_failure = 0;
  t->turnstile.finish_turn(ticket, turn_outcome_of_chunks(chunks, first_failure));
  co_return first_failure;
}

// Every loss input must be well-formed and finite before anything is sent (JSON cannot carry NaN).
// The field path is only put together for the error: this runs over every tensor of every batch.
void validate_loss_inputs(const std::vector<Datum>& data) {
  for (std::size_t i = 0; i < data.size(); ++i) {
    for (const auto& [key, tensor] : data[i].loss_fn_inputs) {
      const std::string problem = detail::tensor_problem(tensor);
      if (!problem.empty()) {
        throw error(errc::invalid_argument, "data[" + std::to_string(i) + "].loss_fn_inputs." + key + ": " + problem);
      }
    }
  }
}

asio::awaitable<FbOutcome> fwdbwd_op(TrainingPtr t, Ticket ticket, ForwardBackwardInput input, bool forward_only,
                                     diagnostics& diag) {
  const SteadyTime started = std::chrono::steady_clock::now();
  std::vector<ForwardBackwardInput> inputs;
  try {
    validate_loss_inputs(input.data);
    for (std::size_t i = 0; i < input.data.size(); ++i) validate_provenance(input.data[i], i);
    const auto ranges = split_into_chunks(input.data, chunk_limits(*t));
    inputs = take_chunk_inputs(std::move(input), ranges);
  } catch (const error&) {
    t->turnstile.pass_turn(ticket);
    co_return FbOutcome(detail::current_exception_error(diag), FbFuture());
  }
  if (error_code ec = co_await t->turnstile.wait_turn(ticket, diag)) co_return FbOutcome(ec, FbFuture());
  if (error_code ec = co_await t->holder->ensure_config(diag)) {  // refreshes a JWT about to expire
    t->turnstile.finish_turn(ticket, TurnOutcome::not_sent());
    co_return FbOutcome(ec, FbFuture());
  }
  const std::int64_t first_seq = t->turnstile.next_seq_ids(ticket, static_cast<std::int64_t>(inputs.size()));
  std::vector<ChunkSubmit> chunks(inputs.size());
  std::vector<std::size_t> datum_counts;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    datum_counts.push_back(inputs[i].data.size());
    chunks[i].request =
        ForwardBackwardRequest(t->model_id, chunk_seq_id(first_seq, i), std::move(inputs[i]), forward_only);
  }
  api::OperationCost cost;
  const SubmitCostScope recording(*t, cost);
  if (auto failed = co_await submit_chunks(t, ticket, chunks)) {
    diag = std::move(chunks[*failed].diag);
    co_return FbOutcome(chunks[*failed].error, FbFuture());
  }
  const auto type = forward_only ? futures::FutureType::forward : futures::FutureType::forward_backward;
  std::vector<futures::PollRequest> polls;
  for (const ChunkSubmit& chunk : chunks) polls.push_back(training_poll_request(*t, chunk.ticket, type, started));
  auto core = std::make_shared<FutureCore>(t->holder->executor(), chunks[0].ticket.request_id, started);
  record_submit(*core, cost);
  t->start_earlier_polls();
  t->unstarted_polls.push_back(core);
  futures::spawn_poll_all(t->holder, core, std::move(polls), chunk_combiner(protobuf_bulk(*t), std::move(datum_counts)),
                          futures::PollStart::deferred);
  co_return FbOutcome(error_code(), FbFuture(std::move(core)));
}

// --- forward_backward_custom (doc/training.md#custom-losses) ---

error_code check_custom_data(const std::vector<Datum>& data, diagnostics& diag) {
  for (std::size_t i = 0; i < data.size(); ++i) {
    const std::string where = "data[" + std::to_string(i) + "].loss_fn_inputs";
    for (const auto& [key, tensor] : data[i].loss_fn_inputs) {
      if (key == "target_tokens" || key == "weights") continue;
      diag.message = where + "." + key + ": forward_backward_custom accepts only target_tokens and weights";
      return make_error_code(errc::invalid_argument);
    }
    if (!data[i].loss_fn_inputs.contains("target_tokens")) {
      diag.message = where + ".target_tokens is required by forward_backward_custom";
      return make_error_code(errc::invalid_argument);
    }
  }
  return {};
}

std::vector<Datum> with_zero_weights(const std::vector<Datum>& data) {
  std::vector<Datum> out = data;
  for (Datum& datum : out) {
    if (datum.loss_fn_inputs.contains("weights")) continue;
    const TensorData& targets = datum.loss_fn_inputs.at("target_tokens");
    std::vector<float> zeros(targets.stored_size(), 0.0f);
    datum.loss_fn_inputs["weights"] = TensorData(std::move(zeros), targets.shape);
  }
  return out;
}

error_code logprobs_of(const ForwardBackwardOutput& output, std::size_t count, std::vector<std::vector<float>>& out,
                       diagnostics& diag) {
  if (output.loss_fn_outputs.size() != count) {
    diag.message = "the forward pass returned " + std::to_string(output.loss_fn_outputs.size()) + " outputs for " +
                   std::to_string(count) + " datums";
    return make_error_code(errc::protocol_error);
  }
  for (std::size_t i = 0; i < count; ++i) {
    auto it = output.loss_fn_outputs[i].find("logprobs");
    if (it == output.loss_fn_outputs[i].end()) {
      diag.message = "the forward pass returned no logprobs for datum " + std::to_string(i);
      return make_error_code(errc::protocol_error);
    }
    out.push_back(it->second.to_dense_floats());
  }
  return {};
}

// The backward batch: weights = -d loss / d logprobs, so the server's cross-entropy gradient
// (of -sum weights * logprobs) equals the user loss's gradient.
error_code backward_data(const std::vector<Datum>& data, const CustomLossOutput& loss, std::vector<Datum>& out,
                         diagnostics& diag) {
  if (loss.gradients.size() != data.size()) {
    diag.message = "the custom loss returned " + std::to_string(loss.gradients.size()) + " gradients for " +
                   std::to_string(data.size()) + " datums";
    return make_error_code(errc::invalid_argument);
  }
  for (std::size_t i = 0; i < data.size(); ++i) {
    const TensorData& targets = data[i].loss_fn_inputs.at("target_tokens");
    if (loss.gradients[i].size() != targets.stored_size()) {
      diag.message = "gradients[" + std::to_string(i) + "] has " + std::to_string(loss.gradients[i].size()) +
                     " values; its datum has " + std::to_string(targets.stored_size()) + " target tokens";
      return make_error_code(errc::invalid_argument);
    }
    std::vector<float> weights(loss.gradients[i].size());
    for (std::size_t k = 0; k < weights.size(); ++k) weights[k] = -loss.gradients[i][k];
    LossFnInputs inputs{{"target_tokens", targets}, {"weights", TensorData(std::move(weights), targets.shape)}};
    out.emplace_back(data[i].model_input, std::move(inputs));
  }
  return {};
}

// The public Future of a custom call: the backward's result with the user's metrics merged in.
asio::awaitable<void> merge_custom_metrics(FbFuture backward, std::shared_ptr<FutureCore> core, Metrics metrics) {
  diagnostics diag;
  auto as_tuple_token = asio::as_tuple(asio::use_awaitable);
  auto [ec, output] = co_await backward.async_get(diag, as_tuple_token);
  if (ec) {
    core->set_error(ec, std::move(diag));
    co_return;
  }
  for (auto& [name, value] : metrics) output.metrics[name] = value;
  core->set_result(std::make_shared<ForwardBackwardOutput>(std::move(output)));
}

asio::awaitable<CustomLossOutput> run_forward_for_custom(TrainingPtr t, Ticket forward_ticket,
                                                         const std::vector<Datum>& data, CustomLossFunction& loss,
                                                         error_code& ec, diagnostics& diag) {
  ForwardBackwardInput forward_input(with_zero_weights(data), loss_fn::cross_entropy);
  auto [submit_ec, forward_future] = co_await fwdbwd_op(t, forward_ticket, std::move(forward_input), true, diag);
  ec = submit_ec;
  if (ec) co_return CustomLossOutput();
  auto as_tuple_token = asio::as_tuple(asio::use_awaitable);
  auto [wait_ec, forward] = co_await forward_future.async_get(diag, as_tuple_token);
  ec = wait_ec;
  if (ec) co_return CustomLossOutput();
  std::vector<std::vector<float>> logprobs;
  if ((ec = logprobs_of(forward, data.size(), logprobs, diag))) co_return CustomLossOutput();
  try {
    co_return loss(data, logprobs);
  } catch (const std::exception& e) {
    diag.message = std::string("the custom loss function threw: ") + e.what();
    ec = make_error_code(errc::invalid_argument);
  }
  co_return CustomLossOutput();
}

asio::awaitable<FbOutcome> custom_op(TrainingPtr t, Ticket first_ticket, std::vector<Datum> data,
                                     CustomLossFunction loss, diagnostics& diag) {
  const Ticket forward_ticket = first_ticket;
  const Ticket backward_ticket = first_ticket + 1;
  error_code ec = check_custom_data(data, diag);
  CustomLossOutput user_loss;
  if (!ec)
    user_loss = co_await run_forward_for_custom(t, forward_ticket, data, loss, ec, diag);
  else
    t->turnstile.pass_turn(forward_ticket);
  std::vector<Datum> backward;
  if (!ec) ec = backward_data(data, user_loss, backward, diag);
  if (ec) {
    t->turnstile.pass_turn(backward_ticket);
    co_return FbOutcome(ec, FbFuture());
  }
  ForwardBackwardInput backward_input(std::move(backward), loss_fn::cross_entropy);
  auto [submit_ec, backward_future] = co_await fwdbwd_op(t, backward_ticket, std::move(backward_input), false, diag);
  if (submit_ec) co_return FbOutcome(submit_ec, FbFuture());
  auto core = std::make_shared<FutureCore>(t->holder->executor(), backward_future.status().request_id);
  auto work = merge_custom_metrics(std::move(backward_future), core, std::move(user_loss.metrics));
  futures::spawn_task(t->holder, core, std::move(work));
  co_return FbOutcome(error_code(), FbFuture(std::move(core)));
}

void start_fwdbwd(TrainingPtr t, ForwardBackwardInput input, bool forward_only, diagnostics* d, Handler<FbFuture> h) {
  const Ticket ticket = t->turnstile.take_ticket();
  auto holder = t->holder;  // a failure is reported to telemetry (doc/protocol.md#telemetry)
  client::session::spawn_reported<FbFuture>(std::move(holder), true, d, std::move(h), &fwdbwd_op, std::move(t), ticket,
                                            std::move(input), forward_only);
}

}  // namespace

}  // namespace tinker::client::training

namespace tinker::detail {

using namespace client::training;  // the operations above

void training_forward(TrainingPtr t, ForwardBackwardInput input, diagnostics* d, Handler<FbFuture> h) {
  start_fwdbwd(std::move(t), std::move(input), true, d, std::move(h));
}

void training_forward_backward(TrainingPtr t, ForwardBackwardInput input, diagnostics* d, Handler<FbFuture> h) {
  start_fwdbwd(std::move(t), std::move(input), false, d, std::move(h));
}

void training_forward_backward_custom(TrainingPtr t, std::vector<Datum> data, CustomLossFunction loss, diagnostics* d,
                                      Handler<FbFuture> h) {
  const Ticket first_ticket = t->turnstile.take_tickets(2);
  auto holder = t->holder;  // a failure is reported to telemetry (doc/protocol.md#telemetry)
  client::session::spawn_reported<FbFuture>(std::move(holder), true, d, std::move(h), &custom_op, std::move(t),
                                            first_ticket, std::move(data), std::move(loss));
}

}  // namespace tinker::detail
