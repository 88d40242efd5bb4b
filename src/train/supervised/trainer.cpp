// train_supervised: the cookbook's supervised loop (supervised/train.py) on a TrainingRun, with
// submit_ahead pipelining, evaluators started between steps and checkpoints that drain the pipeline.
#include "train/supervised/evaluator_tasks.hpp"

#include <tinker/error.hpp>

#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <charconv>
#include <cmath>
#include <deque>
#include <string>

namespace tinker::train {
namespace {

namespace asio = boost::asio;

// One step submitted to the service and not yet logged.
class SubmittedStep {
 public:
  StepMetrics metrics;
  std::vector<Datum> batch;
  Future<ForwardBackwardOutput> gradients;
  Future<OptimStepResponse> update;
  std::vector<std::shared_ptr<detail::EvaluatorTask>> evaluations;
};

std::string supervised_json_number(double value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

// The trainer's settings as config.json, when the caller gave none of its own.
std::string supervised_config_json(const SupervisedOptions& options, std::int64_t total_steps) {
  return std::string("{\"trainer\":\"supervised\",\"base_model\":\"") + options.run.base_model +
         "\",\"lora_rank\":" + std::to_string(options.run.lora_rank) +
         ",\"learning_rate\":" + supervised_json_number(options.learning_rate) + ",\"lr_schedule\":\"" +
         std::string(to_string(options.lr_schedule.shape)) +
         "\",\"warmup_steps\":" + std::to_string(options.lr_schedule.warmup_steps) +
         ",\"batch_size\":" + std::to_string(options.batch_size) +
         ",\"num_epochs\":" + std::to_string(options.num_epochs) + ",\"total_steps\":" + std::to_string(total_steps) +
         ",\"data_seed\":" + std::to_string(options.data_seed) +
         ",\"shuffle\":" + (options.shuffle ? "true" : "false") +
         ",\"submit_ahead\":" + std::to_string(options.submit_ahead) +
         ",\"eval_every\":" + std::to_string(options.eval_every) +
         ",\"save_every\":" + std::to_string(options.run.save_every) + ",\"loss_fn\":\"" + options.loss_fn + "\"}";
}

void check_supervised_options(const SupervisedOptions& options) {
  const auto refuse = [](const std::string& message) { throw tinker::error(errc::invalid_argument, message); };
  if (options.batch_size < 1) refuse("SupervisedOptions::batch_size must be >= 1, got 0");
  if (options.num_epochs < 1) {
    refuse("SupervisedOptions::num_epochs must be >= 1, got " + std::to_string(options.num_epochs));
  }
  if (options.max_steps && *options.max_steps < 1) {
    refuse("SupervisedOptions::max_steps must be >= 1, got " + std::to_string(*options.max_steps));
  }
  if (options.submit_ahead < 0) {
    refuse("SupervisedOptions::submit_ahead must be >= 0, got " + std::to_string(options.submit_ahead));
  }
  if (options.eval_every < 0) {
    refuse("SupervisedOptions::eval_every must be >= 0, got " + std::to_string(options.eval_every));
  }
  if (!(options.learning_rate > 0.0) || !std::isfinite(options.learning_rate)) {
    refuse("SupervisedOptions::learning_rate must be a positive number, got " +
           supervised_json_number(options.learning_rate));
  }
}

// The loop of one attempt: from a step to the end, on the run's current training client.
class SupervisedLoop {
 public:
  SupervisedLoop(TrainingRun& run, const SupervisedDataset& dataset, const SupervisedOptions& options,
                 const SupervisedEvaluators& evaluators, std::int64_t total_steps)
      : run_(run),
        dataset_(dataset),
        options_(options),
        evaluators_(evaluators),
        order_(dataset.size(), options.batch_size, options.data_seed, options.shuffle),
        total_steps_(total_steps) {}

  std::optional<double> last_train_nll;

  asio::awaitable<void> train_from(std::int64_t first_step) {
    std::deque<SubmittedStep> pending;  // a failed attempt's steps are abandoned with it
    for (std::int64_t step = first_step; step < total_steps_; ++step) {
      pending.push_back(co_await submit(step));
      // Keep submit_ahead steps queued behind the one whose results are awaited.
      while (pending.size() > static_cast<std::size_t>(options_.submit_ahead)) {
        co_await finish(std::move(pending.front()));
        pending.pop_front();
      }
      const std::int64_t steps_done = step + 1;
      if (steps_done < total_steps_ && run_.checkpoint_due(steps_done)) {
        // Never pipeline across a checkpoint: every step before it is logged before it is saved.
        while (!pending.empty()) {
          co_await finish(std::move(pending.front()));
          pending.pop_front();
        }
        co_await run_.save_checkpoint(steps_done);
      }
    }
    while (!pending.empty()) {
      co_await finish(std::move(pending.front()));
      pending.pop_front();
    }
  }

  // The evaluators once more after the last step, logged as step total_steps.
  asio::awaitable<StepMetrics> final_evaluation() {
    std::vector<std::shared_ptr<detail::EvaluatorTask>> tasks = detail::start_evaluators(run_.training(), evaluators_);
    StepMetrics metrics(total_steps_);
    metrics.merge(co_await detail::join_evaluators(tasks));
    co_return metrics;
  }

 private:
  bool evaluation_due(std::int64_t step) const {
    return options_.eval_every > 0 && step % options_.eval_every == 0 &&
           (!evaluators_.training.empty() || !evaluators_.sampling.empty());
  }

  asio::awaitable<SubmittedStep> submit(std::int64_t step) {
    SubmittedStep submitted;
    submitted.metrics = StepMetrics(step);
    const double learning_rate = options_.lr_schedule.learning_rate(options_.learning_rate, step, total_steps_);
    submitted.metrics.set("epoch", static_cast<double>(order_.epoch_of(step)));
    submitted.metrics.set("progress", static_cast<double>(step) / static_cast<double>(total_steps_));
    submitted.metrics.set("learning_rate", learning_rate);
    double truncated = 0.0;
    for (std::size_t index : order_.batch(step)) {
      submitted.batch.push_back(dataset_.datum(index));
      truncated += dataset_.truncated(index) ? 1.0 : 0.0;
    }
    submitted.metrics.set("num_truncated", truncated);
    const TrainingClient training = run_.training();
    if (evaluation_due(step)) {
      // Started before this step's forward_backward takes its turn, so they score the weights
      // after `step` steps; they run beside training and are joined when this step is logged.
      submitted.evaluations = detail::start_evaluators(training, evaluators_);
      co_await asio::post(training.get_executor(), asio::use_awaitable);
    }
    AdamParams adam = options_.adam;
    adam.learning_rate = learning_rate;
    const OptimParams optim(adam);
    const ForwardBackwardInput input(submitted.batch, options_.loss_fn);
    submitted.gradients = co_await training.async_forward_backward(input, use_awaitable);
    submitted.update = co_await training.async_optim_step(optim, use_awaitable);
    co_return submitted;
  }

  asio::awaitable<void> finish(SubmittedStep submitted) {
    const ForwardBackwardOutput output = co_await submitted.gradients.async_get(use_awaitable);
    const OptimStepResponse update = co_await submitted.update.async_get(use_awaitable);
    StepMetrics& metrics = submitted.metrics;
    double tokens = 0.0;
    double loss_tokens = 0.0;
    for (const Datum& datum : submitted.batch) {
      tokens += static_cast<double>(datum.model_input.length());
      for (float weight : datum.loss_fn_inputs.at("weights").to_dense_floats()) loss_tokens += weight;
    }
    metrics.set("num_sequences", static_cast<double>(submitted.batch.size()));
    metrics.set("num_tokens", tokens);
    metrics.set("num_loss_tokens", loss_tokens);
    const double train_nll = mean_nll(submitted.batch, output);
    metrics.set("train_mean_nll", train_nll);
    last_train_nll = train_nll;
    if (update.metrics) {
      for (const auto& [key, value] : *update.metrics) metrics.set(key, value);
    }
    metrics.merge(co_await detail::join_evaluators(submitted.evaluations));
    run_.log_step(std::move(metrics));
  }

  TrainingRun& run_;
  const SupervisedDataset& dataset_;
  const SupervisedOptions& options_;
  const SupervisedEvaluators& evaluators_;
  BatchOrder order_;
  std::int64_t total_steps_;
};

std::int64_t count_truncated(const SupervisedDataset& dataset) {
  std::int64_t count = 0;
  for (std::size_t i = 0; i < dataset.size(); ++i) count += dataset.truncated(i) ? 1 : 0;
  return count;
}

}  // namespace

asio::awaitable<SupervisedSummary> train_supervised(ServiceClient& service, const SupervisedDataset& dataset,
                                                    SupervisedOptions options, SupervisedEvaluators evaluators) {
  check_supervised_options(options);
  const BatchOrder order(dataset.size(), options.batch_size, options.data_seed, options.shuffle);
  const std::int64_t total_steps = options.max_steps.value_or(options.num_epochs * order.batches_per_epoch());
  options.run.total_steps = total_steps;
  if (options.run.config_json == "{}") options.run.config_json = supervised_config_json(options, total_steps);

  TrainingRun run = co_await TrainingRun::open(service, options.run);
  SupervisedSummary summary;
  summary.start_step = run.start_step();
  summary.total_steps = total_steps;
  summary.truncated_examples = count_truncated(dataset);
  const bool has_evaluators = !evaluators.training.empty() || !evaluators.sampling.empty();
  SupervisedLoop loop(run, dataset, options, evaluators, total_steps);
  if (run.start_step() >= total_steps) {
    // The run finished before: nothing to train and its final checkpoint stands; opening it
    // dropped the final evaluation's line (logged after the last step), so it is logged again.
    if (options.evaluate_at_end && has_evaluators) {
      summary.final_evaluation = co_await loop.final_evaluation();
      run.log_step(summary.final_evaluation);
    }
    summary.final_checkpoint = get_last_checkpoint(options.run.log_path);
    co_return summary;
  }

  co_await run.train_with_recovery([&loop](std::int64_t first_step) { return loop.train_from(first_step); });
  summary.recoveries = run.recoveries();
  summary.last_train_nll = loop.last_train_nll;
  if (options.evaluate_at_end && has_evaluators) {
    summary.final_evaluation = co_await loop.final_evaluation();
    run.log_step(summary.final_evaluation);
  }
  summary.final_checkpoint = co_await run.finish();
  co_return summary;
}

}  // namespace tinker::train
