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

namespace {

constexpr auto as_tuple_awaitable = asio::as_tuple(asio::use_awaitable);
constexpr const char* kApiKey = "tml-bench-key";

double cpu_seconds(int who) {
  rusage usage{};
  getrusage(who, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

// One keep-alive connection with a reusable buffer; `exchange` sends one request and reads the
// answer, returning its body (throws on transport errors or a non-200 status).
class Connection {
 public:
  Connection(asio::io_context& context, const tcp::endpoint& endpoint) : stream_(context) {
    stream_.connect(endpoint);
    stream_.socket().set_option(tcp::no_delay(true));
  }

  asio::awaitable<std::string> exchange(bhttp::verb method, std::string target, std::string body) {
    bhttp::request<bhttp::string_body> request(method, target, 11);
    request.set(bhttp::field::host, "127.0.0.1");
    request.set("X-API-Key", kApiKey);
    if (method == bhttp::verb::post) request.set(bhttp::field::content_type, "application/json");
    request.body() = std::move(body);
    request.prepare_payload();
    auto [write_error, written] = co_await bhttp::async_write(stream_, request, as_tuple_awaitable);
    (void)written;
    if (write_error) throw std::runtime_error("write: " + write_error.message());
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(1 << 20);
    auto [read_error, read] = co_await bhttp::async_read(stream_, buffer_, parser, as_tuple_awaitable);
    (void)read;
    if (read_error) throw std::runtime_error("read: " + read_error.message());
    if (parser.get().result_int() != 200) {
      throw std::runtime_error("status " + std::to_string(parser.get().result_int()) + ": " + parser.get().body());
    }
    co_return std::move(parser.get().body());
  }

 private:
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
};

std::string field(const std::string& json, const char* key) {
  return std::string(boost::json::parse(json).as_object().at(key).as_string());
}

// Ids of a session, a model with one completed optim_step, and a sampling session.
struct Fixture {
  std::string session_id;
  std::string completed_request_id;
  std::string sampling_session_id;
};

asio::awaitable<std::string> complete(Connection& connection, std::string request_id) {
  const std::string poll = R"({"request_id":")" + request_id + R"(","allow_metadata_only":false})";
  for (;;) {
    std::string body = co_await connection.exchange(bhttp::verb::post, "/api/v1/retrieve_future", poll);
    if (body.find("\"try_again\"") == std::string::npos) co_return body;
  }
}

asio::awaitable<void> prepare(Connection* connection, Fixture* fixture) {
  const std::string session =
      co_await connection->exchange(bhttp::verb::post, "/api/v1/create_session",
                                    R"({"tags":[],"user_metadata":{},"sdk_version":"0.25.0","type":"create_session"})");
  fixture->session_id = field(session, "session_id");
  const std::string ticket = co_await connection->exchange(
      bhttp::verb::post, "/api/v1/create_model",
      R"({"session_id":")" + fixture->session_id +
          R"(","model_seq_id":0,"base_model":"tinker-local/tiny-lm","lora_config":{"rank":8},"type":"create_model"})");
  const std::string model_id = field(co_await complete(*connection, field(ticket, "request_id")), "model_id");
  const std::string optim = co_await connection->exchange(
      bhttp::verb::post, "/api/v1/optim_step",
      R"({"adam_params":{"learning_rate":0.0001},"model_id":")" + model_id + R"(","seq_id":1,"type":"optim_step"})");
  fixture->completed_request_id = field(optim, "request_id");
  co_await complete(*connection, fixture->completed_request_id);
  const std::string sampler = co_await connection->exchange(
      bhttp::verb::post, "/api/v1/create_sampling_session",
      R"({"session_id":")" + fixture->session_id +
          R"(","sampling_session_seq_id":1,"base_model":"tinker-local/tiny-lm","type":"create_sampling_session"})");
  fixture->sampling_session_id = field(sampler, "sampling_session_id");
}

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
        const std::string body =
            R"({"num_samples":1,"prompt":{"chunks":[{"tokens":[11,12,13],"type":"encoded_text"}]},)"
            R"("sampling_params":{"max_tokens":8,"seed":1,"temperature":1.0,"top_k":-1,"top_p":1.0},)"
            R"("sampling_session_id":")" +
            fixture->sampling_session_id + R"(","seq_id":)" + std::to_string(state->next_sample_seq++) +
            R"(,"type":"sample"})";
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
