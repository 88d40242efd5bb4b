// Tests of the scripted test server itself: later transport tests trust it to misbehave exactly
// as scripted (truncation, stale connections, hangs), so each behaviour is checked here with a
// raw Beast client.
#include "support/test_server.hpp"
#include "support/raw_http_client.hpp"

#include "core/ascii.hpp"

#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

namespace {

using namespace std::chrono_literals;
using tinker::test::RawHttpClient;
using tinker::test::RawResponse;
using tinker::test::ScriptedResponse;
using tinker::test::ScriptedServer;
using tinker::test::ScriptedServerOptions;

ScriptedResponse flagged(void (*set)(ScriptedResponse&)) {
  ScriptedResponse response(200, "{\"answer\":\"this body is long enough to be cut in half\"}");
  set(response);
  return response;
}

TEST(TestServer, AnswersFromTheScriptInOrderThenTheDefault) {
  ScriptedServer server;
  server.push(ScriptedResponse(201, "first"));
  server.push(ScriptedResponse(404, "second"));
  RawHttpClient client(server.port());
  EXPECT_EQ(client.request("GET", "/").status, 201);
  const RawResponse second = client.request("GET", "/");
  EXPECT_EQ(second.status, 404);
  EXPECT_EQ(second.body, "second");
  const RawResponse third = client.request("GET", "/");
  EXPECT_EQ(third.status, 200);
  EXPECT_EQ(third.body, "{\"ok\":true}");
  EXPECT_EQ(server.script_remaining(), 0u);
}

TEST(TestServer, DefaultAnswerIsConfigurable) {
  ScriptedServerOptions options;
  options.default_response = ScriptedResponse(503, "busy");
  ScriptedServer server(options);
  EXPECT_EQ(RawHttpClient(server.port()).request("GET", "/").status, 503);
  server.set_default_response(ScriptedResponse(202, "later"));
  EXPECT_EQ(RawHttpClient(server.port()).request("GET", "/").body, "later");
}

TEST(TestServer, RecordsRequestsWithLowerCasedHeaders) {
  ScriptedServer server;
  RawHttpClient client(server.port());
  ASSERT_FALSE(client.exchange("POST", "/api/v1/thing?x=1", {{"X-Custom-Header", "Value"}}, "{\"a\":1}").error);
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].target, "/api/v1/thing?x=1");
  EXPECT_EQ(requests[0].body, "{\"a\":1}");
  EXPECT_EQ(requests[0].header("x-custom-header"), "Value");
  EXPECT_EQ(requests[0].header("X-CUSTOM-HEADER"), "Value");
  EXPECT_EQ(requests[0].header("content-length"), "7");
  EXPECT_FALSE(requests[0].header("absent"));
  EXPECT_EQ(requests[0].connection, 0u);
}

TEST(TestServer, ScriptedHeadersAndContentType) {
  ScriptedServer server;
  ScriptedResponse scripted(429, "slow down");
  scripted.content_type = "text/plain";
  scripted.headers.emplace_back("Retry-After", "3");
  server.push(scripted);
  const RawResponse response = RawHttpClient(server.port()).request("GET", "/");
  EXPECT_EQ(response.status, 429);
  bool retry_after = false;
  for (const auto& [name, value] : response.headers) {
    if (tinker::ascii::iequals(name, "retry-after")) retry_after = value == "3";
    if (tinker::ascii::iequals(name, "content-type")) {
      EXPECT_EQ(value, "text/plain");
    }
  }
  EXPECT_TRUE(retry_after);
}

TEST(TestServer, HandlerAnswersWhenTheScriptIsEmpty) {
  ScriptedServer server;
  server.set_handler(
      [](const tinker::test::RecordedRequest& request) { return ScriptedResponse(200, "echo " + request.target); });
  server.push(ScriptedResponse(201, "scripted"));
  RawHttpClient client(server.port());
  EXPECT_EQ(client.request("GET", "/a").body, "scripted");
  EXPECT_EQ(client.request("GET", "/b").body, "echo /b");
}

TEST(TestServer, KeepAliveReusesOneConnectionAndCountsConnections) {
  ScriptedServer server;
  {
    RawHttpClient first(server.port());
    first.request("GET", "/");
    first.request("GET", "/");
    RawHttpClient second(server.port());
    EXPECT_TRUE(second.request("GET", "/").keep_alive);
    EXPECT_EQ(server.connections_accepted(), 2u);
    EXPECT_TRUE(server.wait_for_open_connections(2));
    const auto requests = server.requests();
    ASSERT_EQ(requests.size(), 3u);
    EXPECT_EQ(requests[0].connection, 0u);
    EXPECT_EQ(requests[1].connection, 0u);
    EXPECT_EQ(requests[2].connection, 1u);
  }
  EXPECT_TRUE(server.wait_for_open_connections(0));
}

TEST(TestServer, KeepAliveOffClosesAfterEveryAnswer) {
  ScriptedServerOptions options;
  options.keep_alive = false;
  ScriptedServer server(options);
  RawHttpClient client(server.port());
  client.set_reconnect(false);  // the next request goes to the closed connection
  EXPECT_FALSE(client.request("GET", "/").keep_alive);
  EXPECT_TRUE(server.wait_for_open_connections(0));
  EXPECT_TRUE(client.exchange("GET", "/").error);
}

TEST(TestServer, CloseFlagAnnouncesAndCloses) {
  ScriptedServer server;
  server.push(flagged([](ScriptedResponse& r) { r.close = true; }));
  RawHttpClient client(server.port());
  EXPECT_FALSE(client.request("GET", "/").keep_alive);
  EXPECT_TRUE(server.wait_for_open_connections(0));
}

TEST(TestServer, TruncationReallyTruncates) {
  ScriptedServer server;
  server.push(flagged([](ScriptedResponse& r) { r.truncate = true; }));
  RawHttpClient client(server.port());
  EXPECT_EQ(client.exchange("GET", "/").error, boost::beast::http::error::partial_message);
  EXPECT_TRUE(server.wait_for_open_connections(0));
}

TEST(TestServer, IdleCloseLeavesAStaleConnection) {
  ScriptedServerOptions options;
  options.idle_close = true;
  ScriptedServer server(options);
  RawHttpClient client(server.port());
  client.set_reconnect(false);                         // the next request goes to the stale connection
  EXPECT_TRUE(client.request("GET", "/").keep_alive);  // the client is told nothing
  EXPECT_TRUE(server.wait_for_open_connections(0));
  EXPECT_TRUE(client.exchange("GET", "/").error);
  EXPECT_EQ(server.request_count(), 1u);
}

TEST(TestServer, CloseWithoutResponse) {
  ScriptedServer server;
  server.push(flagged([](ScriptedResponse& r) { r.close_without_response = true; }));
  RawHttpClient client(server.port());
  EXPECT_EQ(client.exchange("GET", "/").error, boost::beast::http::error::end_of_stream);
  EXPECT_EQ(server.request_count(), 1u);
}

TEST(TestServer, NoResponseHangsUntilTheClientGivesUp) {
  ScriptedServer server;
  server.push(flagged([](ScriptedResponse& r) { r.no_response = true; }));
  {
    RawHttpClient client(server.port(), 200ms);
    EXPECT_EQ(client.exchange("GET", "/").error, boost::beast::error::timeout);
    EXPECT_EQ(server.request_count(), 1u);
  }
  EXPECT_TRUE(server.wait_for_open_connections(0));
}

TEST(TestServer, DelayPostponesTheAnswer) {
  ScriptedServer server;
  ScriptedResponse slow(200, "late");
  slow.delay = 150ms;
  server.push(slow);
  RawHttpClient client(server.port());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(client.request("GET", "/").body, "late");
  EXPECT_GE(std::chrono::steady_clock::now() - start, 150ms);
}

TEST(TestServer, RawBytesAreSentVerbatim) {
  ScriptedServer server;
  ScriptedResponse raw;
  raw.raw = "HTTP/1.1 299 Odd\r\nContent-Length: 2\r\n\r\nhi";
  server.push(raw);
  RawHttpClient client(server.port());
  const RawResponse response = client.request("GET", "/");
  EXPECT_EQ(response.status, 299);
  EXPECT_EQ(response.body, "hi");
  EXPECT_EQ(client.request("GET", "/").status, 200);  // the connection stays usable
}

TEST(TestServer, OversizedRequestBodyGets413) {
  ScriptedServerOptions options;
  options.max_request_body = 10;
  ScriptedServer server(options);
  RawHttpClient client(server.port());
  const tinker::test::RawExchange exchange = client.exchange("POST", "/", {}, std::string(100, 'x'));
  ASSERT_FALSE(exchange.error);
  EXPECT_EQ(exchange.response.status, 413);
  EXPECT_EQ(server.request_count(), 0u);
}

TEST(TestServer, StopsCleanlyWithHangingAndDelayedConnections) {
  auto server = std::make_unique<ScriptedServer>();
  server->push(flagged([](ScriptedResponse& r) { r.no_response = true; }));
  ScriptedResponse slow;
  slow.delay = 60s;
  server->push(slow);
  // Both clients send a request and keep their connection open without reading.
  const std::string request = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  RawHttpClient hanging(server->port());
  hanging.send_bytes(request);
  ASSERT_TRUE(server->wait_for_requests(1));
  RawHttpClient delayed(server->port());
  delayed.send_bytes(request);
  ASSERT_TRUE(server->wait_for_requests(2));
  EXPECT_EQ(server->connections_open(), 2u);
  const auto start = std::chrono::steady_clock::now();
  server.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(TestServer, BaseUrlNamesSchemeAndPort) {
  ScriptedServer server;
  EXPECT_EQ(server.base_url(), "http://127.0.0.1:" + std::to_string(server.port()));
  EXPECT_EQ(server.url_with_host("localhost"), "http://localhost:" + std::to_string(server.port()));
  EXPECT_THROW((void)server.ca_file(), std::logic_error);
}

}  // namespace
