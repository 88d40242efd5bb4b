// tinker-bench-training-client --sft-shape: the client cost of the cookbook's SFT step (issue 15,
// doc/performance.md#training-path) against null-model tinker-local in this process.
//
// Each step builds a fresh batch (B datums x T tokens: model_input, target_tokens int64, weights
// float32 with the first quarter masked), moves it into forward_backward with cross_entropy, then
// submits optim_step, and awaits the results of the step before (pipeline depth 2; --depth=1
// awaits the step's own results, so that nothing else runs on the io thread while it submits). Per step, on
// the client's io thread (this thread), batch building excluded:
//
//   client CPU          thread CPU time of the whole step (encoding, HTTP, polling, decoding the
//                       previous step's results).
//   call -> last byte   from the forward_backward call to the return of the send() that took the
//                       last byte of its request (client_probes.hpp), wall and thread CPU.
//   payload             the forward_backward request body as sent: protobuf (or JSON with --json),
//                       after the zstd frame with --zstd (its size from the public codec on the
//                       first measured batch). The bytes sent on the request's connection are
//                       counted too, so the head is what they hold beyond. The in-memory batch is the
//                       bytes of its token and tensor arrays (4 per token id, 8 per int64, 4 per
//                       float32).
//   GB/s on one core    payload / thread CPU from the call to the last byte, with and without
//                       the time inside send(). The goal (>= 5 GB/s) is for the SDK's part,
//                       encoding plus submitting up to the kernel: the kernel's part depends on
//                       the network path (on loopback it includes the receiver's TCP work), and
//                       the raw blocking send() of the same bytes printed below shows what it
//                       costs here whatever the client (doc/performance.md#training-path).
//   heap                operator new calls and bytes per step, and those of at least 64 KiB: a
//                       copy of the batch or of the encoded body needs blocks of that size.
#pragma once

#include "client_probes.hpp"

#include <tinker/local/server.hpp>
#include <tinker/tinker.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <sys/resource.h>

namespace sft {

namespace asio = boost::asio;

class Settings {
 public:
  int steps = 20;
  int warmup = 2;
  std::size_t batch = 128;
  std::size_t tokens = 2048;
  bool json = false;
  bool zstd = false;
  bool verbose = false;   ///< print the large blocks of every step
  std::size_t depth = 2;  ///< steps in flight; 1 = each step's results awaited before the next call
};

// What one step cost the client.
class StepCost {
 public:
  double cpu_ms = 0;
  double to_last_byte_ms = 0;
  double cpu_to_last_byte_ms = 0;
  std::int64_t request_bytes = 0;  ///< head + body of the forward_backward request
  double send_cpu_ms = 0;          ///< thread CPU inside send calls until the last byte (the kernel's copy and TCP)
  long page_faults = 0;            ///< minor page faults of the io thread (fresh memory touched)
  int sends = 0;                   ///< send calls that carried the request
  double epoll_cpu_ms = 0;         ///< thread CPU inside epoll_wait until the last byte
  double submit_user_ms = 0;       ///< user CPU from the call until forward_backward was accepted
  double submit_system_ms = 0;     ///< system CPU of the same
  probes::HeapCounts heap;
};

inline std::uint32_t next_random(std::uint32_t& state) {
  return state = state * 1664525u + 1013904223u;
}

inline tinker::ForwardBackwardInput make_batch(const Settings& s, std::uint32_t seed) {
  std::vector<tinker::Datum> data;
  data.reserve(s.batch);
  for (std::size_t d = 0; d < s.batch; ++d) {
    std::vector<tinker::TokenId> sequence(s.tokens + 1);
    for (auto& t : sequence) t = static_cast<tinker::TokenId>(next_random(seed) % 151936);
    std::vector<std::int64_t> targets(sequence.begin() + 1, sequence.end());
    std::vector<float> weights(s.tokens, 1.0f);
    std::fill(weights.begin(), weights.begin() + static_cast<std::ptrdiff_t>(s.tokens / 4), 0.0f);
    sequence.pop_back();
    tinker::LossFnInputs inputs;
    inputs.emplace("target_tokens", tinker::TensorData(std::move(targets)));
    inputs.emplace("weights", tinker::TensorData(std::move(weights)));
    data.emplace_back(tinker::ModelInput::from_ints(std::move(sequence)), std::move(inputs));
  }
  return tinker::ForwardBackwardInput(std::move(data), tinker::loss_fn::cross_entropy);
}

inline std::int64_t batch_bytes(const Settings& s) {
  return static_cast<std::int64_t>(s.batch * s.tokens * (4 + 8 + 4));
}

inline std::int64_t steady_ns() {
  return probes::now_ns(CLOCK_MONOTONIC);
}
inline std::int64_t cpu_ns() {
  return probes::now_ns(CLOCK_THREAD_CPUTIME_ID);
}
inline long minor_faults() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_minflt;
}
inline rusage thread_usage() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return usage;
}
inline double ms_between(const timeval& a, const timeval& b) {
  return double(b.tv_sec - a.tv_sec) * 1e3 + double(b.tv_usec - a.tv_usec) / 1e3;
}

// The send that completed the forward_backward request: the last one, on the connection that
// carried the most bytes, among the sends since `first`.
inline const probes::SendRecord* last_send_of_request(std::size_t first, std::int64_t& bytes) {
  std::map<int, std::int64_t> per_fd;
  for (std::size_t i = first; i < probes::send_count; ++i)
    per_fd[probes::sends[i % probes::max_sends].fd] += probes::sends[i % probes::max_sends].bytes;
  if (per_fd.empty()) return nullptr;
  const auto busiest =
      std::max_element(per_fd.begin(), per_fd.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  bytes = busiest->second;
  for (std::size_t i = probes::send_count; i > first; --i) {
    const probes::SendRecord& r = probes::sends[(i - 1) % probes::max_sends];
    if (r.fd == busiest->first) return &r;
  }
  return nullptr;
}

inline void print_large_blocks(int step, std::uint64_t first) {
  std::printf("step %d: blocks >= 64 KiB:", step);
  for (std::uint64_t i = first; i < probes::heap.large_allocations; ++i) {
    std::printf(" %zu", probes::large_sizes[i % probes::max_large]);
  }
  std::printf("\n");
}

// Thread CPU spent inside the recorded send calls from `first` up to and including `last`.
inline std::int64_t send_cpu_until(std::size_t first, const probes::SendRecord* last, int& sends) {
  std::int64_t total = 0;
  for (std::size_t i = first; i < probes::send_count; ++i) {
    const probes::SendRecord& r = probes::sends[i % probes::max_sends];
    total += r.cpu_ns - r.cpu_start_ns;
    if (r.fd == last->fd) ++sends;
    if (&r == last) break;
  }
  return total;
}

class Pending {
 public:
  tinker::Future<tinker::ForwardBackwardOutput> gradients;
  tinker::Future<tinker::OptimStepResponse> update;
};

inline asio::awaitable<void> await_step(Pending pending) {
  auto output = co_await pending.gradients.async_get(tinker::use_awaitable);
  if (output.loss_fn_outputs.empty()) throw std::runtime_error("forward_backward returned no outputs");
  co_await pending.update.async_get(tinker::use_awaitable);
}

// The body the SDK sends for `batch` (its seq_id changes the size by a byte at most).
inline std::int64_t body_size(const Settings& s, const std::string& model_id,
                              const tinker::ForwardBackwardInput& batch) {
  const tinker::ForwardBackwardRequest request(model_id, 1, batch);
  std::string body = s.json ? tinker::to_json(request) : tinker::to_protobuf(request);
  if (s.zstd && !s.json) body = tinker::zstd_compress(body);
  return static_cast<std::int64_t>(body.size());
}

class Results {
 public:
  std::vector<StepCost> costs;
  std::int64_t body = 0;
};

inline asio::awaitable<Results> run_steps(tinker::ServiceClient& service, Settings s) {
  const tinker::LoraTrainingOptions options("tinker-local/tiny-lm", 8);
  tinker::TrainingClient training = co_await service.async_create_lora_training_client(options, tinker::use_awaitable);
  Results results;
  std::deque<Pending> pending;
  for (int step = 0; step < s.warmup + s.steps; ++step) {
    probes::counting = false;
    tinker::ForwardBackwardInput batch = make_batch(s, static_cast<std::uint32_t>(step));
    if (step == s.warmup) results.body = body_size(s, training.model_id(), batch);
    probes::counting = true;
    const probes::HeapCounts heap_before = probes::heap;
    const std::size_t first_send = probes::send_count;
    const std::int64_t wall_start = steady_ns();
    const long faults_start = minor_faults();
    const std::int64_t epoll_start = probes::epoll_cpu_ns;
    const rusage usage_start = thread_usage();
    const std::int64_t cpu_start = cpu_ns();
    auto gradients = co_await training.async_forward_backward(std::move(batch), tinker::use_awaitable);
    StepCost cost;
    const rusage usage_accepted = thread_usage();
    cost.submit_user_ms = ms_between(usage_start.ru_utime, usage_accepted.ru_utime);
    cost.submit_system_ms = ms_between(usage_start.ru_stime, usage_accepted.ru_stime);
    if (const probes::SendRecord* last = last_send_of_request(first_send, cost.request_bytes)) {
      cost.to_last_byte_ms = double(last->wall_ns - wall_start) / 1e6;
      cost.cpu_to_last_byte_ms = double(last->cpu_ns - cpu_start) / 1e6;
      cost.send_cpu_ms = double(send_cpu_until(first_send, last, cost.sends)) / 1e6;
      cost.epoll_cpu_ms = double(last->epoll_ns - epoll_start) / 1e6;
    }
    auto update = co_await training.async_optim_step(tinker::AdamParams(1e-4), tinker::use_awaitable);
    pending.push_back(Pending{std::move(gradients), std::move(update)});
    if (pending.size() == s.depth) {
      co_await await_step(std::move(pending.front()));
      pending.pop_front();
    }
    cost.cpu_ms = double(cpu_ns() - cpu_start) / 1e6;
    cost.heap = probes::heap - heap_before;
    cost.page_faults = minor_faults() - faults_start;
    probes::counting = false;
    if (s.verbose) print_large_blocks(step, heap_before.large_allocations);
    if (step >= s.warmup) results.costs.push_back(cost);
  }
  while (!pending.empty()) {
    co_await await_step(std::move(pending.front()));
    pending.pop_front();
  }
  co_return results;
}

template <class Get>
double median_of(const std::vector<StepCost>& costs, Get get) {
  std::vector<double> values;
  for (const StepCost& c : costs) values.push_back(double(get(c)));
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

template <class Get>
double max_of(const std::vector<StepCost>& costs, Get get) {
  double m = 0;
  for (const StepCost& c : costs) m = std::max(m, double(get(c)));
  return m;
}

// The kernel's share, for reference: thread CPU and wall time of blocking send()s of `bytes` bytes over
// loopback TCP to a thread that reads them, as a hand-written client would send a prepared body (median of 10).
class RawSend {
 public:
  double cpu_ms = 0;
  double wall_ms = 0;
};

inline RawSend raw_send_reference(std::int64_t bytes) {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  asio::ip::tcp::socket writer(io);
  writer.connect(acceptor.local_endpoint());
  asio::ip::tcp::socket reader = acceptor.accept();
  writer.set_option(asio::ip::tcp::no_delay(true));
  std::thread drain([&reader] {
    std::vector<char> buffer(1 << 20);
    boost::system::error_code ec;
    while (!ec) reader.read_some(asio::buffer(buffer), ec);
  });
  const std::string body(static_cast<std::size_t>(bytes), 'x');
  std::vector<double> cpu;
  std::vector<double> wall;
  for (int i = 0; i < 12; ++i) {
    const std::int64_t w0 = steady_ns();
    const std::int64_t c0 = cpu_ns();
    asio::write(writer, asio::buffer(body));
    cpu.push_back(double(cpu_ns() - c0) / 1e6);
    wall.push_back(double(steady_ns() - w0) / 1e6);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  writer.close();
  drain.join();
  std::sort(cpu.begin(), cpu.end());
  std::sort(wall.begin(), wall.end());
  return RawSend{cpu[cpu.size() / 2], wall[wall.size() / 2]};
}

inline Settings parse(int argc, char** argv) {
  Settings s;
  std::vector<std::string_view> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--json") {
      s.json = true;
    } else if (arg == "--zstd") {
      s.zstd = true;
    } else if (arg.starts_with("--depth=")) {
      s.depth = std::max<std::size_t>(1, std::stoul(std::string(arg.substr(8))));
    } else if (arg == "--verbose") {
      s.verbose = true;
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.size() > 0) s.steps = std::stoi(std::string(positional[0]));
  if (positional.size() > 1) s.batch = std::stoul(std::string(positional[1]));
  if (positional.size() > 2) s.tokens = std::stoul(std::string(positional[2]));
  return s;
}

inline void print(const Settings& s, const std::vector<StepCost>& costs, std::int64_t body_bytes) {
  const double request = median_of(costs, [](const StepCost& c) { return c.request_bytes; });
  const double body = double(body_bytes);
  const double head_bytes = request - body;
  const double cpu_to_last = median_of(costs, [](const StepCost& c) { return c.cpu_to_last_byte_ms; });
  const double wall_to_last = median_of(costs, [](const StepCost& c) { return c.to_last_byte_ms; });
  std::printf("sft-shape: %d steps (+%d warm-up) of %zu x %zu tokens, cross_entropy, %s%s, pipeline depth %zu\n",
              s.steps, s.warmup, s.batch, s.tokens, s.json ? "JSON" : "protobuf", s.zstd ? " + zstd" : "", s.depth);
  std::printf("in-memory batch            %.0f bytes\n", double(batch_bytes(s)));
  std::printf("payload (body as sent)     %.0f bytes (+ request head %.0f)\n", body, head_bytes);
  std::printf("client CPU per step        median %.3f ms, max %.3f ms\n",
              median_of(costs, [](const StepCost& c) { return c.cpu_ms; }),
              max_of(costs, [](const StepCost& c) { return c.cpu_ms; }));
  std::printf("call -> last byte, wall    median %.3f ms, max %.3f ms (%.2f GB/s of payload)\n", wall_to_last,
              max_of(costs, [](const StepCost& c) { return c.to_last_byte_ms; }), body / wall_to_last / 1e6);
  std::printf("call -> last byte, CPU     median %.3f ms (%.2f GB/s of payload on one core)\n", cpu_to_last,
              body / cpu_to_last / 1e6);
  const double send_cpu = median_of(costs, [](const StepCost& c) { return c.send_cpu_ms; });
  const double epoll_cpu = median_of(costs, [](const StepCost& c) { return c.epoll_cpu_ms; });
  const double own =
      median_of(costs, [](const StepCost& c) { return c.cpu_to_last_byte_ms - c.send_cpu_ms - c.epoll_cpu_ms; });
  std::printf("  of which inside send()   median %.3f ms in %.0f calls (the kernel's copy and loopback TCP)\n",
              send_cpu, median_of(costs, [](const StepCost& c) { return c.sends; }));
  std::printf("  of which in epoll_wait   median %.3f ms\n", epoll_cpu);
  std::printf("  the rest (SDK, asio)     median %.3f ms (%.2f GB/s: encoding plus submitting; goal >= 5)\n", own,
              body / own / 1e6);
  std::printf("call -> accepted, CPU      median user %.3f ms, system %.3f ms (getrusage, tick-grained)\n",
              median_of(costs, [](const StepCost& c) { return c.submit_user_ms; }),
              median_of(costs, [](const StepCost& c) { return c.submit_system_ms; }));
  const RawSend raw = raw_send_reference(body_bytes);
  std::printf("raw blocking send() of the same bytes: CPU %.3f ms (%.2f GB/s), wall %.3f ms\n", raw.cpu_ms,
              body / raw.cpu_ms / 1e6, raw.wall_ms);
  std::printf("page faults per step       median %.0f\n",
              median_of(costs, [](const StepCost& c) { return c.page_faults; }));
  std::printf("heap per step              median %.0f allocations, %.0f bytes\n",
              median_of(costs, [](const StepCost& c) { return c.heap.allocations; }),
              median_of(costs, [](const StepCost& c) { return c.heap.bytes; }));
  std::printf("  blocks >= 64 KiB         median %.0f allocations, %.0f bytes (%.2f x payload)\n",
              median_of(costs, [](const StepCost& c) { return c.heap.large_allocations; }),
              median_of(costs, [](const StepCost& c) { return c.heap.large_bytes; }),
              median_of(costs, [](const StepCost& c) { return c.heap.large_bytes; }) / body);
}

inline int run(int argc, char** argv) {
  const Settings s = parse(argc, argv);
  tinker::local::ServerOptions server_options;
  server_options.null_model = true;
  server_options.log_level = tinker::LogLevel::off;
  server_options.client_config.proto_compress_fwdbwd = s.zstd;
  tinker::local::Server server(server_options);
  server.start();

  tinker::ClientOptions client(server.base_url(), tinker::Secret("tml-benchmark"));
  client.log_level = tinker::LogLevel::warning;
  client.telemetry_enabled = false;
  tinker::ServiceClientOptions service_options(client);
  service_options.json_bulk_paths = s.json;
  asio::io_context io;
  Results results;
  {
    tinker::ServiceClient service(io.get_executor(), service_options);
    auto done = asio::co_spawn(io, run_steps(service, s), asio::use_future);
    while (done.wait_for(std::chrono::seconds(0)) != std::future_status::ready) io.run_one();
    results = done.get();
  }
  io.poll();
  if (results.costs.empty()) return EXIT_FAILURE;
  print(s, results.costs, results.body);
  return EXIT_SUCCESS;
}

}  // namespace sft
