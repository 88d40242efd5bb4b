/// @file
/// A training run's directory (`doc/training-loops.md#run-directory`): `metrics.jsonl` (one JSON
/// object per step), `checkpoints.jsonl` (one JSON object per saved checkpoint) and `config.json`
/// (a copy of the run's configuration), in the cookbook's file names and key names, so its tools
/// read a tinker-cpp run and the other way round.
///
/// Every write is crash-safe: a line is appended with one write and flushed to disk before the call
/// returns, and a reader ignores a torn last line (a process killed mid-write leaves at most one).
/// Rewrites (config, truncation on resume) go through a temporary file and a rename.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tinker::train {

/// One line of `metrics.jsonl`: the step and its named values, in the order they were set.
/// Key names follow the cookbook (`loss`, `lr`, `time/step`, `env/reward/mean`, `test/nll`...).
class StepMetrics {
 public:
  /// Step 0, no values.
  StepMetrics() = default;
  /// Step `step_`, no values.
  explicit StepMetrics(std::int64_t step_) : step(step_) {}

  std::int64_t step = 0;                               ///< the `step` key: the optimizer step it reports, from 0
  std::vector<std::pair<std::string, double>> values;  ///< every other key, in insertion order

  /// Sets `key` (replacing an earlier value of it; a new key goes last). `key` must not be "step".
  void set(std::string_view key, double value);
  /// The value of `key`, if set.
  std::optional<double> get(std::string_view key) const;
  /// Copies every value of `other` into this one (set() for each), prefixing its keys with `prefix`.
  void merge(const StepMetrics& other, std::string_view prefix = {});
  /// Equal when the step and the values (in order) are equal.
  friend bool operator==(const StepMetrics&, const StepMetrics&) = default;
};

/// One line of `checkpoints.jsonl`: a checkpoint the run saved after `step` optimizer steps.
class CheckpointRecord {
 public:
  /// An empty record.
  CheckpointRecord() = default;

  std::string name;                         ///< the checkpoint name given to the service ("000020", "final")
  std::int64_t step = 0;                    ///< optimizer steps completed when saved: the step a resume starts at
  std::optional<std::string> state_path;    ///< `tinker://.../weights/...` (save_state: weights and optimizer)
  std::optional<std::string> sampler_path;  ///< `tinker://.../sampler_weights/...`
  std::string renderer_name;                ///< the renderer the run used (also in the checkpoint's user metadata)
  bool final = false;                       ///< written by the run's last save
  /// Equal when every field is equal.
  friend bool operator==(const CheckpointRecord&, const CheckpointRecord&) = default;
};

/// A run's directory. Cheap to copy; every call opens, writes and closes its file (a run writes a
/// few lines per step, and nothing stays open for a SIGKILL to tear).
class RunDirectory {
 public:
  /// The directory `path`, created with its parents when missing. Throws tinker::error
  /// (invalid_argument) naming the path when it exists and is not a directory or cannot be made.
  explicit RunDirectory(std::filesystem::path path);

  /// The directory.
  const std::filesystem::path& path() const noexcept { return path_; }

  /// Writes `config.json` (atomically replacing an earlier one). `json_text` must be a JSON
  /// object; otherwise tinker::error (invalid_argument).
  void write_config(std::string_view json_text) const;
  /// The text of `config.json`, if the run has one.
  std::optional<std::string> read_config() const;

  /// Appends one line to `metrics.jsonl` and flushes it to disk.
  void append_metrics(const StepMetrics& metrics) const;
  /// Every complete line of `metrics.jsonl`, in file order (a torn last line is skipped; any other
  /// unreadable line is a tinker::error naming the file and line number).
  std::vector<StepMetrics> read_metrics() const;
  /// Keeps only the lines whose step is below `first_dropped_step` (resume from a checkpoint
  /// taken after that many steps drops what came after it), atomically.
  void truncate_metrics(std::int64_t first_dropped_step) const;

  /// Appends one line to `checkpoints.jsonl` and flushes it to disk.
  void append_checkpoint(const CheckpointRecord& record) const;
  /// Every complete line of `checkpoints.jsonl`, in file order (a torn last line skipped).
  std::vector<CheckpointRecord> read_checkpoints() const;

 private:
  std::filesystem::path path_;
};

/// The newest record of `run_dir`'s `checkpoints.jsonl` that has `required_key` (`"state_path"`
/// or `"sampler_path"`), as the cookbook's `checkpoint_utils.get_last_checkpoint`; none when the
/// directory or the file does not exist or no record has it.
std::optional<CheckpointRecord> get_last_checkpoint(const std::filesystem::path& run_dir,
                                                    std::string_view required_key = "state_path");

}  // namespace tinker::train
