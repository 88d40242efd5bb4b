// tinker-cpp event hook sample: the SDK's typed events (doc/observability.md) routed to spdlog, and
// a per-endpoint latency summary (count, p50, p90, max) printed at exit.
//
// With TINKER_API_KEY unset it starts tinker-local in-process with a few injected faults (a 503
// on forward_backward, a reset connection on optim_step, a 429 on sampling, a paused queue on optim_step), so
// there are retries, a back-off and a queue pause to see; with a key it runs against the service.
//
//   event_hook_spdlog [--steps N] [--samples N] [--base-model NAME]
//
// ServiceClientOptions::on_event runs on the client's io thread and must not block: spdlog's
// logger is synchronous here, which is fine for a few lines a second. The program exits with
// status 1 unless it saw every event it provoked (retries, a back-off, finished requests).
#include "common/sample_support.hpp"

#include <tinker/events.hpp>
#include <tinker/local/server.hpp>
#include <tinker/tinker.hpp>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <future>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace {

namespace asio = boost::asio;
using asio::use_awaitable;

// Latencies per "METHOD path", and how many events of each kind arrived.
class Metrics {
 public:
  std::map<std::string, std::vector<double>> latencies_ms;
  int retries = 0;
  int backoffs = 0;
  int paused_futures = 0;
  int heartbeat_failures = 0;

  void print_summary(std::ostream& out) const {
    out << std::left << std::setw(44) << "endpoint" << std::right << std::setw(7) << "count" << std::setw(10)
        << "p50 ms" << std::setw(10) << "p90 ms" << std::setw(10) << "max ms"
        << "\n";
    for (auto [endpoint, values] : latencies_ms) {
      std::sort(values.begin(), values.end());
      out << std::left << std::setw(44) << endpoint << std::right << std::setw(7) << values.size() << std::fixed
          << std::setprecision(1) << std::setw(10) << percentile(values, 0.5) << std::setw(10)
          << percentile(values, 0.9) << std::setw(10) << values.back() << "\n";
    }
  }

 private:
  // Nearest rank of a sorted, non-empty list.
  static double percentile(const std::vector<double>& sorted, double p) {
    const auto rank = static_cast<std::size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5);
    return sorted[std::min(rank, sorted.size() - 1)];
  }
};

// The hook: one spdlog line per event, and the numbers for the summary. Called on the io thread
// only, so Metrics needs no lock.
tinker::EventHook spdlog_hook(std::shared_ptr<spdlog::logger> log, Metrics& metrics) {
  return [log = std::move(log), &metrics](const tinker::Event& event) {
    std::visit(
        [&](const auto& e) {
          using E = std::decay_t<decltype(e)>;
          if constexpr (std::is_same_v<E, tinker::RequestFinished>) {
            const double ms = static_cast<double>(e.duration.count()) / 1000.0;
            metrics.latencies_ms[std::string(e.method) + " " + std::string(e.path)].push_back(ms);
            log->debug("{} {} -> {} in {:.1f} ms (attempt {}, {} B out, {} B in, request id {})", e.method, e.path,
                       e.status, ms, e.attempt, e.bytes_sent, e.bytes_received, e.request_id);
          } else if constexpr (std::is_same_v<E, tinker::RetryScheduled>) {
            ++metrics.retries;
            log->warn("retry ({} layer) of {} in {} ms, attempt {}: {}", tinker::to_string(e.layer), e.path,
                      e.delay.count(), e.attempt, e.reason);
          } else if constexpr (std::is_same_v<E, tinker::BackoffStarted>) {
            ++metrics.backoffs;
            log->warn("back-off ({}) on {} for {} ms", tinker::to_string(e.cause), e.path, e.delay.count());
          } else if constexpr (std::is_same_v<E, tinker::BackoffEnded>) {
            log->info("back-off on {} over after {} ms", e.path, e.waited.count());
          } else if constexpr (std::is_same_v<E, tinker::FutureStateChanged>) {
            if (e.state == tinker::FutureState::paused) ++metrics.paused_futures;
            log->info("future {} ({}): {} [{}] after {} ms", e.request_id, e.operation, tinker::to_string(e.state),
                      tinker::to_string(e.queue_state), e.waited.count());
          } else if constexpr (std::is_same_v<E, tinker::HeartbeatFailing>) {
            ++metrics.heartbeat_failures;
            log->error("heartbeat of session {} failing for {} ms: {}", e.session_id, e.failing_for.count(), e.reason);
          }
        },
        event);
  };
}

tinker::local::FaultRule fault_on_first_call(const char* endpoint, tinker::local::FaultKind kind, int status = 500) {
  tinker::local::FaultRule rule(endpoint, kind);
  rule.status = status;
  rule.on_calls = {1};
  rule.retry_after = tinker::local::RetryAfterForm::milliseconds;
  rule.retry_after_value = std::chrono::milliseconds(50);
  rule.delay = std::chrono::milliseconds(300);  // for the paused queue
  return rule;
}

// optim_step's calls: 1 is reset (above), 2 its retry, 3 the second step's, whose future waits in a paused queue.
tinker::local::FaultRule paused_queue_on_second_step() {
  tinker::local::FaultRule rule = fault_on_first_call("optim_step", tinker::local::FaultKind::pause_queue);
  rule.on_calls = {3};
  return rule;
}

std::vector<tinker::local::FaultRule> demo_faults() {
  using tinker::local::FaultKind;
  return {fault_on_first_call("forward_backward", FaultKind::status, 503),
          fault_on_first_call("optim_step", FaultKind::reset_before),
          fault_on_first_call("asample", FaultKind::status, 429), paused_queue_on_second_step()};
}

// A few SFT steps on a fixed token sequence, a forward pass, then a few samples.
asio::awaitable<void> workload(tinker::ServiceClient& service, std::string base_model, int steps, int samples) {
  tinker::TrainingClient training =
      co_await service.async_create_lora_training_client(tinker::LoraTrainingOptions(base_model, 8), use_awaitable);
  std::vector<tinker::TokenId> tokens;
  for (int i = 0; i < 33; ++i) tokens.push_back(10 + (i * 7) % 50);
  const std::vector<tinker::TokenId> input(tokens.begin(), tokens.end() - 1);
  const std::vector<tinker::TokenId> targets(tokens.begin() + 1, tokens.end());
  tinker::LossFnInputs inputs{{"target_tokens", tinker::TensorData::from_tokens(targets)},
                              {"weights", tinker::TensorData::from_floats(std::vector<float>(targets.size(), 1.0f))}};
  const std::vector<tinker::Datum> batch{tinker::Datum(tinker::ModelInput::from_ints(input), std::move(inputs))};
  const tinker::ForwardBackwardInput step_input(batch, tinker::loss_fn::cross_entropy);
  const tinker::AdamParams adam(1e-3);
  for (int step = 0; step < steps; ++step) {
    auto gradients = co_await training.async_forward_backward(step_input, use_awaitable);
    auto update = co_await training.async_optim_step(adam, use_awaitable);
    co_await gradients.async_get(use_awaitable);
    co_await update.async_get(use_awaitable);
  }
  auto evaluation = co_await training.async_forward(step_input, use_awaitable);
  co_await evaluation.async_get(use_awaitable);

  tinker::SamplingClient sampler =
      co_await service.async_create_sampling_client(tinker::SamplingSource::from_base_model(base_model), use_awaitable);
  const tinker::SamplingParams params(8);
  const tinker::SampleOptions options;
  for (int i = 0; i < samples; ++i) {
    auto sample =
        co_await sampler.async_sample(tinker::ModelInput::from_ints(input), 1, params, options, use_awaitable);
    co_await sample.async_get(use_awaitable);
  }
}

int run(int argc, char** argv) {
  const samples::Flags flags(argc, argv, {"--steps", "--samples", "--base-model"});
  tinker::ClientOptions client = tinker::ClientOptions::from_environment();
  std::unique_ptr<tinker::local::Server> local;
  if (client.api_key.empty() && !client.credential_command) {
    tinker::local::ServerOptions server_options;
    server_options.faults = demo_faults();
    // Answer a pending poll after 100 ms instead of holding it 5 s: the paused queue then shows.
    server_options.long_poll_hold = std::chrono::milliseconds(100);
    local = std::make_unique<tinker::local::Server>(server_options);
    local->start();
    client.base_url = local->base_url();
    client.api_key = tinker::Secret("tml-event-hook-sample-local");
    std::cout << "TINKER_API_KEY is not set: using tinker-local at " << client.base_url << " with injected faults\n";
  }
  const std::string base_model = flags.text("--base-model", local ? "tinker-local/tiny-lm" : "Qwen/Qwen3.5-4B");

  auto log = spdlog::stdout_color_mt("tinker");
  log->set_level(spdlog::level::info);
  log->set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
  Metrics metrics;
  tinker::ServiceClientOptions options(client);
  options.on_event = spdlog_hook(log, metrics);

  asio::io_context io;
  {
    tinker::ServiceClient service(io.get_executor(), options);
    auto done =
        asio::co_spawn(io, workload(service, base_model, flags.integer("--steps", 4), flags.integer("--samples", 4)),
                       asio::use_future);
    while (done.wait_for(std::chrono::seconds(0)) != std::future_status::ready) io.run_one();
    done.get();
  }
  io.poll();

  std::cout << "\nlatency per endpoint (every attempt counts):\n";
  metrics.print_summary(std::cout);
  std::cout << "retries " << metrics.retries << ", back-offs " << metrics.backoffs << ", paused futures "
            << metrics.paused_futures << ", heartbeat failures " << metrics.heartbeat_failures << "\n";
  const bool saw_everything = metrics.retries >= 2 && metrics.backoffs >= 1 && metrics.paused_futures >= 1;
  if (local && !saw_everything) {
    std::cerr << "expected retries, a back-off and a paused future from the injected faults\n";
    return EXIT_FAILURE;
  }
  return metrics.latencies_ms.empty() ? EXIT_FAILURE : EXIT_SUCCESS;
}

}  // namespace

int main(int argc, char** argv) {
  return samples::guarded_main([&] { return run(argc, argv) == EXIT_SUCCESS; });
}
