#include "programs/local/server/admin.hpp"
#include "programs/local/server/frontend.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <gtest/gtest.h>

namespace tinker::local::front {
namespace {

namespace json = boost::json;

RequestRecord record(std::string path) {
  RequestRecord r;
  r.method = "POST";
  r.path = std::move(path);
  r.arrived = std::chrono::sys_days{std::chrono::year{2026} / 8 / 8} + std::chrono::microseconds(1'000'042);
  return r;
}

TEST(RequestLogTest, IndexesInArrivalOrderAndKeepsTheNewest) {
  RequestLog log(3);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(log.append(record("/p" + std::to_string(i))), i);
  const auto records = log.snapshot();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].index, 2);
  EXPECT_EQ(records[0].path, "/p2");
  EXPECT_EQ(records[2].index, 4);
  EXPECT_EQ(log.find(1), nullptr);
  ASSERT_NE(log.find(3), nullptr);
  log.find(3)->status = 201;
  EXPECT_EQ(log.snapshot()[1].status, 201);
  EXPECT_EQ(log.find(5), nullptr);

  RequestLog unlimited(0);
  for (int i = 0; i < 10; ++i) unlimited.append(record("/x"));
  EXPECT_EQ(unlimited.snapshot().size(), 10u);
}

TEST(AdminJsonTest, AuditReportShape) {
  AuditReport report;
  ModelAudit model;
  model.model_id = "s:train:0";
  model.applied_seq_ids = {1, 2};
  model.operations = {"forward_backward", "optim_step"};
  OperationTiming timing;
  timing.seq_id = 2;
  timing.operation = "optim_step";
  timing.started = std::chrono::steady_clock::time_point(std::chrono::nanoseconds(5'000));
  timing.finished = std::chrono::steady_clock::time_point(std::chrono::nanoseconds(7'500));
  model.timings = {timing};
  report.models.push_back(model);
  RequestRecord r = record("/api/v1/optim_step");
  r.status = 200;
  r.seq_id = 2;
  r.model_id = "s:train:0";
  r.request_id = "req-1";
  r.fault = "delay";
  report.requests.push_back(r);

  const json::value doc = json::parse(audit_json(report));
  EXPECT_EQ(doc.at("ok"), true);
  const json::object& m = doc.at("models").as_array().at(0).as_object();
  EXPECT_EQ(m.at("model_id"), "s:train:0");
  EXPECT_EQ(m.at("applied_seq_ids"), json::parse("[1,2]"));
  EXPECT_EQ(m.at("operations"), json::parse(R"(["forward_backward","optim_step"])"));
  EXPECT_EQ(m.at("exactly_once_in_order"), true);
  EXPECT_EQ(m.at("problems"), json::parse("[]"));
  EXPECT_EQ(m.at("timings"),
            json::parse(R"([{"seq_id":2,"operation":"optim_step","started_ns":5000,"finished_ns":7500}])"));
  const json::object& q = doc.at("requests").as_array().at(0).as_object();
  EXPECT_EQ(q.at("arrived"), "2026-08-08T00:00:01.000042Z");
  EXPECT_EQ(q.at("seq_id"), 2);
  EXPECT_EQ(q.at("model_id"), "s:train:0");
  EXPECT_EQ(q.at("request_id"), "req-1");
  EXPECT_EQ(q.at("fault"), "delay");
  EXPECT_EQ(q.at("status"), 200);

  report.models[0].exactly_once_in_order = false;
  report.models[0].problems = {"seq_id 2 applied twice"};
  EXPECT_EQ(json::parse(audit_json(report)).at("ok"), false);

  const json::value requests = json::parse(requests_json({record("/a")}));
  EXPECT_TRUE(requests.at("requests").as_array().at(0).at("seq_id").is_null());
}

TEST(AdminJsonTest, FaultRulesFromObjectsAndSpecs) {
  const auto rules = parse_fault_rules_json(R"([
    {"endpoint": "retrieve_future", "kind": "status", "status": 429, "retry_after": "http_date",
     "retry_after_ms": 3000, "probability": 0.25, "max_fires": 4, "should_retry": false},
    {"endpoint": "asample", "kind": "pause_queue", "delay_ms": 1500, "queue_state": "paused_rate_limit",
     "on_calls": [1, 2]},
    "forward_backward:reset_mid_body,calls=2"])");
  ASSERT_EQ(rules.size(), 3u);
  EXPECT_EQ(rules[0].status, 429);
  EXPECT_EQ(rules[0].retry_after, RetryAfterForm::http_date);
  EXPECT_EQ(rules[0].retry_after_value, std::chrono::milliseconds(3000));
  EXPECT_DOUBLE_EQ(rules[0].probability, 0.25);
  EXPECT_EQ(rules[0].max_fires, 4);
  EXPECT_EQ(rules[0].should_retry, false);
  EXPECT_EQ(rules[1].kind, FaultKind::pause_queue);
  EXPECT_EQ(rules[1].delay, std::chrono::milliseconds(1500));
  EXPECT_EQ(rules[1].queue_state, "paused_rate_limit");
  EXPECT_EQ(rules[1].on_calls, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(rules[2].kind, FaultKind::reset_mid_body);
  EXPECT_TRUE(parse_fault_rules_json("[]").empty());
}

TEST(AdminJsonTest, BadRulesNameElementAndField) {
  auto message = [](std::string_view text) -> std::string {
    try {
      parse_fault_rules_json(text);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(message(R"([{"kind": "status"}])").find("[0].endpoint"), std::string::npos);
  EXPECT_NE(message(R"([{"endpoint": "x", "kind": "boom"}])").find("[0].kind"), std::string::npos);
  EXPECT_NE(message(R"([{"endpoint": "x", "kind": "delay"}, {"endpoint": "x", "kind": "status", "status": 9}])")
                .find("[1].status"),
            std::string::npos);
  EXPECT_NE(message(R"([{"endpoint": "x", "kind": "status", "probability": 2}])").find("probability"),
            std::string::npos);
  EXPECT_NE(message(R"(["x:nope"])").find("[0]"), std::string::npos);
  EXPECT_NE(message(R"({"endpoint": "x"})").find("array"), std::string::npos);
  EXPECT_NE(message("[").find("malformed"), std::string::npos);
  // Durations past a day would overflow the clock arithmetic of Retry-After: HTTP-date (fuzzer finding).
  EXPECT_NE(message(R"([{"endpoint": "x", "kind": "status", "retry_after_ms": 9223372036854775807}])")
                .find("[0].retry_after_ms"),
            std::string::npos);
  EXPECT_NE(message(R"([{"endpoint": "x", "kind": "delay", "delay_ms": -5}])").find("[0].delay_ms"), std::string::npos);
}

TEST(ReplyTest, ErrorBodiesEscapeTheDetail) {
  Reply reply;
  reply.error(422, "bad \"field\"\n\x01");
  EXPECT_EQ(reply.status, 422);
  EXPECT_EQ(reply.content_type, "application/json");
  EXPECT_EQ(json::parse(reply.body).at("detail"), "bad \"field\"\n\x01");
}

}  // namespace
}  // namespace tinker::local::front
