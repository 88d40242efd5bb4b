// End-to-end smoke tests of the front end through a started tinker::local::Server (null-model
// mode): status codes, headers, auth, limits, faults, the arrival log and the admin paths.
// The exhaustive per-endpoint tests live in test/unit/programs/local/http_api/.
#include "unit/programs/local/support/expectations.hpp"
#include "unit/programs/local/support/local_server.hpp"

#include <tinker/codec.hpp>
#include <tinker/error.hpp>
#include <tinker/local/server.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include <filesystem>

namespace tinker::local {
namespace {

namespace json = boost::json;
using test::detail_of;
using test::HeaderList;
using test::RawExchange;
using test::RawHttpClient;
using test::RawResponse;

const HeaderList kSmokeHeaders{{"X-API-Key", "tml-smoke-test"}, {"Content-Type", "application/json"}};

std::filesystem::path shared_hub_cache() {
  return std::filesystem::temp_directory_path() / "tinker-local-test-hub";
}

ServerOptions null_model_options() {
  ServerOptions options;
  options.null_model = true;
  options.hf_hub_cache = shared_hub_cache();
  options.log_level = LogLevel::off;
  options.long_poll_hold = std::chrono::milliseconds(200);
  return options;
}

class ServerSmokeTest : public ::testing::Test {
 protected:
  void start(ServerOptions options = null_model_options()) {
    server_ = std::make_unique<Server>(std::move(options));
    server_->start();
  }
  void SetUp() override { start(); }
  RawHttpClient client() { return RawHttpClient(server_->port()); }

  std::unique_ptr<Server> server_;
};

TEST_F(ServerSmokeTest, HealthzNeedsNoKeyAndCarriesTheStandardHeaders) {
  RawHttpClient c = client();
  c.send("GET", "/api/v1/healthz");
  const RawResponse response = c.receive();
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.json(), json::parse(R"({"status":"ok"})"));
  EXPECT_EQ(response.header("Content-Type"), "application/json");
  EXPECT_EQ(response.header("Content-Length"), std::to_string(response.body.size()));
  EXPECT_FALSE(response.header("x-request-id").value_or("").empty());
  EXPECT_TRUE(response.keep_alive);
  // Keep-alive: the same connection serves the next request, with a new request id.
  c.send("GET", "/api/v1/healthz");
  const RawResponse second = c.receive();
  EXPECT_EQ(second.status, 200);
  EXPECT_NE(second.header("x-request-id"), response.header("x-request-id"));
  EXPECT_EQ(server_->base_url(), "http://127.0.0.1:" + std::to_string(server_->port()));
  // HEAD: the GET answer's head, no body (the client knows not to read one after HEAD).
  c.send("HEAD", "/api/v1/healthz");
  const RawResponse head = c.receive();
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.header("Content-Length"), "15");
}

TEST_F(ServerSmokeTest, MissingOrInvalidKeysAre401) {
  RawHttpClient c = client();
  const RawResponse missing =
      c.request("POST", "/api/v1/client/config", {{"Content-Type", "application/json"}}, R"({"sdk_version":"0.25.0"})");
  EXPECT_EQ(missing.status, 401);
  EXPECT_EQ(detail_of(missing), "Invalid API key");
  const RawResponse wrong =
      c.request("POST", "/api/v1/client/config", {{"X-API-Key", "sk-not-tinker"}, {"Content-Type", "application/json"}},
                R"({"sdk_version":"0.25.0"})");
  EXPECT_EQ(wrong.status, 401);
  EXPECT_EQ(wrong.body.find("sk-not-tinker"), std::string::npos);
}

TEST_F(ServerSmokeTest, ClientConfigAnswersEveryFlagAndPlainHttpx) {
  RawHttpClient c = client();
  const RawResponse response = c.request("POST", "/api/v1/client/config", kSmokeHeaders, R"({"sdk_version":"0.25.0"})");
  ASSERT_EQ(response.status, 200);
  const json::object config = response.json().as_object();
  EXPECT_EQ(config.at("use_pyqwest_transport"), false);
  EXPECT_EQ(config.at("pjwt_auth_enabled"), false);
  EXPECT_EQ(config.at("proto_compress_fwdbwd"), false);
  EXPECT_EQ(config.at("parallel_fwdbwd_chunks"), true);
  EXPECT_EQ(config.at("create_model_via_load_weights"), false);
  EXPECT_EQ(config.at("fwdbwd_max_chunk_len"), 1024);
  EXPECT_EQ(config.at("fwdbwd_max_chunk_bytes_count"), 5000000);
  EXPECT_EQ(config.at("sample_max_concurrent_requests"), 2000);
  EXPECT_EQ(config.at("credential_default_source"), "api_key");

  const RawResponse dynamic =
      c.request("POST", "/api/v1/client/dynamic_config", kSmokeHeaders, R"({"sdk_version":"0.25.0"})");
  ASSERT_EQ(dynamic.status, 200);
  EXPECT_EQ(dynamic.json(), json::parse(R"({"refresh_interval_sec":300})"));
  // JWT exchange is off unless announced.
  EXPECT_EQ(c.request("POST", "/api/v1/auth/token", kSmokeHeaders, "{}").status, 404);
}

TEST_F(ServerSmokeTest, UnknownPathsAndWrongMethods) {
  RawHttpClient c = client();
  const RawResponse unknown = c.request("GET", "/api/v1/no_such_endpoint", kSmokeHeaders);
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(detail_of(unknown), "Not Found");
  const RawResponse wrong = c.request("GET", "/api/v1/create_session", kSmokeHeaders);
  EXPECT_EQ(wrong.status, 405);
  EXPECT_EQ(wrong.header("Allow"), "POST");
  EXPECT_EQ(c.request("GET", "/elsewhere", kSmokeHeaders).status, 404);
}

TEST_F(ServerSmokeTest, UndecodableBodiesAre422NamingTheField) {
  RawHttpClient c = client();
  const RawResponse wrong_type = c.request("POST", "/api/v1/create_model", kSmokeHeaders,
                                           R"({"session_id": 5, "model_seq_id": 0, "base_model": "x"})");
  EXPECT_EQ(wrong_type.status, 422);
  EXPECT_NE(detail_of(wrong_type).find("session_id"), std::string::npos) << wrong_type.body;
  const RawResponse malformed = c.request("POST", "/api/v1/create_session", kSmokeHeaders, "{not json");
  EXPECT_EQ(malformed.status, 422);
  const RawResponse bad_query = c.request("GET", "/api/v1/training_runs?limit=lots", kSmokeHeaders);
  EXPECT_EQ(bad_query.status, 422);
  EXPECT_NE(detail_of(bad_query).find("limit"), std::string::npos);
}

TEST_F(ServerSmokeTest, OversizedBodiesAre413) {
  ServerOptions options = null_model_options();
  options.max_request_body = 1024;
  start(std::move(options));
  RawHttpClient c = client();
  const RawResponse response = c.request("POST", "/api/v1/create_session", kSmokeHeaders, std::string(4096, ' '));
  EXPECT_EQ(response.status, 413);
  EXPECT_NE(detail_of(response).find("1024"), std::string::npos);
  EXPECT_FALSE(response.keep_alive);

  // A small zstd body that decompresses beyond the limit (a "bomb") is a 413 too.
  RawHttpClient again = client();
  const std::string bomb = zstd_compress(std::string(100000, 'a'));
  ASSERT_LT(bomb.size(), 1024u);
  const RawResponse bombed = again.request(
      "POST", "/api/v1/forward_backward",
      {{"X-API-Key", "tml-smoke-test"}, {"Content-Type", "application/x-protobuf"}, {"Content-Encoding", "zstd"}},
      bomb);
  EXPECT_EQ(bombed.status, 413);
  EXPECT_NE(detail_of(bombed).find("decompresses"), std::string::npos) << bombed.body;
  const RawResponse gzip = again.request("POST", "/api/v1/create_session",
                                         {{"X-API-Key", "tml-smoke-test"}, {"Content-Encoding", "gzip"}}, "x");
  EXPECT_EQ(gzip.status, 415);
}

TEST_F(ServerSmokeTest, StatusFaultsWithRetryAfterAndTheBare400) {
  FaultRule limited("healthz", FaultKind::status);
  limited.status = 429;
  limited.retry_after = RetryAfterForm::seconds;
  limited.retry_after_value = std::chrono::milliseconds(2000);
  limited.on_calls = {1};
  FaultRule bare("healthz", FaultKind::status);
  bare.status = 400;
  bare.on_calls = {2};
  std::vector<FaultRule> rules{limited, bare};
  server_->set_faults(std::move(rules));
  RawHttpClient c = client();
  const RawResponse first = c.request("GET", "/api/v1/healthz", kSmokeHeaders);
  EXPECT_EQ(first.status, 429);
  EXPECT_EQ(first.header("Retry-After"), "2");
  const RawResponse second = c.request("GET", "/api/v1/healthz", kSmokeHeaders);
  EXPECT_EQ(second.status, 400);
  EXPECT_EQ(second.header("Content-Length"), "0");
  EXPECT_TRUE(second.body.empty());
  EXPECT_EQ(c.request("GET", "/api/v1/healthz", kSmokeHeaders).status, 200);

  const AuditReport audit = server_->audit();
  ASSERT_EQ(audit.requests.size(), 3u);
  EXPECT_EQ(audit.requests[0].fault, "status_429");
  EXPECT_EQ(audit.requests[0].status, 429);
  EXPECT_EQ(audit.requests[1].fault, "status_400");
  EXPECT_EQ(audit.requests[2].fault, "");
  EXPECT_EQ(audit.requests[2].status, 200);
}

TEST_F(ServerSmokeTest, ConnectionFaults) {
  FaultRule reset("healthz", FaultKind::reset_before);
  reset.on_calls = {1};
  FaultRule truncated("healthz", FaultKind::truncated_body);
  truncated.on_calls = {2};
  FaultRule malformed("healthz", FaultKind::malformed_json);
  malformed.on_calls = {3};
  std::vector<FaultRule> rules{reset, truncated, malformed};
  server_->set_faults(std::move(rules));
  {
    RawHttpClient c = client();
    c.send("GET", "/api/v1/healthz");
    EXPECT_TRUE(c.try_receive().error);
  }
  {
    RawHttpClient c = client();
    c.send("GET", "/api/v1/healthz");
    EXPECT_TRUE(c.try_receive().error);  // the body ends early
  }
  RawHttpClient c = client();
  c.send("GET", "/api/v1/healthz");
  const RawExchange answer = c.try_receive();
  ASSERT_FALSE(answer.error);
  const RawResponse& response = answer.response;
  EXPECT_EQ(response.status, 200);
  boost::system::error_code ec;
  json::parse(response.body, ec);
  EXPECT_TRUE(ec) << response.body;
}

TEST_F(ServerSmokeTest, AdminPathsReportTheArrivalLog) {
  RawHttpClient c = client();
  c.request("POST", "/api/v1/client/config",
            {{"X-API-Key", "tml-smoke-test"},
             {"Content-Type", "application/json"},
             {"X-Idempotency-Key", "idem-1"},
             {"x-stainless-retry-count", "0"}},
            R"({"sdk_version":"0.25.0"})");
  const RawResponse audit = c.request("GET", "/_admin/audit");
  ASSERT_EQ(audit.status, 200);
  const json::object report = audit.json().as_object();
  EXPECT_EQ(report.at("ok"), true);
  const json::array& requests = report.at("requests").as_array();
  ASSERT_GE(requests.size(), 1u);
  const json::object& first = requests[0].as_object();
  EXPECT_EQ(first.at("index"), 0);
  EXPECT_EQ(first.at("method"), "POST");
  EXPECT_EQ(first.at("path"), "/api/v1/client/config");
  EXPECT_EQ(first.at("status"), 200);
  EXPECT_EQ(first.at("idempotency_key"), "idem-1");
  EXPECT_EQ(first.at("retry_count"), "0");
  EXPECT_EQ(first.at("arrived").as_string().size(), std::string("2026-08-08T12:00:00.000000Z").size());

  const RawResponse set = c.request("POST", "/_admin/faults", {}, R"(["healthz:status=503"])");
  ASSERT_EQ(set.status, 200) << set.body;
  EXPECT_EQ(c.request("GET", "/api/v1/healthz", kSmokeHeaders).status, 503);
  EXPECT_EQ(c.request("DELETE", "/_admin/faults").status, 200);
  EXPECT_EQ(c.request("GET", "/api/v1/healthz", kSmokeHeaders).status, 200);
  const RawResponse bad = c.request("POST", "/_admin/faults", {}, R"([{"endpoint":"x","kind":"status","status":"a"}])");
  EXPECT_EQ(bad.status, 422);
  EXPECT_NE(detail_of(bad).find("[0].status"), std::string::npos) << bad.body;
}

TEST_F(ServerSmokeTest, JwtModeMintsTokensThatAuthenticate) {
  ServerOptions options = null_model_options();
  options.client_config.pjwt_auth_enabled = true;
  options.jwt_lifetime = std::chrono::seconds(600);
  start(std::move(options));
  RawHttpClient c = client();
  const RawResponse minted = c.request("POST", "/api/v1/auth/token", kSmokeHeaders, "{}");
  ASSERT_EQ(minted.status, 200);
  const std::string jwt(minted.json().as_object().at("jwt").as_string());
  EXPECT_EQ(jwt.rfind("eyJ", 0), 0u);
  const HeaderList with_jwt{{"X-API-Key", jwt}, {"Content-Type", "application/json"}};
  EXPECT_EQ(c.request("POST", "/api/v1/client/config", with_jwt, "{}").status, 200);
  server_->advance_clock(std::chrono::seconds(601));
  EXPECT_EQ(c.request("POST", "/api/v1/client/config", with_jwt, "{}").status, 401);
}

TEST_F(ServerSmokeTest, PathPrefix) {
  ServerOptions options = null_model_options();
  options.path_prefix = "/services/tinker";
  start(std::move(options));
  EXPECT_EQ(server_->base_url(), "http://127.0.0.1:" + std::to_string(server_->port()) + "/services/tinker");
  RawHttpClient c = client();
  EXPECT_EQ(c.request("GET", "/services/tinker/api/v1/healthz", kSmokeHeaders).status, 200);
  EXPECT_EQ(c.request("GET", "/api/v1/healthz", kSmokeHeaders).status, 404);
}

TEST(ServerLifecycleTest, BusyPortNamesHostAndPort) {
  Server first(null_model_options());
  first.start();
  ServerOptions options = null_model_options();
  options.port = first.port();
  Server second(std::move(options));
  try {
    second.start();
    FAIL() << "no exception";
  } catch (const tinker::error& e) {
    EXPECT_EQ(e.code(), errc::invalid_configuration);
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(first.port())), std::string::npos) << e.what();
  }
  first.stop();
  first.stop();  // idempotent
}

TEST(ServerLifecycleTest, TemporaryDataDirIsRemovedOnDestruction) {
  std::filesystem::path dir;
  {
    Server server(null_model_options());
    server.start();
    dir = server.data_dir();
    EXPECT_TRUE(std::filesystem::is_directory(dir));
  }
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(ServerLifecycleTest, StopEndsHeldLongPollsAndDelaysPromptly) {
  ServerOptions options = null_model_options();
  options.long_poll_hold = std::chrono::seconds(20);
  FaultRule pause("create_model", FaultKind::pause_queue);
  pause.delay = std::chrono::seconds(60);
  pause.probability = 1.0;
  FaultRule delay("healthz", FaultKind::delay);
  delay.delay = std::chrono::seconds(60);
  delay.probability = 1.0;
  options.faults = {pause, delay};
  Server server(std::move(options));
  server.start();

  RawHttpClient c(server.port());
  const RawResponse session = c.request("POST", "/api/v1/create_session", kSmokeHeaders,
                                        R"({"tags":[],"user_metadata":{},"sdk_version":"0.25.0"})");
  const std::string session_id(session.json().as_object().at("session_id").as_string());
  const RawResponse ticket =
      c.request("POST", "/api/v1/create_model", kSmokeHeaders,
                R"({"session_id":")" + session_id + R"(","model_seq_id":0,"base_model":"tinker-local/tiny-lm"})");
  const std::string request_id(ticket.json().as_object().at("request_id").as_string());
  c.send("POST", "/api/v1/retrieve_future", {{"X-API-Key", "tml-smoke-test"}, {"Content-Type", "application/json"}},
         R"({"request_id":")" + request_id + R"("})");
  RawHttpClient delayed(server.port());
  delayed.send("GET", "/api/v1/healthz");
  // Stop only once the server holds both requests (in the arrival log, not yet answered).
  ASSERT_TRUE(test::wait_for_unanswered(server, "/api/v1/retrieve_future")) << "the long poll never reached the server";
  ASSERT_TRUE(test::wait_for_unanswered(server, "/api/v1/healthz")) << "the delayed request never reached the server";

  const auto before = std::chrono::steady_clock::now();
  server.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(3));
  const RawExchange answer = c.try_receive();
  if (!answer.error) {
    EXPECT_EQ(answer.response.status, 200);  // answered try_again as the engine shut down
  }
  EXPECT_TRUE(delayed.try_receive().error);  // the delayed request is dropped
}

}  // namespace
}  // namespace tinker::local
