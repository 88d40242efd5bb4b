/// \file
/// Checkpoints, `tinker://` paths, training runs and their list envelopes
/// (`doc/protocol.md#core-types`, `doc/rest.md`).
#pragma once

#include <tinker/types/common.hpp>
#include <tinker/types/optimizer.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tinker {

/// `training` checkpoints live under `weights/`, `sampler` checkpoints under `sampler_weights/`,
/// `external` ones under `external_weights/`.
enum class CheckpointType {
  training,  ///< weights and optimizer state (TrainingClient::async_save_state)
  sampler,   ///< weights a sampler can serve (TrainingClient::async_save_weights_for_sampler)
  external,  ///< Hugging Face format files (TrainingClient::async_save_weights_external, `doc/rest.md`)
};
/// The wire name: "training", "sampler" or "external".
const char* to_string(CheckpointType type) noexcept;
/// The path segment of a checkpoint type: "weights", "sampler_weights" or "external_weights".
const char* path_kind(CheckpointType type) noexcept;

/// A parsed `tinker://<run-id>/<kind>/<name>` path, where kind is `weights`, `sampler_weights` or
/// `external_weights`.
class TinkerPath {
 public:
  /// An empty path.
  TinkerPath() = default;
  /// The checkpoint `name_` of kind `type_` in run `training_run_id_`.
  TinkerPath(std::string training_run_id_, CheckpointType type_, std::string name_)
      : training_run_id(std::move(training_run_id_)), type(type_), name(std::move(name_)) {}

  /// Throws `tinker::error` (invalid_argument) saying what is wrong with `path`.
  static TinkerPath parse(std::string_view path);

  std::string training_run_id;                     ///< equals the model id, e.g. "<session>:train:0"
  CheckpointType type = CheckpointType::training;  ///< from the kind segment
  std::string name;                                ///< the checkpoint's name (no '/')

  /// "<kind>/<name>", e.g. "weights/<name>".
  std::string checkpoint_id() const;
  /// "tinker://<run-id>/<kind>/<name>".
  std::string to_string() const;

  /// Equal when every field is equal.
  friend bool operator==(const TinkerPath&, const TinkerPath&) = default;
};

/// A saved checkpoint, as the REST listings describe it.
class Checkpoint {
 public:
  /// An empty checkpoint.
  Checkpoint() = default;
  /// The checkpoint `checkpoint_id_` of type `checkpoint_type_` at `tinker_path_`, saved at `time_`.
  Checkpoint(std::string checkpoint_id_, CheckpointType checkpoint_type_, Timestamp time_, std::string tinker_path_)
      : checkpoint_id(std::move(checkpoint_id_)),
        checkpoint_type(checkpoint_type_),
        time(time_),
        tinker_path(std::move(tinker_path_)) {}

  std::string checkpoint_id;                                  ///< "<kind>/<name>", e.g. "weights/<name>"
  CheckpointType checkpoint_type = CheckpointType::training;  ///< training, sampler or external
  Timestamp time{};                                           ///< when it was saved
  std::string tinker_path;                                    ///< its full `tinker://` path
  std::optional<std::int64_t> size_bytes;                     ///< size on the server, when known
  bool public_ = false;                                       ///< readable by other users (`public` on the wire)
  std::optional<Timestamp> expires_at;                        ///< empty = never expires
  std::optional<std::string> base_model;                      ///< the model the weights belong to, when known
  /// The string pairs given when it was saved (`doc/training.md#checkpoint-metadata`).
  std::optional<std::map<std::string, std::string>> user_metadata;

  /// Equal when every field is equal.
  friend bool operator==(const Checkpoint&, const Checkpoint&) = default;
};

/// Offset pagination state of a list response; more pages exist while
/// `offset + items < total_count`.
class Cursor {
 public:
  /// A zero cursor.
  Cursor() = default;
  /// A page at `offset_` of at most `limit_` items, of `total_count_` in all.
  Cursor(std::int64_t offset_, std::int64_t limit_, std::int64_t total_count_)
      : offset(offset_), limit(limit_), total_count(total_count_) {}

  std::int64_t offset = 0;       ///< index of the page's first item
  std::int64_t limit = 0;        ///< most items the page may hold
  std::int64_t total_count = 0;  ///< items in the whole listing

  /// Equal when every field is equal.
  friend bool operator==(const Cursor&, const Cursor&) = default;
};

/// A training run: one model and its checkpoints.
class TrainingRun {
 public:
  /// An empty run.
  TrainingRun() = default;
  /// The run `training_run_id_` on `base_model_`, owned by `model_owner_`.
  TrainingRun(std::string training_run_id_, std::string base_model_, std::string model_owner_, bool is_lora_,
              Timestamp last_request_time_)
      : training_run_id(std::move(training_run_id_)),
        base_model(std::move(base_model_)),
        model_owner(std::move(model_owner_)),
        is_lora(is_lora_),
        last_request_time(last_request_time_) {}

  std::string training_run_id;                        ///< equals the model id
  std::string base_model;                             ///< e.g. "Qwen/Qwen3-8B"
  std::string model_owner;                            ///< who created it
  bool is_lora = true;                                ///< a LoRA adapter
  bool corrupted = false;                             ///< the run failed (`tinker run list` shows "Failed")
  std::optional<std::int64_t> lora_rank;              ///< the adapter's rank
  Timestamp last_request_time{};                      ///< the last operation on it
  std::optional<Checkpoint> last_checkpoint;          ///< newest training checkpoint
  std::optional<Checkpoint> last_sampler_checkpoint;  ///< newest sampler checkpoint
  std::optional<std::map<std::string, std::string>> user_metadata;  ///< as given at creation

  /// Equal when every field is equal.
  friend bool operator==(const TrainingRun&, const TrainingRun&) = default;
};

/// GET /api/v1/training_runs.
class TrainingRunsResponse {
 public:
  /// An empty page.
  TrainingRunsResponse() = default;
  /// A page of `training_runs_` at `cursor_`.
  TrainingRunsResponse(std::vector<TrainingRun> training_runs_, Cursor cursor_)
      : training_runs(std::move(training_runs_)), cursor(cursor_) {}

  std::vector<TrainingRun> training_runs;  ///< this page's runs
  Cursor cursor;                           ///< where the page sits in the listing

  /// Equal when every field is equal.
  friend bool operator==(const TrainingRunsResponse&, const TrainingRunsResponse&) = default;
};

/// GET /api/v1/training_runs/{id}/checkpoints (no cursor) and GET /api/v1/checkpoints (cursor).
class CheckpointsListResponse {
 public:
  /// An empty list.
  CheckpointsListResponse() = default;
  /// A list of `checkpoints_`, paged at `cursor_` when given.
  explicit CheckpointsListResponse(std::vector<Checkpoint> checkpoints_, std::optional<Cursor> cursor_ = std::nullopt)
      : checkpoints(std::move(checkpoints_)), cursor(cursor_) {}

  std::vector<Checkpoint> checkpoints;  ///< the checkpoints
  std::optional<Cursor> cursor;         ///< set for the paged listing of the caller's checkpoints

  /// Equal when every field is equal.
  friend bool operator==(const CheckpointsListResponse&, const CheckpointsListResponse&) = default;
};

/// Where to download a checkpoint's archive: the archive endpoint's answer (its 302 or its 200
/// JSON form, `doc/rest.md#checkpoint-downloads`).
class CheckpointArchiveUrlResponse {
 public:
  /// An empty answer.
  CheckpointArchiveUrlResponse() = default;
  /// The signed URL `url_`, valid until `expires_`.
  CheckpointArchiveUrlResponse(std::string url_, Timestamp expires_) : url(std::move(url_)), expires(expires_) {}

  std::string url;      ///< signed URL of the `.tar` archive; a GET without credentials downloads it
  Timestamp expires{};  ///< when the URL stops working (15 minutes from now when the server does not say)

  /// Equal when every field is equal.
  friend bool operator==(const CheckpointArchiveUrlResponse&, const CheckpointArchiveUrlResponse&) = default;
};

/// PUT .../ttl body: a TTL in seconds, or explicit `null` to remove the expiry.
class SetCheckpointTtlRequest {
 public:
  /// Remove the expiry.
  SetCheckpointTtlRequest() = default;
  /// Expire `ttl_seconds_` from now (> 0), or never when empty.
  explicit SetCheckpointTtlRequest(std::optional<std::int64_t> ttl_seconds_) : ttl_seconds(ttl_seconds_) {}

  /// Seconds from now; written as an explicit null when empty (the one request field that is).
  std::optional<std::int64_t> ttl_seconds;

  /// Equal when every field is equal.
  friend bool operator==(const SetCheckpointTtlRequest&, const SetCheckpointTtlRequest&) = default;
};

/// POST /api/v1/weights_info.
class WeightsInfoRequest {
 public:
  /// An empty request.
  WeightsInfoRequest() = default;
  /// The info of the checkpoint at `tinker_path_`.
  explicit WeightsInfoRequest(std::string tinker_path_) : tinker_path(std::move(tinker_path_)) {}

  /// A training checkpoint's `tinker://` path (another user's public one works too).
  std::string tinker_path;

  /// Equal when every field is equal.
  friend bool operator==(const WeightsInfoRequest&, const WeightsInfoRequest&) = default;
};

/// Answer of POST /api/v1/weights_info: what a checkpoint was trained as.
class WeightsInfoResponse {
 public:
  /// An empty answer.
  WeightsInfoResponse() = default;
  /// Weights on `base_model_`, a LoRA adapter or not.
  WeightsInfoResponse(std::string base_model_, bool is_lora_) : base_model(std::move(base_model_)), is_lora(is_lora_) {}

  std::string base_model;                 ///< the model the weights belong to
  bool is_lora = true;                    ///< a LoRA adapter
  std::optional<std::int64_t> lora_rank;  ///< the adapter's rank
  std::optional<bool> train_unembed;      ///< absent means true
  std::optional<bool> train_mlp;          ///< absent means true
  std::optional<bool> train_attn;         ///< absent means true
  /// The optimizer whose state a training checkpoint holds; absent: not said (servers of the 0.25
  /// protocol), read as AdamW (`doc/training.md#optimizers`).
  std::optional<OptimizerConfig> optimizer_config;

  /// Equal when every field is equal.
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
