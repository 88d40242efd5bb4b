// TrainingClient overhead (issue 5) against tinker-local in null-model mode, where every
// operation completes as soon as the server has it, so what is measured is the client:
//
//   client CPU per step   CPU time of the client's io thread (this thread) per pipelined step
//                         (forward_backward + optim_step submitted back to back, then both
//                         results awaited), including encoding, HTTP and polling.
//   result delay          from the moment the submit completed (the server had accepted the
//                         operation, and in null-model mode had its result) to the moment the
//                         caller's co_await of the result resumed. The server finishes a
//                         null-model operation at once, so this bounds from above the delay
//                         between the server finishing a result and the caller receiving it.
//                         Goal: median under 2 ms.
//
// Usage: tinker-bench-training-client [steps=300] [batch=8] [tokens=64]
//
// --sft-shape: the cookbook's SFT step (issue 15), see training_sft.hpp:
//   tinker-bench-training-client --sft-shape [steps=20] [batch=128] [tokens=2048] [--json] [--zstd] [--depth=2]
//   [--verbose]
#include "training_sft.hpp"

#include <tinker/local/server.hpp>
#include <tinker/tinker.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

class Settings {
 public:
  int steps = 300;
  std::size_t batch = 8;
  std::size_t tokens = 64;
};

std::chrono::microseconds thread_cpu_time() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return std::chrono::seconds(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         std::chrono::microseconds(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

std::vector<tinker::Datum> make_batch(const Settings& settings) {
  std::vector<tinker::Datum> batch;
  for (std::size_t i = 0; i < settings.batch; ++i) {
    std::vector<tinker::TokenId> tokens(settings.tokens);
    for (std::size_t k = 0; k < tokens.size(); ++k) tokens[k] = static_cast<tinker::TokenId>((i * 31 + k * 7) % 1000);
    const std::vector<float> weights(tokens.size(), 1.0f);
    tinker::LossFnInputs inputs{{"target_tokens", tinker::TensorData::from_tokens(tokens)},
                                {"weights", tinker::TensorData::from_floats(weights)}};
    batch.emplace_back(tinker::ModelInput::from_ints(tokens), std::move(inputs));
  }
  return batch;
}

class Measurements {
 public:
  std::vector<double> delays_ms;
  std::chrono::microseconds cpu{0};
  std::chrono::microseconds wall{0};
  int steps = 0;
};

asio::awaitable<Measurements> run_steps(tinker::ServiceClient& service, Settings settings) {
  const tinker::LoraTrainingOptions options("tinker-local/tiny-lm", 8);
  tinker::TrainingClient training = co_await service.async_create_lora_training_client(options, tinker::use_awaitable);
  const std::vector<tinker::Datum> batch = make_batch(settings);
  Measurements m;
  const auto cpu_start = thread_cpu_time();
  const auto wall_start = Clock::now();
  for (int step = 0; step < settings.steps; ++step) {
    const tinker::ForwardBackwardInput input(batch, tinker::loss_fn::cross_entropy);
    const tinker::AdamParams adam(1e-3);
    auto gradients = co_await training.async_forward_backward(input, tinker::use_awaitable);
    auto update = co_await training.async_optim_step(adam, tinker::use_awaitable);
    const auto accepted = Clock::now();
    co_await gradients.async_get(tinker::use_awaitable);
    co_await update.async_get(tinker::use_awaitable);
    const auto received = Clock::now();
    m.delays_ms.push_back(std::chrono::duration<double, std::milli>(received - accepted).count());
  }
  m.cpu = thread_cpu_time() - cpu_start;
  m.wall = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - wall_start);
  m.steps = settings.steps;
  co_return m;
}

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  const auto index = static_cast<std::size_t>(p * static_cast<double>(values.size() - 1));
  return values[index];
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc > 1 && std::string_view(argv[1]) == "--sft-shape") return sft::run(argc - 1, argv + 1);
  Settings settings;
  if (argc > 1) settings.steps = std::stoi(argv[1]);
  if (argc > 2) settings.batch = std::stoul(argv[2]);
  if (argc > 3) settings.tokens = std::stoul(argv[3]);

  tinker::local::ServerOptions server_options;
  server_options.null_model = true;
  server_options.log_level = tinker::LogLevel::off;
  tinker::local::Server server(server_options);
  server.start();

  tinker::ClientOptions client(server.base_url(), tinker::Secret("tml-benchmark"));
  client.log_level = tinker::LogLevel::warning;
  client.telemetry_enabled = false;
  asio::io_context io;
  Measurements m;
  {
    tinker::ServiceClient service(io.get_executor(), tinker::ServiceClientOptions(client));
    auto done = asio::co_spawn(io, run_steps(service, settings), asio::use_future);
    while (done.wait_for(std::chrono::seconds(0)) != std::future_status::ready) io.run_one();
    m = done.get();
  }
  io.poll();

  std::cout << std::fixed << std::setprecision(3) << "steps " << m.steps << " (batch " << settings.batch << " x "
            << settings.tokens << " tokens, null-model tinker-local in-process)\n"
            << "client CPU per step      " << double(m.cpu.count()) / m.steps / 1000.0 << " ms\n"
            << "wall time per step       " << double(m.wall.count()) / m.steps / 1000.0 << " ms\n"
            << "result delay median      " << percentile(m.delays_ms, 0.5) << " ms  (goal < 2 ms)\n"
            << "result delay p90         " << percentile(m.delays_ms, 0.9) << " ms\n"
            << "result delay max         " << percentile(m.delays_ms, 1.0) << " ms\n";
  return EXIT_SUCCESS;
} catch (const std::exception& e) {
  std::cerr << "error: " << e.what() << "\n";
  return EXIT_FAILURE;
}
