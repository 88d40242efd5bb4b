/// @file
/// Reinforcement learning on env groups (`doc/training-loops.md#rl`), as the cookbook's
/// `rl/train.py`, `rl/data_processing.py` and `rl/metrics.py` do it: group-relative advantages,
/// trajectories turned into training datums, a KL penalty against a reference model, and the
/// trainer `train_rl`, synchronous (on-policy) or asynchronous off-policy.
#pragma once

#include <tinker/sampling_client.hpp>
#include <tinker/service_client.hpp>
#include <tinker/train/hyperparams.hpp>
#include <tinker/train/rl_env.hpp>
#include <tinker/train/run.hpp>
#include <tinker/train/run_dir.hpp>
#include <tinker/types.hpp>

#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tinker::train {

/// Each trajectory's advantage: its total reward minus the mean total reward of its group (GRPO's
/// centring, the cookbook's `compute_advantages`). One vector per group, one value per trajectory.
std::vector<std::vector<double>> compute_advantages(const std::vector<TrajectoryGroup>& groups);

/// True when every trajectory of `group` has the same total reward: its advantages are all zero
/// and it teaches nothing (the cookbook drops such groups before training).
bool has_constant_reward(const TrajectoryGroup& group);

/// The training datums of one trajectory, as the cookbook's `trajectory_to_data`: transitions whose
/// observation extends the sequence so far (earlier observations and actions as its prefix) are
/// merged into one datum; an observation that does not starts a new datum. Each datum holds the
/// shifted `target_tokens`, the sampler's `logprobs` and `advantage` on action tokens (0 on
/// observation tokens), and `mask` (1 on action tokens, 0 elsewhere; remove it with
/// remove_mask before sending). Observation chunks that are not text (images) are kept whole.
/// Throws tinker::error (invalid_argument) for an action without one logprob per token.
std::vector<Datum> trajectory_to_data(const Trajectory& trajectory, double advantage);

/// trajectory_to_data of every trajectory of every group with its advantage, in order (the
/// cookbook's `assemble_training_data`). `advantages` must have the shape compute_advantages gives:
/// tinker::error (invalid_argument) otherwise.
std::vector<Datum> assemble_training_data(const std::vector<TrajectoryGroup>& groups,
                                          const std::vector<std::vector<double>>& advantages);

/// `datum` without its `mask` input (the RL losses take `target_tokens`, `logprobs` and
/// `advantages` only).
Datum remove_mask(Datum datum);

/// The whole sampled sequence of an RL datum: its model input plus its last target token (what a
/// sampler's compute_logprobs scores).
ModelInput full_sequence(const Datum& datum);

/// Adds the KL penalty to each datum's advantages, as the cookbook's `incorporate_kl_penalty`:
/// with d = (sampling logprob - reference logprob) on action tokens (mask > 0) and 0 elsewhere,
/// and d̄ its mean over every action token of the batch, each action token's advantage gains
/// `coef * (d̄ - d)` (or the discounted future sum of that term when `discount_factor` > 0).
/// `reference_logprobs[i]` has one value per target position of datum i (the reference sampler's
/// compute_logprobs of full_sequence(datum) without its first entry). Returns d̄ (the
/// `kl_policy_base` metric). Throws tinker::error (invalid_argument) for mismatched sizes, a
/// datum without `mask`, or a batch without action tokens.
double apply_kl_penalty(std::vector<Datum>& data, const std::vector<std::vector<float>>& reference_logprobs,
                        double coef, double discount_factor = 0.0);

/// The reference logprobs apply_kl_penalty takes: `reference`'s compute_logprobs of each datum's
/// full_sequence, all requests in flight at once, first entry dropped (a missing value is 0).
boost::asio::awaitable<std::vector<std::vector<float>>> compute_reference_logprobs(SamplingClient reference,
                                                                                   std::vector<Datum> data);

/// The cookbook's per-batch trajectory metrics under `env/all/` (and `env/<tag>/` for tags that
/// select a strict subset of the groups): `reward/total` (mean total reward per trajectory),
/// `ac_tokens_per_turn`, `ob_tokens_per_turn`, `turns_per_episode`, `total_episodes`,
/// `total_turns`, `total_ac_tokens`, `total_ob_tokens`, the mean of each Env step metric over the
/// transitions that report it, and `by_group/frac_mixed`, `by_group/frac_all_good`,
/// `by_group/frac_all_bad` (all good: a constant reward >= 0.5).
StepMetrics compute_trajectory_metrics(const std::vector<TrajectoryGroup>& groups);

/// The cookbook's `compute_kl_sample_train` over action tokens: `optim/kl_sample_train_v1` (mean of
/// sampling minus training logprob), `optim/kl_sample_train_v2` (half the mean square) and
/// `optim/entropy` (minus the mean sampling logprob). `training_logprobs[i]` are the forward
/// pass's logprobs of datum i. Empty metrics when there is no action token.
StepMetrics compute_kl_sample_train(const std::vector<Datum>& data,
                                    const std::vector<std::vector<float>>& training_logprobs);

/// How train_rl trains (the cookbook's `rl.train.Config`).
class RLOptions {
 public:
  /// The defaults below; `run.log_path` and `run.base_model` must be set.
  RLOptions() = default;

  /// The run directory, model, LoRA rank, checkpoints and resume. `run.total_steps` = 0 means one
  /// epoch of the dataset (`dataset.size()` steps); more steps cycle through the dataset again.
  RunOptions run;
  double learning_rate = 4e-5;  ///< the base learning rate (see get_lr)
  LrSchedule lr_schedule;       ///< the schedule over the run's steps
  /// Adam's betas, eps, weight decay and clipping (its learning_rate is replaced by the schedule's).
  /// The cookbook's RL uses eps 1e-8.
  AdamParams adam = default_adam();
  std::int64_t max_tokens = 64;  ///< the most tokens of one action
  double temperature = 1.0;      ///< sampling temperature of the rollouts
  /// `importance_sampling`, `ppo` or `cispo` (tinker::loss_fn), with `loss_fn_config`
  /// (`clip_low_threshold`, `clip_high_threshold` for ppo and cispo).
  std::string loss_fn = loss_fn::importance_sampling;
  LossFnConfig loss_fn_config;                ///< sent with the loss when not empty
  bool remove_constant_reward_groups = true;  ///< drop groups whose rewards are all equal before training
  /// KL penalty coefficient against the reference model (0: none).
  double kl_penalty_coef = 0.0;
  double kl_discount_factor = 0.0;  ///< > 0: the KL term becomes its discounted future sum
  /// The reference model for the KL penalty: this checkpoint's sampler weights
  /// (`tinker://.../sampler_weights/...`), or the base model `run.base_model` when empty.
  std::optional<std::string> kl_reference_path;
  /// 0: synchronous on-policy training: step t samples its batch with the weights after t steps.
  /// k > 0: asynchronous off-policy (the cookbook's AsyncConfig): the batch of step t is sampled
  /// as soon as the weights of step t - k exist, so sampling runs ahead of training, concurrently
  /// with it. A group sampled with the weights of step s reaching training at step t > s + k (a
  /// slow env) is dropped, counted in `async/stale_groups_dropped`, and its builder rolled out
  /// again with the current weights, so every step trains on a full batch.
  int max_steps_off_policy = 0;
  /// Sampling evaluators run every this many steps (before the step, with its sampler; 0: never),
  /// concurrently with the step's rollouts and training.
  std::int64_t eval_every = 0;

  /// The cookbook's RL Adam parameters: betas 0.9 and 0.95, eps 1e-8.
  static AdamParams default_adam();
  /// Throws tinker::error (invalid_argument) naming the first bad field.
  void validate() const;
};

/// What train_rl did in this process.
class RLResult {
 public:
  std::vector<StepMetrics> metrics;   ///< the steps run here (a resumed run: from its start step)
  CheckpointRecord final_checkpoint;  ///< the run's final checkpoint
  int recoveries = 0;                 ///< TrainingRun::recover() restarts during the call
};

/// Trains a LoRA of `options.run.base_model` on `dataset` with RL (`doc/training-loops.md#rl`) and
/// returns once the run's last step and final checkpoint are done. Each step: roll out a batch of
/// env groups with the current sampler, compute group-relative advantages, drop constant-reward
/// groups, optionally add the KL penalty, one forward_backward and optim_step with `loss_fn`, a new
/// sampler on the new weights; metrics per step into the run directory (`env/all/reward/total`,
/// `optim/lr`, `optim/kl_sample_train_v1`, `time/step`, the evaluators' keys...), checkpoints every
/// `run.save_every` steps, resume from the newest one. A failure TrainingRun::is_recoverable
/// accepts (the run corrupted or lost) restarts it from its last good checkpoint, rollouts in
/// flight drained and sampled again. The dataset, the evaluators and their referents must outlive
/// the call. Everything runs on the io thread of `service`.
boost::asio::awaitable<RLResult> train_rl(ServiceClient& service, RLDataset& dataset, RLOptions options,
                                          std::vector<std::shared_ptr<SamplingEvaluator>> evaluators = {});

}  // namespace tinker::train
