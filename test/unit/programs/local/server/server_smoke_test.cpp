// End-to-end smoke tests of the front end through a started tinker::local::Server (null-model
// mode): status codes, headers, auth, limits, faults, the arrival log and the admin paths.
// The exhaustive per-endpoint tests live in test/unit/programs/local/http_api/.
#include "unit/programs/local/server/raw_client.hpp"
#include "unit/programs/local/support/local_server.hpp"

#include <tinker/codec.hpp>
#include <tinker/error.hpp>
#include <tinker/local/server.hpp>

#include <boost/beast/http/empty_body.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include <filesystem>

namespace tinker::local {
namespace {

namespace json = boost::json;
using test::body_json;
using test::detail_of;
using test::RawClient;
using test::RawResponse;

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
  RawClient client() { return RawClient(server_->port()); }

  std::unique_ptr<Server> server_;
};

TEST_F(ServerSmokeTest, HealthzNeedsNoKeyAndCarriesTheStandardHeaders) {
  RawClient c = client();
  c.send("GET", "/api/v1/healthz");
  const RawResponse response = c.receive();
  EXPECT_EQ(response.result_int(), 200);
  EXPECT_EQ(body_json(response), json::parse(R"({"status":"ok"})"));
  EXPECT_EQ(response["Content-Type"], "application/json");
  EXPECT_EQ(response["Content-Length"], std::to_string(response.body().size()));
  EXPECT_FALSE(response["x-request-id"].empty());
  EXPECT_TRUE(response.keep_alive());
  // Keep-alive: the same connection serves the next request, with a new request id.
  c.send("GET", "/api/v1/healthz");
  const RawResponse second = c.receive();
  EXPECT_EQ(second.result_int(), 200);
  EXPECT_NE(second["x-request-id"], response["x-request-id"]);
  EXPECT_EQ(server_->base_url(), "http://127.0.0.1:" + std::to_string(server_->port()));
  // HEAD: the GET answer's head, no body (Beast knows not to read one after HEAD).
  c.send("HEAD", "/api/v1/healthz");
  boost::beast::http::response_parser<boost::beast::http::empty_body> head_parser;
  head_parser.skip(true);
  boost::beast::flat_buffer buffer;
  boost::beast::http::read(c.socket(), buffer, head_parser);
  EXPECT_EQ(head_parser.get().result_int(), 200);
  EXPECT_EQ(head_parser.get()["Content-Length"], "15");
}

TEST_F(ServerSmokeTest, MissingOrInvalidKeysAre401) {
  RawClient c = client();
  const RawResponse missing =
      c.request("POST", "/api/v1/client/config", R"({"sdk_version":"0.25.0"})", {"Content-Type: application/json"});
  EXPECT_EQ(missing.result_int(), 401);
  EXPECT_EQ(detail_of(missing), "Invalid API key");
  const RawResponse wrong = c.request("POST", "/api/v1/client/config", R"({"sdk_version":"0.25.0"})",
                                      {"X-API-Key: sk-not-tinker", "Content-Type: application/json"});
  EXPECT_EQ(wrong.result_int(), 401);
  EXPECT_EQ(wrong.body().find("sk-not-tinker"), std::string::npos);
}

TEST_F(ServerSmokeTest, ClientConfigAnswersEveryFlagAndPlainHttpx) {
  RawClient c = client();
  const RawResponse response = c.request("POST", "/api/v1/client/config", R"({"sdk_version":"0.25.0"})");
  ASSERT_EQ(response.result_int(), 200);
  const json::object config = body_json(response).as_object();
  EXPECT_EQ(config.at("use_pyqwest_transport"), false);
  EXPECT_EQ(config.at("pjwt_auth_enabled"), false);
  EXPECT_EQ(config.at("proto_compress_fwdbwd"), false);
  EXPECT_EQ(config.at("parallel_fwdbwd_chunks"), true);
  EXPECT_EQ(config.at("create_model_via_load_weights"), false);
  EXPECT_EQ(config.at("fwdbwd_max_chunk_len"), 1024);
  EXPECT_EQ(config.at("fwdbwd_max_chunk_bytes_count"), 5000000);
  EXPECT_EQ(config.at("sample_max_concurrent_requests"), 2000);
  EXPECT_EQ(config.at("credential_default_source"), "api_key");

  const RawResponse dynamic = c.request("POST", "/api/v1/client/dynamic_config", R"({"sdk_version":"0.25.0"})");
  ASSERT_EQ(dynamic.result_int(), 200);
  EXPECT_EQ(body_json(dynamic), json::parse(R"({"refresh_interval_sec":300})"));
  // JWT exchange is off unless announced.
  EXPECT_EQ(c.request("POST", "/api/v1/auth/token", "{}").result_int(), 404);
}

TEST_F(ServerSmokeTest, UnknownPathsAndWrongMethods) {
  RawClient c = client();
  const RawResponse unknown = c.request("GET", "/api/v1/no_such_endpoint");
  EXPECT_EQ(unknown.result_int(), 404);
  EXPECT_EQ(detail_of(unknown), "Not Found");
  const RawResponse wrong = c.request("GET", "/api/v1/create_session");
  EXPECT_EQ(wrong.result_int(), 405);
  EXPECT_EQ(wrong["Allow"], "POST");
  EXPECT_EQ(c.request("GET", "/elsewhere").result_int(), 404);
}

TEST_F(ServerSmokeTest, UndecodableBodiesAre422NamingTheField) {
  RawClient c = client();
  const RawResponse wrong_type =
      c.request("POST", "/api/v1/create_model", R"({"session_id": 5, "model_seq_id": 0, "base_model": "x"})");
  EXPECT_EQ(wrong_type.result_int(), 422);
  EXPECT_NE(detail_of(wrong_type).find("session_id"), std::string::npos) << wrong_type.body();
  const RawResponse malformed = c.request("POST", "/api/v1/create_session", "{not json");
  EXPECT_EQ(malformed.result_int(), 422);
  const RawResponse bad_query = c.request("GET", "/api/v1/training_runs?limit=lots");
  EXPECT_EQ(bad_query.result_int(), 422);
  EXPECT_NE(detail_of(bad_query).find("limit"), std::string::npos);
}

TEST_F(ServerSmokeTest, OversizedBodiesAre413) {
  ServerOptions options = null_model_options();
  options.max_request_body = 1024;
  start(std::move(options));
  RawClient c = client();
  const RawResponse response = c.request("POST", "/api/v1/create_session", std::string(4096, ' '));
  EXPECT_EQ(response.result_int(), 413);
  EXPECT_NE(detail_of(response).find("1024"), std::string::npos);
  EXPECT_FALSE(response.keep_alive());

  // A small zstd body that decompresses beyond the limit (a "bomb") is a 413 too.
  RawClient again = client();
  const std::string bomb = zstd_compress(std::string(100000, 'a'));
  ASSERT_LT(bomb.size(), 1024u);
  const RawResponse bombed =
      again.request("POST", "/api/v1/forward_backward", bomb,
                    {"X-API-Key: tml-smoke-test", "Content-Type: application/x-protobuf", "Content-Encoding: zstd"});
  EXPECT_EQ(bombed.result_int(), 413);
  EXPECT_NE(detail_of(bombed).find("decompresses"), std::string::npos) << bombed.body();
  const RawResponse gzip =
      again.request("POST", "/api/v1/create_session", "x", {"X-API-Key: tml-smoke-test", "Content-Encoding: gzip"});
  EXPECT_EQ(gzip.result_int(), 415);
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
  RawClient c = client();
  const RawResponse first = c.request("GET", "/api/v1/healthz");
  EXPECT_EQ(first.result_int(), 429);
  EXPECT_EQ(first["Retry-After"], "2");
  const RawResponse second = c.request("GET", "/api/v1/healthz");
  EXPECT_EQ(second.result_int(), 400);
  EXPECT_EQ(second["Content-Length"], "0");
  EXPECT_TRUE(second.body().empty());
  EXPECT_EQ(c.request("GET", "/api/v1/healthz").result_int(), 200);

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
  RawResponse response;
  {
    RawClient c = client();
    c.send("GET", "/api/v1/healthz");
    EXPECT_TRUE(c.try_receive(response));
  }
  {
    RawClient c = client();
    c.send("GET", "/api/v1/healthz");
    EXPECT_TRUE(c.try_receive(response));  // the body ends early
  }
  RawClient c = client();
  c.send("GET", "/api/v1/healthz");
  ASSERT_FALSE(c.try_receive(response));
  EXPECT_EQ(response.result_int(), 200);
  boost::system::error_code ec;
  json::parse(response.body(), ec);
  EXPECT_TRUE(ec) << response.body();
}

TEST_F(ServerSmokeTest, AdminPathsReportTheArrivalLog) {
  RawClient c = client();
  c.request("POST", "/api/v1/client/config", R"({"sdk_version":"0.25.0"})",
            {"X-API-Key: tml-smoke-test", "Content-Type: application/json", "X-Idempotency-Key: idem-1",
             "x-stainless-retry-count: 0"});
  const RawResponse audit = c.request("GET", "/_admin/audit", "", {});
  ASSERT_EQ(audit.result_int(), 200);
  const json::object report = body_json(audit).as_object();
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

  const RawResponse set = c.request("POST", "/_admin/faults", R"(["healthz:status=503"])", {});
  ASSERT_EQ(set.result_int(), 200) << set.body();
  EXPECT_EQ(c.request("GET", "/api/v1/healthz").result_int(), 503);
  EXPECT_EQ(c.request("DELETE", "/_admin/faults", "", {}).result_int(), 200);
  EXPECT_EQ(c.request("GET", "/api/v1/healthz").result_int(), 200);
  const RawResponse bad = c.request("POST", "/_admin/faults", R"([{"endpoint":"x","kind":"status","status":"a"}])", {});
  EXPECT_EQ(bad.result_int(), 422);
  EXPECT_NE(detail_of(bad).find("[0].status"), std::string::npos) << bad.body();
}

TEST_F(ServerSmokeTest, JwtModeMintsTokensThatAuthenticate) {
  ServerOptions options = null_model_options();
  options.client_config.pjwt_auth_enabled = true;
  options.jwt_lifetime = std::chrono::seconds(600);
  start(std::move(options));
  RawClient c = client();
  const RawResponse minted = c.request("POST", "/api/v1/auth/token", "{}");
  ASSERT_EQ(minted.result_int(), 200);
  const std::string jwt(body_json(minted).as_object().at("jwt").as_string());
  EXPECT_EQ(jwt.rfind("eyJ", 0), 0u);
  const std::vector<std::string> with_jwt{"X-API-Key: " + jwt, "Content-Type: application/json"};
  EXPECT_EQ(c.request("POST", "/api/v1/client/config", "{}", with_jwt).result_int(), 200);
  server_->advance_clock(std::chrono::seconds(601));
  EXPECT_EQ(c.request("POST", "/api/v1/client/config", "{}", with_jwt).result_int(), 401);
}

TEST_F(ServerSmokeTest, PathPrefix) {
  ServerOptions options = null_model_options();
  options.path_prefix = "/services/tinker";
  start(std::move(options));
  EXPECT_EQ(server_->base_url(), "http://127.0.0.1:" + std::to_string(server_->port()) + "/services/tinker");
  RawClient c = client();
  EXPECT_EQ(c.request("GET", "/services/tinker/api/v1/healthz").result_int(), 200);
  EXPECT_EQ(c.request("GET", "/api/v1/healthz").result_int(), 404);
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

  RawClient c(server.port());
  const RawResponse session =
      c.request("POST", "/api/v1/create_session", R"({"tags":[],"user_metadata":{},"sdk_version":"0.25.0"})");
  const std::string session_id(body_json(session).as_object().at("session_id").as_string());
  const RawResponse ticket =
      c.request("POST", "/api/v1/create_model",
                R"({"session_id":")" + session_id + R"(","model_seq_id":0,"base_model":"tinker-local/tiny-lm"})");
  const std::string request_id(body_json(ticket).as_object().at("request_id").as_string());
  c.send("POST", "/api/v1/retrieve_future", R"({"request_id":")" + request_id + R"("})",
         {"X-API-Key: tml-smoke-test", "Content-Type: application/json"});
  RawClient delayed(server.port());
  delayed.send("GET", "/api/v1/healthz");
  // Stop only once the server holds both requests (in the arrival log, not yet answered).
  ASSERT_TRUE(test::wait_for_unanswered(server, "/api/v1/retrieve_future")) << "the long poll never reached the server";
  ASSERT_TRUE(test::wait_for_unanswered(server, "/api/v1/healthz")) << "the delayed request never reached the server";

  const auto before = std::chrono::steady_clock::now();
  server.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(3));
  RawResponse response;
  if (!c.try_receive(response)) {
    EXPECT_EQ(response.result_int(), 200);  // answered try_again as the engine shut down
  }
  EXPECT_TRUE(delayed.try_receive(response));  // the delayed request is dropped
}

}  // namespace
}  // namespace tinker::local
