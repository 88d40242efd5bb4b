// The state behind tinker::train::TrainingRun (run.cpp: opening, logging, saving; run_recovery.cpp:
// which failures recover, and restoring a training client from the newest checkpoint that loads).
#pragma once

#include <tinker/service_client.hpp>
#include <tinker/train/progress.hpp>
#include <tinker/train/run.hpp>
#include <tinker/train/run_dir.hpp>
#include <tinker/training_client.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tinker::train {

class TrainingRun::State {
 public:
  State(ServiceClient& service_, RunOptions options_)
      : service(&service_), options(std::move(options_)), directory(options.log_path) {}

  /// Makes `training` a client from the newest checkpoint of the directory that loads (falling
  /// back to older ones when a load fails), or a fresh LoRA when it has none; drops the metrics
  /// after the step it continues from. `why` starts the stderr line of a fallback.
  boost::asio::awaitable<void> restore_newest(std::string why);
  /// A fresh LoRA training client from the options (step 0).
  boost::asio::awaitable<void> start_fresh();

  ServiceClient* service;
  RunOptions options;
  RunDirectory directory;
  TrainingClient training;
  std::int64_t start_step = 0;
  std::int64_t next_step = 0;  ///< the step log_step expects next
  bool resumed = false;
  int recoveries = 0;
  /// The checkpoint the client was restored from (finish() of a run resumed from its own final
  /// checkpoint returns it instead of saving again).
  std::optional<CheckpointRecord> restored_from;
  std::optional<ProgressLine> progress;  ///< when RunOptions::show_progress
  std::chrono::steady_clock::time_point opened_at = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_logged_at = opened_at;
};

/// Whether `failure`, from creating a training client from a checkpoint, means that checkpoint
/// does not load (so an older one may): the load failed on the server or the checkpoint is gone.
bool is_checkpoint_load_failure(const tinker::error& failure);

}  // namespace tinker::train
