// Checkpoints, tinker:// paths, training runs and their list envelopes (spec 8.12, 9.12, 9.13).
#pragma once

#include <tinker/types/common.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tinker {

/// `training` checkpoints live under `weights/`, `sampler` checkpoints under `sampler_weights/`.
enum class CheckpointType { training, sampler };
const char* to_string(CheckpointType type) noexcept;
/// The path segment of a checkpoint type: "weights" or "sampler_weights".
const char* path_kind(CheckpointType type) noexcept;

/// A parsed `tinker://<run-id>/<kind>/<name>` path.
class TinkerPath {
 public:
  TinkerPath() = default;
  TinkerPath(std::string training_run_id_, CheckpointType type_, std::string name_)
      : training_run_id(std::move(training_run_id_)), type(type_), name(std::move(name_)) {}

  /// Throws `tinker::error` (invalid_argument) saying what is wrong with `path`.
  static TinkerPath parse(std::string_view path);

  std::string training_run_id;  ///< equals the model id, e.g. "<session>:train:0"
  CheckpointType type = CheckpointType::training;
  std::string name;

  /// "weights/<name>" or "sampler_weights/<name>".
  std::string checkpoint_id() const;
  /// "tinker://<run-id>/<kind>/<name>".
  std::string to_string() const;

  friend bool operator==(const TinkerPath&, const TinkerPath&) = default;
};

class Checkpoint {
 public:
  Checkpoint() = default;
  Checkpoint(std::string checkpoint_id_, CheckpointType checkpoint_type_, Timestamp time_, std::string tinker_path_)
      : checkpoint_id(std::move(checkpoint_id_)),
        checkpoint_type(checkpoint_type_),
        time(time_),
        tinker_path(std::move(tinker_path_)) {}

  std::string checkpoint_id;
  CheckpointType checkpoint_type = CheckpointType::training;
  Timestamp time{};
  std::string tinker_path;
  std::optional<std::int64_t> size_bytes;
  bool public_ = false;                 ///< `public` on the wire
  std::optional<Timestamp> expires_at;  ///< empty = never expires

  friend bool operator==(const Checkpoint&, const Checkpoint&) = default;
};

/// Offset pagination state of a list response; more pages exist while
/// `offset + items < total_count`.
class Cursor {
 public:
  Cursor() = default;
  Cursor(std::int64_t offset_, std::int64_t limit_, std::int64_t total_count_)
      : offset(offset_), limit(limit_), total_count(total_count_) {}

  std::int64_t offset = 0;
  std::int64_t limit = 0;
  std::int64_t total_count = 0;

  friend bool operator==(const Cursor&, const Cursor&) = default;
};

class TrainingRun {
 public:
  TrainingRun() = default;
  TrainingRun(std::string training_run_id_, std::string base_model_, std::string model_owner_, bool is_lora_,
              Timestamp last_request_time_)
      : training_run_id(std::move(training_run_id_)),
        base_model(std::move(base_model_)),
        model_owner(std::move(model_owner_)),
        is_lora(is_lora_),
        last_request_time(last_request_time_) {}

  std::string training_run_id;
  std::string base_model;
  std::string model_owner;
  bool is_lora = true;
  bool corrupted = false;
  std::optional<std::int64_t> lora_rank;
  Timestamp last_request_time{};
  std::optional<Checkpoint> last_checkpoint;
  std::optional<Checkpoint> last_sampler_checkpoint;
  std::optional<std::map<std::string, std::string>> user_metadata;

  friend bool operator==(const TrainingRun&, const TrainingRun&) = default;
};

/// GET /api/v1/training_runs.
class TrainingRunsResponse {
 public:
  TrainingRunsResponse() = default;
  TrainingRunsResponse(std::vector<TrainingRun> training_runs_, Cursor cursor_)
      : training_runs(std::move(training_runs_)), cursor(cursor_) {}

  std::vector<TrainingRun> training_runs;
  Cursor cursor;

  friend bool operator==(const TrainingRunsResponse&, const TrainingRunsResponse&) = default;
};

/// GET /api/v1/training_runs/{id}/checkpoints (no cursor) and GET /api/v1/checkpoints (cursor).
class CheckpointsListResponse {
 public:
  CheckpointsListResponse() = default;
  explicit CheckpointsListResponse(std::vector<Checkpoint> checkpoints_, std::optional<Cursor> cursor_ = std::nullopt)
      : checkpoints(std::move(checkpoints_)), cursor(cursor_) {}

  std::vector<Checkpoint> checkpoints;
  std::optional<Cursor> cursor;

  friend bool operator==(const CheckpointsListResponse&, const CheckpointsListResponse&) = default;
};

/// The 200 JSON form of the archive endpoint (spec 8.12.5).
class CheckpointArchiveUrlResponse {
 public:
  CheckpointArchiveUrlResponse() = default;
  CheckpointArchiveUrlResponse(std::string url_, Timestamp expires_) : url(std::move(url_)), expires(expires_) {}

  std::string url;
  Timestamp expires{};

  friend bool operator==(const CheckpointArchiveUrlResponse&, const CheckpointArchiveUrlResponse&) = default;
};

/// PUT .../ttl body: a TTL in seconds, or explicit `null` to remove the expiry.
class SetCheckpointTtlRequest {
 public:
  SetCheckpointTtlRequest() = default;
  explicit SetCheckpointTtlRequest(std::optional<std::int64_t> ttl_seconds_) : ttl_seconds(ttl_seconds_) {}

  std::optional<std::int64_t> ttl_seconds;  ///< written as null when empty (spec 1.4 exception)

  friend bool operator==(const SetCheckpointTtlRequest&, const SetCheckpointTtlRequest&) = default;
};

/// POST /api/v1/weights_info.
class WeightsInfoRequest {
 public:
  WeightsInfoRequest() = default;
  explicit WeightsInfoRequest(std::string tinker_path_) : tinker_path(std::move(tinker_path_)) {}

  std::string tinker_path;

  friend bool operator==(const WeightsInfoRequest&, const WeightsInfoRequest&) = default;
};

class WeightsInfoResponse {
 public:
  WeightsInfoResponse() = default;
  WeightsInfoResponse(std::string base_model_, bool is_lora_) : base_model(std::move(base_model_)), is_lora(is_lora_) {}

  std::string base_model;
  bool is_lora = true;
  std::optional<std::int64_t> lora_rank;
  std::optional<bool> train_unembed;  ///< absent means true
  std::optional<bool> train_mlp;      ///< absent means true
  std::optional<bool> train_attn;     ///< absent means true

  friend bool operator==(const WeightsInfoResponse&, const WeightsInfoResponse&) = default;
};

TINKER_DECLARE_PRINTABLE(TinkerPath);
TINKER_DECLARE_PRINTABLE(Checkpoint);
TINKER_DECLARE_PRINTABLE(Cursor);
TINKER_DECLARE_PRINTABLE(TrainingRun);
TINKER_DECLARE_PRINTABLE(TrainingRunsResponse);
TINKER_DECLARE_PRINTABLE(CheckpointsListResponse);
TINKER_DECLARE_PRINTABLE(CheckpointArchiveUrlResponse);
TINKER_DECLARE_PRINTABLE(SetCheckpointTtlRequest);
TINKER_DECLARE_PRINTABLE(WeightsInfoRequest);
TINKER_DECLARE_PRINTABLE(WeightsInfoResponse);

}  // namespace tinker
