// HTTP transport throughput (issue 3): requests per second through tinker::http::HttpClient
// against a raw Beast client loop, both talking to the same in-process loopback server in the
// same run, with 1 and 64 keep-alive connections, plus heap allocations per request on the
// client side. Goal: the SDK reaches >= 85 % of the raw loop's rate.
//
// Layout: the server has its own io_context and thread; the client side (raw loop or
// HttpClient) runs on an io_context driven by the benchmark thread. One iteration is a batch of
// kBatch POSTs divided among the connections. Allocations are counted by heap_probe.hpp (operator
// new and aligned_alloc, which Asio's recycling allocator calls directly) on the benchmark thread
// only (a thread_local switch), so the server's allocations never show up in
// `allocs_per_request`. BM_Http_RawSdkHeaders is a diagnostic: the raw loop sending the SDK's
// header set, which splits the gap into "cost of the headers" and "cost of the layer".
//
// Run through benchmarks/http_vs_raw.sh for medians and ratios. The rates depend on the VM's
// cross-thread wake-up latency (doc/performance.md): compare the two sides of one run, never
// numbers of different runs.
#include "http/client.hpp"
#include "http/headers.hpp"
#include "support/heap_probe.hpp"

#include <tinker/config.hpp>
#include <tinker/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;
constexpr auto as_tuple_awaitable = asio::as_tuple(asio::use_awaitable);

constexpr int kBatch = 2048;  // requests per iteration, divided among the connections
constexpr std::string_view kPath = "/api/v1/x";
constexpr std::string_view kApiKey = "tml-benchmark-0123456789abcdef";
// ~100 bytes of JSON, the same for both sides.
constexpr std::string_view kRequestBody =
    R"({"model_id":"bench-model-0001","seq_id":42,"input":{"tokens":[1,2,3,4,5,6,7,8]},"loss_fn":"cross_entropy"})";
// ~30 bytes of JSON answered to every POST.
constexpr std::string_view kResponseBody = R"({"status":"ok","request_id":7})";

// ---------------------------------------------------------------------------------------------
// The loopback server: HTTP/1.1 keep-alive, one coroutine per connection, own thread.

asio::awaitable<void> serve_session(tcp::socket socket) {
  beast::flat_buffer buffer;
  for (;;) {
    bhttp::request_parser<bhttp::string_body> parser;
    parser.body_limit(1024 * 1024);
    auto [read_error, read] = co_await bhttp::async_read(socket, buffer, parser, as_tuple_awaitable);
    (void)read;
    if (read_error) break;
    const bool keep_alive = parser.get().keep_alive();
    bhttp::response<bhttp::string_body> response(bhttp::status::ok, parser.get().version());
    response.set(bhttp::field::content_type, "application/json");
    response.keep_alive(keep_alive);
    response.body() = kResponseBody;
    response.prepare_payload();
    auto [write_error, written] = co_await bhttp::async_write(socket, response, as_tuple_awaitable);
    (void)written;
    if (write_error || !keep_alive) break;
  }
  beast::error_code ignored;
  socket.shutdown(tcp::socket::shutdown_send, ignored);
}

asio::awaitable<void> accept_loop(tcp::acceptor* acceptor) {
  for (;;) {
    auto [ec, socket] = co_await acceptor->async_accept(as_tuple_awaitable);
    if (ec) co_return;
    socket.set_option(tcp::no_delay(true));
    asio::co_spawn(acceptor->get_executor(), serve_session(std::move(socket)), asio::detached);
  }
}

class LoopbackServer {
 public:
  LoopbackServer() : acceptor_(context_) {
    const tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), 0);
    acceptor_.open(endpoint.protocol());
    acceptor_.set_option(tcp::acceptor::reuse_address(true));
    acceptor_.bind(endpoint);
    acceptor_.listen();
    port_ = acceptor_.local_endpoint().port();
    asio::co_spawn(context_, accept_loop(&acceptor_), asio::detached);
    thread_ = std::thread([this] { context_.run(); });
  }
  ~LoopbackServer() {
    context_.stop();
    thread_.join();
  }
  LoopbackServer(const LoopbackServer&) = delete;
  LoopbackServer& operator=(const LoopbackServer&) = delete;

  std::uint16_t port() const noexcept { return port_; }
  tcp::endpoint endpoint() const { return tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_); }

 private:
  asio::io_context context_{1};
  tcp::acceptor acceptor_;
  std::uint16_t port_ = 0;
  std::thread thread_;
};

// One server for every benchmark case of the process.
LoopbackServer& shared_server() {
  static LoopbackServer server;
  return server;
}

// The client side's io_context, run by the benchmark thread.
asio::io_context& client_context() {
  static asio::io_context context{1};
  return context;
}

// ---------------------------------------------------------------------------------------------
// A batch: `remaining` connection loops; the last one to finish stops the io_context.

class Batch {
 public:
  explicit Batch(asio::io_context& context, int loops) : context_(&context), remaining_(loops) {}

  void done() {
    if (--remaining_ == 0) context_->stop();
  }
  void fail(std::string what) {
    if (error.empty()) error = std::move(what);
  }

  std::string error;  ///< the first failure, empty if every request got a 200

 private:
  asio::io_context* context_;
  int remaining_;
};

// Runs `spawn(i, count_i)` for every connection i, then the io_context until all are done.
template <class Spawn>
std::string run_batch(int connections, int total, Spawn&& spawn) {
  asio::io_context& context = client_context();
  Batch batch(context, connections);
  for (int i = 0; i < connections; ++i) {
    const int count = total / connections + (i < total % connections ? 1 : 0);
    spawn(i, count, &batch);
  }
  context.restart();
  context.run();
  return batch.error;
}

// Runs whatever became ready after a teardown (cancelled timers, closed sockets).
void drain() {
  asio::io_context& context = client_context();
  context.restart();
  context.poll();
}

class AllocationWindow {
 public:
  AllocationWindow() : allocations_(probes::heap.allocations), bytes_(probes::heap.bytes) {}
  std::uint64_t allocations() const { return probes::heap.allocations - allocations_; }
  std::uint64_t bytes() const { return probes::heap.bytes - bytes_; }

 private:
  std::uint64_t allocations_;
  std::uint64_t bytes_;
};

// Runs the timed loop: one batch per iteration, allocations counted on this thread only.
// Not inlined, so that a profiler can collect just this part:
//   valgrind --tool=callgrind --collect-atstart=no '--toggle-collect=*timed_loop*' ...
template <class RunOne>
[[gnu::noinline]] void timed_loop(benchmark::State& state, RunOne&& run_one) {
  const AllocationWindow window;
  std::int64_t requests = 0;
  for (auto _ : state) {
    probes::counting = true;
    std::string error = run_one();
    probes::counting = false;
    if (!error.empty()) {
      state.SkipWithError(error.c_str());
      break;
    }
    requests += kBatch;
  }
  if (requests == 0) return;
  state.SetItemsProcessed(requests);
  state.counters["allocs_per_request"] =
      benchmark::Counter(static_cast<double>(window.allocations()) / static_cast<double>(requests));
  state.counters["bytes_per_request"] =
      benchmark::Counter(static_cast<double>(window.bytes()) / static_cast<double>(requests));
}

// ---------------------------------------------------------------------------------------------
// Raw baseline: Beast on tcp_stream, a minimal realistic request (Host, Content-Type,
// Content-Length, X-API-Key), one write timeout per request, response read through a parser
// with a body limit; the flat_buffer is reused per connection.
//
// Diagnostic variant (BM_Http_RawSdkHeaders): the same loop sending the SDK's header set (the
// headers sent on every request, Accept, a fresh idempotency key, retry count, read timeout),
// so the wire bytes and the server's work equal the SDK's. SDK / this = the layer's own cost;
// this / minimal raw = the cost of the headers the protocol asks for.

class RawConnection {
 public:
  explicit RawConnection(asio::io_context& context) : stream(context) {}
  beast::tcp_stream stream;
  beast::flat_buffer buffer;
};

class RawTarget {
 public:
  std::string host;
  std::string path;
  std::string body;
  std::vector<tinker::http::Header> headers;  ///< after Host, before Content-Type
  bool idempotency_key = false;               ///< add X-Idempotency-Key + retry count + read timeout
};

asio::awaitable<void> raw_loop(RawConnection* connection, int count, const RawTarget* target, Batch* batch) {
  for (int i = 0; i < count; ++i) {
    bhttp::request<bhttp::string_body> request(bhttp::verb::post, target->path, 11);
    request.set(bhttp::field::host, target->host);
    for (const tinker::http::Header& header : target->headers) request.insert(header.name, header.value);
    request.set(bhttp::field::content_type, "application/json");
    if (target->idempotency_key) {
      request.insert("X-Idempotency-Key", tinker::http::new_idempotency_key());
      request.insert("x-stainless-retry-count", "0");
      request.insert("x-stainless-read-timeout", "60");
    }
    request.body() = target->body;
    request.prepare_payload();
    connection->stream.expires_after(std::chrono::seconds(30));
    auto [write_error, written] = co_await bhttp::async_write(connection->stream, request, as_tuple_awaitable);
    (void)written;
    if (write_error) {
      batch->fail("raw write: " + write_error.message());
      break;
    }
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(64 * 1024);
    auto [read_error, read] =
        co_await bhttp::async_read(connection->stream, connection->buffer, parser, as_tuple_awaitable);
    (void)read;
    if (read_error) {
      batch->fail("raw read: " + read_error.message());
      break;
    }
    if (parser.get().result_int() != 200 || parser.get().body().empty()) {
      batch->fail("raw: unexpected response");
      break;
    }
  }
  connection->stream.expires_never();
  batch->done();
}

void run_raw(benchmark::State& state, bool sdk_headers) {
  const int connections = static_cast<int>(state.range(0));
  LoopbackServer& server = shared_server();
  asio::io_context& context = client_context();

  RawTarget target;
  target.host = "127.0.0.1:" + std::to_string(server.port());
  target.path = std::string(kPath);
  target.body = std::string(kRequestBody);
  if (sdk_headers) {
    tinker::ClientOptions options("http://" + target.host, tinker::Secret(std::string(kApiKey)));
    target.headers = tinker::http::standard_headers(options);
    target.headers.emplace_back("X-API-Key", std::string(kApiKey));
    target.headers.emplace_back("Accept", "application/json");
    target.idempotency_key = true;
  } else {
    target.headers.emplace_back("X-API-Key", std::string(kApiKey));
  }

  std::vector<std::unique_ptr<RawConnection>> pool;
  for (int i = 0; i < connections; ++i) {
    auto connection = std::make_unique<RawConnection>(context);
    connection->stream.connect(server.endpoint());
    connection->stream.socket().set_option(tcp::no_delay(true));
    pool.push_back(std::move(connection));
  }
  const auto run_one = [&](int total) {
    return run_batch(connections, total, [&](int i, int count, Batch* batch) {
      asio::co_spawn(context, raw_loop(pool[static_cast<std::size_t>(i)].get(), count, &target, batch), asio::detached);
    });
  };
  if (std::string error = run_one(connections * 4); !error.empty()) {  // warm-up
    state.SkipWithError(error.c_str());
  } else {
    timed_loop(state, [&] { return run_one(kBatch); });
  }
  state.counters["connections_opened"] = benchmark::Counter(static_cast<double>(pool.size()));
  pool.clear();
  drain();
}

void BM_Http_Raw(benchmark::State& state) {
  run_raw(state, false);
}
void BM_Http_RawSdkHeaders(benchmark::State& state) {
  run_raw(state, true);
}

// ---------------------------------------------------------------------------------------------
// The SDK: HttpClient with a training pool of `connections` connections (and as many idle ones
// kept), `connections` coroutines each sending its share of the batch sequentially.

asio::awaitable<void> sdk_loop(tinker::http::HttpClient* client, const tinker::http::Request* prototype, int count,
                               Batch* batch) {
  for (int i = 0; i < count; ++i) {
    tinker::http::Request request = *prototype;
    tinker::diagnostics diag;
    auto [ec, response] = co_await client->async_send(std::move(request), diag, as_tuple_awaitable);
    if (ec) {
      batch->fail("sdk: " + ec.message() + " " + diag.message);
      break;
    }
    if (response.status != 200 || response.body.empty()) {
      batch->fail("sdk: unexpected response");
      break;
    }
  }
  batch->done();
}

void BM_Http_Sdk(benchmark::State& state) {
  const int connections = static_cast<int>(state.range(0));
  LoopbackServer& server = shared_server();
  asio::io_context& context = client_context();

  tinker::ClientOptions options("http://127.0.0.1:" + std::to_string(server.port()),
                                tinker::Secret(std::string(kApiKey)));
  options.telemetry_enabled = false;
  const auto limit = static_cast<std::size_t>(connections);
  options.pools.training = tinker::PoolLimits(limit, limit);

  tinker::http::Request prototype(tinker::http::Method::post, std::string(kPath));
  prototype.body = std::string(kRequestBody);
  prototype.content_type = "application/json";

  double opened = 0;
  {
    tinker::http::HttpClient client(context.get_executor(), std::move(options));
    const auto run_one = [&](int total) {
      return run_batch(connections, total, [&](int, int count, Batch* batch) {
        asio::co_spawn(context, sdk_loop(&client, &prototype, count, batch), asio::detached);
      });
    };
    if (std::string error = run_one(connections * 4); !error.empty()) {  // warm-up: opens the connections
      state.SkipWithError(error.c_str());
    } else {
      timed_loop(state, [&] { return run_one(kBatch); });
      opened = static_cast<double>(client.stats(tinker::http::PoolKind::training).created);
    }
  }
  state.counters["connections_opened"] = benchmark::Counter(opened);
  drain();
}

// Side by side: 1 connection, then 64 (use --benchmark_enable_random_interleaving=true with
// repetitions to spread drifting machine load over both sides evenly).
BENCHMARK(BM_Http_Raw)->Arg(1)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Http_Sdk)->Arg(1)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Http_Raw)->Arg(64)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Http_Sdk)->Arg(64)->UseRealTime()->Unit(benchmark::kMillisecond);
// Diagnostic: the raw loop with the SDK's header set (see above).
BENCHMARK(BM_Http_RawSdkHeaders)->Arg(1)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Http_RawSdkHeaders)->Arg(64)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  // Loopback must never go through a proxy from the environment.
  for (const char* name : {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"}) ::unsetenv(name);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
