// Sessions: ids, heartbeats, ownership, expiry (with the engine clock), REST session views,
// telemetry.
#include "engine_test_support.hpp"

#include <regex>

namespace tinker::local::test {
namespace {

using SessionsTest = EngineFixture;

TEST_F(SessionsTest, CreateReturnsUuidV4AndHeartbeatsKnownSessionsOnly) {
  start();
  std::string id = new_session(alice);
  EXPECT_TRUE(std::regex_match(id, std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")))
      << id;
  EXPECT_NE(id, new_session(alice));
  EXPECT_NO_THROW(engine->heartbeat(SessionHeartbeatRequest(id), alice));
  EXPECT_EQ(http_status_of([&] { engine->heartbeat(SessionHeartbeatRequest("nope"), alice); }), 404);
  EXPECT_EQ(http_status_of([&] { engine->heartbeat(SessionHeartbeatRequest(id), bob); }), 404);
}

TEST_F(SessionsTest, ExpiresWithoutHeartbeatAndRefusesLaterRequests) {
  options.session_expiry = std::chrono::seconds(60);
  start();
  std::string session = new_session(alice);
  std::string model = new_model(session);
  engine->clock().advance(std::chrono::seconds(40));
  engine->heartbeat(SessionHeartbeatRequest(session), alice);  // keeps it alive
  engine->clock().advance(std::chrono::seconds(40));
  EXPECT_NO_THROW(forward_backward(model, 1));
  engine->clock().advance(std::chrono::seconds(61));
  EXPECT_EQ(http_status_of([&] { engine->heartbeat(SessionHeartbeatRequest(session), alice); }), 404);
  EXPECT_EQ(http_status_of([&] { forward_backward(model, 2); }), 404);
  EXPECT_EQ(
      http_status_of([&] { engine->create_model(CreateModelRequest(session, 1, "tinker-local/tiny-lm"), alice); }),
      404);
  EXPECT_EQ(http_status_of([&] {
              engine->create_sampling_session(
                  CreateSamplingSessionRequest(session, 0, std::string("tinker-local/tiny-lm"), std::nullopt), alice);
            }),
            404);
}

TEST_F(SessionsTest, ExpiryFailsPendingFuturesWithServerCategory) {
  options.session_expiry = std::chrono::seconds(30);
  start();
  std::string session = new_session(alice);
  std::string model = new_model(session);
  UntypedAPIFuture held = forward_backward(model, 2);  // seq 1 never arrives: held
  EXPECT_NE(poll(held.request_id).body.find("try_again"), std::string::npos);
  engine->clock().advance(std::chrono::seconds(31));
  auto body = result_json(held.request_id);
  EXPECT_EQ(text(body["error"]), "session expired");
  EXPECT_EQ(text(body["category"]), "server");
}

TEST_F(SessionsTest, ListAndGetShowTheCallersSessionsWithTheirRunsAndSamplers) {
  start();
  std::string first = new_session(alice);
  std::string second = new_session(alice);
  new_session(bob);
  std::string model = new_model(second);
  engine->create_sampling_session(
      CreateSamplingSessionRequest(second, 0, std::string("tinker-local/tiny-lm"), std::nullopt), alice);

  auto listed = engine->list_sessions(20, 0, alice);
  ASSERT_EQ(listed.sessions.size(), 2u);
  EXPECT_EQ(listed.sessions[0], second);  // newest first
  EXPECT_EQ(listed.sessions[1], first);
  EXPECT_EQ(engine->list_sessions(1, 1, alice).sessions, std::vector<std::string>{first});
  EXPECT_EQ(http_status_of([&] { engine->list_sessions(0, 0, alice); }), 400);

  auto details = engine->get_session(second, alice);
  EXPECT_EQ(details.training_run_ids, std::vector<std::string>{model});
  EXPECT_EQ(details.sampler_ids, std::vector<std::string>{second + ":sample:0"});
  EXPECT_EQ(http_status_of([&] { engine->get_session(second, bob); }), 404);

  EXPECT_EQ(http_status_of([&] { engine->assign_session_project(second, AssignSessionProjectRequest(""), alice); }),
            400);
  EXPECT_NO_THROW(engine->assign_session_project(second, AssignSessionProjectRequest("proj-1"), alice));
  EXPECT_EQ(http_status_of([&] { engine->assign_session_project(second, AssignSessionProjectRequest("p"), bob); }),
            404);
}

TEST_F(SessionsTest, TelemetryIsCountedAcceptedAndKeptAsSent) {
  start();
  TelemetryRequest request;
  request.events.resize(3);
  EXPECT_EQ(engine->telemetry(request, R"({"events":"as sent"})", alice).status, "accepted");
  EXPECT_EQ(engine->telemetry(request, "second", alice).status, "accepted");
  EXPECT_EQ(engine->telemetry_event_count(), 6u);
  EXPECT_EQ(engine->telemetry_batches(), (std::vector<std::string>{R"({"events":"as sent"})", "second"}));
}

TEST_F(SessionsTest, CapabilitiesListTheCatalogue) {
  start();
  auto capabilities = engine->capabilities();
  ASSERT_EQ(capabilities.supported_models.size(), options.catalogue.size());
  EXPECT_EQ(capabilities.supported_models[0].model_name, options.catalogue[0].name);
  EXPECT_EQ(capabilities.supported_models[0].max_context_length, options.catalogue[0].max_context_length);
}

}  // namespace
}  // namespace tinker::local::test
