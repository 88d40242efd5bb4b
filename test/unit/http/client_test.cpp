// HttpClient against a scripted loopback server: requests and headers, transport retries with every
// rule and Retry-After form (fake clock), pools, stale connections, timeouts, limits, truncation,
// cancellation, zstd bodies, and no API key in any error text.
#include "http/client.hpp"

#include "support/fake_clock.hpp"
#include "support/test_proxy.hpp"
#include "support/test_server.hpp"

#include <tinker/codec.hpp>

#include <gtest/gtest.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <cstdlib>
#include <future>
#include <map>
#include <string>
#include <vector>

namespace tinker::http {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;
using test::ScriptedResponse;
using test::ScriptedServer;
using test::ScriptedServerOptions;

constexpr const char* test_key = "tml-test-key-0123456789abcdef";

class Result {
 public:
  boost::system::error_code ec;
  Response response;
  diagnostics diag;
};

// Proxy variables are read from the process environment when a client is built: every test
// starts without them (so a developer's HTTP_PROXY cannot reroute loopback traffic) and the
// original values come back afterwards.
class ProxyEnvironmentGuard {
 public:
  static constexpr const char* names[] = {"HTTP_PROXY",  "http_proxy", "HTTPS_PROXY",
                                          "https_proxy", "NO_PROXY",   "no_proxy"};
  ProxyEnvironmentGuard() {
    for (const char* name : names) {
      if (const char* value = std::getenv(name)) saved_[name] = value;
      ::unsetenv(name);
    }
  }
  ~ProxyEnvironmentGuard() {
    for (const char* name : names) ::unsetenv(name);
    for (const auto& [name, value] : saved_) ::setenv(name.c_str(), value.c_str(), 1);
  }

 private:
  std::map<std::string, std::string> saved_;
};

Request post(std::string path, std::string body = "{}") {
  Request request(Method::post, std::move(path));
  request.body = std::move(body);
  request.content_type = "application/json";
  return request;
}

// A response that never comes: the server reads the request and stays silent.
ScriptedResponse silent() {
  ScriptedResponse response;
  response.no_response = true;
  return response;
}

class ClientTest : public ::testing::Test {
 protected:
  ProxyEnvironmentGuard proxy_environment_;

  ClientOptions options_for(const ScriptedServer& server) {
    ClientOptions options(server.base_url(), Secret(test_key));
    options.timeouts.request = milliseconds(2000);
    return options;
  }

  void make_client(ClientOptions options) {
    clock_ = std::make_shared<test::FakeClock>(io_.get_executor());
    client_ = std::make_unique<HttpClient>(io_.get_executor(), std::move(options), clock_, [] { return 0.0; });
  }

  using Outcome = std::tuple<boost::system::error_code, Response>;

  // Starts a request whose outcome arrives in a future (as_tuple(use_future) needs Boost 1.82).
  std::future<Outcome> start(Request request, diagnostics& diag,
                             asio::cancellation_slot slot = asio::cancellation_slot()) {
    auto promise = std::make_shared<std::promise<Outcome>>();
    auto future = promise->get_future();
    auto handler = [promise](boost::system::error_code ec, Response response) {
      promise->set_value(Outcome(ec, std::move(response)));
    };
    client_->async_send(std::move(request), diag, asio::bind_cancellation_slot(slot, std::move(handler)));
    return future;
  }

  Result send(Request request) {
    Result result;
    auto future = start(std::move(request), result.diag);
    if (!run_until(future)) return result;
    std::tie(result.ec, result.response) = future.get();
    return result;
  }

  // Sends a POST with `timeout` to a server that does not answer it: a timeout error, well before
  // the test's own limits.
  void expect_timeout_after(milliseconds timeout) {
    Request request = post("/x");
    request.timeout = timeout;
    const auto start = std::chrono::steady_clock::now();
    const Result result = send(request);
    EXPECT_EQ(result.ec, make_error_code(errc::timeout)) << result.diag.message;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
    EXPECT_FALSE(result.diag.message.empty());
  }

  // Runs the io_context until `future` is ready; false (and a test failure) after 20 s.
  template <class Future>
  bool run_until(Future& future) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (future.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      if (std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << "the request never completed";
        return false;
      }
      io_.run_one_for(milliseconds(10));
    }
    return true;
  }

  void TearDown() override {
    if (client_) client_->shutdown();
    client_.reset();
    io_.restart();
    io_.poll();
  }

  asio::io_context io_;
  std::shared_ptr<test::FakeClock> clock_;
  std::unique_ptr<HttpClient> client_;
};

TEST_F(ClientTest, SendsTheSpecHeaders) {
  ScriptedServer server;
  make_client(options_for(server));
  const Result get = send(Request(Method::get, "/api/v1/healthz"));
  ASSERT_FALSE(get.ec) << get.diag.message;
  EXPECT_EQ(get.response.status, 200);
  EXPECT_EQ(get.response.body, "{\"ok\":true}");
  ASSERT_FALSE(send(post("/api/v1/telemetry")).ec);

  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  const auto& g = requests[0];
  EXPECT_EQ(g.method, "GET");
  EXPECT_EQ(g.target, "/api/v1/healthz");
  EXPECT_EQ(g.header("x-api-key"), test_key);
  EXPECT_TRUE(g.header("user-agent")->starts_with("tinker-cpp/"));
  EXPECT_EQ(g.header("x-stainless-package-version"), "0.25.0");
  EXPECT_EQ(g.header("accept"), "application/json");
  EXPECT_EQ(g.header("x-stainless-retry-count"), "0");
  EXPECT_EQ(g.header("x-stainless-read-timeout"), "2");
  EXPECT_FALSE(g.header("x-idempotency-key").has_value());  // GET
  EXPECT_FALSE(g.header("content-type").has_value());
  const auto& p = requests[1];
  EXPECT_TRUE(p.header("x-idempotency-key")->starts_with("tinker-cpp-retry-"));
  EXPECT_EQ(p.header("content-type"), "application/json");
  EXPECT_EQ(p.body, "{}");
}

TEST_F(ClientTest, BaseUrlPathPrefixIsKept) {
  ScriptedServer server;
  ClientOptions options = options_for(server);
  options.base_url = server.base_url() + "/services/tinker-prod";
  make_client(options);
  ASSERT_FALSE(send(Request(Method::get, "/api/v1/healthz")).ec);
  EXPECT_EQ(server.requests().at(0).target, "/services/tinker-prod/api/v1/healthz");
}

TEST_F(ClientTest, PathsUnderARootBaseUrlAreSentAsGiven) {
  ScriptedServer server;
  ClientOptions options = options_for(server);
  options.base_url = server.base_url() + "/";
  make_client(options);
  ASSERT_FALSE(send(Request(Method::get, "/api/v1/healthz")).ec);
  ASSERT_FALSE(send(Request(Method::get, "api/v1/healthz")).ec);  // no leading '/': joined
  EXPECT_EQ(server.requests().at(0).target, "/api/v1/healthz");
  EXPECT_EQ(server.requests().at(1).target, "/api/v1/healthz");
}

TEST_F(ClientTest, RetriesKeepTheIdempotencyKeyAndCountAttempts) {
  ScriptedServer server;
  server.push(ScriptedResponse(500));
  server.push(ScriptedResponse(503));
  make_client(options_for(server));
  const Result result = send(post("/api/v1/create_model"));
  ASSERT_FALSE(result.ec) << result.diag.message;
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(requests[i].header("x-stainless-retry-count"), std::to_string(i));
    EXPECT_EQ(requests[i].header("x-idempotency-key"), requests[0].header("x-idempotency-key"));
  }
  EXPECT_EQ(clock_->sleeps, (std::vector<milliseconds>{milliseconds(500), milliseconds(1000)}));
}

TEST_F(ClientTest, RetriesExactlyTheRetryableStatuses) {
  for (const int status : {408, 409, 429, 500, 502, 503, 504, 599}) {
    ScriptedServer server;
    server.push(ScriptedResponse(status));
    make_client(options_for(server));
    EXPECT_FALSE(send(post("/x")).ec) << status;
    EXPECT_EQ(server.request_count(), 2u) << status;
  }
  for (const int status : {400, 401, 402, 403, 404, 410, 422}) {
    ScriptedServer server;
    server.push(ScriptedResponse(status, R"({"detail":"nope"})"));
    make_client(options_for(server));
    const Result result = send(post("/x"));
    EXPECT_EQ(result.ec, make_error_code(errc_from_http_status(status))) << status;
    EXPECT_EQ(result.diag.http_status, status);
    EXPECT_EQ(result.diag.message, "nope");
    EXPECT_EQ(server.request_count(), 1u) << status;
  }
}

TEST_F(ClientTest, XShouldRetryOverridesTheStatus) {
  ScriptedServer server;
  ScriptedResponse no(500);
  no.headers.emplace_back("x-should-retry", "false");
  server.push(no);
  make_client(options_for(server));
  EXPECT_EQ(send(post("/x")).ec, make_error_code(errc::server_error));
  EXPECT_EQ(server.request_count(), 1u);

  ScriptedResponse yes(400);
  yes.headers.emplace_back("x-should-retry", "true");
  server.push(yes);
  EXPECT_FALSE(send(post("/x")).ec);
  EXPECT_EQ(server.request_count(), 3u);
}

TEST_F(ClientTest, RetryAfterForms) {
  ScriptedServer server;
  make_client(options_for(server));
  const auto push_with = [&](std::string name, std::string value) {
    ScriptedResponse r(429);
    r.headers.emplace_back(std::move(name), std::move(value));
    server.push(r);
  };
  push_with("retry-after-ms", "1500");
  push_with("retry-after", "2");
  push_with("retry-after", "Sat, 21 Nov 2026 00:00:06 GMT");  // the fake clock starts at midnight + 3.5 s by then
  push_with("retry-after", "120");                            // above 60 s: ignored, back-off instead
  ASSERT_FALSE(send(post("/x")).ec);
  ASSERT_EQ(clock_->sleeps.size(), 4u);
  EXPECT_EQ(clock_->sleeps[0], milliseconds(1500));
  EXPECT_EQ(clock_->sleeps[1], milliseconds(2000));
  EXPECT_EQ(clock_->sleeps[2], milliseconds(2500));
  EXPECT_EQ(clock_->sleeps[3], milliseconds(4000));  // back-off for retry number 3 at U = 0
}

TEST_F(ClientTest, GivesUpAfterMaxRetriesWithDiagnostics) {
  ScriptedServer server;
  ScriptedResponse failing(503, R"({"detail":"overloaded"})");
  failing.headers.emplace_back("x-request-id", "req-42");
  server.set_default_response(failing);
  ClientOptions options = options_for(server);
  options.retry.max_retries = 2;
  make_client(options);
  const Result result = send(post("/x"));
  EXPECT_EQ(result.ec, make_error_code(errc::server_error));
  EXPECT_EQ(server.request_count(), 3u);
  EXPECT_EQ(result.diag.http_status, 503);
  EXPECT_EQ(result.diag.request_id, "req-42");
  EXPECT_EQ(result.diag.message, "overloaded");

  Request no_retries = post("/x");  // per-endpoint override (saves use 0)
  no_retries.max_retries = 0;
  EXPECT_EQ(send(no_retries).ec, make_error_code(errc::server_error));
  EXPECT_EQ(server.request_count(), 4u);
}

TEST_F(ClientTest, KeepAliveConnectionsAreReused) {
  ScriptedServer server;
  make_client(options_for(server));
  for (int i = 0; i < 5; ++i) ASSERT_FALSE(send(post("/x")).ec);
  EXPECT_EQ(server.connections_accepted(), 1u);
  EXPECT_EQ(client_->stats(PoolKind::training).idle, 1u);
}

TEST_F(ClientTest, PoolBoundsConcurrentConnections) {
  ScriptedServer server;
  ScriptedResponse slow(200, "{}");
  slow.delay = milliseconds(50);
  server.set_default_response(slow);
  ClientOptions options = options_for(server);
  options.pools.training = PoolLimits(2, 2);
  make_client(options);
  std::vector<std::future<Outcome>> futures;
  std::vector<diagnostics> diags(8);
  for (int i = 0; i < 8; ++i) futures.push_back(start(post("/x"), diags[i]));
  for (auto& f : futures) ASSERT_TRUE(run_until(f));
  for (auto& f : futures) EXPECT_FALSE(std::get<0>(f.get()));
  EXPECT_EQ(server.connections_accepted(), 2u);
  EXPECT_EQ(client_->stats(PoolKind::training).created, 2u);
}

TEST_F(ClientTest, StaleKeepAliveConnectionIsRetriedOnceOnAFreshOne) {
  ScriptedServerOptions server_options;
  server_options.idle_close = true;  // closes each connection after answering, without saying so
  ScriptedServer server(server_options);
  ClientOptions options = options_for(server);
  options.retry.max_retries = 0;  // the fresh-connection retry is not a transport retry
  make_client(options);
  ASSERT_FALSE(send(post("/x")).ec);
  ASSERT_TRUE(server.wait_for_open_connections(0));
  const Result second = send(post("/x"));
  EXPECT_FALSE(second.ec) << second.diag.message;
  EXPECT_EQ(server.connections_accepted(), 2u);
}

TEST_F(ClientTest, ReadTimeout) {
  ScriptedServer server;
  server.push(silent());
  ClientOptions options = options_for(server);
  options.retry.max_retries = 0;
  make_client(options);
  expect_timeout_after(milliseconds(100));
}

// The connection keeps one lazily armed timer across its exchanges: a short timeout after a long
// one on the same connection must still fire on time, and the long one's timer must not cut the
// connection while it sits in the pool.
TEST_F(ClientTest, ReadTimeoutShorterThanTheLastOneOnTheSameConnection) {
  ScriptedServer server;
  server.push(ScriptedResponse(200, "{}"));
  server.push(silent());
  ClientOptions options = options_for(server);
  options.retry.max_retries = 0;
  make_client(options);
  Request first = post("/x");
  first.timeout = milliseconds(30000);
  const Result answered = send(first);
  ASSERT_FALSE(answered.ec) << answered.diag.message;
  expect_timeout_after(milliseconds(100));
  EXPECT_EQ(server.connections_accepted(), 1u);
}

TEST_F(ClientTest, AnExpiredTimeoutOfAFinishedExchangeSparesTheNextOne) {
  ScriptedServer server;
  server.push(ScriptedResponse(200, "{}"));
  ScriptedResponse slow(200, "{}");
  slow.delay = milliseconds(150);
  server.push(slow);
  ClientOptions options = options_for(server);
  options.retry.max_retries = 0;
  make_client(options);
  Request first = post("/x");
  first.timeout = milliseconds(100);  // its timer wakes during the second exchange
  ASSERT_FALSE(send(first).ec);
  Request second = post("/x");
  second.timeout = milliseconds(2000);
  const Result result = send(second);
  EXPECT_FALSE(result.ec) << result.diag.message;
  EXPECT_EQ(result.response.status, 200);
  EXPECT_EQ(server.connections_accepted(), 1u);
}

TEST_F(ClientTest, ConnectTimeout) {
  // A listener whose backlog is full drops further SYNs, so connecting hangs.
  asio::io_context other;
  asio::ip::tcp::acceptor acceptor(other, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  acceptor.listen(0);
  std::vector<std::unique_ptr<asio::ip::tcp::socket>> fillers;
  for (int i = 0; i < 4; ++i) {
    // async_connect issues the non-blocking connect() at once; `other` is never run.
    auto socket = std::make_unique<asio::ip::tcp::socket>(other);
    socket->async_connect(acceptor.local_endpoint(), [](boost::system::error_code) {});
    fillers.push_back(std::move(socket));
  }
  ClientOptions options("http://127.0.0.1:" + std::to_string(acceptor.local_endpoint().port()), Secret(test_key));
  options.timeouts.connect = milliseconds(200);
  options.timeouts.request = milliseconds(5000);  // a read timeout would take longer than the test allows
  options.retry.max_retries = 0;
  make_client(options);
  const auto start_time = std::chrono::steady_clock::now();
  const Result result = send(post("/x"));
  EXPECT_EQ(result.ec, make_error_code(errc::timeout)) << result.diag.message;
  EXPECT_LT(std::chrono::steady_clock::now() - start_time, milliseconds(3000));
  EXPECT_NE(result.diag.message.find("connect"), std::string::npos) << result.diag.message;
}

TEST_F(ClientTest, RefusedConnectionIsAConnectionError) {
  std::uint16_t port = 0;
  {
    asio::io_context other;
    asio::ip::tcp::acceptor acceptor(other, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    port = acceptor.local_endpoint().port();
  }  // closed: nothing listens there now
  ClientOptions options("http://127.0.0.1:" + std::to_string(port), Secret(test_key));
  options.retry.max_retries = 1;
  make_client(options);
  const Result result = send(post("/x"));
  EXPECT_EQ(result.ec, make_error_code(errc::connection_failed));
  EXPECT_EQ(clock_->sleeps.size(), 1u);  // connection errors are retried
}

TEST_F(ClientTest, ResponseOverTheBodyLimit) {
  ScriptedServer server;
  server.push(ScriptedResponse(200, std::string(5000, 'x')));
  ClientOptions options = options_for(server);
  options.limits.max_response_body = 1000;
  make_client(options);
  const Result result = send(post("/x"));
  EXPECT_EQ(result.ec, make_error_code(errc::response_too_large));
  EXPECT_NE(result.diag.message.find("1000"), std::string::npos) << result.diag.message;
}

TEST_F(ClientTest, TruncatedResponse) {
  ScriptedServer server;
  ScriptedResponse cut(200, std::string(400, 'x'));
  cut.truncate = true;
  server.push(cut);
  ClientOptions options = options_for(server);
  options.retry.max_retries = 0;
  make_client(options);
  const Result result = send(post("/x"));
  EXPECT_EQ(result.ec, make_error_code(errc::connection_failed));
  EXPECT_NE(result.diag.message.find("truncated"), std::string::npos) << result.diag.message;

  server.push(cut);  // with retries, the next attempt gets the default answer
  make_client(options_for(server));
  EXPECT_FALSE(send(post("/x")).ec);
}

TEST_F(ClientTest, CancellationClosesTheConnection) {
  ScriptedServer server;
  server.push(silent());
  make_client(options_for(server));
  asio::cancellation_signal signal;
  diagnostics diag;
  auto future = start(post("/x"), diag, signal.slot());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (server.request_count() == 0 && std::chrono::steady_clock::now() < deadline) {
    io_.run_one_for(milliseconds(5));
  }
  ASSERT_EQ(server.request_count(), 1u);  // the request is on the wire, its answer never comes
  signal.emit(asio::cancellation_type::terminal);
  ASSERT_TRUE(run_until(future));
  EXPECT_EQ(std::get<0>(future.get()), make_error_code(errc::cancelled));
  EXPECT_TRUE(server.wait_for_open_connections(0));  // closed, not kept for reuse
  EXPECT_EQ(client_->stats(PoolKind::training).open, 0u);
}

TEST_F(ClientTest, ZstdRequestBodies) {
  ScriptedServer server;
  make_client(options_for(server));
  Request request = post("/api/v1/forward_backward", std::string(10000, 'a'));
  request.content_type = "application/x-protobuf";
  request.compress_zstd = true;
  ASSERT_FALSE(send(request).ec);
  const auto recorded = server.requests().at(0);
  EXPECT_EQ(recorded.header("content-encoding"), "zstd");
  EXPECT_LT(recorded.body.size(), 1000u);
  EXPECT_EQ(zstd_decompress(recorded.body, 1 << 20), std::string(10000, 'a'));
}

// A body made of a spine and runs (kept in `runs`) borrowed from `arrays` (wire/borrowed_runs.hpp),
// with a run at the very start, runs with no spine byte between them, and the spine's end after the
// last run; `expected` gets the same body in one piece.
Request borrowed_post(const std::vector<std::string>& arrays, std::vector<wire::BorrowedRun>& runs,
                      std::string& expected) {
  Request request = post("/api/v1/forward_backward", "");
  request.content_type = "application/x-protobuf";
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    if (i % 3 != 0) {  // runs 0, 3, 6, ... follow the run before them directly
      const std::string piece = "<" + std::to_string(i) + ">";
      request.body += piece;
      expected += piece;
    }
    runs.emplace_back(request.body.size(), arrays[i]);
    expected += arrays[i];
  }
  request.body += "<end>";
  expected += "<end>";
  request.borrowed = runs;
  return request;
}

// Runs of distinct bytes, so that a run sent twice, dropped or out of order shows.
std::vector<std::string> distinct_runs(std::size_t count, std::size_t size) {
  std::vector<std::string> runs;
  for (std::size_t i = 0; i < count; ++i) runs.emplace_back(size + i, static_cast<char>('A' + i % 26));
  return runs;
}

TEST_F(ClientTest, BorrowedRunsGoOutInPlaceOnPlainTcp) {
  ScriptedServer server;
  make_client(options_for(server));
  // More buffers than one send takes (64), and more bytes than the socket takes at once.
  const std::vector<std::string> runs = distinct_runs(150, 40000);
  std::string expected;
  std::vector<wire::BorrowedRun> borrowed;
  const Request request = borrowed_post(runs, borrowed, expected);
  const Result result = send(request);
  ASSERT_FALSE(result.ec) << result.diag.message;
  const auto recorded = server.requests().at(0);
  EXPECT_EQ(recorded.header("content-length"), std::to_string(expected.size()));
  EXPECT_EQ(recorded.body.size(), expected.size());
  EXPECT_TRUE(recorded.body == expected);  // not EXPECT_EQ: a failure would print 6 MB

  // A small one on the same connection: the connection's buffer list is rebuilt per request.
  std::string small_expected;
  std::vector<wire::BorrowedRun> small_borrowed;
  const std::vector<std::string> small_runs = distinct_runs(2, 10);
  const Request small = borrowed_post(small_runs, small_borrowed, small_expected);
  ASSERT_FALSE(send(small).ec);
  EXPECT_EQ(server.requests().at(1).body, small_expected);
}

TEST_F(ClientTest, BorrowedRunsAreSentInOnePieceOverTlsAndInZstd) {
  const std::vector<std::string> runs = distinct_runs(100, 5000);
  {
    ScriptedServerOptions server_options;
    server_options.tls = true;
    ScriptedServer server(server_options);
    ClientOptions options = options_for(server);
    options.tls.ca_file = server.ca_file();
    make_client(options);
    std::string expected;
    std::vector<wire::BorrowedRun> borrowed;
    const Result result = send(borrowed_post(runs, borrowed, expected));
    ASSERT_FALSE(result.ec) << result.diag.message;
    EXPECT_TRUE(server.requests().at(0).body == expected);
  }
  ScriptedServer server;
  make_client(options_for(server));
  std::string expected;
  std::vector<wire::BorrowedRun> borrowed;
  Request request = borrowed_post(runs, borrowed, expected);
  request.compress_zstd = true;
  ASSERT_FALSE(send(request).ec);
  const auto recorded = server.requests().at(0);
  EXPECT_EQ(recorded.header("content-encoding"), "zstd");
  EXPECT_LT(recorded.body.size(), expected.size());
  EXPECT_TRUE(zstd_decompress(recorded.body, 1 << 24) == expected);
}

TEST_F(ClientTest, RedirectsAreNotFollowed) {
  ScriptedServer server;
  ScriptedResponse redirect(302);
  redirect.headers.emplace_back("location", "https://storage.example/x.tar");
  server.push(redirect);
  server.push(redirect);
  make_client(options_for(server));
  EXPECT_EQ(send(Request(Method::get, "/a")).ec, make_error_code(errc::http_error));
  Request archive(Method::get, "/a");
  archive.accept_redirect = true;
  const Result result = send(archive);
  EXPECT_FALSE(result.ec);
  EXPECT_EQ(result.response.header("location"), "https://storage.example/x.tar");
}

TEST_F(ClientTest, TheApiKeyNeverAppearsInErrors) {
  ScriptedServer server;
  ScriptedResponse echo(401, std::string(R"({"detail":"bad key )") + test_key + "\"}");
  echo.headers.emplace_back("x-request-id", test_key);
  server.set_default_response(echo);
  make_client(options_for(server));
  const Result result = send(post("/x"));
  ASSERT_EQ(result.ec, make_error_code(errc::authentication_failed));
  const error as_exception(result.ec, result.diag);
  for (const std::string& text :
       {result.diag.message, result.diag.body_excerpt, result.diag.request_id, std::string(as_exception.what())}) {
    EXPECT_EQ(text.find(test_key), std::string::npos) << text;
    EXPECT_EQ(text.find("0123456789abcdef"), std::string::npos) << text;
  }
}

TEST_F(ClientTest, SetCredentialChangesTheKeyHeaderAndRedactsEveryCredential) {
  constexpr const char* jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlLXRleHQ";
  ScriptedServer server;
  make_client(options_for(server));
  ASSERT_FALSE(send(post("/before")).ec);
  client_->set_credential(Secret(jwt));
  ASSERT_FALSE(send(post("/after")).ec);
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].header("x-api-key"), test_key);
  EXPECT_EQ(requests[1].header("x-api-key"), jwt);

  // A server echoing both the old key and the new JWT leaks neither.
  ScriptedResponse echo(401, std::string(R"({"detail":"old )") + test_key + " new " + jwt + "\"}");
  echo.headers.emplace_back("x-request-id", std::string(test_key) + jwt);
  server.set_default_response(echo);
  const Result result = send(post("/x"));
  ASSERT_EQ(result.ec, make_error_code(errc::authentication_failed));
  const error as_exception(result.ec, result.diag);
  for (const std::string& text :
       {result.diag.message, result.diag.body_excerpt, result.diag.request_id, std::string(as_exception.what())}) {
    EXPECT_EQ(text.find(test_key), std::string::npos) << text;
    EXPECT_EQ(text.find(jwt), std::string::npos) << text;
  }
  EXPECT_NE(result.diag.message.find("<redacted>"), std::string::npos) << result.diag.message;
}

TEST_F(ClientTest, SetCredentialRefusesALineBreakAndKeepsTheOldOne) {
  ScriptedServer server;
  make_client(options_for(server));
  EXPECT_THROW(client_->set_credential(Secret("tml-a\r\nX-Injected: yes")), error);
  ASSERT_FALSE(send(post("/x")).ec);
  EXPECT_EQ(server.requests().at(0).header("x-api-key"), test_key);
  EXPECT_FALSE(server.requests().at(0).header("x-injected").has_value());
}

// A call assembled before set_credential keeps the credential it was assembled with, even when
// it is still waiting for a connection: its header lines must outlive the replacement.
TEST_F(ClientTest, SetCredentialLeavesACallWaitingForAConnectionIntact) {
  constexpr const char* jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ5In0.b3RoZXItc2lnbmF0dXJl";
  ScriptedServer server;
  ScriptedResponse slow(200, "{}");
  slow.delay = milliseconds(300);  // keeps the first call on the only connection a while
  server.push(slow);
  ClientOptions options = options_for(server);
  options.pools.training = PoolLimits(1, 1);
  make_client(options);
  diagnostics first_diag;
  diagnostics second_diag;
  auto first = start(post("/first"), first_diag);
  auto second = start(post("/second"), second_diag);  // queued behind the first, already assembled
  for (int i = 0; i < 2000 && server.request_count() == 0; ++i) io_.run_one_for(milliseconds(10));
  ASSERT_EQ(server.request_count(), 1u);
  EXPECT_EQ(client_->stats(PoolKind::training).waiting, 1u);
  client_->set_credential(Secret(jwt));
  ASSERT_TRUE(run_until(first));
  ASSERT_TRUE(run_until(second));
  EXPECT_FALSE(std::get<0>(first.get())) << first_diag.message;
  EXPECT_FALSE(std::get<0>(second.get())) << second_diag.message;
  ASSERT_FALSE(send(post("/third")).ec);
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[1].target, "/second");
  EXPECT_EQ(requests[1].header("host"), requests[0].header("host"));
  EXPECT_EQ(requests[1].header("x-api-key"), test_key);
  EXPECT_EQ(requests[2].header("x-api-key"), jwt);
}

TEST_F(ClientTest, HeaderInjectionIsRefusedBeforeAnythingIsSent) {
  ScriptedServer server;
  make_client(options_for(server));
  Request request = post("/x");
  request.headers.emplace_back(HeaderName("X-Evil"), "a\r\nX-Injected: yes");
  const Result result = send(request);
  EXPECT_EQ(result.ec, make_error_code(errc::invalid_argument));
  EXPECT_NE(result.diag.message.find("X-Evil"), std::string::npos) << result.diag.message;
  EXPECT_EQ(server.request_count(), 0u);
  EXPECT_EQ(client_->stats(PoolKind::training).open, 0u);  // no slot taken
  EXPECT_FALSE(send(post("/x")).ec);                       // and the client still works
}

TEST_F(ClientTest, TlsPeerIsVerifiedByDefault) {
  ScriptedServerOptions server_options;
  server_options.tls = true;
  ScriptedServer server(server_options);
  ClientOptions options = options_for(server);
  options.retry.max_retries = 0;
  make_client(options);
  const Result refused = send(post("/x"));
  EXPECT_EQ(refused.ec, make_error_code(errc::tls_error));
  EXPECT_NE(refused.diag.message.find("verif"), std::string::npos) << refused.diag.message;
  EXPECT_EQ(server.request_count(), 0u);

  options.tls.ca_file = server.ca_file();  // trust the test CA
  make_client(options);
  const Result accepted = send(post("/x"));
  EXPECT_FALSE(accepted.ec) << accepted.diag.message;
  EXPECT_EQ(server.request_count(), 1u);
}

TEST_F(ClientTest, ReadTimeoutOverTls) {
  ScriptedServerOptions server_options;
  server_options.tls = true;
  ScriptedServer server(server_options);
  server.push(silent());
  ClientOptions options = options_for(server);
  options.tls.ca_file = server.ca_file();
  options.retry.max_retries = 0;
  make_client(options);
  expect_timeout_after(milliseconds(100));
}

TEST_F(ClientTest, TlsHostNameMismatchIsRefused) {
  ScriptedServerOptions server_options;
  server_options.tls = true;
  server_options.cert_dns_names = {"other.example"};
  server_options.cert_ip_addresses = {};
  ScriptedServer server(server_options);
  ClientOptions options = options_for(server);
  options.tls.ca_file = server.ca_file();
  options.retry.max_retries = 0;
  make_client(options);
  const Result result = send(post("/x"));
  EXPECT_EQ(result.ec, make_error_code(errc::tls_error));
  EXPECT_EQ(server.request_count(), 0u);
}

TEST_F(ClientTest, HttpsThroughAConnectProxy) {
  ScriptedServerOptions server_options;
  server_options.tls = true;
  ScriptedServer server(server_options);
  test::ConnectProxy proxy;
  ::setenv("HTTPS_PROXY", proxy.url().c_str(), 1);
  ClientOptions options = options_for(server);
  options.tls.ca_file = server.ca_file();
  make_client(options);
  for (int i = 0; i < 3; ++i) {
    const Result result = send(post("/x"));
    ASSERT_FALSE(result.ec) << result.diag.message;
  }
  EXPECT_EQ(proxy.tunnels_established(), 1u);  // one tunnel, kept alive
  EXPECT_EQ(proxy.connect_targets().at(0), "127.0.0.1:" + std::to_string(server.port()));
  EXPECT_EQ(server.request_count(), 3u);
}

TEST_F(ClientTest, ProxyCredentialsNeverAppearInErrors) {
  ScriptedServer server;
  test::ConnectProxy proxy("Basic " + std::string("dXNlcjpyaWdodA=="));  // user:right
  const std::string url = proxy.url();
  const std::string with_credentials = "http://user:wrong-secret@" + url.substr(url.find("//") + 2);
  ::setenv("HTTP_PROXY", with_credentials.c_str(), 1);
  ClientOptions options = options_for(server);
  options.retry.max_retries = 0;
  make_client(options);
  const Result result = send(post("/x"));
  EXPECT_EQ(result.ec, make_error_code(errc::connection_failed));
  EXPECT_NE(result.diag.message.find("407"), std::string::npos) << result.diag.message;
  EXPECT_EQ(result.diag.message.find("wrong-secret"), std::string::npos) << result.diag.message;
}

}  // namespace
}  // namespace tinker::http
