// TrainingRun's recovery (doc/training-loops.md#resume): which failures a restart from the last
// good checkpoint answers, and restoring a training client from the newest checkpoint that loads.
#include "train/run/run_state.hpp"

#include <tinker/error.hpp>

#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tinker::train {
namespace {

// The records a run can restart from, newest first.
std::vector<CheckpointRecord> restorable_checkpoints_newest_first(const RunDirectory& directory) {
  std::vector<CheckpointRecord> records;
  std::vector<CheckpointRecord> all = directory.read_checkpoints();
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    if (it->state_path) records.push_back(std::move(*it));
  }
  return records;
}

bool mentions_corruption(const tinker::error& failure) {
  return failure.diag().message.find("corrupt") != std::string::npos;
}

// The same code and diagnostics with `prefix` before the message.
tinker::error error_with_context(const tinker::error& failure, const std::string& prefix) {
  diagnostics diag = failure.diag();
  diag.message = prefix + (diag.message.empty() ? failure.code().message() : diag.message);
  return tinker::error(failure.code(), std::move(diag));
}

}  // namespace

bool is_checkpoint_load_failure(const tinker::error& failure) {
  // The load ran and failed on the server (request_failed), or the checkpoint or its run is not
  // there (404) or no longer (410). Transport, authentication and quota failures are not about
  // the checkpoint: an older one would fail the same way.
  return failure.code() == errc::request_failed || failure.code() == errc::not_found || failure.code() == errc::gone;
}

bool TrainingRun::is_recoverable(const tinker::error& failure) {
  if (failure.code() == errc::request_failed) {
    // A failure the service blames on the request (bad data, wrong shapes) would fail again after
    // a restart, unless it says the run is corrupted. One it blames on itself (`server`), or that
    // names no culprit (a seq_id lost in transit, after which the client cannot go on), leaves
    // the run's state unknown: the last checkpoint is the last state known to be good.
    const auto category = failure.diag().category;
    if (category == RequestErrorCategory::user) return mentions_corruption(failure);
    return true;
  }
  // The run (model) is unknown to the service (404: lost, e.g. its session expired) or the result
  // of an operation was dropped (410), so whether it was applied is unknown.
  return failure.code() == errc::not_found || failure.code() == errc::gone;
}

boost::asio::awaitable<void> TrainingRun::State::restore_newest(std::string why) {
  const std::vector<CheckpointRecord> candidates = restorable_checkpoints_newest_first(directory);
  std::optional<tinker::error> last_failure;
  for (const CheckpointRecord& record : candidates) {
    std::optional<tinker::error> failure;
    TrainingClient client;
    try {
      const FromStateOptions from_state;
      const std::string state_path = *record.state_path;
      client = co_await service->async_create_training_client_from_state_with_optimizer(state_path, from_state,
                                                                                        tinker::use_awaitable);
    } catch (const tinker::error& e) {
      if (!is_checkpoint_load_failure(e)) throw;
      failure = e;  // handled below: no co_await inside a catch block (GCC 12)
    }
    if (failure) {
      std::cerr << "tinker::train: " << why << ": checkpoint " << *record.state_path << " (step " << record.step
                << ") does not load: " << failure->what() << "; trying an older one\n";
      last_failure = std::move(failure);
      continue;
    }
    training = client;
    start_step = record.step;
    restored_from = record;
    directory.truncate_metrics(record.step);  // the steps after the checkpoint are run (and logged) again
    co_return;
  }
  if (last_failure) {
    throw error_with_context(*last_failure, "TrainingRun: no checkpoint of " + directory.path().string() +
                                                " loads; the oldest one failed with: ");
  }
  co_await start_fresh();  // no checkpoint yet: step 0 is the last state known to be good
}

boost::asio::awaitable<std::int64_t> TrainingRun::recover(tinker::error failure) {
  State& state = *state_;
  if (!is_recoverable(failure)) throw failure;
  const int limit = state.options.max_recovery_attempts;
  if (state.recoveries >= limit) {
    throw error_with_context(failure, "TrainingRun::recover: gave up after " + std::to_string(state.recoveries) +
                                          " recoveries (RunOptions::max_recovery_attempts " + std::to_string(limit) +
                                          "); the last failure: ");
  }
  ++state.recoveries;
  const std::string run_path = state.directory.path().string();
  if (state.progress) state.progress->finish();  // the lines below start on a line of their own
  std::cerr << "tinker::train: run " << run_path << " failed at step " << state.next_step << ": " << failure.what()
            << "; restarting from its last good checkpoint (recovery " << state.recoveries << " of " << limit << ")\n";
  co_await state.restore_newest("recovering " + run_path);
  state.next_step = state.start_step;
  state.last_logged_at = std::chrono::steady_clock::now();
  std::cerr << "tinker::train: run " << run_path << " continues at step " << state.start_step << " on "
            << state.training.model_id()
            << (state.restored_from ? " from " + state.restored_from->state_path.value_or("") : std::string(" afresh"))
            << "\n";
  co_return state.start_step;
}

boost::asio::awaitable<void> TrainingRun::train_with_recovery(
    std::function<boost::asio::awaitable<void>(std::int64_t first_step)> train_from) {
  std::int64_t next_step = start_step();
  for (;;) {
    std::optional<tinker::error> failure;
    try {
      co_await train_from(next_step);
      co_return;
    } catch (const tinker::error& e) {
      if (!is_recoverable(e)) throw;
      failure = e;  // recovered outside the catch block: no co_await inside one (GCC 12)
    }
    next_step = co_await recover(*failure);
  }
}

}  // namespace tinker::train
