// Evaluators started beside training: each one runs as its own coroutine on the training
// client's executor and is joined later, so the trainer's pipeline never waits for it to start.
#pragma once

#include <tinker/train/supervised.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <exception>
#include <memory>
#include <optional>
#include <vector>

namespace tinker::train::detail {

/// One running evaluator: its client, its result or failure, and a timer cancelled when it ends.
class EvaluatorTask {
 public:
  /// A task whose completion signal runs on `executor`.
  EvaluatorTask(TrainingClient client_, boost::asio::any_io_executor executor);

  TrainingClient client;              ///< the weights it scores (kept alive while it runs)
  std::optional<StepMetrics> result;  ///< set when it succeeded
  std::exception_ptr failure;         ///< set when it threw
  bool done = false;                  ///< it ended either way
  boost::asio::steady_timer signal;   ///< cancelled when it ends
};

/// Starts every evaluator of `evaluators` against `training`'s current weights: a sampling one
/// first saves sampler weights. Each one's first request takes its turn before the caller's next
/// operation as long as the caller yields once (asio::post) before submitting it.
std::vector<std::shared_ptr<EvaluatorTask>> start_evaluators(const TrainingClient& training,
                                                             const SupervisedEvaluators& evaluators);

/// Waits for `tasks` and merges their results in order; rethrows the first failure.
boost::asio::awaitable<StepMetrics> join_evaluators(std::vector<std::shared_ptr<EvaluatorTask>> tasks);

}  // namespace tinker::train::detail
