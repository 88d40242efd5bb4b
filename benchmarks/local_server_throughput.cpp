// tinker-local throughput in null-model mode (issue 4): how many simple requests per second the
// server answers on loopback with its single io thread, so it is never the bottleneck of a client
// benchmark. Goal: >= 20k requests/s.
//
// The server runs in-process (its own io thread; null-model mode, so no worker computes). The
// load comes from raw Beast keep-alive connections on this thread, each a coroutine that sends
// requests back to back for a fixed time. Three request kinds:
//   healthz   GET  /api/v1/healthz                        (routing + auth + tiny JSON)
//   retrieve  POST /api/v1/retrieve_future of a completed   (JSON body decode + engine lookup +
//             optim_step future                             cached result)
//   sample    POST /api/v1/asample, then the poll           (a full sampling exchange: 2 requests)
// Besides the achieved rate it reports the server's CPU time per request (process CPU minus this
// thread's CPU), whose inverse is the rate one server thread could sustain with a faster client:
// on a 2-core VM the client competes with the server for the cores.
//
// Usage: tinker-bench-local-server [seconds-per-run=2] [runs=3] [connections=16]
#include "programs/bench/raw_tinker_client.hpp"

#include <tinker/local/server.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;

using namespace tinker::bench;

namespace {

enum class Kind { healthz, retrieve, sample };

struct LoadState {
  std::chrono::steady_clock::time_point deadline;
  std::int64_t requests = 0;
  std::int64_t next_sample_seq = 0;
  std::string error;
};

asio::awaitable<void> load_loop(Connection* connection, Kind kind, const Fixture* fixture, LoadState* state) {
  const std::string poll = R"({"request_id":")" + fixture->completed_request_id + R"(","allow_metadata_only":false})";
  try {
    while (std::chrono::steady_clock::now() < state->deadline) {
      if (kind == Kind::healthz) {
        co_await connection->exchange(bhttp::verb::get, "/api/v1/healthz", std::string());
        state->requests += 1;
      } else if (kind == Kind::retrieve) {
        co_await connection->exchange(bhttp::verb::post, "/api/v1/retrieve_future", poll);
        state->requests += 1;
      } else {
        const std::string body = sample_body(fixture->sampling_session_id, state->next_sample_seq++);
        const std::string ticket = co_await connection->exchange(bhttp::verb::post, "/api/v1/asample", body);
        co_await complete(*connection, field(ticket, "request_id"));
        state->requests += 2;
      }
    }
  } catch (const std::exception& e) {
    state->error = e.what();
  }
}

struct RunResult {
  double requests_per_second = 0;
  double server_cpu_us_per_request = 0;
};

RunResult run_once(const tcp::endpoint& endpoint, Kind kind, const Fixture& fixture, int connections, double seconds) {
  asio::io_context context;
  std::vector<std::unique_ptr<Connection>> pool;
  for (int i = 0; i < connections; ++i) pool.push_back(std::make_unique<Connection>(context, endpoint));
  LoadState state;
  const auto start = std::chrono::steady_clock::now();
  state.deadline =
      start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
  const double process_cpu_before = cpu_seconds(RUSAGE_SELF);
  const double client_cpu_before = cpu_seconds(RUSAGE_THREAD);
  for (auto& connection : pool)
    asio::co_spawn(context, load_loop(connection.get(), kind, &fixture, &state), asio::detached);
  context.run();
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double client_cpu = cpu_seconds(RUSAGE_THREAD) - client_cpu_before;
  const double server_cpu = cpu_seconds(RUSAGE_SELF) - process_cpu_before - client_cpu;
  if (!state.error.empty()) throw std::runtime_error(state.error);
  RunResult result;
  result.requests_per_second = static_cast<double>(state.requests) / elapsed;
  result.server_cpu_us_per_request = server_cpu * 1e6 / static_cast<double>(state.requests);
  return result;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 2.0;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 3;
  const int connections = argc > 3 ? std::atoi(argv[3]) : 16;
  try {
    tinker::local::ServerOptions options;
    options.null_model = true;
    options.log_level = tinker::LogLevel::error;
    tinker::local::Server server(std::move(options));
    server.start();
    const tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), server.port());

    Fixture fixture;
    {
      asio::io_context context;
      Connection connection(context, endpoint);
      asio::co_spawn(context, prepare(&connection, &fixture), [](std::exception_ptr e) {
        if (e) std::rethrow_exception(e);
      });
      context.run();
    }

    std::cout << "tinker-local null-model throughput, " << connections << " connections, " << runs << " runs of "
              << seconds << " s (medians)\n";
    const std::pair<Kind, const char*> kinds[] = {
        {Kind::healthz, "healthz"}, {Kind::retrieve, "retrieve_future"}, {Kind::sample, "asample+poll"}};
    for (const auto& [kind, name] : kinds) {
      std::vector<double> rates;
      std::vector<double> cpu;
      for (int run = 0; run < runs; ++run) {
        const RunResult result = run_once(endpoint, kind, fixture, connections, seconds);
        rates.push_back(result.requests_per_second);
        cpu.push_back(result.server_cpu_us_per_request);
      }
      const double cpu_us = median(cpu);
      std::cout << "  " << name << ": " << static_cast<std::int64_t>(median(rates)) << " req/s achieved, server CPU "
                << cpu_us << " us/request (one server thread could sustain ~" << static_cast<std::int64_t>(1e6 / cpu_us)
                << " req/s)\n";
    }
    server.stop();
  } catch (const std::exception& e) {
    std::cerr << "tinker-bench-local-server: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
