// SamplingClient throughput and memory (issue 6) against tinker-local in null-model mode, with
// a raw Beast loop doing the same two HTTP exchanges per sample (asample, then retrieve_future)
// on the same server in the same run as the baseline.
//
// The server runs in a child process (forked before any thread exists), so this process's CPU
// time and heap are the client's alone:
//   samples/s          completed samples per second with N requests kept in flight
//   CPU per sample     this process's CPU time / samples
//   memory/in-flight   heap in use (mallinfo2) with N samples pending on the server (its queue
//                      paused by fault injection), minus the heap before, divided by N
//   client thread      for the pair at 64 in flight: the io thread's user and system CPU per sample
//                      (getrusage RUSAGE_THREAD: the kernel's share of the two exchanges is the same
//                      for both loops, the rest is the client's own) and its heap allocations and
//                      bytes per sample (heap_probe.hpp)
// The raw loop and the SDK at 64 in flight alternate five times, the first of each pair switching
// (the ratio is the median pair).
// Goals: at 64 in flight >= 85% of the raw loop's samples/s; <= 16 KiB of client memory per
// in-flight request.
//
// Usage: tinker-bench-sampling-client [seconds-per-point=2]
#include "programs/bench/raw_tinker_client.hpp"
#include "support/heap_probe.hpp"

#include <tinker/local/server.hpp>
#include <tinker/tinker.hpp>

#include <boost/asio/detached.hpp>
#include <boost/asio/use_future.hpp>

#include <malloc.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

using namespace tinker::bench;

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kPairs = 5;  ///< (raw, SDK) pairs at 64 in flight; the goal's ratio is their median

// Forks the server; returns its port and pid. The child stops when the pipe to it closes.
std::pair<std::uint16_t, pid_t> fork_server(int& keepalive_fd) {
  int port_pipe[2];
  int life_pipe[2];
  if (pipe(port_pipe) != 0 || pipe(life_pipe) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    close(port_pipe[0]);
    close(life_pipe[1]);
    tinker::local::ServerOptions options;
    options.null_model = true;
    options.log_level = tinker::LogLevel::off;
    options.request_log_limit = 1000;
    // Results are fetched at once here; kept for the default hour, a few million of them made the
    // server slower (and bigger) point after point, which charged whichever loop ran later.
    options.result_retention = std::chrono::seconds(5);
    // The raw loop polls each result itself: the SDK must too, or the comparison is of two protocols
    // (`tinker-bench sample --compare-raw` compares them with the batched result poll on both sides).
    options.client_config.sample_use_retrieve_futures = false;
    tinker::local::Server server(options);
    server.start();
    const std::uint16_t port = server.port();
    if (write(port_pipe[1], &port, sizeof port) != sizeof port) _exit(1);
    char byte;
    while (read(life_pipe[0], &byte, 1) > 0) {
    }
    server.stop();
    _exit(0);
  }
  close(port_pipe[1]);
  close(life_pipe[0]);
  std::uint16_t port = 0;
  if (read(port_pipe[0], &port, sizeof port) != sizeof port) throw std::runtime_error("the server did not start");
  close(port_pipe[0]);
  keepalive_fd = life_pipe[1];
  return {port, pid};
}

class Point {
 public:
  double samples_per_second = 0;
  double cpu_us_per_sample = 0;
  double server_cpu_us_per_sample = 0;
  double thread_user_us_per_sample = 0;    ///< the io thread's (the client's) user CPU
  double thread_system_us_per_sample = 0;  ///< ... and system CPU
  double allocations_per_sample = 0;       ///< on the io thread
  double heap_bytes_per_sample = 0;
};

// This thread's user and system CPU seconds.
std::pair<double, double> thread_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  const auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; };
  return {seconds(usage.ru_utime), seconds(usage.ru_stime)};
}

// The server child's CPU time (user + system), from /proc: getrusage sees children only once
// they have exited. Reported so a client that makes the server work harder per sample shows.
pid_t server_pid = 0;

double server_cpu_seconds() {
  std::ifstream stat("/proc/" + std::to_string(server_pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  std::istringstream fields(line.substr(line.rfind(')') + 2));  // the name may hold spaces
  std::string field;
  double ticks = 0;
  for (int index = 3; index <= 15 && fields >> field; ++index) {
    if (index >= 14) ticks += std::stod(field);  // utime, stime
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

class Counter {
 public:
  Clock::time_point deadline;
  std::int64_t samples = 0;
  std::int64_t next_seq = 0;
  int active = 0;  ///< workers still running
  std::string error;
};

// The raw loop: one connection per worker, asample then polls until the result is there.
// `sdk_shaped`: the SDK's headers and bodies (the goal's baseline); otherwise the fewest headers
// the server accepts (a reference: what the protocol's headers cost the server).
asio::awaitable<void> raw_worker(Connection* connection, const Fixture* fixture, Counter* counter, bool sdk_shaped) {
  SdkShapedRequests shape(connection->remote_port());
  try {
    while (Clock::now() < counter->deadline) {
      const std::int64_t seq_id = counter->next_seq++;
      if (sdk_shaped) {
        const std::string ticket =
            co_await connection->exchange_serialized(shape.sample(fixture->sampling_session_id, seq_id));
        co_await complete(*connection, field(ticket, "request_id"), &shape);
      } else {
        const std::string ticket = co_await connection->exchange(bhttp::verb::post, "/api/v1/asample",
                                                                 sample_body(fixture->sampling_session_id, seq_id));
        co_await complete(*connection, field(ticket, "request_id"));
      }
      ++counter->samples;
    }
  } catch (const std::exception& e) {
    counter->error = e.what();
  }
  --counter->active;
}

// Each point runs this long before its counters start: the SDK's pools open their connections
// and its session starts (the raw loop connects before it starts), and both reach a steady state.
constexpr auto kWarmUp = std::chrono::milliseconds(300);

// Set before the workers are spawned: co_spawn may run a worker up to its first suspension at once.
void start_clock(Counter& counter, double seconds) {
  counter.deadline =
      Clock::now() + kWarmUp + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

Point measure(asio::io_context& io, Counter& counter) {
  const auto warm_until = Clock::now() + kWarmUp;
  while (counter.active > 0 && Clock::now() < warm_until) io.run_one_for(std::chrono::milliseconds(10));
  const auto start = Clock::now();
  const std::int64_t samples_before = counter.samples;
  const double cpu_before = cpu_seconds(RUSAGE_SELF);
  const double server_cpu_before = server_cpu_seconds();
  const auto [user_before, system_before] = thread_cpu_seconds();
  const probes::HeapCounts heap_before = probes::heap;
  probes::counting = true;
  while (counter.active > 0) io.run_one();  // the client's heartbeat keeps io busy: run until done
  probes::counting = false;
  const auto [user_after, system_after] = thread_cpu_seconds();
  const probes::HeapCounts heap = probes::heap - heap_before;
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  if (!counter.error.empty()) throw std::runtime_error(counter.error);
  const auto samples = static_cast<double>(counter.samples - samples_before);
  Point point;
  point.samples_per_second = samples / elapsed;
  point.cpu_us_per_sample = (cpu_seconds(RUSAGE_SELF) - cpu_before) * 1e6 / samples;
  point.server_cpu_us_per_sample = (server_cpu_seconds() - server_cpu_before) * 1e6 / samples;
  point.thread_user_us_per_sample = (user_after - user_before) * 1e6 / samples;
  point.thread_system_us_per_sample = (system_after - system_before) * 1e6 / samples;
  point.allocations_per_sample = static_cast<double>(heap.allocations) / samples;
  point.heap_bytes_per_sample = static_cast<double>(heap.bytes) / samples;
  return point;
}

Point raw_point(const tcp::endpoint& endpoint, int in_flight, double seconds, bool sdk_shaped) {
  asio::io_context io;
  std::vector<std::unique_ptr<Connection>> connections;
  for (int i = 0; i < in_flight; ++i) connections.push_back(std::make_unique<Connection>(io, endpoint));
  Fixture fixture;
  asio::co_spawn(io, prepare(connections[0].get(), &fixture), [](std::exception_ptr e) {
    if (e) std::rethrow_exception(e);
  });
  io.run();
  io.restart();
  Counter counter;
  counter.next_seq = 1000;
  counter.active = in_flight;
  start_clock(counter, seconds);
  for (auto& connection : connections)
    asio::co_spawn(io, raw_worker(connection.get(), &fixture, &counter, sdk_shaped), asio::detached);
  return measure(io, counter);
}

asio::awaitable<void> sdk_worker(tinker::SamplingClient sampler, Counter* counter, bool once) {
  const tinker::ModelInput prompt = tinker::ModelInput::from_ints(std::vector<tinker::TokenId>{11, 12, 13});
  tinker::SamplingParams params(8, 1.0);
  params.seed = 1;
  try {
    do {
      auto future = co_await sampler.async_sample(prompt, 1, params, tinker::SampleOptions(), tinker::use_awaitable);
      ++counter->next_seq;  // submitted
      co_await future.async_get(tinker::use_awaitable);
      ++counter->samples;
    } while (!once && Clock::now() < counter->deadline);
  } catch (const std::exception& e) {
    counter->error = e.what();
  }
  --counter->active;
}

asio::awaitable<tinker::SamplingClient> make_sampler(tinker::ServiceClient& service) {
  const auto source = tinker::SamplingSource::from_base_model("tinker-local/tiny-lm");
  co_return co_await service.async_create_sampling_client(source, tinker::use_awaitable);
}

tinker::SamplingClient sampler_of(asio::io_context& io, tinker::ServiceClient& service) {
  auto future = asio::co_spawn(io, make_sampler(service), asio::use_future);
  while (future.wait_for(std::chrono::seconds(0)) != std::future_status::ready) io.run_one();
  return future.get();
}

tinker::ServiceClientOptions client_options(std::uint16_t port) {
  tinker::ClientOptions client("http://127.0.0.1:" + std::to_string(port), tinker::Secret(kApiKey));
  client.log_level = tinker::LogLevel::error;
  client.telemetry_enabled = false;
  return tinker::ServiceClientOptions(client);
}

Point sdk_point(std::uint16_t port, int in_flight, double seconds) {
  asio::io_context io;
  Point point;
  {
    tinker::ServiceClient service(io.get_executor(), client_options(port));
    tinker::SamplingClient sampler = sampler_of(io, service);
    Counter counter;
    counter.active = in_flight;
    start_clock(counter, seconds);
    for (int i = 0; i < in_flight; ++i) asio::co_spawn(io, sdk_worker(sampler, &counter, false), asio::detached);
    point = measure(io, counter);
  }
  io.poll();
  return point;
}

// Heap per in-flight sample: N samples pending on a paused server queue.
double memory_per_in_flight(std::uint16_t port, const tcp::endpoint& endpoint, int in_flight) {
  asio::io_context admin_io;
  Connection admin(admin_io, endpoint);
  auto set_faults = [&](bhttp::verb verb, std::string body) {
    asio::co_spawn(admin_io, admin.exchange(verb, "/_admin/faults", std::move(body)), asio::detached);
    admin_io.run();
    admin_io.restart();
  };
  asio::io_context io;
  double per_request = 0;
  {
    tinker::ServiceClient service(io.get_executor(), client_options(port));
    tinker::SamplingClient sampler = sampler_of(io, service);
    set_faults(bhttp::verb::post, R"(["asample:pause_queue=4s"])");
    Counter counter;
    counter.active = in_flight;
    io.run_for(std::chrono::milliseconds(200));  // warm the pools up a little
    const std::size_t before = mallinfo2().uordblks;
    for (int i = 0; i < in_flight; ++i) asio::co_spawn(io, sdk_worker(sampler, &counter, true), asio::detached);
    while (counter.next_seq < in_flight) io.run_one_for(std::chrono::milliseconds(100));
    io.run_for(std::chrono::milliseconds(300));  // their polls are out
    const std::size_t during = mallinfo2().uordblks;
    per_request = static_cast<double>(during - before) / in_flight;
    set_faults(bhttp::verb::delete_, "");
    while (counter.samples < in_flight && counter.error.empty()) io.run_one_for(std::chrono::milliseconds(100));
    if (!counter.error.empty()) throw std::runtime_error(counter.error);
  }
  io.poll();
  return per_request;
}

}  // namespace

int main(int argc, char** argv) try {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 2.0;
  int keepalive_fd = -1;
  const auto [port, pid] = fork_server(keepalive_fd);
  server_pid = pid;
  const tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), port);

  std::cout << std::fixed << std::setprecision(1) << "sampling, null-model tinker-local in a child process, " << seconds
            << " s per point\n";
  // The machine's speed drifts (other processes, idle-CPU wake-ups: doc/performance.md), so the raw
  // loop and the SDK at 64 in flight run in alternation, five pairs back to back, and the goal's
  // ratio is the median of the five pairs' ratios.
  std::vector<std::pair<Point, Point>> pairs;  // (raw, SDK) at 64 in flight
  for (int round = 0; round < kPairs; ++round) {
    // Alternating which loop goes first cancels a drift within a pair.
    Point raw;
    Point sdk;
    if (round % 2 == 0) {
      raw = raw_point(endpoint, 64, seconds, true);
      sdk = sdk_point(port, 64, seconds);
    } else {
      sdk = sdk_point(port, 64, seconds);
      raw = raw_point(endpoint, 64, seconds, true);
    }
    pairs.emplace_back(raw, sdk);
  }
  const auto ratio = [](const std::pair<Point, Point>& pair) {
    return pair.second.samples_per_second / pair.first.samples_per_second;
  };
  std::vector<std::pair<Point, Point>> by_ratio = pairs;
  std::sort(by_ratio.begin(), by_ratio.end(), [&](const auto& a, const auto& b) { return ratio(a) < ratio(b); });
  const auto& [raw, sdk64] = by_ratio[kPairs / 2];
  std::cout << "raw Beast loop, 64 in flight:   " << raw.samples_per_second << " samples/s, " << raw.cpu_us_per_sample
            << " us CPU/sample (server " << raw.server_cpu_us_per_sample << ")\n";
  const auto thread_costs = [](const Point& point) {
    std::cout << "user " << point.thread_user_us_per_sample << " us, system " << point.thread_system_us_per_sample
              << " us, " << point.allocations_per_sample << " allocations, " << std::setprecision(0)
              << point.heap_bytes_per_sample << " heap bytes" << std::setprecision(1);
  };
  std::cout << "  client thread per sample, raw: ";
  thread_costs(raw);
  std::cout << "\n  client thread per sample, SDK: ";
  thread_costs(sdk64);
  std::cout << "  (the pair of the median ratio)\n";
  const Point minimal = raw_point(endpoint, 64, seconds, false);
  std::cout << "  (reference: the raw loop with 4 headers per request: " << minimal.samples_per_second << " samples/s, "
            << minimal.cpu_us_per_sample << " us CPU/sample, server " << minimal.server_cpu_us_per_sample << ")\n";
  for (int in_flight : {1, 64, 512, 4096}) {
    const Point sdk = in_flight == 64 ? sdk64 : sdk_point(port, in_flight, seconds);
    std::cout << "SDK, " << std::setw(4) << in_flight << " in flight:          " << sdk.samples_per_second
              << " samples/s, " << sdk.cpu_us_per_sample << " us CPU/sample (server " << sdk.server_cpu_us_per_sample
              << ")";
    if (in_flight == 64) {
      std::cout << "  (" << 100.0 * ratio(by_ratio[kPairs / 2]) << "% of raw: median of the pairs";
      for (const auto& pair : pairs) std::cout << " " << 100.0 * ratio(pair) << "%";
      std::cout << ")";
    }
    std::cout << "\n";
  }
  for (int in_flight : {512, 4096}) {
    std::cout << "client heap per in-flight sample (" << in_flight
              << " pending): " << memory_per_in_flight(port, endpoint, in_flight) / 1024.0 << " KiB (goal <= 16)\n";
  }
  close(keepalive_fd);
  waitpid(pid, nullptr, 0);
  return EXIT_SUCCESS;
} catch (const std::exception& e) {
  std::cerr << "error: " << e.what() << "\n";
  return EXIT_FAILURE;
}
