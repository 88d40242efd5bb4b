// tinker-local's limits against clients that misbehave (doc/local.md#limits): each limit is
// answered with its status and a message naming it, and the server goes on serving everybody
// else meanwhile.
#include "unit/programs/local/support/expectations.hpp"

#include <tinker/codec.hpp>
#include <tinker/local/server.hpp>

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <thread>

namespace tinker::local {
namespace {

using namespace std::chrono_literals;
using test::detail_of;
using test::HeaderList;
using test::RawExchange;
using test::RawHttpClient;
using test::RawResponse;

const HeaderList kLimitsHeaders{{"X-API-Key", "tml-smoke-test"}, {"Content-Type", "application/json"}};

ServerOptions limited_options() {
  ServerOptions options;
  options.null_model = true;
  options.hf_hub_cache = std::filesystem::temp_directory_path() / "tinker-local-test-hub";
  options.log_level = LogLevel::off;
  return options;
}

class ServerLimitsTest : public ::testing::Test {
 protected:
  void start(ServerOptions options) {
    server_ = std::make_unique<Server>(std::move(options));
    server_->start();
  }
  RawHttpClient client() const { return RawHttpClient(server_->port()); }
  // A well-behaved client on its own connection is served.
  void expect_others_served() const {
    RawHttpClient other = client();
    EXPECT_EQ(other.request("GET", "/api/v1/healthz", kLimitsHeaders).status, 200);
  }

  std::unique_ptr<Server> server_;
};

TEST_F(ServerLimitsTest, HeadsOverTheLimitAre431) {
  ServerOptions options = limited_options();
  options.max_header_bytes = 4096;
  start(std::move(options));
  RawHttpClient c = client();
  c.send("GET", "/api/v1/healthz", {{"X-Padding", std::string(8000, 'p')}});
  const RawExchange answer = c.try_receive();
  ASSERT_FALSE(answer.error);
  const RawResponse& response = answer.response;
  EXPECT_EQ(response.status, 431);
  EXPECT_NE(detail_of(response).find("4096"), std::string::npos) << response.body;
  EXPECT_FALSE(response.keep_alive);
  // Just under the limit is fine.
  RawHttpClient under = client();
  under.send("GET", "/api/v1/healthz", {{"X-Padding", std::string(3000, 'p')}});
  EXPECT_EQ(under.receive().status, 200);
  expect_others_served();
}

TEST_F(ServerLimitsTest, AHeadNotCompleteInTimeIs408WhileOthersAreServed) {
  ServerOptions options = limited_options();
  options.header_timeout = 300ms;
  start(std::move(options));
  RawHttpClient slow = client();
  const std::string partial = "POST /api/v1/create_session HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: tml-a\r\n";
  slow.send_bytes(partial);
  expect_others_served();  // while the slow head is pending
  const RawExchange answer = slow.try_receive();
  ASSERT_FALSE(answer.error);
  const RawResponse& response = answer.response;
  EXPECT_EQ(response.status, 408);
  EXPECT_NE(detail_of(response).find("300 ms"), std::string::npos) << response.body;
  EXPECT_FALSE(response.keep_alive);
  expect_others_served();
}

TEST_F(ServerLimitsTest, AnIdleConnectionIsNotCutOffByTheHeadTimeout) {
  ServerOptions options = limited_options();
  options.header_timeout = 200ms;
  start(std::move(options));
  RawHttpClient idle = client();
  EXPECT_EQ(idle.request("GET", "/api/v1/healthz", kLimitsHeaders).status, 200);
  std::this_thread::sleep_for(600ms);  // idle between requests: idle_timeout applies, not the head's
  EXPECT_EQ(idle.request("GET", "/api/v1/healthz", kLimitsHeaders).status, 200);
}

TEST_F(ServerLimitsTest, ConnectionsOverTheLimitAre503WithRetryAfter) {
  ServerOptions options = limited_options();
  options.max_connections = 2;
  start(std::move(options));
  auto first = std::make_unique<RawHttpClient>(server_->port());
  auto second = std::make_unique<RawHttpClient>(server_->port());
  EXPECT_EQ(first->request("GET", "/api/v1/healthz", kLimitsHeaders).status, 200);
  EXPECT_EQ(second->request("GET", "/api/v1/healthz", kLimitsHeaders).status, 200);

  RawHttpClient third = client();
  third.send("GET", "/api/v1/healthz");
  const RawExchange answer = third.try_receive();
  ASSERT_FALSE(answer.error);
  const RawResponse& refused = answer.response;
  EXPECT_EQ(refused.status, 503);
  EXPECT_EQ(refused.header("Retry-After"), "1");
  EXPECT_NE(detail_of(refused).find("too many connections (limit 2)"), std::string::npos) << refused.body;
  EXPECT_EQ(first->request("GET", "/api/v1/healthz", kLimitsHeaders).status, 200);  // the open ones go on

  // A closed connection frees its place (the server sees the close at its next read).
  second.reset();
  int status = 0;
  for (int attempt = 0; attempt < 50 && status != 200; ++attempt) {
    RawHttpClient next = client();
    next.send("GET", "/api/v1/healthz");
    const RawExchange answer = next.try_receive();
    if (!answer.error) status = answer.response.status;
    if (status != 200) std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(status, 200);
}

TEST_F(ServerLimitsTest, ChunkedBodiesOverTheLimitAre413) {
  ServerOptions options = limited_options();
  options.max_request_body = 1024;
  start(std::move(options));
  RawHttpClient c = client();
  std::string text =
      "POST /api/v1/create_session HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: tml-a\r\n"
      "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (int chunk = 0; chunk < 4; ++chunk) text += "200\r\n" + std::string(512, ' ') + "\r\n";
  text += "0\r\n\r\n";
  c.send_bytes(text);
  const RawExchange answer = c.try_receive();
  ASSERT_FALSE(answer.error);
  const RawResponse& response = answer.response;
  EXPECT_EQ(response.status, 413);
  EXPECT_NE(detail_of(response).find("1024"), std::string::npos) << response.body;
  expect_others_served();
}

TEST_F(ServerLimitsTest, DeeplyNestedJsonIsRefusedNamingTheDepth) {
  start(limited_options());
  const std::string deep = R"({"tags": )" + std::string(5000, '[') + std::string(5000, ']') + "}";
  RawHttpClient c = client();
  const RawResponse response = c.request("POST", "/api/v1/create_session", kLimitsHeaders, deep);
  EXPECT_EQ(response.status, 422);
  EXPECT_NE(detail_of(response).find("deep"), std::string::npos) << response.body;
  const RawResponse admin = c.request("POST", "/_admin/faults", kLimitsHeaders,
                                      R"({"faults": )" + std::string(5000, '[') + std::string(5000, ']') + "}");
  EXPECT_GE(admin.status, 400);
  EXPECT_LT(admin.status, 500);
  expect_others_served();
}

}  // namespace
}  // namespace tinker::local
