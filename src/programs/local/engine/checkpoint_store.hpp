// Checkpoints on disk. Layout (one directory per checkpoint, ids escaped as %XX):
//   <data_dir>/checkpoints/<escaped run id>/<weights|sampler_weights>/<name>/state.bin
//   <data_dir>/checkpoints/<escaped run id>/<weights|sampler_weights>/<name>/meta.json
//   <data_dir>/checkpoints/<escaped run id>/external_weights/<name>/{state.bin,meta.json,
//                                             adapter_config.json,adapter_model.safetensors}
// Each file is written to a temporary name and renamed into place, meta.json last: a directory
// without meta.json is an interrupted write and is ignored by the scan. meta.json holds everything
// the engine needs to list, load and archive the checkpoint after a restart.
//
// The functions only touch the filesystem, so they may run on worker threads.
#pragma once

#include <tinker/types.hpp>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::local::engine_detail {

class CheckpointMeta {
 public:
  CheckpointMeta() = default;

  std::string run_id;
  CheckpointType type = CheckpointType::training;
  std::string name;
  std::string owner;  ///< user id of the run's owner
  std::string base_model;
  LoraConfig lora;
  Timestamp created{};
  std::optional<Timestamp> expires_at;
  bool is_public = false;
  std::int64_t size_bytes = 0;
  bool has_optimizer = false;
  /// The run's optimizer ("adamw" or "dimuon"), whose state a training checkpoint holds.
  std::string optimizer_type = "adamw";
  /// As given at the save (doc/local.md#checkpoint-search); a save with overwrite replaces it whole.
  std::optional<std::map<std::string, std::string>> user_metadata;
  /// Set for a copy made by copy_weights: the source's `tinker://` path. Its run takes no training.
  std::optional<std::string> copied_from;

  TinkerPath path() const { return TinkerPath(run_id, type, name); }
  std::string tinker_path() const { return path().to_string(); }
  Checkpoint to_checkpoint() const;
};

/// [A-Za-z0-9._-]{1,128}, and not "." or ".." (checkpoint names become directory names).
bool valid_checkpoint_name(std::string_view name);

class CheckpointStore {
 public:
  CheckpointStore() = default;
  explicit CheckpointStore(std::filesystem::path root) : root_(std::move(root)) {}

  std::filesystem::path directory(const CheckpointMeta& meta) const;
  /// Writes state.bin then meta.json (each atomically). Throws std::runtime_error on I/O failure.
  void write(const CheckpointMeta& meta, std::string_view state) const;
  /// Writes one more file of the checkpoint (the PEFT files of an external one) atomically; call
  /// it before write(), which writes meta.json last. Throws std::runtime_error on I/O failure.
  void write_file(const CheckpointMeta& meta, const std::string& file, std::string_view data) const;
  /// A file written by write_file; nullopt when it cannot be read.
  std::optional<std::string> read_file_of(const CheckpointMeta& meta, const std::string& file) const;
  /// Writes the checkpoint `copy` whose files are those of `source` (copy_weights): each file is
  /// hard-linked, so the bytes are shared (copied when the filesystem cannot link), then
  /// meta.json. Throws std::runtime_error on I/O failure.
  void write_copy(const CheckpointMeta& source, const CheckpointMeta& copy) const;
  /// Rewrites meta.json only (publish, TTL).
  void write_meta(const CheckpointMeta& meta) const;
  /// Throws UserError if the state file is gone.
  std::string read_state(const CheckpointMeta& meta) const;
  void remove(const CheckpointMeta& meta) const;
  /// Every complete checkpoint under the root; unreadable entries are skipped.
  std::vector<CheckpointMeta> scan() const;

  static std::string meta_to_json(const CheckpointMeta& meta);
  /// Throws std::runtime_error naming the problem.
  static CheckpointMeta meta_from_json(std::string_view text);

 private:
  std::filesystem::path root_;
};

}  // namespace tinker::local::engine_detail
