// The admin paths outside /api/v1/ (doc/local.md#admin-paths): the arrival log of
// every request with the headers that matter, the clock, and no API key anywhere in them.
#include "unit/programs/local/support/expectations.hpp"
#include "unit/programs/local/support/local_server.hpp"
#include "unit/programs/local/support/training_steps.hpp"

#include <boost/json/parse.hpp>

namespace tinker::local::test {
namespace {

namespace json = boost::json;

using HttpApiAdmin = LocalServerTest;

std::vector<json::value> records_for(const json::value& audit, std::string_view path) {
  std::vector<json::value> out;
  for (const json::value& r : items(audit, "requests")) {
    if (string_field(r, "path") == path) out.push_back(r);
  }
  return out;
}

TEST_F(HttpApiAdmin, ArrivalLogRecordsEveryRequestWithItsHeaders) {
  const std::string session = api().create_session();
  const std::string model = api().create_model(session);
  const auto request = proto_forward_backward(model, 1, {{5, 6, 7, 8}});
  const std::string ticket = api().submit_raw(
      "/api/v1/forward_backward", zstd_compress(request.SerializeAsString()), protobuf_type,
      {{"Content-Encoding", "zstd"}, {"X-Idempotency-Key", "tinker-cpp-retry-0001"}, {"x-stainless-retry-count", "2"}});
  const HeaderList poll_headers = api().auth({{"Content-Type", "application/json"},
                                              {"Accept", "application/x-protobuf"},
                                              {"X-Tinker-Request-Iteration", "3"}});
  const json::value poll_body{{"request_id", ticket}, {"allow_metadata_only", true}};
  (void)api().http().request("POST", "/api/v1/retrieve_future", poll_headers, to_text(poll_body));

  const json::value audit = api().admin_audit();
  const json::array& requests = items(audit, "requests");
  ASSERT_GE(requests.size(), 4u);
  std::int64_t last_index = -1;
  std::string last_arrival;
  for (const json::value& r : requests) {
    const std::int64_t index = field(r, "index").to_number<std::int64_t>();
    EXPECT_GT(index, last_index);
    last_index = index;
    const std::string arrived = string_field(r, "arrived");
    EXPECT_GE(arrived, last_arrival) << "arrival times go backwards";
    last_arrival = arrived;
  }

  const auto submits = records_for(audit, "/api/v1/forward_backward");
  ASSERT_EQ(submits.size(), 1u) << to_text(audit);
  const json::value& fwd = submits[0];
  EXPECT_EQ(string_field(fwd, "method"), "POST");
  EXPECT_EQ(field(fwd, "status").to_number<int>(), 200);
  EXPECT_EQ(field(fwd, "seq_id").to_number<std::int64_t>(), 1);
  EXPECT_EQ(string_field(fwd, "model_id"), model);
  EXPECT_EQ(string_field(fwd, "request_id"), ticket);
  EXPECT_EQ(string_field(fwd, "idempotency_key"), "tinker-cpp-retry-0001");
  EXPECT_EQ(string_field(fwd, "retry_count"), "2");
  EXPECT_EQ(string_field(fwd, "content_type"), "application/x-protobuf");
  EXPECT_EQ(string_field(fwd, "content_encoding"), "zstd");

  const auto polls = records_for(audit, "/api/v1/retrieve_future");
  ASSERT_FALSE(polls.empty());
  const json::value& poll = polls.back();
  EXPECT_EQ(string_field(poll, "request_id"), ticket);
  EXPECT_EQ(string_field(poll, "request_iteration"), "3");
  EXPECT_EQ(string_field(poll, "accept"), "application/x-protobuf");

  // The same log, alone.
  const RawResponse log = api().get("/_admin/requests");
  ASSERT_EQ(log.status, 200) << log.describe();
  EXPECT_GE(items(log.json(), "requests").size(), requests.size());
}

TEST_F(HttpApiAdmin, NoApiKeyInTheAuditOrTheLog) {
  api().api_key = "tml-secret-never-to-be-logged-0042";
  const std::string session = api().create_session();
  (void)api().create_model(session);
  (void)api().get("/api/v1/training_runs");
  EXPECT_EQ(to_text(api().admin_audit()).find("never-to-be-logged"), std::string::npos);
  EXPECT_EQ(api().get("/_admin/requests").body.find("never-to-be-logged"), std::string::npos);
}

TEST_F(HttpApiAdmin, ClockAdvanceExpiresCheckpoints) {
  const std::string session = api().create_session();
  TrainingModel model(api(), api().create_model(session));
  ASSERT_EQ(model.save_weights("soon", 100).status, 200);
  const std::string path = "tinker://" + model.id() + "/weights/soon";
  EXPECT_EQ(api().post("/api/v1/weights_info", json::object{{"tinker_path", path}}).status, 200);
  const RawResponse advanced = api().post("/_admin/clock/advance", json::object{{"seconds", 101}});
  ASSERT_EQ(advanced.status, 200) << advanced.describe();
  EXPECT_TRUE(is_error(api().post("/api/v1/weights_info", json::object{{"tinker_path", path}}), 404));
  EXPECT_TRUE(is_client_error(api().post("/_admin/clock/advance", json::object{{"seconds", -1}}), "seconds"));
}

TEST_F(HttpApiAdmin, AuditOkFlagSummarisesTheModels) {
  const std::string session = api().create_session();
  TrainingModel model(api(), api().create_model(session));
  (void)model.optim_step(1e-3);
  const json::value audit = api().admin_audit();
  EXPECT_EQ(field(audit, "ok"), json::value(true));
  for (const json::value& m : items(audit, "models")) {
    EXPECT_TRUE(items(m, "problems").empty()) << to_text(m);
  }
}

}  // namespace
}  // namespace tinker::local::test
