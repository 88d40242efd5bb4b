// Session status, finish_session, cancelling and session search in the engine
// (doc/local.md#session-search): owner semantics, every filter, newest first, cursor paging.
#include "engine_test_support.hpp"

namespace tinker::local::test {
namespace {

using SessionSearchEngine = EngineFixture;
using Finish = ClientSessionFinishReason::Kind;

std::vector<std::string> ids_of(const SessionSearchResponse& response) {
  std::vector<std::string> ids;
  for (const SessionSummary& summary : response.sessions) ids.push_back(summary.session_id);
  return ids;
}

TEST_F(SessionSearchEngine, OwnerSemantics) {
  start();
  const std::string mine = new_session(alice);
  const std::string theirs = new_session(bob);
  SessionSearchRequest request;
  EXPECT_EQ(ids_of(engine->search_sessions(request, alice)), std::vector<std::string>{mine});
  request.owner = SearchOwner::accessible();
  EXPECT_EQ(ids_of(engine->search_sessions(request, alice)).size(), 2u);
  request.owner = SearchOwner::users({bob.user_id});
  EXPECT_EQ(ids_of(engine->search_sessions(request, alice)), std::vector<std::string>{theirs});
  EXPECT_EQ(engine->search_sessions(request, alice).sessions.at(0).owner, bob.user_id);
}

TEST_F(SessionSearchEngine, LimitIsCheckedAndPagesFollowTheCursorNewestFirst) {
  start();
  std::vector<std::string> made;
  for (int i = 0; i < 5; ++i) made.insert(made.begin(), new_session(alice));
  SessionSearchRequest request;
  request.limit = 0;
  EXPECT_EQ(http_status_of([&] { engine->search_sessions(request, alice); }), 400);
  request.limit = 201;
  EXPECT_EQ(http_status_of([&] { engine->search_sessions(request, alice); }), 400);
  request.limit = 2;
  std::vector<std::string> walked;
  for (int page = 0; page < 10; ++page) {
    const SessionSearchResponse response = engine->search_sessions(request, alice);
    for (const std::string& id : ids_of(response)) walked.push_back(id);
    if (!response.next_cursor) break;
    EXPECT_EQ(response.next_cursor->last_session_id, response.sessions.back().session_id);
    request.cursor = response.next_cursor;
  }
  // Sessions made in the same microsecond are ordered by id, so compare as sets and check order by time.
  std::vector<std::string> sorted_walked = walked, sorted_made = made;
  std::sort(sorted_walked.begin(), sorted_walked.end());
  std::sort(sorted_made.begin(), sorted_made.end());
  EXPECT_EQ(sorted_walked, sorted_made);
  EXPECT_EQ(walked.size(), 5u);
}

TEST_F(SessionSearchEngine, FinishingEndsTheSessionForGood) {
  start();
  const std::string session = new_session(alice);
  FinishSessionRequest unknown(session, ClientSessionFinishReason(Finish::unknown));
  unknown.reason.type_name = "preempted";
  EXPECT_EQ(http_status_of([&] { engine->finish_session(unknown, alice); }), 400);
  EXPECT_EQ(http_status_of([&] { engine->finish_session(FinishSessionRequest(session, {}), bob); }), 404);
  engine->finish_session(FinishSessionRequest(session, ClientSessionFinishReason(Finish::errored), "oom"), alice);
  EXPECT_EQ(http_status_of([&] { engine->finish_session(FinishSessionRequest(session, {}), alice); }), 400);
  EXPECT_EQ(http_status_of([&] { engine->heartbeat(SessionHeartbeatRequest(session), alice); }), 400);
  EXPECT_EQ(
      http_status_of([&] { engine->create_model(CreateModelRequest(session, 1, "tinker-local/tiny-lm"), alice); }),
      400);
  SessionSearchRequest request;
  request.statuses = std::vector<SessionStatusQuery>{SessionStatusQuery::client_finished({Finish::errored})};
  const SessionSearchResponse found = engine->search_sessions(request, alice);
  ASSERT_EQ(found.sessions.size(), 1u);
  EXPECT_EQ(found.sessions[0].status,
            SessionStatus::client_finished(ClientSessionFinishReason(Finish::errored), std::string("oom")));
  request.statuses = std::vector<SessionStatusQuery>{SessionStatusQuery::client_finished({Finish::success})};
  EXPECT_TRUE(engine->search_sessions(request, alice).sessions.empty());
}

TEST_F(SessionSearchEngine, CancelledAndExpiredSessions) {
  options.session_expiry = std::chrono::seconds(60);
  start();
  const std::string cancelled = new_session(alice);
  engine->cancel_session(cancelled, std::string("from the console"));
  EXPECT_EQ(http_status_of([&] { engine->cancel_session(cancelled, std::nullopt); }), 400);
  EXPECT_EQ(http_status_of([&] { engine->cancel_session("nope", std::nullopt); }), 404);
  const std::string expiring = new_session(alice);
  engine->clock().advance(std::chrono::seconds(61));
  SessionSearchRequest request;
  request.session_id = expiring;
  const SessionSearchResponse found = engine->search_sessions(request, alice);
  ASSERT_EQ(found.sessions.size(), 1u);
  EXPECT_FALSE(found.sessions[0].status.has_value());  // neither finished nor known to be running
  request.session_id = cancelled;
  EXPECT_EQ(engine->search_sessions(request, alice).sessions.at(0).status,
            SessionStatus::cancelled(std::string("from the console")));
}

TEST_F(SessionSearchEngine, CheckpointsAreCountedPerSession) {
  start();
  const std::string session = new_session(alice);
  const std::string model = new_model(session);
  SaveWeightsRequest save(model, 1, std::string("one"));
  const UntypedAPIFuture saving = engine->save_weights(save, alice);
  (void)result_json(saving.request_id);
  SessionSearchRequest request;
  const SessionSearchResponse found = engine->search_sessions(request, alice);
  ASSERT_EQ(found.sessions.size(), 1u);
  EXPECT_EQ(found.sessions[0].checkpoints_count, 1);
  EXPECT_GT(found.sessions[0].checkpoint_storage_bytes.value_or(0), 0);
}

}  // namespace
}  // namespace tinker::local::test
