// Future polling (doc/protocol.md#futures): the retrieve_future poll loop over the real transport against a
// scripted server, with a fake clock recording every back-off sleep.
#include "client/futures/poll.hpp"

#include "api/response.hpp"

#include "support/fake_clock.hpp"
#include "support/sample_values.hpp"
#include "support/test_server.hpp"

#include <tinker/codec.hpp>

#include <gtest/gtest.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

namespace tinker::client::futures {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;
using std::chrono::seconds;
using test::ScriptedResponse;
using test::ScriptedServer;

std::string try_again(std::string_view state, std::string_view reason = {}) {
  std::string body = R"({"type":"try_again","request_id":"req-1","queue_state":")" + std::string(state) + "\"";
  if (!reason.empty()) body += R"(,"queue_state_reason":")" + std::string(reason) + "\"";
  return body + "}";
}

const std::string create_model_result = R"({"type":"create_model","model_id":"s1:train:0"})";

ScriptedResponse rate_limited() {
  ScriptedResponse response(429, R"({"detail":"slow down"})");
  response.headers.emplace_back("retry-after", "7");  // ignored by future polling (doc/protocol.md#headers)
  return response;
}

ScriptedResponse hang() {
  ScriptedResponse response;
  response.no_response = true;
  return response;
}

// The request id in a retrieve_future body (for handlers that answer per future).
std::string polled_id(const test::RecordedRequest& request) {
  const auto start = request.body.find("\"request_id\":\"") + 14;
  return request.body.substr(start, request.body.find('"', start) - start);
}

class FuturePollTest : public ::testing::Test {
 protected:
  void make_client(const ScriptedServer& server) {
    ClientOptions options(server.base_url(), Secret("tml-future-poll-test-key"));
    clock_ = std::make_shared<test::FakeClock>(io_.get_executor());
    client_ = std::make_unique<http::HttpClient>(io_.get_executor(), options, clock_, [] { return 0.0; });
  }

  PollRequest request(FutureType type = FutureType::create_model, std::string id = "req-1") {
    PollRequest r(std::move(id), type);
    r.create_roundtrip = std::chrono::microseconds(250'000);
    r.progress = progress_;
    r.on_queue_state = [this](const QueueStateReport& report) { reports_.push_back(report); };
    r.warn = [this](const std::string& line) { warnings_.push_back(line); };
    r.subject_id = "s1:train:0";
    return r;
  }

  template <class T>
  T run(asio::awaitable<T> op, asio::cancellation_slot slot = {}, std::function<void()> midway = nullptr) {
    auto future = asio::co_spawn(io_, std::move(op), asio::bind_cancellation_slot(slot, asio::use_future));
    const auto start = std::chrono::steady_clock::now();
    bool midway_done = midway == nullptr;
    while (future.wait_for(seconds(0)) != std::future_status::ready &&
           std::chrono::steady_clock::now() - start < seconds(20)) {
      io_.run_one_for(milliseconds(10));
      if (!midway_done && std::chrono::steady_clock::now() - start > milliseconds(150)) {
        midway_done = true;
        midway();
      }
    }
    return future.get();
  }

  PollOutcome poll(PollRequest r) { return run(poll_future(*client_, std::move(r))); }

  void TearDown() override {
    if (!client_) return;
    client_->shutdown();
    client_.reset();
    io_.restart();
    io_.poll();
  }

  asio::io_context io_;
  std::shared_ptr<test::FakeClock> clock_;
  std::unique_ptr<http::HttpClient> client_;
  std::shared_ptr<PollProgress> progress_ = std::make_shared<PollProgress>();
  std::vector<QueueStateReport> reports_;
  std::vector<std::string> warnings_;
};

TEST(FuturePollBody, IsWhatTheJsonCodecWrites) {
  std::string body = "left over from an earlier poll";
  for (const std::string id : {"req-1", "", "a\"quote\\and\ncontrol\x01", "caf\xc3\xa9"}) {
    for (const bool metadata : {true, false}) {
      write_poll_body(body, id, metadata);
      EXPECT_EQ(body, to_json(RetrieveFutureRequest(id, metadata))) << id;
    }
  }
  EXPECT_THROW(write_poll_body(body, "bad\xff", true), error);  // not UTF-8, as to_json refuses it
  EXPECT_THROW(to_json(RetrieveFutureRequest("bad\xff", true)), error);
}

TEST_F(FuturePollTest, FirstPollSendsTheSpecHeadersAndBody) {
  ScriptedServer server;
  server.push(ScriptedResponse(200, create_model_result));
  make_client(server);
  const PollOutcome outcome = poll(request());
  ASSERT_FALSE(outcome.error) << outcome.diag.message;
  EXPECT_EQ(outcome.result.status, 200);
  EXPECT_EQ(outcome.result.body, create_model_result);
  CreateModelResponse decoded;
  diagnostics diag;
  EXPECT_FALSE(api::decode_json_response(outcome.result, decoded, diag)) << diag.message;
  EXPECT_EQ(decoded.model_id, "s1:train:0");

  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  const auto& sent = requests[0];
  EXPECT_EQ(sent.method, "POST");
  EXPECT_EQ(sent.target, "/api/v1/retrieve_future");
  EXPECT_EQ(sent.body, R"({"request_id":"req-1","allow_metadata_only":true})");
  EXPECT_EQ(sent.header("content-type"), "application/json");
  EXPECT_EQ(sent.header("accept"), "application/json");
  EXPECT_EQ(sent.header("x-tinker-request-iteration"), "0");
  EXPECT_EQ(sent.header("x-tinker-request-type"), "CreateModel");
  EXPECT_EQ(sent.header("x-tinker-create-promise-roundtrip-time"), "0.250000");
  EXPECT_EQ(sent.header("x-stainless-read-timeout"), "45");
  EXPECT_EQ(sent.header("x-stainless-retry-count"), "0");
  EXPECT_TRUE(clock_->sleeps.empty());
  EXPECT_EQ(progress_->polls_sent, 1);
}

TEST_F(FuturePollTest, TryAgainPollsAgainAtOnceWithTheNextIteration) {
  ScriptedServer server;
  server.push(ScriptedResponse(200, try_again("active")));
  server.push(ScriptedResponse(200, try_again("active")));
  server.push(ScriptedResponse(200, R"({"type":"optim_step","metrics":{}})"));
  make_client(server);
  const PollOutcome outcome = poll(request(FutureType::optim_step));
  ASSERT_FALSE(outcome.error) << outcome.diag.message;
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 3u);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(requests[i].header("x-tinker-request-iteration"), std::to_string(i));
    EXPECT_EQ(requests[i].header("x-tinker-request-type"), "OptimStep");
    EXPECT_EQ(requests[i].body, R"({"request_id":"req-1","allow_metadata_only":true})");
    EXPECT_EQ(requests[i].header("x-tinker-create-promise-roundtrip-time").has_value(), i == 0);
  }
  EXPECT_NE(requests[0].header("x-idempotency-key"), requests[1].header("x-idempotency-key"));
  EXPECT_TRUE(clock_->sleeps.empty());
  EXPECT_TRUE(reports_.empty()) << "active is the initial state: no change to report";
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(FuturePollTest, ProtobufResultsAreAskedForAndReturnedRaw) {
  ScriptedServer server;
  const ForwardBackwardOutput expected = test::sample<ForwardBackwardOutput>();
  ScriptedResponse answer(200, to_protobuf(expected));
  answer.content_type = "application/x-protobuf";
  server.push(ScriptedResponse(200, try_again("active")));
  server.push(answer);
  make_client(server);
  const PollOutcome outcome = poll(request(FutureType::forward_backward));
  ASSERT_FALSE(outcome.error) << outcome.diag.message;
  ForwardBackwardOutput decoded;
  diagnostics diag;
  ASSERT_FALSE(api::decode_protobuf_response(outcome.result, decoded, diag)) << diag.message;
  EXPECT_EQ(decoded, expected);
  for (const auto& sent : server.requests()) {
    EXPECT_EQ(sent.header("accept"), "application/x-protobuf");
    EXPECT_EQ(sent.header("x-tinker-request-type"), "ForwardBackward");
  }
  EXPECT_EQ(request_type_header(FutureType::sample), std::string("Sample"));
  EXPECT_TRUE(has_protobuf_result(FutureType::sample));
  EXPECT_FALSE(has_protobuf_result(FutureType::save_weights_for_sampler));
}

TEST_F(FuturePollTest, Http408IsNotReadyAndCarriesTheQueueState) {
  ScriptedServer server;
  server.push(ScriptedResponse(408, try_again("paused_capacity", "waiting for GPU capacity")));
  server.push(ScriptedResponse(408, ""));  // no body: still "not ready"
  server.push(ScriptedResponse(200, create_model_result));
  make_client(server);
  const PollOutcome outcome = poll(request());
  ASSERT_FALSE(outcome.error) << outcome.diag.message;
  EXPECT_EQ(server.request_count(), 3u);
  EXPECT_TRUE(clock_->sleeps.empty());
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0], QueueStateReport(QueueState::paused_capacity, "waiting for GPU capacity", milliseconds(0)));
  EXPECT_EQ(progress_->queue_state, QueueState::paused_capacity);
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_EQ(warnings_[0], "Training for s1:train:0 is paused. Reason: waiting for GPU capacity.");
}

TEST_F(FuturePollTest, ServerErrorsArePolledAgainAtOnce) {
  ScriptedServer server;
  for (int status : {500, 502, 503, 504}) server.push(ScriptedResponse(status, R"({"detail":"oops"})"));
  server.push(ScriptedResponse(200, create_model_result));
  make_client(server);
  const PollOutcome outcome = poll(request());
  ASSERT_FALSE(outcome.error) << outcome.diag.message;
  EXPECT_EQ(server.request_count(), 5u);
  EXPECT_TRUE(clock_->sleeps.empty());
  EXPECT_EQ(server.requests().back().header("x-tinker-request-iteration"), "4");
}

TEST_F(FuturePollTest, RateLimitsBackOffExponentiallyAndIgnoreRetryAfter) {
  ScriptedServer server;
  for (int i = 0; i < 7; ++i) server.push(rate_limited());
  server.push(ScriptedResponse(503));  // any other answer resets the count
  server.push(rate_limited());
  server.push(ScriptedResponse(200, create_model_result));
  make_client(server);
  const PollOutcome outcome = poll(request());
  ASSERT_FALSE(outcome.error) << outcome.diag.message;
  const std::vector<milliseconds> expected{seconds(1),  seconds(2),  seconds(4),  seconds(8),
                                           seconds(16), seconds(30), seconds(30), seconds(1)};
  EXPECT_EQ(clock_->sleeps, expected);
  EXPECT_EQ(server.request_count(), 10u);
}

TEST_F(FuturePollTest, ConnectionFailuresBackOffLikeRateLimits) {
  ScriptedServer server;
  ScriptedResponse reset;
  reset.close_without_response = true;
  ScriptedResponse closing_429 = rate_limited();
  closing_429.close = true;  // else the reset below hits a reused connection, which the transport retries itself
  server.push(reset);
  server.push(closing_429);
  server.push(reset);
  server.push(ScriptedResponse(200, create_model_result));
  make_client(server);
  const PollOutcome outcome = poll(request());
  ASSERT_FALSE(outcome.error) << outcome.diag.message;
  EXPECT_EQ(clock_->sleeps, (std::vector<milliseconds>{seconds(1), seconds(2), seconds(4)}));
  EXPECT_EQ(server.requests().back().header("x-tinker-request-iteration"), "3");
}

TEST_F(FuturePollTest, CompleteMetadataPollsAgainWithoutMetadata) {
  ScriptedServer server;
  server.push(ScriptedResponse(200, R"({"status":"complete_metadata","response_payload_size":7340032})"));
  server.push(ScriptedResponse(200, create_model_result));
  make_client(server);
  const PollOutcome outcome = poll(request());
  ASSERT_FALSE(outcome.error) << outcome.diag.message;
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[1].body, R"({"request_id":"req-1","allow_metadata_only":false})");
  EXPECT_EQ(progress_->payload_size, 7340032);
  EXPECT_TRUE(clock_->sleeps.empty());
}

TEST_F(FuturePollTest, CompleteMetadataTwiceIsAProtocolError) {
  ScriptedServer server;
  server.set_default_response(ScriptedResponse(200, R"({"status":"complete_metadata","response_payload_size":9})"));
  make_client(server);
  const PollOutcome outcome = poll(request());
  EXPECT_EQ(outcome.error, make_error_code(errc::protocol_error));
  EXPECT_EQ(server.request_count(), 2u);
}

TEST_F(FuturePollTest, FailedFutureIsRequestFailedWithItsCategory) {
  const std::vector<std::pair<std::string, RequestErrorCategory>> cases{
      {R"({"error":"target_tokens length 12 != model_input length 13","category":"user"})", RequestErrorCategory::user},
      {R"({"error":"worker lost","category":"server"})", RequestErrorCategory::server},
      {R"({"error":"odd","category":"cosmic"})", RequestErrorCategory::unknown},
      {R"({"error":"no category"})", RequestErrorCategory::unknown},
  };
  for (const auto& [body, category] : cases) {
    ScriptedServer server;
    server.push(ScriptedResponse(200, body));
    make_client(server);
    const PollOutcome outcome = poll(request());
    EXPECT_EQ(outcome.error, make_error_code(errc::request_failed)) << body;
    EXPECT_EQ(outcome.diag.category, category) << body;
    EXPECT_EQ(outcome.diag.request_id, "req-1");
    EXPECT_FALSE(outcome.diag.message.empty());
    EXPECT_EQ(server.request_count(), 1u);
  }
}

TEST_F(FuturePollTest, Http410MeansExpired) {
  ScriptedServer server;
  server.push(ScriptedResponse(200, try_again("active")));
  server.push(ScriptedResponse(410, R"({"detail":"promise expired"})"));
  make_client(server);
  const PollOutcome outcome = poll(request(FutureType::sample));
  EXPECT_EQ(outcome.error, make_error_code(errc::gone));
  EXPECT_TRUE(outcome.expired());
  EXPECT_EQ(outcome.diag.http_status, 410);
  EXPECT_EQ(outcome.diag.request_id, "req-1");
  EXPECT_NE(outcome.diag.message.find("resubmitted"), std::string::npos) << outcome.diag.message;
  EXPECT_EQ(server.request_count(), 2u);
}

TEST_F(FuturePollTest, BadRequestIsRetriedThreeTimesThenFails) {
  ScriptedServer server;
  server.set_default_response(ScriptedResponse(400, R"({"detail":"flaky proxy"})"));
  make_client(server);
  const PollOutcome outcome = poll(request());
  EXPECT_EQ(outcome.error, make_error_code(errc::bad_request));
  EXPECT_EQ(server.request_count(), 4u);
  EXPECT_TRUE(clock_->sleeps.empty());
}

TEST_F(FuturePollTest, ABare400IsAConnectionFaultRetriedThreeTimes) {
  ScriptedServer server;
  server.set_default_response(ScriptedResponse(400, ""));  // a bare 400 (Content-Length: 0), as proxies send
  make_client(server);
  const PollOutcome outcome = poll(request());
  EXPECT_EQ(outcome.error, make_error_code(errc::connection_failed));
  EXPECT_EQ(server.request_count(), 4u);
}

TEST_F(FuturePollTest, A408WithJsonResetsTheBadRequestCount) {
  ScriptedServer server;
  for (int i = 0; i < 3; ++i) server.push(ScriptedResponse(400, R"({"detail":"flaky proxy"})"));
  server.push(ScriptedResponse(408, try_again("active")));
  for (int i = 0; i < 3; ++i) server.push(ScriptedResponse(400, R"({"detail":"flaky proxy"})"));
  server.push(ScriptedResponse(200, create_model_result));
  make_client(server);
  const PollOutcome outcome = poll(request());
  ASSERT_FALSE(outcome.error) << outcome.diag.message;
  EXPECT_EQ(server.request_count(), 8u);
}

TEST_F(FuturePollTest, OtherClientErrorsAreFatalWithTheServersRequestId) {
  ScriptedServer server;
  ScriptedResponse not_found(404, R"({"detail":"unknown future"})");
  not_found.headers.emplace_back("x-request-id", "srv-42");
  server.push(not_found);
  make_client(server);
  const PollOutcome outcome = poll(request());
  EXPECT_EQ(outcome.error, make_error_code(errc::not_found));
  EXPECT_EQ(outcome.diag.http_status, 404);
  EXPECT_EQ(outcome.diag.request_id, "srv-42");
  EXPECT_EQ(outcome.diag.message, "retrieving the result of future req-1: unknown future");
  EXPECT_EQ(server.request_count(), 1u);
}

TEST_F(FuturePollTest, BillingHoldPausesOnlyWithBillingState) {
  ScriptedServer server;
  server.push(ScriptedResponse(402, R"({"detail":"billing"})"));
  server.push(ScriptedResponse(200, create_model_result));
  make_client(server);
  api::BillingPause billing;
  PollRequest with_billing = request();
  with_billing.billing = &billing;
  const PollOutcome outcome = poll(with_billing);
  ASSERT_FALSE(outcome.error) << outcome.diag.message;
  EXPECT_EQ(clock_->sleeps, (std::vector<milliseconds>{seconds(5)}));
  EXPECT_EQ(warnings_.size(), 1u);

  server.push(ScriptedResponse(402, R"({"detail":"billing"})"));
  EXPECT_EQ(poll(request()).error, make_error_code(errc::payment_required));
}

TEST_F(FuturePollTest, AnUnreadableAnswerIsAskedForAgainWithBackOff) {
  ScriptedServer server;
  server.push(ScriptedResponse(200, "{\"type\": tru"));
  server.push(ScriptedResponse(200, "[1, 2]"));
  server.push(ScriptedResponse(200, create_model_result));
  make_client(server);
  const PollOutcome outcome = poll(request());
  ASSERT_FALSE(outcome.error) << outcome.diag.message;
  EXPECT_EQ(server.request_count(), 3u);
  EXPECT_EQ(clock_->sleeps, (std::vector<milliseconds>{milliseconds(100), milliseconds(200)}));
}

TEST_F(FuturePollTest, AnswersThatAreNeitherResultNorStatusAreErrorsAfterSixInARow) {
  ScriptedServer server;
  for (int i = 0; i < 6; ++i) server.push(ScriptedResponse(200, "{\"type\": tru"));
  ScriptedResponse html(200, "<html>proxy error</html>");
  html.content_type = "text/html";
  for (int i = 0; i < 6; ++i) server.push(html);
  make_client(server);
  const PollOutcome garbled = poll(request());
  EXPECT_EQ(garbled.error, make_error_code(errc::decode_error));
  EXPECT_NE(garbled.diag.message.find("6 such answers in a row"), std::string::npos) << garbled.diag.message;
  const PollOutcome outcome = poll(request());
  EXPECT_EQ(outcome.error, make_error_code(errc::protocol_error));
  EXPECT_NE(outcome.diag.message.find("text/html"), std::string::npos) << outcome.diag.message;
  EXPECT_EQ(outcome.diag.body_excerpt, "<html>proxy error</html>");
}

TEST_F(FuturePollTest, QueueStateChangesAreReportedAndWarnedAtMostOnceAMinute) {
  ScriptedServer server;
  server.push(ScriptedResponse(200, try_again("paused_capacity")));
  server.push(ScriptedResponse(200, try_again("paused_capacity")));             // no change
  server.push(ScriptedResponse(200, try_again("paused_rate_limit", "quota")));  // change, warning too soon
  for (int i = 0; i < 6; ++i) server.push(rate_limited());                      // 61 s pass
  server.push(ScriptedResponse(200, try_again("paused_rate_limit", "quota")));  // no change, warning due
  server.push(ScriptedResponse(200, try_again("active")));
  server.push(ScriptedResponse(200, R"({"type":"try_again","request_id":"req-1"})"));  // unknown, no reason
  server.push(ScriptedResponse(200, create_model_result));
  make_client(server);
  PollRequest r = request();
  r.subject = QueueSubject::model_creation;
  r.subject_id = "Qwen/Qwen3-8B";
  const PollOutcome outcome = poll(r);
  ASSERT_FALSE(outcome.error) << outcome.diag.message;
  const std::vector<QueueStateReport> expected{
      QueueStateReport(QueueState::paused_capacity, std::nullopt, seconds(0)),
      QueueStateReport(QueueState::paused_rate_limit, "quota", seconds(0)),
      QueueStateReport(QueueState::active, std::nullopt, seconds(61)),
  };
  EXPECT_EQ(reports_, expected);
  const std::vector<std::string> expected_warnings{
      "Model creation for Qwen/Qwen3-8B is paused. Reason: Tinker backend is running short on capacity, please wait.",
      "Model creation for Qwen/Qwen3-8B is paused. Reason: quota.",
  };
  EXPECT_EQ(warnings_, expected_warnings);
  EXPECT_EQ(progress_->queue_state, QueueState::active);
  EXPECT_EQ(progress_->waited(clock_->now()), seconds(61));
  EXPECT_EQ(progress_->polls_sent, 13);
}

TEST(QueueStateWarning, UsesTheSpecsDefaultReasons) {
  EXPECT_EQ(queue_state_warning(QueueSubject::sampling, "s:sample:0", QueueState::paused_rate_limit, std::nullopt),
            "Sampling is paused for sampler s:sample:0. Reason: concurrent sampler weights limit hit");
  EXPECT_EQ(queue_state_warning(QueueSubject::training, "m", QueueState::paused_rate_limit, std::nullopt),
            "Training for m is paused. Reason: concurrent training clients rate limit hit.");
  EXPECT_EQ(queue_state_warning(QueueSubject::training, "m", QueueState::unknown, std::string()),
            "Training for m is paused. Reason: unknown.");
  EXPECT_EQ(roundtrip_seconds_text(std::chrono::microseconds(-5)), "0.000000");
  EXPECT_EQ(roundtrip_seconds_text(std::chrono::microseconds(1'234'567)), "1.234567");
}

TEST_F(FuturePollTest, DeadlineStopsTheBackOffWithTimeout) {
  ScriptedServer server;
  server.set_default_response(rate_limited());
  make_client(server);
  PollRequest r = request();
  r.deadline = clock_->now() + seconds(5);
  const PollOutcome outcome = poll(r);
  EXPECT_EQ(outcome.error, make_error_code(errc::timeout));
  EXPECT_EQ(clock_->sleeps, (std::vector<milliseconds>{seconds(1), seconds(2), seconds(2)}));
  EXPECT_EQ(server.request_count(), 3u);
}

TEST_F(FuturePollTest, DeadlineBoundsAPollInFlight) {
  ScriptedServer server;
  server.push(hang());
  make_client(server);
  PollRequest r = request();
  r.deadline = clock_->now() + milliseconds(300);
  const auto started = std::chrono::steady_clock::now();
  const PollOutcome outcome = poll(r);
  EXPECT_EQ(outcome.error, make_error_code(errc::timeout)) << outcome.diag.message;
  EXPECT_LT(std::chrono::steady_clock::now() - started, seconds(5));
  EXPECT_EQ(server.requests().at(0).header("x-stainless-read-timeout"), "0.300");
}

TEST_F(FuturePollTest, CancellationStopsAPollInFlightAndClosesItsConnection) {
  ScriptedServer server;
  server.push(hang());
  server.push(ScriptedResponse(200, create_model_result));
  make_client(server);
  asio::cancellation_signal cancel;
  const auto started = std::chrono::steady_clock::now();
  const PollOutcome outcome =
      run(poll_future(*client_, request()), cancel.slot(), [&] { cancel.emit(asio::cancellation_type::terminal); });
  EXPECT_EQ(outcome.error, make_error_code(errc::cancelled)) << outcome.diag.message;
  EXPECT_LT(std::chrono::steady_clock::now() - started, seconds(3));
  EXPECT_TRUE(server.wait_for_open_connections(0)) << "the cancelled poll's connection was not closed";

  ASSERT_FALSE(poll(request()).error);
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_NE(requests[0].connection, requests[1].connection);
}

// The pattern callers use for a whole-operation timeout (doc/architecture.md#toolchain-rules, rule 3).
asio::awaitable<PollOutcome> poll_with_timer(http::HttpClient& client, PollRequest request, milliseconds limit) {
  const auto executor = co_await asio::this_coro::executor;
  asio::steady_timer timer(executor, limit);
  auto poll_op = asio::co_spawn(executor, poll_future(client, std::move(request)), asio::deferred);
  auto timer_op = timer.async_wait(asio::deferred);
  auto group = asio::experimental::make_parallel_group(std::move(poll_op), std::move(timer_op));
  auto [order, failure, outcome, timer_ec] =
      co_await group.async_wait(asio::experimental::wait_for_one(), asio::use_awaitable);
  (void)order;
  (void)failure;
  (void)timer_ec;
  co_return outcome;
}

TEST_F(FuturePollTest, ParallelGroupWithATimerCancelsThePoll) {
  ScriptedServer server;
  server.push(ScriptedResponse(200, try_again("active")));
  server.push(hang());
  make_client(server);
  const auto started = std::chrono::steady_clock::now();
  const PollOutcome outcome = run(poll_with_timer(*client_, request(), milliseconds(200)));
  EXPECT_EQ(outcome.error, make_error_code(errc::cancelled)) << outcome.diag.message;
  EXPECT_LT(std::chrono::steady_clock::now() - started, seconds(3));
  EXPECT_EQ(server.request_count(), 2u);
}

// ---- combined futures (doc/protocol.md#futures) --------------------------------------------------------------

TEST_F(FuturePollTest, PollAllReturnsResultsInRequestOrder) {
  ScriptedServer server;
  server.set_handler([](const test::RecordedRequest& sent) {
    const std::string id = polled_id(sent);
    ScriptedResponse answer(200, R"({"type":"optim_step","metrics":{"which":")" + id + "\"}}");
    answer.delay = id == "req-a" ? milliseconds(150) : milliseconds(0);  // the first finishes last
    return answer;
  });
  make_client(server);
  std::vector<PollRequest> requests{request(FutureType::optim_step, "req-a"), request(FutureType::optim_step, "req-b"),
                                    request(FutureType::optim_step, "req-c")};
  const CombinedOutcome outcome = run(poll_all(*client_, std::move(requests)));
  ASSERT_FALSE(outcome.error) << outcome.diag.message;
  ASSERT_EQ(outcome.results.size(), 3u);
  EXPECT_NE(outcome.results[0].body.find("req-a"), std::string::npos);
  EXPECT_NE(outcome.results[1].body.find("req-b"), std::string::npos);
  EXPECT_NE(outcome.results[2].body.find("req-c"), std::string::npos);
}

TEST_F(FuturePollTest, PollAllFailsOnTheFirstErrorAndCancelsTheRest) {
  ScriptedServer server;
  server.set_handler([](const test::RecordedRequest& sent) {
    if (polled_id(sent) == "req-b") return ScriptedResponse(200, R"({"error":"boom","category":"server"})");
    return hang();
  });
  make_client(server);
  std::vector<PollRequest> requests{request(FutureType::forward_backward, "req-a"),
                                    request(FutureType::forward_backward, "req-b"),
                                    request(FutureType::forward_backward, "req-c")};
  const auto started = std::chrono::steady_clock::now();
  const CombinedOutcome outcome = run(poll_all(*client_, std::move(requests)));
  EXPECT_EQ(outcome.error, make_error_code(errc::request_failed));
  EXPECT_EQ(outcome.failed_index, 1u);
  EXPECT_EQ(outcome.diag.message, "boom");
  EXPECT_EQ(outcome.diag.category, RequestErrorCategory::server);
  EXPECT_LT(std::chrono::steady_clock::now() - started, seconds(3));
  // Only req-b's keep-alive connection is left (idle in the pool); the cancelled ones are closed.
  EXPECT_TRUE(server.wait_for_open_connections(1)) << "cancelled polls left connections open";
  EXPECT_EQ(client_->stats(http::PoolKind::futures).open, 1u);
}

TEST_F(FuturePollTest, CancellingPollAllCancelsEveryPoll) {
  ScriptedServer server;
  server.set_default_response(hang());
  make_client(server);
  std::vector<PollRequest> requests{request(FutureType::sample, "req-a"), request(FutureType::sample, "req-b")};
  asio::cancellation_signal cancel;
  const CombinedOutcome outcome = run(poll_all(*client_, std::move(requests)), cancel.slot(),
                                      [&] { cancel.emit(asio::cancellation_type::terminal); });
  EXPECT_EQ(outcome.error, make_error_code(errc::cancelled));
  EXPECT_TRUE(server.wait_for_open_connections(0));
  EXPECT_EQ(server.request_count(), 2u);
}

TEST_F(FuturePollTest, PollAllOfNothingIsEmpty) {
  ScriptedServer server;
  make_client(server);
  const CombinedOutcome outcome = run(poll_all(*client_, {}));
  EXPECT_FALSE(outcome.error);
  EXPECT_TRUE(outcome.results.empty());
}

}  // namespace
}  // namespace tinker::client::futures
