// retrieve_future (doc/local.md#ordering-and-futures): long-poll hold and early wake-up, try_again
// and its 408 form, metadata-first answers, retention (410), unknown ids (404), protobuf vs JSON,
// shutdown.
#include "engine_test_support.hpp"

namespace tinker::local::test {
namespace {

using FuturesTest = EngineFixture;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

TEST_F(FuturesTest, PendingPollIsHeldForTheConfiguredTimeThenAnswersTryAgain) {
  options.long_poll_hold = milliseconds(150);
  start();
  std::string model = new_model(new_session(alice));
  UntypedAPIFuture held = forward_backward(model, 2);
  auto started = steady_clock::now();
  RetrieveOutcome outcome = poll(held.request_id, true);
  auto waited = steady_clock::now() - started;
  EXPECT_GE(waited, milliseconds(140));
  EXPECT_LT(waited, milliseconds(2000));
  auto body = boost::json::parse(outcome.body).as_object();
  EXPECT_EQ(text(body["type"]), "try_again");
  EXPECT_EQ(text(body["request_id"]), held.request_id);
  EXPECT_EQ(text(body["queue_state"]), "active");
}

TEST_F(FuturesTest, WaitingPollWakesWhenTheFutureCompletes) {
  options.long_poll_hold = milliseconds(5000);
  start();
  std::string model = new_model(new_session(alice));
  UntypedAPIFuture held = optim_step(model, 2);
  auto started = steady_clock::now();
  auto waiting =
      boost::asio::co_spawn(io, engine->retrieve(held.request_id, false, false, alice), boost::asio::use_future);
  // Two polls may wait on one future.
  auto second =
      boost::asio::co_spawn(io, engine->retrieve(held.request_id, false, false, alice), boost::asio::use_future);
  for (int i = 0; i < 5; ++i) io.run_one_for(milliseconds(5));
  forward_backward(model, 1);
  RetrieveOutcome outcome = await(std::move(waiting));
  EXPECT_LT(steady_clock::now() - started, milliseconds(2000));
  EXPECT_NE(outcome.body.find("\"optim_step\""), std::string::npos) << outcome.body;
  EXPECT_EQ(await(std::move(second)).body, outcome.body);
}

TEST_F(FuturesTest, TryAgainAs408) {
  options.try_again_as_408 = true;
  start();
  std::string model = new_model(new_session(alice));
  UntypedAPIFuture held = forward_backward(model, 2);
  const RetrieveOutcome outcome = poll(held.request_id);
  EXPECT_EQ(outcome.status, 408);
  EXPECT_NE(outcome.body.find("\"type\":\"try_again\""), std::string::npos) << outcome.body;
  EXPECT_NE(outcome.body.find("\"queue_state\":\"active\""), std::string::npos) << outcome.body;
}

TEST_F(FuturesTest, UnknownIdsAndOtherUsersFuturesAre404) {
  start();
  std::string model = new_model(new_session(alice));
  UntypedAPIFuture ticket = forward_backward(model, 1);
  EXPECT_EQ(http_status_of([&] { poll("req-unknown"); }), 404);
  EXPECT_EQ(http_status_of([&] { poll(ticket.request_id, false, false, &bob); }), 404);
}

TEST_F(FuturesTest, ResultsAreRetainedThenAnswer410) {
  options.result_retention = std::chrono::seconds(60);
  start();
  std::string model = new_model(new_session(alice));
  UntypedAPIFuture ticket = forward_backward(model, 1);
  EXPECT_EQ(result(ticket.request_id).content_type, "application/json");
  EXPECT_EQ(result(ticket.request_id).content_type, "application/json");  // repeatable
  engine->clock().advance(std::chrono::seconds(59));
  EXPECT_EQ(http_status_of([&] { poll(ticket.request_id); }), 0);
  engine->clock().advance(std::chrono::seconds(2));
  EXPECT_EQ(http_status_of([&] { poll(ticket.request_id); }), 410);
  // After one more retention period the id is forgotten.
  engine->clock().advance(std::chrono::seconds(30));
  EXPECT_EQ(http_status_of([&] { poll(ticket.request_id); }), 410);
  engine->clock().advance(std::chrono::seconds(31));
  EXPECT_EQ(http_status_of([&] { poll(ticket.request_id); }), 404);
}

TEST_F(FuturesTest, ProtobufOnlyForBulkResultsAndOnlyWhenAccepted) {
  start();
  std::string model = new_model(new_session(alice));
  UntypedAPIFuture fwd = forward_backward(model, 1);
  UntypedAPIFuture optim = optim_step(model, 2);

  RetrieveOutcome proto = result(fwd.request_id, true);
  EXPECT_EQ(proto.content_type, "application/x-protobuf");
  RetrieveOutcome json = result(fwd.request_id, false);
  EXPECT_EQ(json.content_type, "application/json");
  auto from_proto = from_protobuf<ForwardBackwardOutput>(proto.body);
  auto from_json_text = from_json<ForwardBackwardOutput>(json.body);
  EXPECT_EQ(from_proto.metrics, from_json_text.metrics);
  ASSERT_EQ(from_json_text.loss_fn_outputs.size(), 2u);
  EXPECT_EQ(from_proto.loss_fn_outputs[0].at("logprobs").floats().size(), 5u);

  RetrieveOutcome optim_answer = result(optim.request_id, true);
  EXPECT_EQ(optim_answer.content_type, "application/json");
}

TEST_F(FuturesTest, LargeResultsAnswerMetadataFirst) {
  options.inline_payload_limit = 64;
  start();
  std::string model = new_model(new_session(alice));
  UntypedAPIFuture fwd = forward_backward(model, 1, false, cross_entropy_batch(4, 50));
  RetrieveOutcome first = poll(fwd.request_id, true, true);
  auto metadata = boost::json::parse(first.body).as_object();
  EXPECT_EQ(text(metadata["status"]), "complete_metadata");
  RetrieveOutcome payload = poll(fwd.request_id, false, true);
  EXPECT_EQ(payload.content_type, "application/x-protobuf");
  EXPECT_EQ(metadata["response_payload_size"].as_int64(), static_cast<std::int64_t>(payload.body.size()));
  // The JSON form's size is reported when the poll does not accept protobuf.
  auto json_metadata = boost::json::parse(poll(fwd.request_id, true, false).body).as_object();
  EXPECT_EQ(json_metadata["response_payload_size"].as_int64(),
            static_cast<std::int64_t>(poll(fwd.request_id, false, false).body.size()));
  // Small results are answered inline even when metadata is allowed.
  UntypedAPIFuture optim = optim_step(model, 2);
  result(optim.request_id);
  EXPECT_NE(poll(optim.request_id, true).body.find("\"optim_step\""), std::string::npos);
}

TEST_F(FuturesTest, ShutdownCompletesWaitingPollsWithTryAgain) {
  options.long_poll_hold = milliseconds(10000);
  start();
  std::string model = new_model(new_session(alice));
  UntypedAPIFuture held = forward_backward(model, 2);
  auto waiting =
      boost::asio::co_spawn(io, engine->retrieve(held.request_id, false, false, alice), boost::asio::use_future);
  for (int i = 0; i < 5; ++i) io.run_one_for(milliseconds(5));
  auto started = steady_clock::now();
  engine->shutdown();
  RetrieveOutcome outcome = await(std::move(waiting));
  EXPECT_LT(steady_clock::now() - started, milliseconds(2000));
  EXPECT_NE(outcome.body.find("try_again"), std::string::npos);
}

TEST_F(FuturesTest, EngineDestroyedWhilePollsWaitIsSafe) {
  options.long_poll_hold = milliseconds(10000);
  start();
  std::string model = new_model(new_session(alice));
  UntypedAPIFuture held = forward_backward(model, 2);
  auto waiting =
      boost::asio::co_spawn(io, engine->retrieve(held.request_id, false, false, alice), boost::asio::use_future);
  for (int i = 0; i < 5; ++i) io.run_one_for(milliseconds(5));
  engine.reset();
  RetrieveOutcome outcome = await(std::move(waiting));
  EXPECT_NE(outcome.body.find("try_again"), std::string::npos);
}

}  // namespace
}  // namespace tinker::local::test
