// Call retries (doc/protocol.md#call-retries) and the billing pause (doc/protocol.md#billing-pause-402) over the
// real transport, with a fake clock; and the typed response decoding rules.
#include "api/execute_with_retries.hpp"
#include "api/response.hpp"

#include "support/fake_clock.hpp"
#include "support/test_server.hpp"

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

namespace tinker::api {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;
using std::chrono::seconds;
using test::ScriptedResponse;
using test::ScriptedServer;

class CallRetryTest : public ::testing::Test {
 protected:
  void make_client(const ScriptedServer& server) {
    ClientOptions options(server.base_url(), Secret("tml-layer-two-test-key"));
    clock_ = std::make_shared<test::FakeClock>(io_.get_executor());
    client_ = std::make_unique<http::HttpClient>(io_.get_executor(), options, clock_, [] { return 0.0; });
  }

  CallOutcome call(http::Request request, CallRetrySettings settings = {}) {
    auto future =
        asio::co_spawn(io_, execute_with_retries(*client_, std::move(request), diag_, settings), asio::use_future);
    const auto deadline = std::chrono::steady_clock::now() + seconds(20);
    while (future.wait_for(seconds(0)) != std::future_status::ready && std::chrono::steady_clock::now() < deadline) {
      io_.run_one_for(milliseconds(10));
    }
    return future.get();
  }

  static http::Request post() {
    http::Request request(http::Method::post, "/api/v1/optim_step");
    request.body = "{}";
    request.content_type = "application/json";
    request.max_retries = 0;  // isolate the call retries
    return request;
  }

  void TearDown() override {
    client_->shutdown();
    client_.reset();
    io_.restart();
    io_.poll();
  }

  asio::io_context io_;
  std::shared_ptr<test::FakeClock> clock_;
  std::unique_ptr<http::HttpClient> client_;
  diagnostics diag_;
};

TEST_F(CallRetryTest, RetriesWithTheSameIdempotencyKey) {
  ScriptedServer server;
  server.push(ScriptedResponse(503));
  server.push(ScriptedResponse(429));
  server.push(ScriptedResponse(408));
  make_client(server);
  const auto [ec, response] = call(post());
  ASSERT_FALSE(ec) << diag_.message;
  EXPECT_EQ(response.status, 200);
  EXPECT_TRUE(diag_.empty());  // the earlier failures' details are gone
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 4u);
  for (const auto& r : requests) EXPECT_EQ(r.header("x-idempotency-key"), requests[0].header("x-idempotency-key"));
  EXPECT_EQ(clock_->sleeps, (std::vector<milliseconds>{seconds(1), seconds(2), seconds(4)}));
}

TEST_F(CallRetryTest, NonRetryableErrorsReturnAtOnce) {
  ScriptedServer server;
  server.push(ScriptedResponse(400, R"({"detail":"seq_id must be positive"})"));
  make_client(server);
  const auto [ec, response] = call(post());
  EXPECT_EQ(ec, make_error_code(errc::bad_request));
  EXPECT_EQ(diag_.message, "seq_id must be positive");
  EXPECT_EQ(server.request_count(), 1u);
  EXPECT_TRUE(clock_->sleeps.empty());
}

TEST_F(CallRetryTest, StopsWhenTheBudgetIsSpent) {
  ScriptedServer server;
  server.set_default_response(ScriptedResponse(500));
  make_client(server);
  const auto [ec, response] = call(post());
  EXPECT_EQ(ec, make_error_code(errc::server_error));
  milliseconds total{0};
  for (const auto d : clock_->sleeps) total += d;
  EXPECT_LE(total, seconds(300));
  EXPECT_GE(total, seconds(290));
  EXPECT_EQ(clock_->sleeps.at(5), seconds(30));  // 1, 2, 4, 8, 16, then capped at 30
}

TEST_F(CallRetryTest, BillingHoldPausesInsideTheWindow) {
  ScriptedServer server;
  server.push(ScriptedResponse(402));
  server.push(ScriptedResponse(402));
  make_client(server);
  BillingPause billing;
  CallRetrySettings settings;
  settings.billing = &billing;
  const auto [ec, response] = call(post(), settings);
  ASSERT_FALSE(ec);
  EXPECT_EQ(clock_->sleeps, (std::vector<milliseconds>{seconds(5), seconds(5)}));
}

TEST_F(CallRetryTest, BillingHoldIsFatalOutsideTheWindowOrWithoutState) {
  ScriptedServer server;
  server.set_default_response(ScriptedResponse(402));
  make_client(server);
  EXPECT_EQ(std::get<0>(call(post())), make_error_code(errc::payment_required));  // no billing state
  BillingPause billing;
  CallRetrySettings settings;
  settings.billing = &billing;
  settings.billing_max_pause = seconds(12);
  EXPECT_EQ(std::get<0>(call(post(), settings)), make_error_code(errc::payment_required));
  EXPECT_EQ(clock_->sleeps, (std::vector<milliseconds>{seconds(5), seconds(5), seconds(5)}));
}

TEST(BillingPause, IncidentWindowAndWarnings) {
  BillingPause pause;
  const auto t0 = std::chrono::system_clock::time_point{} + std::chrono::hours(1000);
  // 402s every 100 s keep one incident going until its window ends.
  for (int s = 0; s < 3600; s += 100) EXPECT_TRUE(pause.on_payment_required(t0 + seconds(s), seconds(3600))) << s;
  EXPECT_FALSE(pause.on_payment_required(t0 + seconds(3600), seconds(3600)));
  // More than 300 s without a 402: a new incident with a new window.
  EXPECT_TRUE(pause.on_payment_required(t0 + seconds(3901), seconds(3600)));
  EXPECT_TRUE(pause.should_warn(t0));
  EXPECT_FALSE(pause.should_warn(t0 + seconds(59)));
  EXPECT_TRUE(pause.should_warn(t0 + seconds(60)));
}

TEST(ResponseDecoding, JsonAndContentTypes) {
  http::Response json;
  json.status = 200;
  json.headers.emplace_back("content-type", "application/json; charset=utf-8");
  json.body = R"({"request_id":"r1"})";
  UntypedAPIFuture future;
  diagnostics diag;
  EXPECT_FALSE(decode_json_response(json, future, diag));
  EXPECT_EQ(future.request_id, "r1");

  http::Response html = json;
  html.headers.set("content-type", "text/html");
  html.body = "<html>502 Bad Gateway</html>";
  EXPECT_EQ(decode_json_response(html, future, diag), make_error_code(errc::protocol_error));
  EXPECT_EQ(diag.message, "expected a JSON response, got content type 'text/html'");

  http::Response bad = json;
  bad.body = R"({"request_id":3})";
  EXPECT_EQ(decode_json_response(bad, future, diag), make_error_code(errc::decode_error));
  EXPECT_EQ(diag.message, "request_id: expected string, got integer");
}

TEST(ResponseDecoding, ProtobufResultsNeedTheProtobufContentType) {
  SampleResponse sample(std::vector<SampledSequence>{SampledSequence(StopReason::stop, {1, 2})});
  http::Response proto;
  proto.status = 200;
  proto.headers.emplace_back("content-type", "application/x-protobuf");
  proto.body = to_protobuf(sample);
  SampleResponse out;
  diagnostics diag;
  EXPECT_FALSE(decode_protobuf_response(proto, out, diag));
  EXPECT_EQ(out, sample);

  http::Response json = proto;
  json.headers.set("content-type", "application/json");
  json.body = to_json(sample);
  EXPECT_EQ(decode_protobuf_response(json, out, diag), make_error_code(errc::protocol_error));
  EXPECT_EQ(diag.message, "expected an application/x-protobuf result, got content type 'application/json'");
}

}  // namespace
}  // namespace tinker::api
