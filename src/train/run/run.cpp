// TrainingRun: opening a run directory (fresh or resumed), per-step metrics, checkpoints and the
// final save. Recovery is in run_recovery.cpp.
#include "train/run/run_state.hpp"

#include <tinker/error.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <utility>

#include <unistd.h>

namespace tinker::train {
namespace {

namespace fs = std::filesystem;

// The files a run writes; `ExistingRun::overwrite` removes them, and any of them marks a
// directory as holding a run.
constexpr const char* run_file_names[] = {"metrics.jsonl", "checkpoints.jsonl", "config.json"};

bool directory_holds_run(const fs::path& directory) {
  for (const char* name : run_file_names) {
    std::error_code ec;
    if (fs::exists(directory / name, ec)) return true;
  }
  return false;
}

void remove_run_files(const fs::path& directory) {
  for (const char* name : run_file_names) {
    std::error_code ec;
    fs::remove(directory / name, ec);
    if (ec) {
      throw error(errc::io_error,
                  "TrainingRun::open: cannot remove " + (directory / name).string() + ": " + ec.message());
    }
  }
}

void check_run_options(const RunOptions& options) {
  auto refuse = [](const std::string& message) { throw error(errc::invalid_argument, "RunOptions::" + message); };
  if (options.log_path.empty()) refuse("log_path must be set");
  if (options.base_model.empty()) refuse("base_model must be set");
  if (options.lora_rank < 1) refuse("lora_rank must be >= 1, got " + std::to_string(options.lora_rank));
  if (options.total_steps < 0) refuse("total_steps must be >= 0, got " + std::to_string(options.total_steps));
  if (options.save_every < 0) refuse("save_every must be >= 0, got " + std::to_string(options.save_every));
  if (options.max_recovery_attempts < 0) {
    refuse("max_recovery_attempts must be >= 0, got " + std::to_string(options.max_recovery_attempts));
  }
}

// The checkpoint name the service gets: the step zero-padded so names sort by step, as the
// cookbook's "%06d".
std::string checkpoint_name(std::int64_t steps_done, bool final) {
  if (final) return "final";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%06lld", static_cast<long long>(steps_done));
  return buffer;
}

double run_seconds_between(std::chrono::steady_clock::time_point from, std::chrono::steady_clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

boost::asio::awaitable<void> TrainingRun::State::start_fresh() {
  if (options.load_checkpoint_path) {
    // The cookbook's load_checkpoint_path: another run's weights, with a fresh optimizer.
    const FromStateOptions from_state;
    const std::string path = *options.load_checkpoint_path;
    training = co_await service->async_create_training_client_from_state(path, from_state, tinker::use_awaitable);
  } else {
    LoraTrainingOptions lora(options.base_model, options.lora_rank);
    if (options.seed) lora.seed = static_cast<std::int64_t>(*options.seed);
    training = co_await service->async_create_lora_training_client(lora, tinker::use_awaitable);
  }
  start_step = 0;
  restored_from.reset();
  directory.truncate_metrics(0);  // a run killed before its first checkpoint logged steps it redoes
}

boost::asio::awaitable<TrainingRun> TrainingRun::open(ServiceClient& service, RunOptions options) {
  check_run_options(options);
  auto state = std::make_unique<State>(service, std::move(options));
  const fs::path& path = state->directory.path();
  if (directory_holds_run(path)) {
    if (state->options.if_exists == ExistingRun::fail) {
      throw error(errc::invalid_argument,
                  "TrainingRun::open: " + path.string() + " already holds a run (RunOptions::if_exists is fail)");
    }
    if (state->options.if_exists == ExistingRun::overwrite) remove_run_files(path);
  }
  const bool has_checkpoint = get_last_checkpoint(path).has_value();
  if (has_checkpoint) {
    co_await state->restore_newest("resuming " + path.string());
    state->resumed = state->restored_from.has_value();
  } else {
    co_await state->start_fresh();
  }
  // A resumed run keeps the configuration it was started with (config.json says what produced
  // its checkpoints); a fresh one records its own.
  if (!state->resumed) state->directory.write_config(state->options.config_json);
  state->next_step = state->start_step;
  if (state->options.show_progress) {
    state->progress.emplace(state->options.total_steps, std::cerr, ::isatty(STDERR_FILENO) != 0);
  }
  state->opened_at = std::chrono::steady_clock::now();
  state->last_logged_at = state->opened_at;
  co_return TrainingRun(std::move(state));
}

TrainingRun::TrainingRun(std::unique_ptr<State> state) : state_(std::move(state)) {}
TrainingRun::TrainingRun(TrainingRun&&) noexcept = default;
TrainingRun& TrainingRun::operator=(TrainingRun&&) noexcept = default;
TrainingRun::~TrainingRun() = default;

const TrainingClient& TrainingRun::training() const {
  return state_->training;
}
const RunDirectory& TrainingRun::directory() const {
  return state_->directory;
}
const RunOptions& TrainingRun::options() const {
  return state_->options;
}
std::int64_t TrainingRun::start_step() const {
  return state_->start_step;
}
bool TrainingRun::resumed() const {
  return state_->resumed;
}
int TrainingRun::recoveries() const {
  return state_->recoveries;
}

bool TrainingRun::checkpoint_due(std::int64_t steps_done) const {
  const RunOptions& options = state_->options;
  if (options.save_every <= 0 || steps_done <= 0) return false;
  // The last step's state is saved by finish().
  if (options.total_steps > 0 && steps_done >= options.total_steps) return false;
  return steps_done % options.save_every == 0;
}

void TrainingRun::log_step(StepMetrics metrics) {
  State& state = *state_;
  if (metrics.step != state.next_step) {
    throw error(errc::invalid_argument, "TrainingRun::log_step: step " + std::to_string(metrics.step) +
                                            " logged out of order (expected step " + std::to_string(state.next_step) +
                                            ")");
  }
  const auto now = std::chrono::steady_clock::now();
  const double iteration_seconds = run_seconds_between(state.last_logged_at, now);
  // The cookbook's `time/total` is the whole iteration; `time/step` is the training call inside
  // it, which a trainer that times it sets itself.
  metrics.set("time/total", iteration_seconds);
  if (!metrics.get("time/step")) metrics.set("time/step", iteration_seconds);
  state.directory.append_metrics(metrics);
  state.last_logged_at = now;
  ++state.next_step;
  if (state.progress) state.progress->update(metrics);
}

boost::asio::awaitable<CheckpointRecord> TrainingRun::save_checkpoint(std::int64_t steps_done, bool with_sampler,
                                                                      bool final) {
  State& state = *state_;
  if (steps_done > state.next_step || steps_done < 0) {
    throw error(errc::invalid_argument, "TrainingRun::save_checkpoint: steps_done " + std::to_string(steps_done) +
                                            " is past the steps logged (" + std::to_string(state.next_step) +
                                            "): log every step before saving after it");
  }
  const std::string name = checkpoint_name(steps_done, final);
  std::optional<std::map<std::string, std::string>> metadata;
  if (!state.options.renderer_name.empty()) {
    metadata = std::map<std::string, std::string>{{"renderer_name", state.options.renderer_name}};
  }
  SaveStateOptions state_options;
  state_options.user_metadata = metadata;
  const TrainingClient training = state.training;
  // Both are submitted before either is awaited: they capture the same weights, one after the other.
  auto state_save = co_await training.async_save_state(name, state_options, tinker::use_awaitable);
  std::optional<Future<SaveWeightsForSamplerResponse>> sampler_save;
  if (with_sampler || final) {
    const SaveWeightsForSamplerOptions sampler_options(std::nullopt, metadata);
    sampler_save = co_await training.async_save_weights_for_sampler(name, sampler_options, tinker::use_awaitable);
  }
  CheckpointRecord record;
  record.name = name;
  record.step = steps_done;
  record.renderer_name = state.options.renderer_name;
  record.final = final;
  const SaveWeightsResponse state_saved = co_await state_save.async_get(tinker::use_awaitable);
  record.state_path = state_saved.path;
  if (sampler_save) {
    const SaveWeightsForSamplerResponse sampler_saved = co_await sampler_save->async_get(tinker::use_awaitable);
    record.sampler_path = sampler_saved.path;
  }
  // Only now, with the service's confirmation: a record never names a checkpoint that may not exist.
  state.directory.append_checkpoint(record);
  co_return record;
}

boost::asio::awaitable<CheckpointRecord> TrainingRun::finish() {
  State& state = *state_;
  const std::int64_t total = state.options.total_steps;
  // Killed after its final save: the run is complete, its final checkpoint stands.
  if (state.restored_from && state.restored_from->final && state.restored_from->step == total &&
      state.next_step == total && state.restored_from->sampler_path) {
    co_return *state.restored_from;
  }
  CheckpointRecord record = co_await save_checkpoint(total, true, true);
  if (state.progress) {
    state.progress->finish();
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.1f",
                  run_seconds_between(state.opened_at, std::chrono::steady_clock::now()));
    std::cerr << "run " << state.directory.path().string() << ": " << total << " steps in " << seconds << " s"
              << (state.resumed ? " (resumed at step " + std::to_string(state.start_step) + ")" : std::string())
              << ", final checkpoint " << record.sampler_path.value_or(record.state_path.value_or("")) << "\n";
  }
  co_return record;
}

}  // namespace tinker::train
