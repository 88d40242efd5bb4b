// doc/local.md#what-it-serves, doc/rest.md: sessions, heartbeats, expiry, sampling sessions and
// the session REST endpoints.
#include "unit/programs/local/support/expectations.hpp"
#include "unit/programs/local/support/local_server.hpp"

#include <boost/json/parse.hpp>

#include <algorithm>
#include <regex>

namespace tinker::local::test {
namespace {

namespace json = boost::json;

using HttpApiSessions = LocalServerTest;

bool contains(const json::value& array, std::string_view id) {
  const json::array& items = array.as_array();
  return std::any_of(items.begin(), items.end(),
                     [&](const json::value& v) { return v.is_string() && v.get_string() == id; });
}

json::object sampling_session_body(const std::string& session, std::int64_t seq, std::string_view base_model) {
  json::object body;
  body["session_id"] = session;
  body["sampling_session_seq_id"] = seq;
  body["base_model"] = base_model;
  body["type"] = "create_sampling_session";
  return body;
}

TEST_F(HttpApiSessions, CreateSessionAnswersAUuidSessionId) {
  const json::value body = json::parse(R"({"tags": ["a", "b"], "user_metadata": {"exp": "x"},
      "sdk_version": "0.25.0", "project_id": "proj-1", "type": "create_session"})");
  const RawResponse response = api().post("/api/v1/create_session", body);
  ASSERT_EQ(response.status, 200) << response.describe();
  ASSERT_TRUE(is_json_answer(response));
  const json::value answer = response.json();
  EXPECT_EQ(string_field(answer, "type"), "create_session");
  const std::string id = string_field(answer, "session_id");
  // A session id is a UUID v4.
  EXPECT_TRUE(std::regex_match(id, std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")))
      << id;
  // The optional messages, when present, are strings or null.
  for (const char* key : {"info_message", "warning_message", "error_message"}) {
    const json::value* message = answer.as_object().if_contains(key);
    if (message != nullptr) {
      EXPECT_TRUE(message->is_string() || message->is_null()) << key;
    }
  }
  EXPECT_NE(api().create_session(), id);
}

TEST_F(HttpApiSessions, HeartbeatAcknowledgesAKnownSession) {
  const std::string session = api().create_session();
  const RawResponse response =
      api().post("/api/v1/session_heartbeat", json::object{{"session_id", session}, {"type", "session_heartbeat"}});
  ASSERT_EQ(response.status, 200) << response.describe();
  ASSERT_TRUE(is_json_answer(response));
  EXPECT_EQ(response.json(), json::parse(R"({"type":"session_heartbeat"})"));
}

TEST_F(HttpApiSessions, SessionWithoutHeartbeatExpires) {
  options.session_expiry = std::chrono::seconds(30);
  const std::string session = api().create_session();
  const std::string kept = api().create_session();
  api().server().advance_clock(std::chrono::seconds(20));
  ASSERT_EQ(
      api().post("/api/v1/session_heartbeat", json::object{{"session_id", kept}, {"type", "session_heartbeat"}}).status,
      200);
  api().server().advance_clock(std::chrono::seconds(20));
  // 40 s without heartbeat: expired; new submits referencing it fail with 404 or 410.
  const RawResponse response = api().post(
      "/api/v1/create_model",
      json::object{{"session_id", session}, {"model_seq_id", 0}, {"base_model", tiny_model}, {"type", "create_model"}});
  EXPECT_TRUE(response.status == 404 || response.status == 410) << response.describe();
  // The session that sent a heartbeat 20 s ago is alive.
  EXPECT_NO_THROW(api().create_model(kept));
}

TEST_F(HttpApiSessions, PendingFutureOfAnExpiredSessionFailsWithCategoryServer) {
  options.session_expiry = std::chrono::seconds(30);
  const std::string session = api().create_session();
  const std::string model = api().create_model(session);
  // seq_id 2 waits for seq_id 1, which never comes: the future stays pending.
  const std::string held = api().submit("/api/v1/optim_step", optim_step_body(model, 2, 1e-3));
  api().server().advance_clock(std::chrono::seconds(31));
  const json::value failure = api().await_failure(held);
  EXPECT_EQ(string_field(failure, "category"), "server");
  EXPECT_NE(string_field(failure, "error").find("expired"), std::string::npos) << to_text(failure);
}

TEST_F(HttpApiSessions, CreateSamplingSessionForABaseModel) {
  const std::string session = api().create_session();
  const RawResponse response =
      api().post("/api/v1/create_sampling_session", sampling_session_body(session, 0, tiny_model));
  ASSERT_EQ(response.status, 200) << response.describe();
  ASSERT_TRUE(is_json_answer(response));
  const json::value answer = response.json();
  EXPECT_EQ(string_field(answer, "type"), "create_sampling_session");
  EXPECT_EQ(string_field(answer, "sampling_session_id"), session + ":sample:0");

  const json::value again =
      api().post("/api/v1/create_sampling_session", sampling_session_body(session, 3, tiny_model)).json();
  EXPECT_EQ(string_field(again, "sampling_session_id"), session + ":sample:3");

  const RawResponse sampler = api().get("/api/v1/samplers/" + session + ":sample:0");
  ASSERT_EQ(sampler.status, 200) << sampler.describe();
  ASSERT_TRUE(is_json_answer(sampler));
  EXPECT_EQ(string_field(sampler.json(), "sampler_id"), session + ":sample:0");
  EXPECT_EQ(string_field(sampler.json(), "base_model"), tiny_model);
}

TEST_F(HttpApiSessions, CreateSamplingSessionIsIdempotentAndConflictsOnDifferentParameters) {
  const std::string session = api().create_session();
  ASSERT_EQ(api().post("/api/v1/create_sampling_session", sampling_session_body(session, 0, tiny_model)).status, 200);
  const RawResponse same = api().post("/api/v1/create_sampling_session", sampling_session_body(session, 0, tiny_model));
  EXPECT_EQ(same.status, 200) << same.describe();
  const RawResponse different =
      api().post("/api/v1/create_sampling_session", sampling_session_body(session, 0, "Qwen/Qwen3-8B"));
  EXPECT_TRUE(is_error(different, 409));
}

TEST_F(HttpApiSessions, CreateSamplingSessionValidatesItsTarget) {
  const std::string session = api().create_session();
  json::object neither;
  neither["session_id"] = session;
  neither["sampling_session_seq_id"] = 0;
  neither["type"] = "create_sampling_session";
  EXPECT_TRUE(is_client_error(api().post("/api/v1/create_sampling_session", neither)));

  json::object missing_path = neither;
  missing_path["model_path"] = "tinker://" + session + ":train:0/sampler_weights/none";
  EXPECT_TRUE(is_error(api().post("/api/v1/create_sampling_session", missing_path), 404));

  EXPECT_TRUE(is_client_error(
      api().post("/api/v1/create_sampling_session", sampling_session_body(session, 1, "no-such/base-model"))));
}

TEST_F(HttpApiSessions, ListAndGetSessions) {
  const std::string first = api().create_session();
  const std::string second = api().create_session();
  const std::string model = api().create_model(second);
  ASSERT_EQ(api().post("/api/v1/create_sampling_session", sampling_session_body(second, 0, tiny_model)).status, 200);

  const RawResponse list = api().get("/api/v1/sessions?limit=20&offset=0");
  ASSERT_EQ(list.status, 200) << list.describe();
  ASSERT_TRUE(is_json_answer(list));
  const json::value& ids = field(list.json(), "sessions");
  EXPECT_TRUE(contains(ids, first)) << to_text(ids);
  EXPECT_TRUE(contains(ids, second)) << to_text(ids);

  const json::value limited = api().get("/api/v1/sessions?limit=1&offset=0").json();
  EXPECT_EQ(items(limited, "sessions").size(), 1u);

  const RawResponse got = api().get("/api/v1/sessions/" + second);
  ASSERT_EQ(got.status, 200) << got.describe();
  EXPECT_TRUE(contains(field(got.json(), "training_run_ids"), model)) << got.body;
  EXPECT_TRUE(contains(field(got.json(), "sampler_ids"), second + ":sample:0")) << got.body;
  EXPECT_TRUE(items(api().get("/api/v1/sessions/" + first).json(), "training_run_ids").empty());
}

TEST_F(HttpApiSessions, AssignProject) {
  const std::string session = api().create_session();
  const RawResponse ok = api().put("/api/v1/sessions/" + session + "/project", json::object{{"project_id", "proj-7"}});
  EXPECT_GE(ok.status, 200);
  EXPECT_LT(ok.status, 300) << ok.describe();
  // The protocol documents 400 here, tinker-local answers 422 for missing fields: either, naming it.
  EXPECT_TRUE(is_client_error(api().put("/api/v1/sessions/" + session + "/project", json::object{}), "project_id"));
  EXPECT_TRUE(is_error(api().put("/api/v1/sessions/no-such-session/project", json::object{{"project_id", "p"}}), 404));
}

}  // namespace
}  // namespace tinker::local::test
