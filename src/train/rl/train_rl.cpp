// train_rl: the RL trainer, synchronous or asynchronous off-policy (the cookbook's rl/train.py).
//
// One mechanism serves both modes. Batch j of the run is launched (each of its groups rolled out
// as its own task, with the sampler current at launch) as soon as the policy has made
// j - max_steps_off_policy optimizer steps; training step t takes its batch's worth of finished
// groups, oldest sampler first, dropping those older than the limit (and rolling their builders
// out again). With max_steps_off_policy = 0 batch t is launched only once step t's weights exist:
// plain on-policy training. With k > 0 the next k batches sample while step t trains.
#include "train/rl/concurrency.hpp"

#include <tinker/async.hpp>
#include <tinker/error.hpp>
#include <tinker/train/rl.hpp>

#include <algorithm>
#include <chrono>
#include <deque>
#include <exception>
#include <string>
#include <utility>

namespace tinker::train {

AdamParams RLOptions::default_adam() {
  AdamParams adam;
  adam.beta1 = 0.9;
  adam.beta2 = 0.95;
  adam.eps = 1e-8;
  return adam;
}

void RLOptions::validate() const {
  auto refuse = [](const std::string& what) { throw error(errc::invalid_argument, "RLOptions::" + what); };
  if (!(learning_rate > 0.0)) refuse("learning_rate must be > 0, got " + std::to_string(learning_rate));
  if (max_tokens < 1) refuse("max_tokens must be >= 1, got " + std::to_string(max_tokens));
  if (!(temperature >= 0.0)) refuse("temperature must be >= 0, got " + std::to_string(temperature));
  if (loss_fn != loss_fn::importance_sampling && loss_fn != loss_fn::ppo && loss_fn != loss_fn::cispo) {
    refuse("loss_fn must be importance_sampling, ppo or cispo, got \"" + loss_fn + "\"");
  }
  if (kl_penalty_coef < 0.0) refuse("kl_penalty_coef must be >= 0, got " + std::to_string(kl_penalty_coef));
  if (kl_discount_factor < 0.0 || kl_discount_factor > 1.0) {
    refuse("kl_discount_factor must be in [0, 1], got " + std::to_string(kl_discount_factor));
  }
  if (max_steps_off_policy < 0) {
    refuse("max_steps_off_policy must be >= 0, got " + std::to_string(max_steps_off_policy));
  }
  if (eval_every < 0) refuse("eval_every must be >= 0, got " + std::to_string(eval_every));
  if (run.total_steps < 0) refuse("run.total_steps must be >= 0, got " + std::to_string(run.total_steps));
}

namespace {

using RolloutClock = std::chrono::steady_clock;

double rollout_seconds_since(RolloutClock::time_point start) {
  return std::chrono::duration<double>(RolloutClock::now() - start).count();
}

/// A finished rollout of one group, with the policy step whose weights sampled it.
class SampledGroup {
 public:
  TrajectoryGroup group;
  std::shared_ptr<EnvGroupBuilder> builder;  ///< rolled out again when the group is stale
  std::int64_t sampler_step = 0;
  std::size_t launch_order = 0;  ///< keeps a step's data in launch order (deterministic on-policy)
};

/// What the rollout tasks share with the trainer.
class RolloutPool {
 public:
  explicit RolloutPool(const boost::asio::any_io_executor& executor) : changed(executor) {}

  std::deque<SampledGroup> finished;
  std::size_t in_flight = 0;
  std::size_t launched = 0;
  std::exception_ptr failure;  ///< the first rollout failure, rethrown by the trainer
  rl_detail::WakeSignal changed;
};

boost::asio::awaitable<void> roll_out_tracked(std::shared_ptr<RolloutPool> pool,
                                              std::shared_ptr<EnvGroupBuilder> builder,
                                              std::shared_ptr<TokenCompleter> policy, std::int64_t sampler_step,
                                              std::size_t launch_order) {
  TrajectoryGroup group = co_await do_group_rollout(*builder, *policy);
  SampledGroup sampled;
  sampled.group = std::move(group);
  sampled.builder = std::move(builder);
  sampled.sampler_step = sampler_step;
  sampled.launch_order = launch_order;
  pool->finished.push_back(std::move(sampled));
}

boost::asio::awaitable<StepMetrics> evaluate_one(std::shared_ptr<SamplingEvaluator> evaluator, SamplingClient sampler) {
  co_return co_await evaluator->evaluate(sampler);
}

class RLTrainer {
 public:
  RLTrainer(ServiceClient& service, RLDataset& dataset, RLOptions options,
            std::vector<std::shared_ptr<SamplingEvaluator>> evaluators, TrainingRun run,
            const boost::asio::any_io_executor& executor)
      : service_(service),
        dataset_(dataset),
        options_(std::move(options)),
        evaluators_(std::move(evaluators)),
        run_(std::move(run)),
        pool_(std::make_shared<RolloutPool>(executor)),
        executor_(executor) {}

  boost::asio::awaitable<RLResult> train();

 private:
  boost::asio::awaitable<void> refresh_sampler(std::int64_t step);
  void launch(std::shared_ptr<EnvGroupBuilder> builder);
  void launch_due_batches();
  boost::asio::awaitable<std::vector<SampledGroup>> collect(std::int64_t step, StepMetrics& metrics);
  boost::asio::awaitable<StepMetrics> run_step(std::int64_t step);
  boost::asio::awaitable<StepMetrics> train_on(std::vector<TrajectoryGroup> groups, std::int64_t step);
  boost::asio::awaitable<StepMetrics> evaluate(SamplingClient sampler);
  boost::asio::awaitable<void> drain();
  void restart_at(std::int64_t first_step);
  boost::asio::awaitable<void> train_from(std::int64_t first_step);

  ServiceClient& service_;
  RLDataset& dataset_;
  RLOptions options_;
  std::vector<std::shared_ptr<SamplingEvaluator>> evaluators_;
  TrainingRun run_;
  std::shared_ptr<RolloutPool> pool_;
  boost::asio::any_io_executor executor_;
  std::optional<SamplingClient> reference_;
  SamplingClient sampler_;
  std::shared_ptr<TokenCompleter> policy_;
  std::int64_t policy_step_ = 0;          ///< optimizer steps in the sampler's weights
  std::int64_t next_batch_ = 0;           ///< the next batch (= step) to launch
  std::vector<std::size_t> batch_sizes_;  ///< groups of each launched batch, from the run's start step
  std::int64_t first_step_ = 0;
  RLResult result_;
};

boost::asio::awaitable<void> RLTrainer::refresh_sampler(std::int64_t step) {
  sampler_ = co_await run_.training().async_save_weights_and_get_sampling_client(use_awaitable);
  policy_ = std::make_shared<SamplingTokenCompleter>(sampler_, options_.max_tokens, options_.temperature);
  policy_step_ = step;
}

void RLTrainer::launch(std::shared_ptr<EnvGroupBuilder> builder) {
  auto pool = pool_;
  ++pool->in_flight;
  boost::asio::co_spawn(executor_, roll_out_tracked(pool, std::move(builder), policy_, policy_step_, pool->launched++),
                        [pool](std::exception_ptr failure) {
                          if (failure && !pool->failure) pool->failure = failure;
                          --pool->in_flight;
                          pool->changed.notify();
                        });
}

void RLTrainer::launch_due_batches() {
  const std::int64_t total = run_.options().total_steps;
  while (next_batch_ < total && next_batch_ <= policy_step_ + options_.max_steps_off_policy) {
    const auto index = static_cast<std::size_t>(next_batch_) % dataset_.size();
    std::vector<std::shared_ptr<EnvGroupBuilder>> builders = dataset_.get_batch(index);
    if (builders.empty()) {
      throw error(errc::invalid_argument, "RLDataset::get_batch(" + std::to_string(index) + ") returned no group");
    }
    batch_sizes_.push_back(builders.size());
    for (std::shared_ptr<EnvGroupBuilder>& builder : builders) launch(std::move(builder));
    ++next_batch_;
  }
}

boost::asio::awaitable<std::vector<SampledGroup>> RLTrainer::collect(std::int64_t step, StepMetrics& metrics) {
  const std::size_t wanted = batch_sizes_.at(static_cast<std::size_t>(step - first_step_));
  const auto start = RolloutClock::now();
  std::vector<SampledGroup> taken;
  double stale = 0.0;
  while (taken.size() < wanted) {
    if (pool_->failure) std::rethrow_exception(pool_->failure);
    if (pool_->finished.empty()) {
      co_await pool_->changed.wait();
      continue;
    }
    // Oldest sampler first: those are the groups about to go stale.
    auto oldest = std::min_element(pool_->finished.begin(), pool_->finished.end(), [](const auto& a, const auto& b) {
      return a.sampler_step != b.sampler_step ? a.sampler_step < b.sampler_step : a.launch_order < b.launch_order;
    });
    SampledGroup group = std::move(*oldest);
    pool_->finished.erase(oldest);
    if (step - group.sampler_step > options_.max_steps_off_policy) {
      stale += 1.0;
      launch(std::move(group.builder));
      continue;
    }
    taken.push_back(std::move(group));
  }
  std::sort(taken.begin(), taken.end(), [](const auto& a, const auto& b) { return a.launch_order < b.launch_order; });
  double step_min = static_cast<double>(taken.front().sampler_step), step_max = step_min, step_sum = 0.0;
  for (const SampledGroup& group : taken) {
    step_min = std::min(step_min, static_cast<double>(group.sampler_step));
    step_max = std::max(step_max, static_cast<double>(group.sampler_step));
    step_sum += static_cast<double>(group.sampler_step);
  }
  metrics.set("sampling_client/step_max", step_max);
  metrics.set("sampling_client/step_min", step_min);
  metrics.set("sampling_client/step_mean", step_sum / static_cast<double>(taken.size()));
  metrics.set("async/stale_groups_dropped", stale);
  metrics.set("time/rollout_wait", rollout_seconds_since(start));
  co_return taken;
}

boost::asio::awaitable<StepMetrics> RLTrainer::train_on(std::vector<TrajectoryGroup> groups, std::int64_t step) {
  StepMetrics metrics = compute_trajectory_metrics(groups);
  if (options_.remove_constant_reward_groups) {
    const auto before = groups.size();
    std::erase_if(groups, [](const TrajectoryGroup& group) { return has_constant_reward(group); });
    metrics.set("rl/constant_reward_groups_dropped", static_cast<double>(before - groups.size()));
  }
  const double lr = options_.lr_schedule.learning_rate(options_.learning_rate, step, run_.options().total_steps);
  metrics.set("optim/lr", lr);
  std::vector<Datum> data = assemble_training_data(groups, compute_advantages(groups));
  metrics.set("rl/datums_trained", static_cast<double>(data.size()));
  if (data.empty()) co_return metrics;  // every group constant: nothing to learn from this batch
  if (options_.kl_penalty_coef > 0.0) {
    const std::vector<std::vector<float>> reference = co_await compute_reference_logprobs(*reference_, data);
    metrics.set("kl_policy_base",
                apply_kl_penalty(data, reference, options_.kl_penalty_coef, options_.kl_discount_factor));
  }
  std::vector<Datum> sent;
  sent.reserve(data.size());
  for (const Datum& datum : data) sent.push_back(remove_mask(datum));
  std::optional<LossFnConfig> config;
  if (!options_.loss_fn_config.empty()) config = options_.loss_fn_config;
  ForwardBackwardInput input(std::move(sent), options_.loss_fn, std::move(config));
  AdamParams adam = options_.adam;
  adam.learning_rate = lr;
  OptimParams optim(adam);
  const TrainingClient& training = run_.training();
  // Both submitted before either is awaited: the optim step follows the gradients in one round.
  Future<ForwardBackwardOutput> gradients = co_await training.async_forward_backward(std::move(input), use_awaitable);
  auto update = co_await training.async_optim_step(std::move(optim), use_awaitable);
  const ForwardBackwardOutput output = co_await gradients.async_get(use_awaitable);
  co_await update.async_get(use_awaitable);
  std::vector<std::vector<float>> training_logprobs;
  for (const LossFnOutput& outputs : output.loss_fn_outputs) {
    const auto found = outputs.find("logprobs");
    training_logprobs.push_back(found == outputs.end() ? std::vector<float>() : found->second.to_dense_floats());
  }
  if (const auto loss = output.metrics.find("loss:sum"); loss != output.metrics.end())
    metrics.set("loss", loss->second);
  if (training_logprobs.size() == data.size()) metrics.merge(compute_kl_sample_train(data, training_logprobs));
  co_return metrics;
}

boost::asio::awaitable<StepMetrics> RLTrainer::evaluate(SamplingClient sampler) {
  std::vector<boost::asio::awaitable<StepMetrics>> runs;
  for (const std::shared_ptr<SamplingEvaluator>& evaluator : evaluators_)
    runs.push_back(evaluate_one(evaluator, sampler));
  const std::vector<StepMetrics> results = co_await rl_detail::gather(std::move(runs));
  StepMetrics merged;
  for (const StepMetrics& result : results) merged.merge(result);
  co_return merged;
}

boost::asio::awaitable<StepMetrics> RLTrainer::run_step(std::int64_t step) {
  StepMetrics metrics(step);
  std::vector<SampledGroup> sampled = co_await collect(step, metrics);
  std::vector<TrajectoryGroup> groups;
  groups.reserve(sampled.size());
  for (SampledGroup& group : sampled) groups.push_back(std::move(group.group));
  const auto start = RolloutClock::now();
  const StepMetrics trained = co_await train_on(std::move(groups), step);
  metrics.merge(trained);
  metrics.set("time/train", rollout_seconds_since(start));
  co_return metrics;
}

boost::asio::awaitable<void> RLTrainer::drain() {
  while (pool_->in_flight > 0) co_await pool_->changed.wait();
}

// Forgets what belongs to steps from `first_step` on: a (re)start there samples its batches anew
// with that step's weights. Rollouts of a failed attempt were drained before.
void RLTrainer::restart_at(std::int64_t first_step) {
  first_step_ = first_step;
  next_batch_ = first_step;
  batch_sizes_.clear();
  pool_->finished.clear();
  pool_->failure = nullptr;
  std::erase_if(result_.metrics, [first_step](const StepMetrics& metrics) { return metrics.step >= first_step; });
}

// One attempt at steps first_step..total; TrainingRun::train_with_recovery runs it again from a
// checkpoint after a recoverable failure.
boost::asio::awaitable<void> RLTrainer::train_from(std::int64_t first_step) {
  restart_at(first_step);
  const std::int64_t total = run_.options().total_steps;
  std::exception_ptr failure;
  try {
    co_await refresh_sampler(first_step);
    for (std::int64_t step = first_step; step < total; ++step) {
      launch_due_batches();
      const bool evaluating = !evaluators_.empty() && options_.eval_every > 0 && step % options_.eval_every == 0;
      std::vector<boost::asio::awaitable<StepMetrics>> work;
      work.push_back(run_step(step));
      if (evaluating) work.push_back(evaluate(sampler_));  // concurrently with the step
      std::vector<StepMetrics> done = co_await rl_detail::gather(std::move(work));
      StepMetrics metrics = std::move(done.front());
      if (evaluating) metrics.merge(done.back());
      metrics.set("progress/done_frac", static_cast<double>(step + 1) / static_cast<double>(total));
      if (step + 1 < total) co_await refresh_sampler(step + 1);
      run_.log_step(metrics);
      result_.metrics.push_back(std::move(metrics));
      if (step + 1 < total && run_.checkpoint_due(step + 1)) co_await run_.save_checkpoint(step + 1);
    }
  } catch (...) {
    failure = std::current_exception();
  }
  co_await drain();  // rollouts still running reference the dataset's builders and envs
  if (failure) std::rethrow_exception(failure);
}

boost::asio::awaitable<RLResult> RLTrainer::train() {
  if (options_.kl_penalty_coef > 0.0) {
    SamplingSource source = options_.kl_reference_path ? SamplingSource::from_model_path(*options_.kl_reference_path)
                                                       : SamplingSource::from_base_model(options_.run.base_model);
    reference_ = co_await service_.async_create_sampling_client(std::move(source), use_awaitable);
  }
  if (run_.start_step() < run_.options().total_steps) {
    co_await run_.train_with_recovery([this](std::int64_t first_step) { return train_from(first_step); });
  }
  result_.recoveries = run_.recoveries();
  result_.final_checkpoint = co_await run_.finish();
  co_return std::move(result_);
}

}  // namespace

boost::asio::awaitable<RLResult> train_rl(ServiceClient& service, RLDataset& dataset, RLOptions options,
                                          std::vector<std::shared_ptr<SamplingEvaluator>> evaluators) {
  options.validate();
  if (dataset.size() == 0) throw error(errc::invalid_argument, "train_rl: the RLDataset is empty");
  if (options.run.total_steps == 0) options.run.total_steps = static_cast<std::int64_t>(dataset.size());
  TrainingRun run = co_await TrainingRun::open(service, options.run);
  const boost::asio::any_io_executor executor = co_await boost::asio::this_coro::executor;
  RLTrainer trainer(service, dataset, std::move(options), std::move(evaluators), std::move(run), executor);
  co_return co_await trainer.train();
}

}  // namespace tinker::train
