// The shared state of one TrainingClient and the machinery its operations share: the turn
// (doc/training.md#ordering-and-pipelining), the decision what a failed submit means for the seq_id sequence, and the
// start of the background poll that feeds the operation's Future.
#pragma once

#include "client/async/complete.hpp"
#include "client/futures/core.hpp"
#include "client/futures/driver.hpp"
#include "client/futures/poll_answer.hpp"
#include "client/handles.hpp"
#include "client/session/holder.hpp"
#include "client/training/turnstile.hpp"

#include <tinker/training_client.hpp>

#include <chrono>
#include <memory>
#include <string>

namespace tinker::detail {

class TrainingState {
 public:
  TrainingState(std::shared_ptr<ClientHolder> holder_, std::string model_id_, std::string base_model_,
                OptimizerConfig optimizer_ = AdamOptimizerConfig())
      : holder(std::move(holder_)),
        model_id(std::move(model_id_)),
        base_model(std::move(base_model_)),
        optimizer(std::move(optimizer_)) {}

  std::shared_ptr<ClientHolder> holder;
  const std::string model_id;
  const std::string base_model;  ///< may be empty when the model came from a checkpoint
  /// Fixed for the client's life; optim_step refuses parameters of another optimizer
  /// (doc/training.md#optimizers). Set before the client is handed out (a full-state resume
  /// learns it from the load).
  OptimizerConfig optimizer;
  client::training::Turnstile turnstile{1};  ///< the model's creation was seq 0

  /// Results whose first poll waits for this client's next submit (io thread only): a
  /// pipelined loop's optim_step then reaches the server before forward_backward's first poll.
  std::vector<std::weak_ptr<FutureCore>> unstarted_polls;
  /// Called after every accepted submit: lets the earlier results' polls go.
  void start_earlier_polls();

  /// The operation being submitted records its body encodings here (client/training/submit_cost.hpp); io thread.
  api::OperationCost* submit_cost = nullptr;
  /// The holder's call-retry settings, recording into submit_cost.
  api::CallRetrySettings retry_call() const {
    api::CallRetrySettings call_retry = holder->retry_call();
    call_retry.cost = submit_cost;
    return call_retry;
  }
};

}  // namespace tinker::detail

namespace tinker::client::training {

using Ticket = Turnstile::Ticket;
using SteadyTime = std::chrono::steady_clock::time_point;

/// How a submit that failed for good ends its turn: a request the server refused (a 4xx other
/// than 408/409/429, or one that failed before it was sent) holds no seq_id there, so the seq_ids
/// are handed to the next operation; anything else (transport failure, 5xx after the retries,
/// cancellation mid-request) may or may not have reached the server, so the seq_id is lost
/// and later operations fail fast (turnstile.hpp).
TurnOutcome turn_outcome_of_failed_submit(const boost::system::error_code& code, const diagnostics& diag,
                                          std::int64_t seq_id);

/// A decoder of a JSON result (or protobuf where the 0.25 client asks for one).
template <class T>
futures::ResultDecoder json_result_decoder();
template <class T>
futures::ResultDecoder protobuf_result_decoder();

/// The poll request of one training ticket.
futures::PollRequest training_poll_request(const TrainingState& t, const UntypedAPIFuture& ticket,
                                           futures::FutureType type, SteadyTime submit_started);

/// A Future polling one ticket of this model.
std::shared_ptr<detail::FutureCore> poll_training_ticket(const TrainingPtr& t, const UntypedAPIFuture& ticket,
                                                         futures::FutureType type, SteadyTime submit_started,
                                                         futures::ResultDecoder decode);

/// True when forward/forward_backward results come as protobuf (the 0.25 form).
bool protobuf_bulk(const TrainingState& t);

}  // namespace tinker::client::training
