// The training loops of tinker::train (doc/training-loops.md) against an in-process tinker-local
// that computes slowly on purpose (ServerOptions::training_delay, sampling_delay), measured by the
// server's own per-operation timings (ModelAudit::timings, doc/local.md#simulated-compute-time):
//
//   sft   train_supervised with submit_ahead = 0 and 1: the model's idle gap between one step's
//         last operation and the next step's first (median, p90, max), and the step time (the
//         median interval between consecutive optim_steps finishing). Goal with submit_ahead = 1:
//         median idle gap <= 2 ms.
//   rl    train_rl with max_steps_off_policy = 0 and 1: the mean step time (between consecutive
//         optim_steps finishing, by the server's clock) next to S + T and
//         max(S, T), where S is the sampling delay and T the model's busy time per step (measured:
//         forward_backward + optim_step, each delayed), and the stale groups dropped. Goal with
//         max_steps_off_policy = 1: step time near max(S, T), not S + T.
//
// Usage: tinker-bench-train-loops [sft|rl|all] [--training-delay-ms=50] [--sampling-delay-ms=200]
//                                 [--sft-steps=30] [--rl-steps=10] [--rl-training-delay-ms=100]
#include <tinker/local/server.hpp>
#include <tinker/tinker.hpp>
#include <tinker/train/rl.hpp>
#include <tinker/train/supervised.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace train = tinker::train;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

const char* const kBaseModel = "tinker-local/tiny-lm";

class Settings {
 public:
  std::string which = "all";
  milliseconds sft_training_delay{50};
  milliseconds rl_training_delay{100};
  milliseconds sampling_delay{200};
  std::int64_t sft_steps = 30;
  std::int64_t rl_steps = 10;
};

double ms(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(p * static_cast<double>(values.size() - 1))];
}

double mean(const std::vector<double>& values) {
  if (values.empty()) return 0.0;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

/// A fresh in-process tinker-local and a client of it; the io_context runs on this thread.
class Harness {
 public:
  explicit Harness(tinker::local::ServerOptions options) : server_(std::move(options)) {
    server_.start();
    tinker::ClientOptions client(server_.base_url(), tinker::Secret("tml-benchmark"));
    client.log_level = tinker::LogLevel::warning;
    client.telemetry_enabled = false;
    service_ = std::make_unique<tinker::ServiceClient>(io_.get_executor(), tinker::ServiceClientOptions(client));
  }
  ~Harness() {
    service_.reset();
    io_.poll();
  }
  Harness(const Harness&) = delete;
  Harness& operator=(const Harness&) = delete;

  template <class T>
  T run(asio::awaitable<T> work) {
    auto done = asio::co_spawn(io_, std::move(work), asio::use_future);
    while (done.wait_for(std::chrono::seconds(0)) != std::future_status::ready) io_.run_one();
    return done.get();
  }
  tinker::ServiceClient& service() { return *service_; }
  /// The audit of the model that ran the most operations (the run's training client).
  tinker::local::ModelAudit trained_model() const {
    tinker::local::AuditReport report = server_.audit();
    tinker::local::ModelAudit best;
    for (auto& model : report.models) {
      if (model.timings.size() >= best.timings.size()) best = std::move(model);
    }
    return best;
  }

 private:
  tinker::local::Server server_;
  asio::io_context io_;
  std::unique_ptr<tinker::ServiceClient> service_;
};

tinker::local::ServerOptions server_options(milliseconds training_delay, milliseconds sampling_delay) {
  tinker::local::ServerOptions options;
  options.log_level = tinker::LogLevel::off;
  options.training_delay = training_delay;
  options.sampling_delay = sampling_delay;
  return options;
}

std::filesystem::path bench_root() {
  return std::filesystem::temp_directory_path() / ("tinker-bench-train-loops-" + std::to_string(::getpid()));
}

std::filesystem::path run_dir(const std::string& name) {
  return bench_root() / name;
}

// ---------------------------------------------------------------------------------------------
// Supervised

std::vector<tinker::Datum> sft_data(std::size_t count, std::size_t length) {
  std::vector<tinker::Datum> data;
  for (std::size_t i = 0; i < count; ++i) {
    std::vector<tinker::TokenId> tokens(length + 1);
    for (std::size_t k = 0; k < tokens.size(); ++k)
      tokens[k] = static_cast<tinker::TokenId>(3 + (i * 31 + k * 7) % 900);
    std::vector<tinker::TokenId> input(tokens.begin(), tokens.end() - 1);
    std::vector<tinker::TokenId> targets(tokens.begin() + 1, tokens.end());
    const std::vector<float> weights(targets.size(), 1.0f);
    tinker::LossFnInputs inputs{{"target_tokens", tinker::TensorData::from_tokens(targets)},
                                {"weights", tinker::TensorData::from_floats(weights)}};
    data.emplace_back(tinker::ModelInput::from_ints(input), std::move(inputs));
  }
  return data;
}

asio::awaitable<train::SupervisedSummary> run_sft(tinker::ServiceClient* service, const train::DatumDataset* data,
                                                  train::SupervisedOptions options) {
  co_return co_await train::train_supervised(*service, *data, std::move(options));
}

class IdleGaps {
 public:
  std::vector<double> between_steps;  ///< before each forward_backward but the first
  std::vector<double> all;            ///< before every operation but the first
  std::vector<double> step_periods;   ///< between consecutive optim_steps finishing
  double busy_per_step_ms = 0.0;      ///< forward_backward + optim_step time per step
};

IdleGaps idle_gaps(const tinker::local::ModelAudit& audit) {
  IdleGaps gaps;
  const auto& timings = audit.timings;
  Clock::time_point last_optim{};
  Clock::duration busy{};
  int steps = 0;
  for (std::size_t i = 0; i < timings.size(); ++i) {
    const auto& op = timings[i];
    if (op.operation == "forward_backward" || op.operation == "optim_step") busy += op.finished - op.started;
    if (op.operation == "optim_step") {
      if (last_optim != Clock::time_point{}) gaps.step_periods.push_back(ms(op.finished - last_optim));
      last_optim = op.finished;
      ++steps;
    }
    if (i == 0) continue;
    const double gap = ms(op.started - timings[i - 1].finished);
    gaps.all.push_back(gap);
    if (op.operation == "forward_backward" && steps > 0) gaps.between_steps.push_back(gap);
  }
  gaps.busy_per_step_ms = steps > 0 ? ms(busy) / steps : 0.0;
  return gaps;
}

void run_supervised_benchmark(const Settings& settings) {
  const train::DatumDataset data(sft_data(64, 32));
  std::cout << "supervised: train_supervised, " << settings.sft_steps << " steps of 8 x 32 tokens, rank 8, "
            << "training_delay " << settings.sft_training_delay.count() << " ms (tiny model, in-process)\n";
  std::cout << "  submit_ahead  gap median  gap p90  gap max  (all ops: median  p90)  step median  wall/step\n";
  for (int ahead : {0, 1}) {
    Harness harness(server_options(settings.sft_training_delay, milliseconds(0)));
    train::SupervisedOptions options;
    options.run.log_path = run_dir("sft-ahead-" + std::to_string(ahead));
    options.run.base_model = kBaseModel;
    options.run.lora_rank = 8;
    options.run.show_progress = false;
    options.run.if_exists = train::ExistingRun::overwrite;
    options.learning_rate = 1e-3;
    options.batch_size = 8;
    options.max_steps = settings.sft_steps;
    options.num_epochs = 100;
    options.eval_every = 0;
    options.evaluate_at_end = false;
    options.submit_ahead = ahead;
    const auto started = Clock::now();
    const train::SupervisedSummary summary = harness.run(run_sft(&harness.service(), &data, options));
    const double wall = ms(Clock::now() - started);
    const IdleGaps gaps = idle_gaps(harness.trained_model());
    std::cout << std::fixed << std::setprecision(2) << "  " << std::setw(12) << ahead << std::setw(12)
              << percentile(gaps.between_steps, 0.5) << std::setw(9) << percentile(gaps.between_steps, 0.9)
              << std::setw(9) << percentile(gaps.between_steps, 1.0) << "  (" << std::setw(15)
              << percentile(gaps.all, 0.5) << std::setw(6) << percentile(gaps.all, 0.9) << ")" << std::setw(13)
              << percentile(gaps.step_periods, 0.5) << std::setw(11) << wall / static_cast<double>(summary.total_steps)
              << "   (ms; " << summary.total_steps << " steps, busy/step " << gaps.busy_per_step_ms << ")\n";
  }
}

// ---------------------------------------------------------------------------------------------
// RL: a single-turn token env whose reward is the fraction of even token ids in the action, so
// rewards vary within a group and no group is constant for long.

class EvenTokensEnv : public train::Env {
 public:
  explicit EvenTokensEnv(std::vector<tinker::TokenId> prompt) : prompt_(std::move(prompt)) {}
  asio::awaitable<train::Observation> initial_observation() override {
    co_return train::Observation(tinker::ModelInput::from_ints(prompt_), std::vector<tinker::TokenId>{});
  }
  asio::awaitable<train::StepResult> step(const std::vector<tinker::TokenId>& action) override {
    train::StepResult result;
    const auto even = std::count_if(action.begin(), action.end(), [](tinker::TokenId t) { return t % 2 == 0; });
    result.reward = action.empty() ? 0.0 : static_cast<double>(even) / static_cast<double>(action.size());
    result.episode_done = true;
    co_return result;
  }

 private:
  std::vector<tinker::TokenId> prompt_;
};

class EvenTokensGroup : public train::EnvGroupBuilder {
 public:
  EvenTokensGroup(std::vector<tinker::TokenId> prompt, std::size_t size) : prompt_(std::move(prompt)), size_(size) {}
  asio::awaitable<std::vector<std::unique_ptr<train::Env>>> make_envs() override {
    std::vector<std::unique_ptr<train::Env>> envs;
    for (std::size_t i = 0; i < size_; ++i) envs.push_back(std::make_unique<EvenTokensEnv>(prompt_));
    co_return envs;
  }

 private:
  std::vector<tinker::TokenId> prompt_;
  std::size_t size_;
};

class EvenTokensDataset : public train::RLDataset {
 public:
  explicit EvenTokensDataset(std::size_t batches) : batches_(batches) {}
  std::size_t size() const override { return batches_; }
  std::vector<std::shared_ptr<train::EnvGroupBuilder>> get_batch(std::size_t index) override {
    std::vector<std::shared_ptr<train::EnvGroupBuilder>> groups;
    for (std::size_t g = 0; g < 4; ++g) {
      std::vector<tinker::TokenId> prompt;
      for (std::size_t k = 0; k < 6; ++k)
        prompt.push_back(static_cast<tinker::TokenId>(5 + (index * 13 + g * 7 + k * 3) % 800));
      groups.push_back(std::make_shared<EvenTokensGroup>(std::move(prompt), 4));
    }
    return groups;
  }

 private:
  std::size_t batches_;
};

asio::awaitable<train::RLResult> run_rl(tinker::ServiceClient* service, train::RLDataset* dataset,
                                        train::RLOptions options) {
  co_return co_await train::train_rl(*service, *dataset, std::move(options));
}

void run_rl_benchmark(const Settings& settings) {
  const double s = static_cast<double>(settings.sampling_delay.count());
  std::cout << "rl: train_rl, " << settings.rl_steps << " steps of 4 groups x 4 envs, 8-token actions, rank 8, "
            << "sampling_delay S " << settings.sampling_delay.count() << " ms, training_delay "
            << settings.rl_training_delay.count() << " ms per forward_backward / optim_step\n";
  std::cout << "  off_policy  step mean  step median  T (busy/step)  S+T      max(S,T)  stale dropped\n";
  for (int off_policy : {0, 1}) {
    Harness harness(server_options(settings.rl_training_delay, settings.sampling_delay));
    EvenTokensDataset dataset(static_cast<std::size_t>(settings.rl_steps));
    train::RLOptions options;
    options.run.log_path = run_dir("rl-off-policy-" + std::to_string(off_policy));
    options.run.base_model = kBaseModel;
    options.run.lora_rank = 8;
    options.run.show_progress = false;
    options.run.if_exists = train::ExistingRun::overwrite;
    options.run.total_steps = settings.rl_steps;
    options.learning_rate = 1e-3;
    options.max_tokens = 8;
    options.max_steps_off_policy = off_policy;
    const train::RLResult result = harness.run(run_rl(&harness.service(), &dataset, options));
    // The step time by the server's clock: between consecutive optim_steps finishing (the first
    // step, which also waits for the first sampler, has no predecessor and is left out).
    const IdleGaps gaps = idle_gaps(harness.trained_model());
    const std::vector<double>& step_ms = gaps.step_periods;
    const double t = gaps.busy_per_step_ms;
    double stale = 0.0;
    for (const auto& metrics : result.metrics) stale += metrics.get("async/stale_groups_dropped").value_or(0.0);
    std::cout << std::fixed << std::setprecision(1) << "  " << std::setw(10) << off_policy << std::setw(11)
              << mean(step_ms) << std::setw(13) << percentile(step_ms, 0.5) << std::setw(15) << t << std::setw(9)
              << s + t << std::setw(10) << std::max(s, t) << std::setw(15) << stale << "   (ms; "
              << result.metrics.size() << " steps logged)\n";
  }
}

std::int64_t flag_value(std::string_view arg, std::string_view name) {
  return std::stoll(std::string(arg.substr(name.size())));
}

}  // namespace

int main(int argc, char** argv) try {
  Settings settings;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "sft" || arg == "rl" || arg == "all") {
      settings.which = arg;
    } else if (arg.starts_with("--training-delay-ms=")) {
      settings.sft_training_delay = milliseconds(flag_value(arg, "--training-delay-ms="));
    } else if (arg.starts_with("--rl-training-delay-ms=")) {
      settings.rl_training_delay = milliseconds(flag_value(arg, "--rl-training-delay-ms="));
    } else if (arg.starts_with("--sampling-delay-ms=")) {
      settings.sampling_delay = milliseconds(flag_value(arg, "--sampling-delay-ms="));
    } else if (arg.starts_with("--sft-steps=")) {
      settings.sft_steps = flag_value(arg, "--sft-steps=");
    } else if (arg.starts_with("--rl-steps=")) {
      settings.rl_steps = flag_value(arg, "--rl-steps=");
    } else {
      std::cerr << "unknown argument " << arg << "\n";
      return EXIT_FAILURE;
    }
  }
  if (settings.which != "rl") run_supervised_benchmark(settings);
  if (settings.which != "sft") run_rl_benchmark(settings);
  std::filesystem::remove_all(bench_root());
  return EXIT_SUCCESS;
} catch (const std::exception& e) {
  std::cerr << "error: " << e.what() << "\n";
  return EXIT_FAILURE;
}
