// Fault injection (doc/local.md#fault-injection), seen on the wire: 429 with each Retry-After form,
// 408, 5xx, resets before the response and mid-body, delays, truncated bodies, malformed JSON, 410
// on futures, paused queue states; schedules and seeded probabilities; faults set over
// /_admin/faults.
#include "unit/programs/local/support/expectations.hpp"
#include "unit/programs/local/support/local_server.hpp"

#include <boost/json/parse.hpp>

#include <chrono>
#include <ctime>

namespace tinker::local::test {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;

class HttpApiFaults : public LocalServerTest {
 protected:
  static FaultRule status_on(std::string endpoint, int status, std::vector<std::int64_t> calls) {
    FaultRule rule(std::move(endpoint), FaultKind::status);
    rule.status = status;
    rule.on_calls = std::move(calls);
    return rule;
  }
  static FaultRule kind_on(std::string endpoint, FaultKind kind, std::vector<std::int64_t> calls) {
    FaultRule rule(std::move(endpoint), kind);
    rule.on_calls = std::move(calls);
    return rule;
  }
  RawResponse healthz() { return api().get("/api/v1/healthz"); }
  std::string raw_get(std::string_view path) const {
    return "GET " + std::string(path) + " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: " + std::string(test_api_key) +
           "\r\nAccept: application/json\r\nConnection: close\r\n\r\n";
  }
  /// The declared Content-Length and the body bytes that actually arrived in a raw answer.
  static std::pair<std::size_t, std::size_t> declared_and_received(const std::string& raw) {
    const std::size_t head_end = raw.find("\r\n\r\n");
    if (head_end == std::string::npos) throw std::runtime_error("no complete head in: " + raw);
    std::string head = raw.substr(0, head_end);
    for (char& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::size_t at = head.find("content-length:");
    if (at == std::string::npos) throw std::runtime_error("no Content-Length in: " + raw.substr(0, head_end));
    return {std::stoul(head.substr(at + 15)), raw.size() - head_end - 4};
  }
};

TEST_F(HttpApiFaults, Status429WithRetryAfterSeconds) {
  FaultRule rule = status_on("healthz", 429, {1});
  rule.retry_after = RetryAfterForm::seconds;
  rule.retry_after_value = milliseconds(2000);
  options.faults = {rule};
  const RawResponse limited = healthz();
  EXPECT_TRUE(is_error(limited, 429));
  ASSERT_TRUE(limited.header("Retry-After").has_value()) << limited.describe();
  EXPECT_DOUBLE_EQ(std::stod(*limited.header("Retry-After")), 2.0);
  EXPECT_FALSE(limited.header("retry-after-ms").has_value());
  EXPECT_EQ(healthz().status, 200);
}

TEST_F(HttpApiFaults, Status429WithRetryAfterHttpDate) {
  FaultRule rule = status_on("healthz", 429, {1});
  rule.retry_after = RetryAfterForm::http_date;
  rule.retry_after_value = milliseconds(30000);
  options.faults = {rule};
  const RawResponse limited = healthz();
  EXPECT_TRUE(is_error(limited, 429));
  const std::string date = limited.header("Retry-After").value_or("");
  std::tm tm{};
  ASSERT_NE(strptime(date.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm), nullptr) << "not an HTTP-date: " << date;
  const double ahead = std::difftime(timegm(&tm), std::time(nullptr));
  EXPECT_GE(ahead, 27);
  EXPECT_LE(ahead, 32);
}

TEST_F(HttpApiFaults, Status429WithRetryAfterMilliseconds) {
  FaultRule rule = status_on("healthz", 429, {1});
  rule.retry_after = RetryAfterForm::milliseconds;
  rule.retry_after_value = milliseconds(1500);
  options.faults = {rule};
  const RawResponse limited = healthz();
  EXPECT_TRUE(is_error(limited, 429));
  ASSERT_TRUE(limited.header("retry-after-ms").has_value()) << limited.describe();
  EXPECT_DOUBLE_EQ(std::stod(*limited.header("retry-after-ms")), 1500.0);
}

TEST_F(HttpApiFaults, EachStatusFaultAnswersItsStatusWithADetail) {
  const std::vector<int> statuses{408, 500, 502, 503, 504, 402};
  for (std::size_t i = 0; i < statuses.size(); ++i) {
    options.faults.push_back(status_on("healthz", statuses[i], {static_cast<std::int64_t>(i + 1)}));
  }
  for (int status : statuses) {
    const RawResponse response = healthz();
    EXPECT_TRUE(is_error(response, status)) << status;
    EXPECT_FALSE(response.header("Retry-After").has_value()) << status;
  }
  EXPECT_EQ(healthz().status, 200);
}

TEST_F(HttpApiFaults, Status400IsTheBareProxyFault) {
  // A bare 400 with an empty body and Content-Length: 0, which the Python SDK
  // takes for a proxy-injected connection fault.
  options.faults = {status_on("healthz", 400, {1})};
  const RawResponse response = healthz();
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(response.header("Content-Length").value_or("missing"), "0");
  EXPECT_TRUE(response.body.empty());
  EXPECT_EQ(healthz().status, 200);
}

TEST_F(HttpApiFaults, ResetBeforeTheResponse) {
  options.faults = {kind_on("healthz", FaultKind::reset_before, {1})};
  const RawResult raw = api().http().send_raw(raw_get("/api/v1/healthz"));
  EXPECT_TRUE(raw.received.empty()) << raw.received;
  EXPECT_TRUE(raw.closed_by_peer()) << raw.ended_by.message();
  EXPECT_EQ(healthz().status, 200);
}

TEST_F(HttpApiFaults, ResetMidBody) {
  options.faults = {kind_on("get_server_capabilities", FaultKind::reset_mid_body, {1})};
  const RawResult raw = api().http().send_raw(raw_get("/api/v1/get_server_capabilities"));
  ASSERT_EQ(raw.received.rfind("HTTP/1.1 200", 0), 0u) << raw.received;
  const auto [declared, received] = declared_and_received(raw.received);
  EXPECT_LT(received, declared);
  EXPECT_GT(declared, 0u);
  EXPECT_TRUE(raw.closed_by_peer()) << raw.ended_by.message();
  EXPECT_EQ(api().get("/api/v1/get_server_capabilities").status, 200);
}

TEST_F(HttpApiFaults, TruncatedBodyIsSeenByAnHttpClient) {
  options.faults = {kind_on("get_server_capabilities", FaultKind::truncated_body, {1})};
  const RawExchange result = api().http().exchange("GET", "/api/v1/get_server_capabilities", api().auth());
  EXPECT_TRUE(result.error) << result.response.describe();
  EXPECT_TRUE(result.header_received);
  EXPECT_EQ(result.response.status, 200);
  const RawExchange next = api().http().exchange("GET", "/api/v1/get_server_capabilities", api().auth());
  EXPECT_FALSE(next.error) << next.error.message();
}

TEST_F(HttpApiFaults, TruncatedBodyDeclaresTheFullLength) {
  options.faults = {kind_on("healthz", FaultKind::truncated_body, {1})};
  const RawResult raw = api().http().send_raw(raw_get("/api/v1/healthz"));
  const auto [declared, received] = declared_and_received(raw.received);
  EXPECT_EQ(declared, std::string(R"({"status":"ok"})").size());
  EXPECT_LT(received, declared);
  EXPECT_TRUE(raw.closed_by_peer());
}

TEST_F(HttpApiFaults, DelayHoldsTheRequest) {
  FaultRule rule = kind_on("healthz", FaultKind::delay, {1});
  rule.delay = milliseconds(300);
  options.faults = {rule};
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(healthz().status, 200);
  EXPECT_GE(std::chrono::steady_clock::now() - started, milliseconds(280));
}

TEST_F(HttpApiFaults, MalformedJson) {
  options.faults = {kind_on("healthz", FaultKind::malformed_json, {1})};
  const RawResponse response = healthz();
  EXPECT_EQ(response.status, 200);
  EXPECT_THROW((void)response.json(), std::runtime_error) << response.body;
  EXPECT_TRUE(is_json_answer(healthz()));
}

TEST_F(HttpApiFaults, Gone410OnRetrieveFuture) {
  options.faults = {status_on("retrieve_future", 410, {1})};
  const std::string session = api().create_session();  // create_model's future is polled below
  json::object body{{"session_id", session}, {"model_seq_id", 0}, {"base_model", tiny_model}, {"type", "create_model"}};
  const std::string request_id = api().submit("/api/v1/create_model", body);
  EXPECT_TRUE(is_error(api().poll(request_id), 410));
  EXPECT_NO_THROW(api().await_json(request_id));
}

TEST_F(HttpApiFaults, PausedQueueStatesAppearInTryAgain) {
  for (const char* state : {"paused_capacity", "paused_rate_limit"}) {
    FaultRule rule = kind_on("create_model", FaultKind::pause_queue, {1});
    rule.queue_state = state;
    rule.delay = milliseconds(500);
    options.faults = {rule};
    restart();
    const std::string session = api().create_session();
    json::object body{
        {"session_id", session}, {"model_seq_id", 0}, {"base_model", tiny_model}, {"type", "create_model"}};
    const std::string request_id = api().submit("/api/v1/create_model", body);
    const RawResponse pending = api().poll(request_id);
    ASSERT_TRUE(is_json_answer(pending));
    EXPECT_EQ(string_field(pending.json(), "type"), "try_again") << pending.body;
    EXPECT_EQ(string_field(pending.json(), "queue_state"), state) << pending.body;
    EXPECT_NO_THROW(api().await_json(request_id));
  }
}

TEST_F(HttpApiFaults, WildcardMatchesEveryApiEndpoint) {
  options.faults = {status_on("*", 503, {1, 2})};
  EXPECT_TRUE(is_error(healthz(), 503));
  EXPECT_TRUE(is_error(api().get("/api/v1/get_server_capabilities"), 503));
  EXPECT_EQ(healthz().status, 200);
}

TEST_F(HttpApiFaults, MaxFiresBoundsAProbabilisticRule) {
  FaultRule rule = status_on("healthz", 500, {});
  rule.probability = 1.0;
  rule.max_fires = 2;
  options.faults = {rule};
  EXPECT_EQ(healthz().status, 500);
  EXPECT_EQ(healthz().status, 500);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(healthz().status, 200);
  }
}

std::string fault_pattern(LocalApi& api, int requests) {
  std::string pattern;
  for (int i = 0; i < requests; ++i) pattern += api.get("/api/v1/healthz").status == 200 ? '.' : 'X';
  return pattern;
}

TEST_F(HttpApiFaults, ProbabilityIsReproducibleFromTheSeed) {
  FaultRule rule = status_on("healthz", 503, {});
  rule.probability = 0.5;
  options.faults = {rule};
  options.fault_seed = 7;
  const std::string first = fault_pattern(api(), 48);
  EXPECT_NE(first.find('X'), std::string::npos) << first;
  EXPECT_NE(first.find('.'), std::string::npos) << first;
  EXPECT_EQ(fault_pattern(restart(), 48), first);
  options.fault_seed = 8;
  EXPECT_NE(fault_pattern(restart(), 48), first);
}

TEST_F(HttpApiFaults, ScheduleFiresOnExactlyTheListedCalls) {
  options.faults = {status_on("healthz", 502, {2, 4, 5})};
  EXPECT_EQ(fault_pattern(api(), 7), ".X.XX..");
}

TEST_F(HttpApiFaults, SetOverAdminEndpointAndRecordedInTheAudit) {
  const json::value rules = json::parse(R"([
      {"endpoint": "healthz", "kind": "status", "status": 503, "on_calls": [1],
       "retry_after": "seconds", "retry_after_ms": 3000}])");
  const RawResponse set = api().post("/_admin/faults", rules);
  ASSERT_LT(set.status, 300) << set.describe();
  const RawResponse faulted = healthz();
  EXPECT_TRUE(is_error(faulted, 503));
  EXPECT_EQ(faulted.header("Retry-After").value_or(""), "3");
  EXPECT_EQ(healthz().status, 200);

  const AuditReport report = api().server().audit();
  bool recorded = false;
  for (const RequestRecord& r : report.requests) {
    if (r.path == "/api/v1/healthz" && r.status == 503) recorded = !r.fault.empty();
  }
  EXPECT_TRUE(recorded) << "the fired fault is not named in the request record";

  EXPECT_LT(
      api().post("/_admin/faults", json::parse(R"([{"endpoint": "healthz", "kind": "status", "status": 502}])")).status,
      300);
  // probability 0 and no schedule: never fires.
  EXPECT_EQ(healthz().status, 200);
  EXPECT_LT(api()
                .post("/_admin/faults", json::parse(R"([{"endpoint": "healthz", "kind": "status", "status": 502,
                                                          "probability": 1.0}])"))
                .status,
            300);
  EXPECT_EQ(healthz().status, 502);
  EXPECT_LT(api().http().request("DELETE", "/_admin/faults", api().auth()).status, 300);
  EXPECT_EQ(healthz().status, 200);
  // A bad rule is refused naming the field.
  EXPECT_TRUE(is_client_error(api().post("/_admin/faults", json::parse(R"([{"endpoint": "healthz", "kind": "nope"}])")),
                              "kind"));
}

TEST_F(HttpApiFaults, ShouldRetryHeader) {
  FaultRule yes = status_on("healthz", 500, {1});
  yes.should_retry = true;
  FaultRule no = status_on("healthz", 503, {2});
  no.should_retry = false;
  options.faults = {yes, no};
  EXPECT_EQ(healthz().header("x-should-retry").value_or(""), "true");
  EXPECT_EQ(healthz().header("x-should-retry").value_or(""), "false");
  EXPECT_FALSE(healthz().header("x-should-retry").has_value());
}

TEST_F(HttpApiFaults, SetFaultsInProcessReplacesTheRules) {
  EXPECT_EQ(healthz().status, 200);
  api().server().set_faults({status_on("healthz", 504, {1})});
  EXPECT_EQ(healthz().status, 504);
  api().server().set_faults({});
  EXPECT_EQ(healthz().status, 200);
}

TEST_F(HttpApiFaults, FailedTrainingSubmitsAreNeverLostNorAppliedTwice) {
  options.faults = {status_on("forward_backward", 503, {1}), kind_on("forward_backward", FaultKind::reset_before, {2}),
                    kind_on("optim_step", FaultKind::reset_mid_body, {1})};
  const std::string session = api().create_session();
  const std::string model = api().create_model(session);
  json::array data;
  data.emplace_back(cross_entropy_datum({7, 8, 9, 10}));
  const std::string fwd = to_text(forward_backward_body(model, 1, data));
  const HeaderList headers = api().auth({{"Content-Type", "application/json"}});

  EXPECT_EQ(api().http().request("POST", "/api/v1/forward_backward", headers, fwd).status, 503);
  EXPECT_TRUE(api().http().exchange("POST", "/api/v1/forward_backward", headers, fwd).error);
  const std::string fwd_id = api().submit("/api/v1/forward_backward", json::parse(fwd));
  const std::string optim = to_text(optim_step_body(model, 2, 1e-3));
  EXPECT_TRUE(api().http().exchange("POST", "/api/v1/optim_step", headers, optim).error);
  const std::string optim_id = api().submit("/api/v1/optim_step", json::parse(optim));
  EXPECT_NO_THROW(api().await_json(fwd_id));
  EXPECT_NO_THROW(api().await_json(optim_id));

  bool seen = false;
  for (const json::value& entry : items(api().admin_audit(), "models")) {
    if (string_field(entry, "model_id") != model) continue;
    seen = true;
    EXPECT_EQ(integers(field(entry, "applied_seq_ids")), (std::vector<std::int64_t>{1, 2})) << to_text(entry);
  }
  EXPECT_TRUE(seen) << "model missing from /_admin/audit";
  EXPECT_TRUE(api().server().audit().ok());
}

}  // namespace
}  // namespace tinker::local::test
