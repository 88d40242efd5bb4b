// What a training operation's submit cost the client (tinker::FutureStatus::encode_time, body_bytes, submit_time,
// doc/bench.md#operation-costs). The submit runs before the operation's future exists, so it records into a cost of
// its own, which goes into the future once the server accepted the operation.
#pragma once

#include "api/operation_cost.hpp"
#include "client/futures/core.hpp"
#include "client/training/state.hpp"

namespace tinker::client::training {

/// While it lives, the body encodings of `t`'s requests are recorded into `cost` (TrainingState::retry_call()). One
/// operation submits at a time per TrainingClient (its turn, doc/training.md#ordering-and-pipelining), so the state
/// names the operation being submitted; a scope that ends after the next operation took over leaves that one's be.
class SubmitCostScope {
 public:
  SubmitCostScope(detail::TrainingState& t, api::OperationCost& cost) : t_(t), cost_(cost) { t_.submit_cost = &cost; }
  ~SubmitCostScope() {
    if (t_.submit_cost == &cost_) t_.submit_cost = nullptr;
  }
  SubmitCostScope(const SubmitCostScope&) = delete;
  SubmitCostScope& operator=(const SubmitCostScope&) = delete;

 private:
  detail::TrainingState& t_;
  api::OperationCost& cost_;
};

/// The accepted operation's future takes over what its submit cost; the submit time runs from the future's start.
inline void record_submit(detail::FutureCore& core, const api::OperationCost& cost) {
  core.cost.add_encoded(cost);
  core.cost.set_accepted(core.submitted());
}

}  // namespace tinker::client::training
