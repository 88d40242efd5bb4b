// doc/local.md#ordering-and-futures: retrieve_future answer shapes, long-poll timing,
// complete_metadata, failures, 404/410.
#include "unit/programs/local/support/expectations.hpp"
#include "unit/programs/local/support/local_server.hpp"

#include <boost/json/parse.hpp>

#include <chrono>
#include <future>

namespace tinker::local::test {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

class HttpApiFutures : public LocalServerTest {
 protected:
  void start() {
    session = api().create_session();
    model = api().create_model(session);
  }

  json::object fwd_body(std::int64_t seq) {
    json::array data;
    data.emplace_back(cross_entropy_datum({11, 12, 13, 14, 15, 16, 17, 18}));
    return forward_backward_body(model, seq, data);
  }

  /// A future that stays pending: seq_id 2 waits for seq_id 1, which never comes.
  std::string held_future() { return api().submit("/api/v1/forward_backward", fwd_body(2)); }

  static milliseconds elapsed_since(Clock::time_point start) {
    return std::chrono::duration_cast<milliseconds>(Clock::now() - start);
  }

  std::string session;
  std::string model;
};

TEST_F(HttpApiFutures, PendingPollIsHeldThenAnswersTryAgain) {
  options.long_poll_hold = milliseconds(400);
  start();
  const std::string request_id = held_future();
  const auto started = Clock::now();
  const RawResponse response = api().poll(request_id, true);
  const milliseconds took = elapsed_since(started);
  ASSERT_EQ(response.status, 200) << response.describe();
  ASSERT_TRUE(is_json_answer(response));
  const json::value body = response.json();
  EXPECT_EQ(string_field(body, "type"), "try_again");
  EXPECT_EQ(string_field(body, "request_id"), request_id);
  EXPECT_EQ(string_field(body, "queue_state"), "active");
  EXPECT_GE(took.count(), 300) << "the poll was not held (long_poll_hold 400 ms)";
  EXPECT_LT(took.count(), 5000);
}

TEST_F(HttpApiFutures, PollOfACompleteFutureIsNotHeld) {
  options.long_poll_hold = milliseconds(3000);
  start();
  const std::string request_id = api().submit("/api/v1/forward_backward", fwd_body(1));
  (void)api().await_response(request_id);
  const auto started = Clock::now();
  const RawResponse again = api().poll(request_id);
  EXPECT_EQ(again.status, 200);
  EXPECT_LT(elapsed_since(started).count(), 1500);
}

TEST_F(HttpApiFutures, HeldPollWakesUpWhenTheFutureCompletes) {
  options.long_poll_hold = milliseconds(5000);
  start();
  const std::string request_id = held_future();
  std::unique_ptr<RawHttpClient> poller = api().new_client();
  auto answered = std::async(std::launch::async, [&] {
    json::object body{{"request_id", request_id}, {"allow_metadata_only", false}};
    const auto started = Clock::now();
    RawResponse response = poller->request("POST", "/api/v1/retrieve_future",
                                           api().auth({{"Content-Type", "application/json"}}), to_text(body));
    return std::make_pair(response, elapsed_since(started));
  });
  // Complete the future only once the poll is held (in the arrival log, not yet answered).
  ASSERT_TRUE(wait_for_unanswered(api().server(), "/api/v1/retrieve_future")) << "the poll never reached the server";
  (void)api().submit("/api/v1/forward_backward", fwd_body(1));  // unblocks seq_id 2
  const auto [response, took] = answered.get();
  ASSERT_EQ(response.status, 200) << response.describe();
  EXPECT_TRUE(field(response.json(), "loss_fn_outputs").is_array()) << response.body;
  EXPECT_LT(took.count(), 4500) << "the held poll was not woken by completion";
}

TEST_F(HttpApiFutures, TryAgainAs408CarriesTheQueueState) {
  options.try_again_as_408 = true;
  start();
  const std::string request_id = held_future();
  const RawResponse response = api().poll(request_id);
  ASSERT_EQ(response.status, 408) << response.describe();
  ASSERT_TRUE(is_json_answer(response));
  EXPECT_EQ(string_field(response.json(), "queue_state"), "active");
}

TEST_F(HttpApiFutures, UnknownRequestIdIs404) {
  start();
  EXPECT_TRUE(is_error(api().poll("req-00000000-0000-4000-8000-000000000000"), 404));
}

TEST_F(HttpApiFutures, FailedFutureAnswersErrorAndCategory) {
  start();
  json::object datum = cross_entropy_datum({5, 6, 7, 8});
  datum["loss_fn_inputs"].as_object()["target_tokens"] = int64_tensor({6, 7});
  json::array data;
  data.emplace_back(std::move(datum));
  const std::string request_id = api().submit("/api/v1/forward_backward", forward_backward_body(model, 1, data));
  // Error bodies stay JSON even when protobuf is accepted (only results come as protobuf).
  const RawResponse response = api().await_response(request_id, protobuf_type);
  ASSERT_EQ(response.status, 200) << response.describe();
  ASSERT_TRUE(is_json_answer(response));
  const json::value body = response.json();
  EXPECT_EQ(body.as_object().size(), 2u) << response.body;
  EXPECT_EQ(string_field(body, "category"), "user");
  EXPECT_NE(string_field(body, "error").find("target_tokens"), std::string::npos) << response.body;
}

TEST_F(HttpApiFutures, LargeResultAnswersCompleteMetadataFirst) {
  options.inline_payload_limit = 16;
  start();
  const std::string request_id = api().submit("/api/v1/forward_backward", fwd_body(1));
  const RawResponse metadata = api().await_response(request_id, protobuf_type, true);
  ASSERT_EQ(metadata.status, 200) << metadata.describe();
  ASSERT_TRUE(is_json_answer(metadata));
  const json::value body = metadata.json();
  EXPECT_EQ(string_field(body, "status"), "complete_metadata");
  const auto size = field(body, "response_payload_size").to_number<std::int64_t>();

  const RawResponse payload = api().poll(request_id, false, protobuf_type);
  ASSERT_EQ(payload.status, 200) << payload.describe();
  ASSERT_NE(payload.header("Content-Type").value_or("").find("application/x-protobuf"), std::string::npos);
  EXPECT_EQ(static_cast<std::size_t>(size), payload.body.size());
  tinker_public::ForwardBackwardOutput output;
  EXPECT_TRUE(output.ParseFromString(payload.body));
}

TEST_F(HttpApiFutures, SmallResultIsAnsweredInline) {
  start();
  const std::string request_id = api().submit("/api/v1/forward_backward", fwd_body(1));
  const RawResponse response = api().await_response(request_id, json_type, true);
  EXPECT_TRUE(field(response.json(), "loss_fn_outputs").is_array()) << response.body;
}

TEST_F(HttpApiFutures, CompletedResultCanBeRetrievedRepeatedly) {
  start();
  const std::string request_id = api().submit("/api/v1/forward_backward", fwd_body(1));
  const RawResponse first = api().await_response(request_id);
  const RawResponse second = api().poll(request_id);
  EXPECT_EQ(first.status, 200);
  EXPECT_EQ(first.body, second.body);
}

TEST_F(HttpApiFutures, ResultsAreEvictedAfterRetentionWith410) {
  options.result_retention = std::chrono::seconds(1);
  start();
  const std::string request_id = api().submit("/api/v1/forward_backward", fwd_body(1));
  ASSERT_EQ(api().await_response(request_id).status, 200);
  api().server().advance_clock(std::chrono::seconds(2));  // retention runs on the server's clock
  EXPECT_TRUE(is_error(api().poll(request_id), 410));
}

}  // namespace
}  // namespace tinker::local::test
