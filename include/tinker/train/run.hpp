/// @file
/// A resumable training run (`doc/training-loops.md#resume`): a run directory plus the training
/// client it drives. Opening a directory that holds a checkpoint resumes from the newest one with
/// its optimizer state; the trainers of this library (supervised, RL, preference) derive the data
/// order, the schedule and every seed from the step number alone, so a resumed run continues
/// exactly where the checkpoint left it. The metrics of steps after that checkpoint are dropped
/// from `metrics.jsonl` and written again.
#pragma once

#include <tinker/error.hpp>
#include <tinker/sampling_client.hpp>
#include <tinker/service_client.hpp>
#include <tinker/train/run_dir.hpp>
#include <tinker/training_client.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace tinker::train {

/// What TrainingRun::open does with a directory that already holds a run.
enum class ExistingRun {
  resume,     ///< continue from its newest checkpoint (a directory without one starts afresh)
  overwrite,  ///< remove its metrics.jsonl, checkpoints.jsonl and config.json, start afresh
  fail,       ///< tinker::error (invalid_argument) naming the directory
};

/// How a run is set up. `config_json` is the caller's whole configuration, written to
/// `config.json` so a run directory says what produced it.
class RunOptions {
 public:
  /// Empty options (base_model and log_path must be set).
  RunOptions() = default;

  std::filesystem::path log_path;     ///< the run directory (created when missing)
  std::string base_model;             ///< the model to train a LoRA of
  int lora_rank = 32;                 ///< LoRA rank
  std::optional<std::uint64_t> seed;  ///< the LoRA's initialisation seed (LoraTrainingOptions::seed)
  /// A fresh run starts from these weights (`tinker://.../weights/...`, a save_state checkpoint,
  /// its LoRA settings and a fresh optimizer) instead of a new LoRA: the cookbook's
  /// `load_checkpoint_path`, e.g. RL after a supervised warm-up. A resumed run ignores it.
  std::optional<std::string> load_checkpoint_path;
  std::string renderer_name;                    ///< kept in checkpoints.jsonl and the checkpoints' user metadata
  std::string config_json = "{}";               ///< written to config.json (a JSON object)
  std::int64_t total_steps = 0;                 ///< optimizer steps of the whole run (for the progress line and ETA)
  std::int64_t save_every = 0;                  ///< a checkpoint every this many steps; 0 = only the final one
  ExistingRun if_exists = ExistingRun::resume;  ///< what to do with a directory that holds a run
  int max_recovery_attempts = 3;                ///< recover() gives up after this many recoveries
  bool show_progress = true;                    ///< a progress line per step on stderr (in place on a terminal)
};

/// Per-step bookkeeping of a run: metrics, checkpoints, progress and recovery. Trainers own one;
/// a hand-written loop can too. Move-only; every member is used from the io thread of the
/// ServiceClient it was opened with.
class TrainingRun {
 public:
  /// Opens `options.log_path`: resumes from its newest checkpoint (a training client created from
  /// that state with its optimizer, metrics of later steps dropped), or starts a fresh LoRA
  /// training client and writes config.json. Throws tinker::error naming the field for bad
  /// options, and the service's error when the client cannot be made.
  static boost::asio::awaitable<TrainingRun> open(ServiceClient& service, RunOptions options);

  /// Move-only.
  TrainingRun(TrainingRun&&) noexcept;
  /// Move-only.
  TrainingRun& operator=(TrainingRun&&) noexcept;
  ~TrainingRun();  ///< nothing is saved on destruction (call finish())

  const TrainingClient& training() const;  ///< the training client (replaced by recover())
  const RunDirectory& directory() const;   ///< the run directory
  const RunOptions& options() const;       ///< the options it was opened with
  /// The first step to run: 0 for a fresh run, the checkpoint's step for a resumed one (and after
  /// recover(), the step it returned).
  std::int64_t start_step() const;
  bool resumed() const;  ///< opened from a checkpoint

  /// True when a checkpoint is due once `steps_done` steps are complete (every `save_every`).
  bool checkpoint_due(std::int64_t steps_done) const;

  /// Records step `metrics.step`: adds `time/total` (seconds of the whole iteration: since the
  /// previous step was logged, or since open) and `time/step` (the same, unless the caller set it
  /// to time its training call, as the cookbook does), appends the line to metrics.jsonl, prints
  /// the progress line. Steps must be logged in order from start_step(), each once: tinker::error
  /// (invalid_argument) otherwise.
  void log_step(StepMetrics metrics);

  /// Saves a checkpoint after `steps_done` steps: `save_state` (and `save_weights_for_sampler`
  /// when `with_sampler` or `final`), named by the step (or "final"), with the renderer name in
  /// its user metadata; then appends its record to checkpoints.jsonl. Submit it after the last
  /// step's optim_step and before the next step's forward_backward (the TrainingClient's order
  /// decides what it captures). Every step before `steps_done` must have been logged first, so
  /// the record never points past the metrics: tinker::error (invalid_argument) otherwise.
  boost::asio::awaitable<CheckpointRecord> save_checkpoint(std::int64_t steps_done, bool with_sampler = false,
                                                           bool final = false);
  /// The final checkpoint after options().total_steps steps (state and sampler weights, marked
  /// final), printed with the run's summary.
  boost::asio::awaitable<CheckpointRecord> finish();

  /// Whether recover() can handle `failure`: the service reports the run corrupted or lost, or
  /// a checkpoint failed to load.
  static bool is_recoverable(const tinker::error& failure);
  /// Recovers from `failure` (rethrown when not recoverable or after max_recovery_attempts): a
  /// new training client from the newest good checkpoint (an older one when that one fails to
  /// load), metrics after it dropped, a line on stderr; returns the step to continue from.
  boost::asio::awaitable<std::int64_t> recover(tinker::error failure);
  int recoveries() const;  ///< how many times recover() has restarted the run
  /// A trainer's loop with recovery: `train_from(start_step())`, and after a failure that
  /// is_recoverable() accepts, recover() and `train_from` again from the step it returns; any other
  /// failure (and one past max_recovery_attempts) propagates. `train_from` trains to the run's end.
  boost::asio::awaitable<void> train_with_recovery(
      std::function<boost::asio::awaitable<void>(std::int64_t first_step)> train_from);

 private:
  class State;
  explicit TrainingRun(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

/// Where held-out evaluators plug into the trainers: one that scores with the training client
/// (such as the held-out NLL, `forward` without gradients).
class TrainingEvaluator {
 public:
  virtual ~TrainingEvaluator() = default;
  /// Its results, keyed as they go into metrics.jsonl (e.g. "test/nll"); StepMetrics::step is ignored.
  virtual boost::asio::awaitable<StepMetrics> evaluate(const TrainingClient& training) = 0;
};

/// One that scores samples from the current weights (such as accuracy on prompts with a grader).
class SamplingEvaluator {
 public:
  virtual ~SamplingEvaluator() = default;
  /// Its results, keyed as they go into metrics.jsonl (e.g. "test/accuracy").
  virtual boost::asio::awaitable<StepMetrics> evaluate(const SamplingClient& sampler) = 0;
};

}  // namespace tinker::train
