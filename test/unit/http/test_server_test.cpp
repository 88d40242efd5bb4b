// Tests of the scripted test server itself: later transport tests trust it to misbehave exactly
// as scripted (truncation, stale connections, hangs), so each behaviour is checked here with a
// raw Beast client.
#include "support/test_server.hpp"

#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

namespace {

using namespace std::chrono_literals;
using tinker::test::RawClient;
using tinker::test::RawRequest;
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
  RawClient client(server.port());
  EXPECT_EQ(client.get().status, 201);
  const RawResponse second = client.get();
  EXPECT_EQ(second.status, 404);
  EXPECT_EQ(second.body, "second");
  const RawResponse third = client.get();
  EXPECT_EQ(third.status, 200);
  EXPECT_EQ(third.body, "{\"ok\":true}");
  EXPECT_EQ(server.script_remaining(), 0u);
}

TEST(TestServer, DefaultAnswerIsConfigurable) {
  ScriptedServerOptions options;
  options.default_response = ScriptedResponse(503, "busy");
  ScriptedServer server(options);
  EXPECT_EQ(RawClient(server.port()).get().status, 503);
  server.set_default_response(ScriptedResponse(202, "later"));
  EXPECT_EQ(RawClient(server.port()).get().body, "later");
}

TEST(TestServer, RecordsRequestsWithLowerCasedHeaders) {
  ScriptedServer server;
  RawClient client(server.port());
  RawRequest request("POST", "/api/v1/thing?x=1", "{\"a\":1}");
  request.headers.emplace_back("X-Custom-Header", "Value");
  RawResponse response;
  ASSERT_FALSE(client.exchange(request, response));
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
  const RawResponse response = RawClient(server.port()).get();
  EXPECT_EQ(response.status, 429);
  bool retry_after = false;
  for (const auto& [name, value] : response.headers) {
    if (name == "retry-after") retry_after = value == "3";
    if (name == "content-type") {
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
  RawClient client(server.port());
  EXPECT_EQ(client.get("/a").body, "scripted");
  EXPECT_EQ(client.get("/b").body, "echo /b");
}

TEST(TestServer, KeepAliveReusesOneConnectionAndCountsConnections) {
  ScriptedServer server;
  {
    RawClient first(server.port());
    first.get();
    first.get();
    RawClient second(server.port());
    EXPECT_TRUE(second.get().keep_alive);
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
  RawClient client(server.port());
  EXPECT_FALSE(client.get().keep_alive);
  EXPECT_TRUE(server.wait_for_open_connections(0));
  RawResponse response;
  EXPECT_TRUE(client.exchange(RawRequest(), response));
}

TEST(TestServer, CloseFlagAnnouncesAndCloses) {
  ScriptedServer server;
  server.push(flagged([](ScriptedResponse& r) { r.close = true; }));
  RawClient client(server.port());
  EXPECT_FALSE(client.get().keep_alive);
  EXPECT_TRUE(server.wait_for_open_connections(0));
}

TEST(TestServer, TruncationReallyTruncates) {
  ScriptedServer server;
  server.push(flagged([](ScriptedResponse& r) { r.truncate = true; }));
  RawClient client(server.port());
  RawResponse response;
  EXPECT_EQ(client.exchange(RawRequest(), response), boost::beast::http::error::partial_message);
  EXPECT_TRUE(server.wait_for_open_connections(0));
}

TEST(TestServer, IdleCloseLeavesAStaleConnection) {
  ScriptedServerOptions options;
  options.idle_close = true;
  ScriptedServer server(options);
  RawClient client(server.port());
  EXPECT_TRUE(client.get().keep_alive);  // the client is told nothing
  EXPECT_TRUE(server.wait_for_open_connections(0));
  RawResponse response;
  EXPECT_TRUE(client.exchange(RawRequest(), response));
  EXPECT_EQ(server.request_count(), 1u);
}

TEST(TestServer, CloseWithoutResponse) {
  ScriptedServer server;
  server.push(flagged([](ScriptedResponse& r) { r.close_without_response = true; }));
  RawClient client(server.port());
  RawResponse response;
  EXPECT_EQ(client.exchange(RawRequest(), response), boost::beast::http::error::end_of_stream);
  EXPECT_EQ(server.request_count(), 1u);
}

TEST(TestServer, NoResponseHangsUntilTheClientGivesUp) {
  ScriptedServer server;
  server.push(flagged([](ScriptedResponse& r) { r.no_response = true; }));
  {
    RawClient client(server.port());
    RawResponse response;
    EXPECT_EQ(client.exchange(RawRequest(), response, 200ms), boost::beast::error::timeout);
    EXPECT_EQ(server.request_count(), 1u);
  }
  EXPECT_TRUE(server.wait_for_open_connections(0));
}

TEST(TestServer, DelayPostponesTheAnswer) {
  ScriptedServer server;
  ScriptedResponse slow(200, "late");
  slow.delay = 150ms;
  server.push(slow);
  RawClient client(server.port());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(client.get().body, "late");
  EXPECT_GE(std::chrono::steady_clock::now() - start, 150ms);
}

TEST(TestServer, RawBytesAreSentVerbatim) {
  ScriptedServer server;
  ScriptedResponse raw;
  raw.raw = "HTTP/1.1 299 Odd\r\nContent-Length: 2\r\n\r\nhi";
  server.push(raw);
  RawClient client(server.port());
  const RawResponse response = client.get();
  EXPECT_EQ(response.status, 299);
  EXPECT_EQ(response.body, "hi");
  EXPECT_EQ(client.get().status, 200);  // the connection stays usable
}

TEST(TestServer, OversizedRequestBodyGets413) {
  ScriptedServerOptions options;
  options.max_request_body = 10;
  ScriptedServer server(options);
  RawClient client(server.port());
  RawResponse response;
  ASSERT_FALSE(client.exchange(RawRequest("POST", "/", std::string(100, 'x')), response));
  EXPECT_EQ(response.status, 413);
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
  RawClient hanging(server->port());
  boost::asio::write(hanging.stream.socket(), boost::asio::buffer(request));
  ASSERT_TRUE(server->wait_for_requests(1));
  RawClient delayed(server->port());
  boost::asio::write(delayed.stream.socket(), boost::asio::buffer(request));
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
