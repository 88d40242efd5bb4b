// What a tinker-bench invocation asks for (doc/bench.md#flags): where to run, how to report, and the sizes of each
// scenario. The defaults are small, so a run against the real service costs little.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tinker::bench {

/// Where the requests go (doc/bench.md#targets).
class TargetSettings {
 public:
  TargetSettings() = default;

  bool local = false;       ///< --local: an embedded tinker-local in a forked child process
  bool null_model = false;  ///< --null-model: that server without model computations
  /// --local-per-request-polling: that server does not announce sample_use_retrieve_futures, so each sample polls
  /// its own result (doc/bench.md#sample).
  bool per_request_polling = false;
  /// --local-long-poll-ms: how long that server holds a pending retrieve_future (0: its default, 5 s).
  std::int64_t local_long_poll_ms = 0;
  std::string base_url;         ///< --base-url; empty: TINKER_BASE_URL or the SDK's default
  std::string base_model;       ///< --base-model; empty: tinker-local/tiny-lm for a local target
  std::int64_t lora_rank = 32;  ///< --lora-rank, as the cookbook's default
  bool yes = false;             ///< --yes: no cost confirmation
};

enum class OutputFormat { table, json, csv };

class SampleSettings {
 public:
  SampleSettings() = default;

  std::int64_t requests = 200;
  std::int64_t in_flight = 16;
  std::int64_t prompt_tokens = 32;
  std::int64_t num_samples = 1;
  std::int64_t max_tokens = 16;
  bool prompt_logprobs = false;
  bool compare_raw = false;  ///< --compare-raw: alternate with the raw Beast loop (doc/bench.md#compare-raw)
  std::int64_t pairs = 5;    ///< raw/SDK pairs
  double seconds = 1.0;      ///< per point of a pair, after a 0.3 s warm-up
};

class LogprobsSettings {
 public:
  LogprobsSettings() = default;

  std::int64_t requests = 200;
  std::int64_t in_flight = 16;
  std::int64_t prompt_tokens = 128;
};

class TrainSettings {
 public:
  TrainSettings() = default;

  std::int64_t steps = 10;
  std::int64_t batch = 8;     ///< examples per step
  std::int64_t tokens = 128;  ///< tokens per example
  std::int64_t depth = 2;     ///< steps submitted before the oldest is awaited
  std::string loss = "cross_entropy";
};

class RlSettings {
 public:
  RlSettings() = default;

  std::int64_t iterations = 3;
  std::int64_t prompts = 8;     ///< groups per iteration
  std::int64_t group_size = 4;  ///< num_samples per prompt
  std::int64_t prompt_tokens = 32;
  std::int64_t max_tokens = 32;
};

class CheckpointSettings {
 public:
  CheckpointSettings() = default;

  std::int64_t repeats = 2;
  bool download = true;  ///< --no-download: skip the archive download
};

enum class Scenario { sample, train, logprobs, rl, checkpoint };

/// The scenario's name on the command line and in the results.
const char* scenario_name(Scenario scenario);

class Invocation {
 public:
  Invocation() = default;

  TargetSettings target;
  OutputFormat format = OutputFormat::table;
  std::vector<Scenario> scenarios;  ///< in the order they run
  SampleSettings sample;
  LogprobsSettings logprobs;
  TrainSettings train;
  RlSettings rl;
  CheckpointSettings checkpoint;
};

}  // namespace tinker::bench
