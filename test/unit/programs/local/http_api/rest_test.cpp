// doc/rest.md, doc/local.md#what-it-serves: training runs with pagination,
// trace export, audit log, billing usage validation.
#include "unit/programs/local/support/expectations.hpp"
#include "unit/programs/local/support/local_server.hpp"
#include "unit/programs/local/support/training_steps.hpp"

#include <boost/json/parse.hpp>

#include <algorithm>
#include <ctime>

namespace tinker::local::test {
namespace {

namespace json = boost::json;

using HttpApiRest = LocalServerTest;

std::string utc_hour(std::time_t t) {
  t -= t % 3600;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

TEST_F(HttpApiRest, TrainingRunsListPaginatesWithTotalCount) {
  const std::string session = api().create_session();
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(api().create_model(session, i));

  const RawResponse first = api().get("/api/v1/training_runs?limit=2&offset=0&access_scope=owned");
  ASSERT_EQ(first.status, 200) << first.describe();
  ASSERT_TRUE(is_json_answer(first));
  const json::value page = first.json();
  EXPECT_EQ(items(page, "training_runs").size(), 2u);
  const json::value& cursor = field(page, "cursor");
  EXPECT_EQ(field(cursor, "offset").to_number<std::int64_t>(), 0);
  EXPECT_EQ(field(cursor, "limit").to_number<std::int64_t>(), 2);
  EXPECT_EQ(field(cursor, "total_count").to_number<std::int64_t>(), 3);

  const json::value second = api().get("/api/v1/training_runs?limit=2&offset=2").json();
  EXPECT_EQ(items(second, "training_runs").size(), 1u);
  EXPECT_EQ(field(field(second, "cursor"), "offset").to_number<std::int64_t>(), 2);

  std::vector<std::string> listed;
  for (const json::value* p : {&page, &second}) {
    for (const json::value& run : items(*p, "training_runs")) listed.push_back(string_field(run, "training_run_id"));
  }
  std::sort(listed.begin(), listed.end());
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(listed, ids);
  // Defaults: limit 20, offset 0.
  EXPECT_EQ(field(field(api().get("/api/v1/training_runs").json(), "cursor"), "limit").to_number<std::int64_t>(), 20);
}

TEST_F(HttpApiRest, TrainingRunHasEveryRequiredField) {
  const std::string session = api().create_session();
  TrainingModel model(api(), api().create_model(session, 0, 8));
  const std::string weights = model.save("w");
  const std::string sampler = model.save_for_sampler("s");

  const RawResponse response = api().get("/api/v1/training_runs/" + model.id() + "?access_scope=owned");
  ASSERT_EQ(response.status, 200) << response.describe();
  ASSERT_TRUE(is_json_answer(response));
  const json::value run = response.json();
  EXPECT_EQ(string_field(run, "training_run_id"), model.id());
  EXPECT_EQ(string_field(run, "base_model"), tiny_model);
  EXPECT_EQ(string_field(run, "model_owner").rfind("tml:", 0), 0u) << response.body;
  EXPECT_EQ(field(run, "is_lora"), json::value(true));
  EXPECT_EQ(field(run, "lora_rank").to_number<std::int64_t>(), 8);
  EXPECT_EQ(string_field(run, "last_request_time").back(), 'Z');
  if (const json::value* corrupted = run.as_object().if_contains("corrupted")) {
    EXPECT_EQ(*corrupted, json::value(false));
  }
  EXPECT_EQ(string_field(field(run, "last_checkpoint"), "tinker_path"), weights);
  EXPECT_EQ(string_field(field(run, "last_sampler_checkpoint"), "tinker_path"), sampler);
}

TEST_F(HttpApiRest, LastRequestTimeMovesWithModelOps) {
  const std::string session = api().create_session();
  TrainingModel model(api(), api().create_model(session));
  const std::string target = "/api/v1/training_runs/" + model.id() + "?access_scope=owned";
  const std::string before = string_field(api().get(target).json(), "last_request_time");
  api().server().advance_clock(std::chrono::seconds(60));  // well inside the session expiry (300 s)
  (void)model.optim_step(1e-3);
  const std::string after = string_field(api().get(target).json(), "last_request_time");
  EXPECT_GT(after, before);  // RFC 3339 UTC strings order like the times they name
}

TEST_F(HttpApiRest, TraceExportIsPendingThenReadyWithADownloadUrl) {
  options.trace_export_pending_polls = 2;
  const std::string session = api().create_session();
  TrainingModel model(api(), api().create_model(session));
  (void)model.optim_step(1e-3);  // something for the trace to show
  const std::string target = "/api/v1/sessions/" + session + "/trace_export";
  for (int i = 0; i < 2; ++i) {
    const RawResponse pending = api().get(target);
    ASSERT_EQ(pending.status, 200) << pending.describe();
    EXPECT_EQ(string_field(pending.json(), "status"), "pending");
  }
  const RawResponse ready = api().get(target);
  ASSERT_EQ(ready.status, 200) << ready.describe();
  EXPECT_EQ(string_field(ready.json(), "status"), "ready");
  const std::string url = string_field(ready.json(), "url");
  const std::string base = api().server().base_url();
  ASSERT_EQ(url.rfind(base, 0), 0u) << url;
  RawHttpClient anonymous("127.0.0.1", api().port());
  const RawResponse trace = anonymous.request("GET", url.substr(base.size()), {});
  EXPECT_EQ(trace.status, 200) << trace.describe();
  EXPECT_NE(trace.body.find(model.id()), std::string::npos) << "the trace does not show the model's op";
  EXPECT_TRUE(is_error(api().get("/api/v1/sessions/no-such-session/trace_export"), 404));
}

TEST_F(HttpApiRest, AuditLogAnswersEntries) {
  const RawResponse response = api().get("/api/v1/audit");
  ASSERT_EQ(response.status, 200) << response.describe();
  ASSERT_TRUE(is_json_answer(response));
  EXPECT_TRUE(field(response.json(), "entries").is_array());
}

TEST_F(HttpApiRest, BillingUsageAcceptsAValidWindow) {
  const std::time_t now = std::time(nullptr);
  const std::string target =
      "/api/v1/billing/usage/events?starting_on=" + utc_hour(now - 3 * 3600) + "&ending_before=" + utc_hour(now);
  const RawResponse response = api().get(target);
  ASSERT_EQ(response.status, 200) << response.describe();
  ASSERT_TRUE(is_json_answer(response));
  const json::value body = response.json();
  EXPECT_TRUE(field(body, "data").is_array());
  for (const json::value& row : items(body, "data")) {
    EXPECT_FALSE(string_field(row, "bucket_start").empty());
    EXPECT_FALSE(string_field(row, "bucket_end").empty());
    EXPECT_FALSE(string_field(field(row, "event_info"), "type").empty());
  }
  if (const json::value* sessions = body.as_object().if_contains("sessions")) {
    EXPECT_TRUE(sessions->is_object());
  }
}

TEST_F(HttpApiRest, BillingUsageValidatesItsWindow) {
  const std::time_t now = std::time(nullptr);
  const std::string start = utc_hour(now - 3 * 3600);
  const std::string end = utc_hour(now);
  const std::string base = "/api/v1/billing/usage/events";
  EXPECT_TRUE(is_error(api().get(base), 400));
  EXPECT_TRUE(is_error(api().get(base + "?starting_on=" + start), 400, "ending_before"));
  EXPECT_TRUE(is_error(api().get(base + "?ending_before=" + end), 400, "starting_on"));
  // Not hour-aligned.
  std::string unaligned = start;
  unaligned.replace(14, 2, "30");
  EXPECT_TRUE(is_error(api().get(base + "?starting_on=" + unaligned + "&ending_before=" + end), 400));
  // Longer than 14 days.
  EXPECT_TRUE(is_error(api().get(base + "?starting_on=" + utc_hour(now - 15 * 86400) + "&ending_before=" + end), 400));
  // Starting in the future.
  EXPECT_TRUE(is_error(
      api().get(base + "?starting_on=" + utc_hour(now + 7200) + "&ending_before=" + utc_hour(now + 4 * 3600)), 400));
  // Not a datetime.
  EXPECT_TRUE(is_error(api().get(base + "?starting_on=yesterday&ending_before=" + end), 400));
}

}  // namespace
}  // namespace tinker::local::test
