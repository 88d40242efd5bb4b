// The session status unions, session search and finish_session on the wire
// (doc/service.md#session-status, doc/rest.md#search-sessions): exact bodies, unknown variants kept
// at every level, missing required fields named.
#include <tinker/codec.hpp>
#include <tinker/error.hpp>
#include <tinker/types/session.hpp>
#include <tinker/types/session_status.hpp>

#include <gtest/gtest.h>

#include <string>

namespace tinker {
namespace {

using Finish = ClientSessionFinishReason::Kind;

template <class T>
std::string decode_error(std::string_view json) {
  try {
    (void)from_json<T>(json);
  } catch (const error& e) {
    return e.what();
  }
  return "no error";
}

TEST(SessionStatusCodec, EachStatusHasItsExactBody) {
  EXPECT_EQ(to_json(SessionStatus::active()), R"({"type":"active"})");
  EXPECT_EQ(to_json(SessionStatus::failed(SessionFailureCategory(SessionFailureCategory::Kind::internal),
                                          SessionFailedReason::training_run("run-1"), "boom")),
            R"({"type":"failed","category":"internal","reason":{"type":"training_run","training_run_id":"run-1"},)"
            R"("message":"boom"})");
  EXPECT_EQ(
      to_json(SessionStatus::failed(SessionFailureCategory(), SessionFailedReason::request("r1", "sample"), "m")),
      R"({"type":"failed","category":"user","reason":{"type":"request","request_id":"r1","request_type":"sample"},)"
      R"("message":"m"})");
  EXPECT_EQ(to_json(SessionStatus::failed(SessionFailureCategory(), SessionFailedReason::sampling_session("s:1"), "")),
            R"({"type":"failed","category":"user","reason":{"type":"sampling_session","sampling_session_id":"s:1"},)"
            R"("message":""})");
  EXPECT_EQ(to_json(SessionStatus::failed(SessionFailureCategory(), SessionFailedReason(), "whole")),
            R"({"type":"failed","category":"user","reason":{"type":"session"},"message":"whole"})");
  EXPECT_EQ(to_json(SessionStatus::cancelled(std::nullopt)), R"({"type":"cancelled"})");
  EXPECT_EQ(to_json(SessionStatus::cancelled("by admin")), R"({"type":"cancelled","detail":"by admin"})");
  EXPECT_EQ(to_json(SessionStatus::client_finished(ClientSessionFinishReason(Finish::interrupted), std::nullopt)),
            R"({"type":"client_finished","reason":{"type":"interrupted"}})");
  EXPECT_EQ(to_json(SessionStatus::client_finished(ClientSessionFinishReason(), "done")),
            R"({"type":"client_finished","reason":{"type":"success"},"detail":"done"})");
}

TEST(SessionStatusCodec, KnownStatusesRoundTrip) {
  const SessionStatus statuses[] = {
      SessionStatus::active(),
      SessionStatus::failed(SessionFailureCategory(SessionFailureCategory::Kind::internal),
                            SessionFailedReason::request("r", "forward_backward"), "x"),
      SessionStatus::cancelled("why"),
      SessionStatus::client_finished(ClientSessionFinishReason(Finish::errored), "trace"),
  };
  for (const SessionStatus& status : statuses) EXPECT_EQ(from_json<SessionStatus>(to_json(status)), status);
}

TEST(SessionStatusCodec, AnUnknownStatusIsKeptWithItsObject) {
  const auto status = from_json<SessionStatus>(R"({"type":"paused","until":"tomorrow"})");
  EXPECT_EQ(status.kind, SessionStatus::Kind::unknown);
  EXPECT_EQ(status.type_name, "paused");
  EXPECT_EQ(status.raw.text(), R"({"type":"paused","until":"tomorrow"})");
  EXPECT_EQ(to_json(status), R"({"type":"paused","until":"tomorrow"})");  // written back as received
  EXPECT_EQ(describe(status), "paused");
}

TEST(SessionStatusCodec, AnUnknownFailedReasonIsKept) {
  const auto status = from_json<SessionStatus>(
      R"({"type":"failed","category":"internal","reason":{"type":"quota","limit":3},"message":"over"})");
  ASSERT_EQ(status.kind, SessionStatus::Kind::failed);
  EXPECT_EQ(status.failed_reason.kind, SessionFailedReason::Kind::unknown);
  EXPECT_EQ(status.failed_reason.type_name, "quota");
  EXPECT_EQ(status.failed_reason.raw.text(), R"({"type":"quota","limit":3})");
  EXPECT_EQ(status.message, "over");
}

TEST(SessionStatusCodec, AnUnknownCategoryIsKept) {
  const auto status =
      from_json<SessionStatus>(R"({"type":"failed","category":"billing","reason":{"type":"session"},"message":"m"})");
  EXPECT_EQ(status.category.kind, SessionFailureCategory::Kind::unknown);
  EXPECT_EQ(status.category.value, "billing");
  EXPECT_EQ(describe(status), "failed (billing, session): m");
  EXPECT_EQ(to_json(status), R"({"type":"failed","category":"billing","reason":{"type":"session"},"message":"m"})");
}

TEST(SessionStatusCodec, AnUnknownFinishReasonIsKept) {
  const auto status = from_json<SessionStatus>(R"({"type":"client_finished","reason":{"type":"preempted"}})");
  ASSERT_EQ(status.kind, SessionStatus::Kind::client_finished);
  EXPECT_EQ(status.finish_reason.kind, Finish::unknown);
  EXPECT_EQ(status.finish_reason.type_name, "preempted");
  EXPECT_EQ(to_string(status.finish_reason), "preempted");
  EXPECT_EQ(to_json(status), R"({"type":"client_finished","reason":{"type":"preempted"}})");
}

TEST(SessionStatusCodec, MissingRequiredFieldsAreNamed) {
  EXPECT_NE(decode_error<SessionStatus>(R"({"category":"user"})").find("type: missing required field"),
            std::string::npos);
  EXPECT_NE(decode_error<SessionStatus>(R"({"type":"failed","category":"user","message":"m"})")
                .find("reason: missing required field"),
            std::string::npos);
  EXPECT_NE(decode_error<SessionStatus>(R"({"type":"failed","reason":{"type":"session"},"message":"m"})")
                .find("category: missing required field"),
            std::string::npos);
  EXPECT_NE(decode_error<SessionStatus>(R"({"type":"failed","category":"user","reason":{"type":"training_run"},)"
                                        R"("message":"m"})")
                .find("reason.training_run_id: missing required field"),
            std::string::npos);
  EXPECT_NE(decode_error<SessionStatus>(R"({"type":"client_finished"})").find("reason: missing required field"),
            std::string::npos);
  EXPECT_NE(decode_error<SessionStatus>(R"({"type":7})").find("type: expected string"), std::string::npos);
}

TEST(SessionStatusCodec, QueriesHaveExactBodiesAndRefuseUnknownTypes) {
  EXPECT_EQ(to_json(SessionStatusQuery(SessionStatusQuery::Kind::failed)), R"({"type":"failed"})");
  EXPECT_EQ(to_json(SessionStatusQuery(SessionStatusQuery::Kind::client_finished)), R"({"type":"client_finished"})");
  EXPECT_EQ(to_json(SessionStatusQuery::client_finished({Finish::success, Finish::interrupted})),
            R"({"type":"client_finished","reasons":["success","interrupted"]})");
  EXPECT_EQ(from_json<SessionStatusQuery>(R"({"type":"client_finished","reasons":["errored"]})"),
            SessionStatusQuery::client_finished({Finish::errored}));
  EXPECT_NE(decode_error<SessionStatusQuery>(R"({"type":"paused"})").find("unknown type \"paused\""),
            std::string::npos);
  EXPECT_NE(decode_error<SessionStatusQuery>(R"({"type":"client_finished","reasons":["meh"]})")
                .find("reasons[0]: unknown reason \"meh\""),
            std::string::npos);
}

TEST(SessionSearchCodec, TheDefaultRequestSendsOwnerAndLimitOnly) {
  EXPECT_EQ(to_json(SessionSearchRequest()), R"({"user_metadata":{},"owner":{"type":"own"},"limit":20})");
}

TEST(SessionSearchCodec, EveryFilterHasItsWireName) {
  SessionSearchRequest request;
  request.session_id = "s1";
  request.project_ids = std::vector<std::string>{"p1", "p2"};
  request.user_metadata = {{"k", "v"}};
  request.display_name = "Nightly Run";
  request.owner = SearchOwner::users({"tml:user:1"});
  request.statuses = std::vector<SessionStatusQuery>{SessionStatusQuery(SessionStatusQuery::Kind::active),
                                                     SessionStatusQuery::client_finished({Finish::errored})};
  request.limit = 200;
  request.cursor = SessionSearchCursor(parse_timestamp("2026-11-01T10:00:00.5Z"), "s0");
  EXPECT_EQ(to_json(request),
            R"({"session_id":"s1","project_ids":["p1","p2"],"user_metadata":{"k":"v"},"display_name":"Nightly Run",)"
            R"("owner":{"type":"user","owner_urns":["tml:user:1"]},)"
            R"("statuses":[{"type":"active"},{"type":"client_finished","reasons":["errored"]}],"limit":200,)"
            R"("cursor":{"last_created_at":"2026-11-01T10:00:00.500000Z","last_session_id":"s0"}})");
  EXPECT_EQ(from_json<SessionSearchRequest>(to_json(request)), request);
}

TEST(SessionSearchCodec, AResponseDecodesWithOptionalFieldsAbsentOrNull) {
  const auto response = from_json<SessionSearchResponse>(
      R"({"sessions":[{"session_id":"a","created_at":"2026-11-02T00:00:00Z","owner":"tml:u","project_id":"p",)"
      R"("status":null,"checkpoints_count":3,"display_name":null,"user_metadata":null},)"
      R"({"session_id":"b","created_at":"2026-11-01T00:00:00Z","owner":"tml:u","project_id":"p",)"
      R"("status":{"type":"somewhere_new"},"checkpoints_count":0,"display_name":"n","user_metadata":{"k":"v"},)"
      R"("checkpoint_storage_bytes":1024}],"next_cursor":{"last_created_at":"2026-11-01T00:00:00Z",)"
      R"("last_session_id":"b"}})");
  ASSERT_EQ(response.sessions.size(), 2u);
  EXPECT_FALSE(response.sessions[0].status.has_value());
  EXPECT_EQ(response.sessions[0].checkpoints_count, 3);
  EXPECT_FALSE(response.sessions[0].display_name.has_value());
  ASSERT_TRUE(response.sessions[1].status.has_value());
  EXPECT_EQ(response.sessions[1].status->kind, SessionStatus::Kind::unknown);
  EXPECT_EQ(response.sessions[1].checkpoint_storage_bytes, 1024);
  EXPECT_EQ(response.sessions[1].user_metadata->at("k"), "v");
  ASSERT_TRUE(response.next_cursor.has_value());
  EXPECT_EQ(response.next_cursor->last_session_id, "b");
  const auto last_page = from_json<SessionSearchResponse>(R"({"sessions":[],"next_cursor":null})");
  EXPECT_FALSE(last_page.next_cursor.has_value());
}

TEST(SessionSearchCodec, ASummaryMissingARequiredFieldIsNamed) {
  EXPECT_NE(decode_error<SessionSearchResponse>(
                R"({"sessions":[{"session_id":"a","created_at":"2026-11-02T00:00:00Z","owner":"o","project_id":"p"}]})")
                .find("sessions[0].checkpoints_count: missing required field"),
            std::string::npos);
  EXPECT_NE(decode_error<SessionSearchResponse>(R"({"next_cursor":null})").find("sessions: missing required field"),
            std::string::npos);
}

TEST(FinishSessionCodec, TheBodyCarriesTheReasonAsAUnion) {
  EXPECT_EQ(to_json(FinishSessionRequest("s1", ClientSessionFinishReason())),
            R"({"session_id":"s1","reason":{"type":"success"}})");
  EXPECT_EQ(to_json(FinishSessionRequest("s1", ClientSessionFinishReason(Finish::interrupted), "SIGINT")),
            R"({"session_id":"s1","reason":{"type":"interrupted"},"detail":"SIGINT"})");
  EXPECT_EQ(parse_finish_reason("errored"), ClientSessionFinishReason(Finish::errored));
  EXPECT_THROW(parse_finish_reason("crashed"), error);
}

TEST(CreateSessionCodec, DisplayNameIsSentOnlyWhenSet) {
  CreateSessionRequest request({"t"}, {}, std::nullopt);
  request.sdk_version = "0.25.0";
  EXPECT_EQ(to_json(request), R"({"tags":["t"],"user_metadata":{},"sdk_version":"0.25.0","type":"create_session"})");
  request.display_name = "my-first-session";
  EXPECT_EQ(to_json(request), R"({"tags":["t"],"user_metadata":{},"sdk_version":"0.25.0",)"
                              R"("display_name":"my-first-session","type":"create_session"})");
}

}  // namespace
}  // namespace tinker
