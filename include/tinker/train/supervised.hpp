/// @file
/// Supervised learning (`doc/training-loops.md#supervised`): conversations read from JSONL in the
/// cookbook's shapes, rendered into next-token datums by any renderer, batched in a seeded order
/// that is a pure function of the step, and trained by `train_supervised` on a resumable
/// TrainingRun with `submit_ahead` pipelining, a learning-rate schedule, evaluators (the held-out
/// NLL of `NllEvaluator`) and checkpoints. Off-policy distillation from a teacher's top-k
/// distributions (`topk_distillation_dataset`) runs on the same trainer.
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
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::train {

/// A conversation: its messages in order.
using Conversation = std::vector<renderers::Message>;

/// One JSONL record as a conversation. The shapes read: the cookbook's `{"messages": [...]}` (also
/// a bare array of messages), and prompt/completion pairs `{"prompt": ..., "completion": ...}`
/// where each side is a string (a user message and an assistant reply) or an array of messages
/// (appended in order); an optional "system" string on a prompt/completion record becomes a
/// leading system message. Throws tinker::error (invalid_argument) naming the JSON path.
Conversation conversation_from_record(std::string_view json);

/// Every record of a JSONL file (blank lines skipped), by conversation_from_record. Throws
/// tinker::error (invalid_argument) naming the file and line of an unreadable record, or an empty
/// file.
std::vector<Conversation> read_conversations(const std::filesystem::path& jsonl);

/// What rendering does with an example longer than `max_length` tokens. Either way it is never
/// silent: a warning line on stderr names the example and what was lost, and the trainer counts
/// truncated examples per batch in `num_truncated`.
enum class TruncationPolicy {
  truncate,  ///< keep its first max_length tokens (what the cookbook does)
  drop,      ///< leave the example out of the dataset
};

/// How conversations become datums.
class RenderOptions {
 public:
  /// All assistant messages trained, no length limit.
  RenderOptions() = default;

  renderers::TrainOn train_on = renderers::TrainOn::all_assistant_messages;  ///< which tokens carry weight
  std::optional<std::size_t> max_length;                     ///< longest example in tokens; none = no limit
  TruncationPolicy truncation = TruncationPolicy::truncate;  ///< what to do with a longer one
  bool warn = true;                                          ///< print one stderr line per truncated or dropped example
};

/// What max_length did to one example.
class TruncationReport {
 public:
  /// An empty report.
  TruncationReport() = default;
  /// Example `source_index_` of `tokens_` tokens: `kept_tokens_` kept, `lost_` trained weight lost.
  TruncationReport(std::size_t source_index_, std::size_t tokens_, std::size_t kept_tokens_, double lost_,
                   bool dropped_)
      : source_index(source_index_),
        tokens(tokens_),
        kept_tokens(kept_tokens_),
        lost_trained_weight(lost_),
        dropped(dropped_) {}

  std::size_t source_index = 0;    ///< the example's index in the input (line order of the file)
  std::size_t tokens = 0;          ///< its rendered length
  std::size_t kept_tokens = 0;     ///< tokens kept (0 when dropped)
  double lost_trained_weight = 0;  ///< weight of the trained tokens cut off (or of all, when dropped)
  bool dropped = false;            ///< left out rather than cut
};

/// A dataset of training datums, indexable. Implement it for data made elsewhere; DatumDataset
/// holds rendered conversations and distillation targets.
class SupervisedDataset {
 public:
  virtual ~SupervisedDataset() = default;
  /// How many datums.
  virtual std::size_t size() const = 0;
  /// Datum `index` (< size()).
  virtual const Datum& datum(std::size_t index) const = 0;
  /// Whether datum `index` was cut by max_length (counted in the trainer's `num_truncated`).
  virtual bool truncated(std::size_t index) const {
    (void)index;
    return false;
  }
};

/// Datums held in memory, with what truncation did to them.
class DatumDataset : public SupervisedDataset {
 public:
  /// No datums.
  DatumDataset() = default;
  /// `data`, none truncated.
  explicit DatumDataset(std::vector<Datum> data);
  /// `data` with `reports` (truncated ones name their index in `data` through `positions`:
  /// `positions[i]` is the source index of `data[i]`).
  DatumDataset(std::vector<Datum> data, std::vector<std::size_t> positions, std::vector<TruncationReport> reports);

  std::size_t size() const override;                                 ///< how many datums
  const Datum& datum(std::size_t index) const override;              ///< datum `index`; tinker::error out of range
  bool truncated(std::size_t index) const override;                  ///< cut by max_length
  const std::vector<Datum>& data() const noexcept { return data_; }  ///< every datum, in order
  /// The index in the source (file line order) of datum `index`; differs once examples are dropped.
  std::size_t source_index(std::size_t index) const;
  /// Every truncated or dropped example, in source order.
  const std::vector<TruncationReport>& truncations() const noexcept { return reports_; }

 private:
  std::vector<Datum> data_;
  std::vector<std::size_t> positions_;
  std::vector<bool> truncated_;
  std::vector<TruncationReport> reports_;
};

/// Renders each conversation with `renderer` (build_supervised_example with `options.train_on`)
/// into a next-token datum, applying max_length as `options` says. Throws tinker::error
/// (invalid_argument) naming the example index for a conversation the renderer refuses or one
/// that leaves fewer than two tokens.
DatumDataset render_conversations(const renderers::Renderer& renderer, const std::vector<Conversation>& conversations,
                                  const RenderOptions& options = {});

/// The order examples are trained in: fixed-size batches over a permutation of the dataset drawn
/// anew for every epoch from (seed, epoch), so batch `step` is a pure function of (seed, step) and
/// a resumed run continues exactly. The remainder of an epoch that does not fill a batch is
/// skipped for that epoch (a different remainder each epoch when shuffled), as the cookbook does.
class BatchOrder {
 public:
  /// Batches of `batch_size` over `dataset_size` examples. Throws tinker::error
  /// (invalid_argument) for batch_size < 1 or a dataset smaller than one batch.
  BatchOrder(std::size_t dataset_size, std::size_t batch_size, std::uint64_t seed, bool shuffle = true);

  std::int64_t batches_per_epoch() const noexcept;  ///< dataset_size / batch_size
  std::int64_t epoch_of(std::int64_t step) const;   ///< the epoch step `step` belongs to
  /// The permutation of epoch `epoch` (identity when not shuffling).
  std::vector<std::size_t> epoch_order(std::int64_t epoch) const;
  /// The example indices of batch `step` (>= 0).
  std::vector<std::size_t> batch(std::int64_t step) const;

 private:
  std::size_t dataset_size_;
  std::size_t batch_size_;
  std::uint64_t seed_;
  bool shuffle_;
};

/// Mean negative log-likelihood per trained token of `data` under `output` (the logprobs of a
/// forward or forward_backward with cross_entropy): -sum(w * logprob) / sum(w), the cookbook's
/// compute_mean_nll. Works for (N, K) soft targets too. NaN when no token has weight.
double mean_nll(const std::vector<Datum>& data, const ForwardBackwardOutput& output);

/// The held-out NLL evaluator: scores its datums with `forward` (no gradients) and reports
/// `<name>/nll` (the cookbook's NLLEvaluator). Its first request is submitted before its first
/// suspension, so when the trainer starts it between steps it sees exactly that step's weights.
class NllEvaluator : public TrainingEvaluator {
 public:
  /// Scores `data`, reporting `<name>/nll`. Throws tinker::error (invalid_argument) for no data.
  explicit NllEvaluator(std::vector<Datum> data, std::string name = "test");
  /// The mean NLL of the data under the client's current weights.
  boost::asio::awaitable<StepMetrics> evaluate(const TrainingClient& training) override;
  const std::string& name() const noexcept { return name_; }  ///< the metric prefix

 private:
  std::shared_ptr<const std::vector<Datum>> data_;
  std::string name_;
};

/// Off-policy distillation targets: how the teacher is asked.
class TopkDistillationOptions {
 public:
  /// Top 8, all assistant messages distilled.
  TopkDistillationOptions() = default;

  int top_k = 8;         ///< candidates per position (SampleOptions::topk_prompt_logprobs)
  RenderOptions render;  ///< which tokens are distilled, and max_length
};

/// For every conversation, the teacher's top-k next-token distribution at each position (one
/// sample request with `topk_prompt_logprobs`, all in flight at once), renormalised over the K
/// and turned into an (N, K) cross-entropy datum: `target_tokens[t]` the K candidates,
/// `weights[t]` their probabilities times the trained-token mask. Training on them with
/// cross_entropy minimises the cross-entropy from the teacher's truncated distribution to the
/// student's.
boost::asio::awaitable<DatumDataset> topk_distillation_dataset(SamplingClient teacher,
                                                               std::shared_ptr<const renderers::Renderer> renderer,
                                                               std::vector<Conversation> conversations,
                                                               TopkDistillationOptions options);

/// The entropy of the teacher's renormalised top-k distributions per distilled token of `data`
/// (made by topk_distillation_dataset with `top_k`): the lowest loss a student can reach.
double topk_teacher_entropy(const std::vector<Datum>& data, int top_k);

/// Evaluators the trainer runs every SupervisedOptions::eval_every steps, alongside training.
class SupervisedEvaluators {
 public:
  /// None.
  SupervisedEvaluators() = default;

  std::vector<std::shared_ptr<TrainingEvaluator>> training;  ///< scored with the training client (NllEvaluator)
  std::vector<std::shared_ptr<SamplingEvaluator>> sampling;  ///< scored with a sampler of the current weights
};

/// How train_supervised trains.
class SupervisedOptions {
 public:
  /// The defaults below (RunOptions' base_model and log_path must be set).
  SupervisedOptions() = default;

  RunOptions run;               ///< the run directory, model and checkpoints (run.total_steps is set by the trainer)
  double learning_rate = 1e-4;  ///< the base learning rate
  LrSchedule lr_schedule{LrShape::linear};  ///< the cookbook's default: linear decay to 0
  AdamParams adam;                          ///< betas, eps, ...; learning_rate is set per step
  std::size_t batch_size = 32;              ///< datums per optimizer step
  std::int64_t num_epochs = 1;              ///< passes over the data
  std::optional<std::int64_t> max_steps;    ///< stop after this many steps (default: all epochs)
  std::uint64_t data_seed = 0;              ///< the data order's seed
  bool shuffle = true;                      ///< shuffle each epoch (else file order)
  /// Steps submitted before the oldest one's results are awaited: 1 keeps the next step queued
  /// on the service while the client reads the last one's results; 0 awaits each step at once.
  int submit_ahead = 1;
  std::int64_t eval_every = 10;           ///< run the evaluators before every this many steps (step 0 too); 0 = never
  bool evaluate_at_end = true;            ///< also after the last step, logged as step total_steps
  std::string loss_fn = "cross_entropy";  ///< the loss (cross_entropy also takes (N, K) soft targets)
};

/// What train_supervised did.
class SupervisedSummary {
 public:
  /// Nothing trained yet.
  SupervisedSummary() = default;

  std::int64_t start_step = 0;                       ///< where it started (non-zero when resumed)
  std::int64_t total_steps = 0;                      ///< the run's length
  int recoveries = 0;                                ///< TrainingRun::recover() restarts
  std::optional<double> last_train_nll;              ///< train_mean_nll of the last step it ran
  StepMetrics final_evaluation;                      ///< the evaluate_at_end results (empty when off)
  std::optional<CheckpointRecord> final_checkpoint;  ///< the final checkpoint
  std::int64_t truncated_examples = 0;               ///< examples of the dataset cut by max_length
};

/// Trains `dataset` (which must outlive the call) with supervised learning on a TrainingRun
/// opened at `options.run.log_path` (resumed when it holds a checkpoint): per step a batch from
/// BatchOrder, the schedule's learning rate, forward_backward and optim_step, pipelined
/// `submit_ahead` steps deep but drained before every checkpoint; evaluators started before the
/// steps they report (without stalling the pipeline) and joined when that step is logged; a
/// checkpoint every run.save_every steps and a final one. Metrics use the cookbook's keys
/// (`doc/training-loops.md#supervised`). A recoverable failure restarts from the last checkpoint.
/// Throws tinker::error naming the field for bad options.
boost::asio::awaitable<SupervisedSummary> train_supervised(ServiceClient& service, const SupervisedDataset& dataset,
                                                           SupervisedOptions options,
                                                           SupervisedEvaluators evaluators = {});

}  // namespace tinker::train
