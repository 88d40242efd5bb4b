// checkpoint (doc/bench.md#checkpoint): `repeats` rounds of save_state, save_weights_for_sampler and load_state of
// the saved state, each awaited to its result, and the download of the state's archive.
#include "programs/bench/scenarios.hpp"
#include "programs/bench/tokens.hpp"
#include "programs/bench/training_data.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <unistd.h>

#include <filesystem>
#include <system_error>

namespace tinker::bench {
namespace {

namespace asio = boost::asio;
constexpr std::int64_t checkpoint_ttl_seconds = 3600;  // a run against the real service leaves nothing for long

class CheckpointRecord : public Outcomes {
 public:
  std::vector<double> save_state_ms, save_sampler_ms, load_state_ms, download_ms;
  std::uint64_t archive_bytes = 0;  ///< every download's
  double download_seconds = 0;
};

// save_state; the checkpoint's path, empty on failure.
asio::awaitable<std::string> save_state(TrainingClient* training, std::string name, CheckpointRecord* record) {
  diagnostics diag;
  const SaveStateOptions options(checkpoint_ttl_seconds, true);
  const Clock::time_point called = Clock::now();
  auto [ec, future] = co_await training->async_save_state(std::move(name), options, diag, as_tuple_awaitable);
  if (ec) {
    record->fail(ec, diag);
    co_return std::string();
  }
  auto [wait_ec, saved] = co_await future.async_get(diag, as_tuple_awaitable);
  if (wait_ec) {
    record->fail(wait_ec, diag);
    co_return std::string();
  }
  record->save_state_ms.push_back(ms_between(called, Clock::now()));
  co_return saved.path;
}

asio::awaitable<void> save_sampler(TrainingClient* training, std::string name, CheckpointRecord* record) {
  diagnostics diag;
  const std::optional<std::int64_t> ttl = checkpoint_ttl_seconds;
  const Clock::time_point called = Clock::now();
  auto [ec, future] = co_await training->async_save_weights_for_sampler(std::move(name), ttl, diag, as_tuple_awaitable);
  if (ec) co_return record->fail(ec, diag);
  auto [wait_ec, saved] = co_await future.async_get(diag, as_tuple_awaitable);
  if (wait_ec) co_return record->fail(wait_ec, diag);
  record->save_sampler_ms.push_back(ms_between(called, Clock::now()));
}

asio::awaitable<void> load_state(TrainingClient* training, std::string path, CheckpointRecord* record) {
  diagnostics diag;
  const Clock::time_point called = Clock::now();
  const std::optional<std::string> own_checkpoint;  // no access token needed
  auto [ec, future] =
      co_await training->async_load_state(std::move(path), false, own_checkpoint, diag, as_tuple_awaitable);
  if (ec) co_return record->fail(ec, diag);
  auto [wait_ec, loaded] = co_await future.async_get(diag, as_tuple_awaitable);
  if (wait_ec) co_return record->fail(wait_ec, diag);
  record->load_state_ms.push_back(ms_between(called, Clock::now()));
}

// The archive only (no extraction): what is timed is the transfer.
asio::awaitable<void> download(RestClient rest, std::string path, std::filesystem::path directory,
                               CheckpointRecord* record) {
  diagnostics diag;
  DownloadOptions options(directory);
  options.force = true;
  options.keep_archive_only = true;
  const Clock::time_point called = Clock::now();
  auto [ec, result] =
      co_await rest.async_download_checkpoint(std::move(path), std::move(options), diag, as_tuple_awaitable);
  if (ec) co_return record->fail(ec, diag);
  const Clock::time_point done = Clock::now();
  record->download_ms.push_back(ms_between(called, done));
  record->download_seconds += seconds_between(called, done);
  record->archive_bytes += result.archive_bytes;
}

asio::awaitable<void> one_round(Bench* bench, TrainingClient* training, CheckpointSettings settings, std::int64_t round,
                                std::filesystem::path directory, CheckpointRecord* record) {
  const std::string name = "tinker-bench-" + std::to_string(getpid()) + "-" + std::to_string(round);
  const std::string path = co_await save_state(training, name, record);
  if (record->failed > 0) co_return;
  co_await save_sampler(training, name + "-sampler", record);
  if (record->failed > 0) co_return;
  co_await load_state(training, path, record);
  if (record->failed > 0) co_return;
  if (settings.download) co_await download(bench->service.create_rest_client(), path, directory, record);
  if (record->failed > 0) co_return;
  ++record->completed;
  bench->progress.advance();
}

void write_checkpoint(const CheckpointRecord& record, Report& report) {
  report.set("rounds_completed", record.completed);
  report.set("failed", record.failed);
  report.set_distribution("save_state_ms", Percentiles(record.save_state_ms));
  report.set_distribution("save_weights_for_sampler_ms", Percentiles(record.save_sampler_ms));
  report.set_distribution("load_state_ms", Percentiles(record.load_state_ms));
  report.set_distribution("download_ms", Percentiles(record.download_ms));
  const std::size_t downloads = record.download_ms.size();
  report.set("archive_bytes", downloads > 0 ? record.archive_bytes / downloads : 0);
  report.set("download_mb_per_s", record.download_seconds > 0
                                      ? static_cast<double>(record.archive_bytes) / record.download_seconds / 1e6
                                      : 0.0);
  report.set_text("first_error", record.first_error);
}

}  // namespace

asio::awaitable<void> run_checkpoint(Bench* bench, CheckpointSettings settings, Report* report, Meter* meter) {
  boost::json::object params;
  params["repeats"] = settings.repeats;
  params["download"] = settings.download;
  params["lora_rank"] = bench->target.lora_rank;
  report->set("params", std::move(params));
  TrainingClient training = co_await create_training_client(bench);
  const std::filesystem::path directory =
      std::filesystem::temp_directory_path() / ("tinker-bench-" + std::to_string(getpid()));
  std::filesystem::create_directories(directory);

  CheckpointRecord record;
  bench->progress.begin("checkpoint", settings.repeats);
  meter->start(*bench);
  for (std::int64_t round = 0; round < settings.repeats && record.failed == 0 && !bench->interrupted(); ++round) {
    co_await one_round(bench, &training, settings, round, directory, &record);
  }
  meter->stop(*bench);
  bench->progress.end();
  std::error_code ignored;
  std::filesystem::remove_all(directory, ignored);
  write_checkpoint(record, *report);
}

}  // namespace tinker::bench
