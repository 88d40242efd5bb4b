/// @file
/// Preference learning with DPO (`doc/training-loops.md#preference-dpo`): comparisons read from
/// JSONL in the cookbook's shapes, rendered by any renderer into chosen/rejected datum pairs, and
/// trained by `train_dpo` on a resumable TrainingRun with `tinker::losses::dpo` against a frozen
/// reference (the run's initial weights), a learning-rate schedule and checkpoints.
#pragma once

#include <tinker/renderers.hpp>
#include <tinker/sampling_client.hpp>
#include <tinker/service_client.hpp>
#include <tinker/train/hyperparams.hpp>
#include <tinker/train/run.hpp>
#include <tinker/types.hpp>

#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

namespace tinker::train {

/// Two continuations of one prompt, the preferred one first.
class Comparison {
 public:
  /// An empty comparison.
  Comparison() = default;

  std::vector<renderers::Message> prompt;    ///< the shared conversation before the continuations
  std::vector<renderers::Message> chosen;    ///< the preferred continuation (usually one assistant message)
  std::vector<renderers::Message> rejected;  ///< the other one
  /// Equal when every message is.
  friend bool operator==(const Comparison&, const Comparison&) = default;
};

/// One JSONL record as a comparison; none for a tie (nothing to prefer). The shapes read:
/// - `{"prompt": P, "chosen": C, "rejected": R}`, each a string (a user message for P, an
///   assistant reply for C and R) or an array of messages; an optional "system" string;
/// - `{"chosen": [...], "rejected": [...]}`: two whole conversations, whose longest common
///   prefix of messages is the prompt;
/// - the cookbook's labeled comparisons, `{"comparison": {"prompt_conversation": [...],
///   "completion_A": [...], "completion_B": [...]}, "label": "A" | "B" | "Tie"}`.
/// Throws tinker::error (invalid_argument) naming the field for another shape, or a comparison
/// whose chosen or rejected side is empty.
std::optional<Comparison> comparison_from_record(std::string_view json);

/// Every record of a JSONL file (blank lines and ties skipped). Throws tinker::error
/// (invalid_argument) naming the file and line of an unreadable record, or a file with no
/// comparison.
std::vector<Comparison> read_comparisons(const std::filesystem::path& jsonl);

/// Renders each comparison into two datums, prompt + chosen then prompt + rejected (the layout
/// tinker::losses::dpo expects: chosen at even indices), trained on the continuation's assistant
/// messages (`TrainOn::last_assistant_turn`). Throws tinker::error (invalid_argument) naming the
/// comparison index when the renderer refuses one.
std::vector<Datum> render_comparisons(const renderers::Renderer& renderer, const std::vector<Comparison>& comparisons);

/// How train_dpo trains.
class PreferenceOptions {
 public:
  /// The cookbook's DPO defaults (RunOptions' base_model and log_path must be set).
  PreferenceOptions() = default;

  RunOptions run;                           ///< run directory, model, checkpoints (total_steps is set by the trainer)
  double learning_rate = 1e-5;              ///< the base learning rate (the cookbook's DPO default)
  LrSchedule lr_schedule{LrShape::linear};  ///< linear decay, as the cookbook
  AdamParams adam;                          ///< betas, eps...; learning_rate is set per step
  double beta = 0.1;                        ///< the DPO temperature (dpo_beta)
  std::size_t batch_size = 8;               ///< comparisons (pairs) per optimizer step
  std::int64_t num_epochs = 1;              ///< passes over the comparisons
  std::optional<std::int64_t> max_steps;    ///< stop after this many steps (default: all epochs)
  std::uint64_t data_seed = 0;              ///< the order's seed
  bool shuffle = true;                      ///< shuffle each epoch (else file order)
};

/// What train_dpo did.
class PreferenceSummary {
 public:
  std::int64_t start_step = 0;                       ///< where it started (non-zero when resumed)
  std::int64_t total_steps = 0;                      ///< the run's length
  int recoveries = 0;                                ///< TrainingRun::recover() restarts
  std::optional<double> first_margin;                ///< the margin of the first step this call ran
  std::optional<double> last_margin;                 ///< the margin of the last step it ran
  std::optional<CheckpointRecord> reference;         ///< the checkpoint of the reference weights (step 0)
  std::optional<CheckpointRecord> final_checkpoint;  ///< the final checkpoint
};

/// Trains DPO on `pairs` (chosen/rejected datums interleaved, as render_comparisons makes them)
/// on a TrainingRun opened at `options.run.log_path` (resumed when it holds a checkpoint). The
/// reference policy is the run's initial weights: a fresh run saves them first as checkpoint
/// "000000" with sampler weights, and a resumed run finds that record again. Per step: the
/// batch's pairs in a seeded order that depends on the step alone, their reference logprobs,
/// forward_backward_custom with tinker::losses::dpo, optim_step at the schedule's rate; metrics
/// with the cookbook's keys (`dpo_loss`, `accuracy`, `margin`, `chosen_reward`,
/// `rejected_reward`, `num_pairs`, `num_tokens`, `learning_rate`, `epoch`, `progress`);
/// checkpoints every run.save_every steps and a final one. Throws tinker::error naming the field
/// for bad options or an odd number of datums.
boost::asio::awaitable<PreferenceSummary> train_dpo(ServiceClient& service, std::vector<Datum> pairs,
                                                    PreferenceOptions options);

/// The DPO metrics (`dpo_loss`, `accuracy`, `margin`, `chosen_reward`, `rejected_reward`,
/// `num_pairs`) of `pairs` scored by two samplers, without training: the policy (e.g. a
/// checkpoint's sampler weights) against the reference (PreferenceSummary::reference). Held-out
/// pairs measure what training generalised; before any step the policy is the reference and the
/// margin is 0.
boost::asio::awaitable<StepMetrics> evaluate_dpo(SamplingClient policy, SamplingClient reference,
                                                 std::vector<Datum> pairs, double beta = 0.1);

}  // namespace tinker::train
