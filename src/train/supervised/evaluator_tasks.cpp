// Evaluators run beside the supervised trainer's pipeline.
#include "train/supervised/evaluator_tasks.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace tinker::train::detail {
namespace {

namespace asio = boost::asio;

asio::awaitable<void> run_training_evaluator(std::shared_ptr<TrainingEvaluator> evaluator,
                                             std::shared_ptr<EvaluatorTask> task) {
  task->result = co_await evaluator->evaluate(task->client);
}

asio::awaitable<void> run_sampling_evaluator(std::shared_ptr<SamplingEvaluator> evaluator,
                                             std::shared_ptr<EvaluatorTask> task) {
  // The save takes its turn first, so the sampler holds the weights of the step it was started at.
  const SamplingClient sampler = co_await task->client.async_save_weights_and_get_sampling_client(use_awaitable);
  task->result = co_await evaluator->evaluate(sampler);
}

void spawn_evaluator_task(asio::awaitable<void> body, const std::shared_ptr<EvaluatorTask>& task) {
  asio::co_spawn(task->signal.get_executor(), std::move(body), [task](std::exception_ptr failure) {
    task->failure = failure;
    task->done = true;
    task->signal.cancel();
  });
}

}  // namespace

EvaluatorTask::EvaluatorTask(TrainingClient client_, asio::any_io_executor executor)
    : client(std::move(client_)), signal(executor, asio::steady_timer::time_point::max()) {}

std::vector<std::shared_ptr<EvaluatorTask>> start_evaluators(const TrainingClient& training,
                                                             const SupervisedEvaluators& evaluators) {
  std::vector<std::shared_ptr<EvaluatorTask>> tasks;
  for (const std::shared_ptr<TrainingEvaluator>& evaluator : evaluators.training) {
    auto task = std::make_shared<EvaluatorTask>(training, training.get_executor());
    spawn_evaluator_task(run_training_evaluator(evaluator, task), task);
    tasks.push_back(std::move(task));
  }
  for (const std::shared_ptr<SamplingEvaluator>& evaluator : evaluators.sampling) {
    auto task = std::make_shared<EvaluatorTask>(training, training.get_executor());
    spawn_evaluator_task(run_sampling_evaluator(evaluator, task), task);
    tasks.push_back(std::move(task));
  }
  return tasks;
}

asio::awaitable<StepMetrics> join_evaluators(std::vector<std::shared_ptr<EvaluatorTask>> tasks) {
  StepMetrics merged;
  for (const std::shared_ptr<EvaluatorTask>& task : tasks) {
    while (!task->done) co_await task->signal.async_wait(asio::as_tuple(asio::use_awaitable));
    if (task->failure) std::rethrow_exception(task->failure);
    if (task->result) merged.merge(*task->result);
  }
  co_return merged;
}

}  // namespace tinker::train::detail
