// doc/local.md#what-it-serves: healthz, get_server_capabilities, client/config, dynamic_config and
// telemetry over real HTTP.
#include "unit/programs/local/support/expectations.hpp"
#include "unit/programs/local/support/local_server.hpp"

#include <boost/json/parse.hpp>

#include <map>

namespace tinker::local::test {
namespace {

namespace json = boost::json;

using HttpApiConfigEndpoints = LocalServerTest;

json::object sdk_version_body() {
  json::object body;
  body["sdk_version"] = "0.25.0";
  return body;
}

TEST_F(HttpApiConfigEndpoints, HealthzAnswersStatusOk) {
  const RawResponse response = api().get("/api/v1/healthz");
  ASSERT_EQ(response.status, 200) << response.describe();
  ASSERT_TRUE(is_json_answer(response));
  EXPECT_EQ(response.json(), json::parse(R"({"status":"ok"})"));
}

TEST_F(HttpApiConfigEndpoints, ConnectionIsKeptAlive) {
  for (int i = 0; i < 5; ++i) ASSERT_EQ(api().get("/api/v1/healthz").status, 200);
  EXPECT_EQ(api().http().connections_opened(), 1);
}

TEST_F(HttpApiConfigEndpoints, CapabilitiesListTheDefaultCatalogue) {
  const RawResponse response = api().get("/api/v1/get_server_capabilities");
  ASSERT_EQ(response.status, 200) << response.describe();
  ASSERT_TRUE(is_json_answer(response));
  const json::value& models = field(response.json(), "supported_models");
  ASSERT_TRUE(models.is_array());
  std::map<std::string, std::int64_t> found;
  for (const json::value& model : models.get_array()) {
    found[string_field(model, "model_name")] = field(model, "max_context_length").to_number<std::int64_t>();
  }
  EXPECT_EQ(found.at("tinker-local/tiny-lm"), 2048);
  EXPECT_EQ(found.at("Qwen/Qwen3-8B"), 32768);
  EXPECT_EQ(found.at("meta-llama/Llama-3.1-8B"), 131072);
  EXPECT_EQ(found.at("tinker-local/tiny-lm-sp"), 2048);
  EXPECT_EQ(found.at("tinker-local/tiny-vl"), 2048);
  EXPECT_EQ(found.size(), 5u);
}

TEST_F(HttpApiConfigEndpoints, CapabilitiesFollowAConfiguredCatalogue) {
  options.catalogue.clear();
  options.catalogue.emplace_back("acme/tiny-a", 512);
  options.catalogue.emplace_back("acme/tiny-b", 1024);
  const json::value body = api().get("/api/v1/get_server_capabilities").json();
  const json::array& models = field(body, "supported_models").get_array();
  ASSERT_EQ(models.size(), 2u) << to_text(body);
  EXPECT_EQ(string_field(models[0], "model_name"), "acme/tiny-a");
  EXPECT_EQ(field(models[0], "max_context_length").to_number<std::int64_t>(), 512);
  EXPECT_EQ(string_field(models[1], "model_name"), "acme/tiny-b");
}

TEST_F(HttpApiConfigEndpoints, ClientConfigHasTheDefaultFlags) {
  const RawResponse response = api().post("/api/v1/client/config", sdk_version_body());
  ASSERT_EQ(response.status, 200) << response.describe();
  ASSERT_TRUE(is_json_answer(response));
  const json::value flags = response.json();
  // The Python SDK needs use_pyqwest_transport false: its other transport is an optional native
  // package that a local installation usually lacks; with the flag false it uses plain httpx.
  EXPECT_EQ(field(flags, "use_pyqwest_transport"), json::value(false));
  EXPECT_EQ(field(flags, "pjwt_auth_enabled"), json::value(false));
  EXPECT_EQ(field(flags, "proto_compress_fwdbwd"), json::value(false));
  EXPECT_EQ(field(flags, "parallel_fwdbwd_chunks"), json::value(true));
  EXPECT_EQ(field(flags, "create_model_via_load_weights"), json::value(false));
  EXPECT_EQ(field(flags, "fwdbwd_max_chunk_len").to_number<std::int64_t>(), 1024);
  EXPECT_EQ(field(flags, "fwdbwd_max_chunk_bytes_count").to_number<std::int64_t>(), 5000000);
  EXPECT_EQ(field(flags, "sample_max_concurrent_requests").to_number<std::int64_t>(), 2000);
}

TEST_F(HttpApiConfigEndpoints, ClientConfigFollowsTheConfiguredFlags) {
  options.client_config.proto_compress_fwdbwd = true;
  options.client_config.parallel_fwdbwd_chunks = false;
  options.client_config.create_model_via_load_weights = true;
  options.client_config.fwdbwd_max_chunk_len = 7;
  options.client_config.fwdbwd_max_chunk_bytes_count = 12345;
  options.client_config.sample_max_concurrent_requests = 3;
  const json::value flags = api().post("/api/v1/client/config", sdk_version_body()).json();
  EXPECT_EQ(field(flags, "proto_compress_fwdbwd"), json::value(true));
  EXPECT_EQ(field(flags, "parallel_fwdbwd_chunks"), json::value(false));
  EXPECT_EQ(field(flags, "create_model_via_load_weights"), json::value(true));
  EXPECT_EQ(field(flags, "fwdbwd_max_chunk_len").to_number<std::int64_t>(), 7);
  EXPECT_EQ(field(flags, "fwdbwd_max_chunk_bytes_count").to_number<std::int64_t>(), 12345);
  EXPECT_EQ(field(flags, "sample_max_concurrent_requests").to_number<std::int64_t>(), 3);
  EXPECT_EQ(field(flags, "use_pyqwest_transport"), json::value(false));
}

TEST_F(HttpApiConfigEndpoints, DynamicConfigAnswersTheRefreshInterval) {
  const RawResponse response = api().post("/api/v1/client/dynamic_config", sdk_version_body());
  ASSERT_EQ(response.status, 200) << response.describe();
  ASSERT_TRUE(is_json_answer(response));
  EXPECT_EQ(field(response.json(), "refresh_interval_sec").to_number<std::int64_t>(), 300);
}

TEST_F(HttpApiConfigEndpoints, DynamicConfigIntervalIsConfigurable) {
  options.client_config.dynamic_refresh_interval_sec = 42;
  EXPECT_EQ(field(api().post("/api/v1/client/dynamic_config", sdk_version_body()).json(), "refresh_interval_sec")
                .to_number<std::int64_t>(),
            42);
}

TEST_F(HttpApiConfigEndpoints, DynamicConfigCanBeSwitchedOffWith404) {
  options.client_config.dynamic_config_enabled = false;
  EXPECT_TRUE(is_error(api().post("/api/v1/client/dynamic_config", sdk_version_body()), 404));
}

TEST_F(HttpApiConfigEndpoints, TelemetryIsAccepted) {
  // Shape the Python SDK sends (doc/protocol.md#telemetry), including a null inside event_data
  // (free-form maps keep their nulls).
  const json::value body = json::parse(R"({
    "events": [
      {"event": "SESSION_START", "event_id": "7c1b0c1e-8d2f-4a58-9f0e-1234567890ab", "event_session_index": 0,
       "severity": "INFO", "timestamp": "2026-08-08T12:00:00Z"},
      {"event": "GENERIC_EVENT", "event_id": "8c1b0c1e-8d2f-4a58-9f0e-1234567890ab", "event_session_index": 1,
       "severity": "WARNING", "timestamp": "2026-08-08T12:00:01Z", "event_name": "x",
       "event_data": {"a": null, "b": 1}}],
    "platform": "Linux", "sdk_version": "0.25.0",
    "session_id": "sessionless-0b2c1b0c-8d2f-4a58-9f0e-1234567890ab",
    "process_uuid": "1b2c1b0c-8d2f-4a58-9f0e-1234567890ab"})");
  const RawResponse response = api().post("/api/v1/telemetry", body);
  ASSERT_EQ(response.status, 200) << response.describe();
  ASSERT_TRUE(is_json_answer(response));
  EXPECT_EQ(response.json(), json::parse(R"({"status":"accepted"})"));
  // Kept as received, for tests that check every field (local::Server::telemetry_batches).
  const std::vector<std::string> kept = api().server().telemetry_batches();
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(json::parse(kept.front()), body);
}

TEST_F(HttpApiConfigEndpoints, ServesUnderAPathPrefix) {
  options.path_prefix = "/services/tinker-local";
  const std::string base = api().server().base_url();
  EXPECT_EQ(base, "http://127.0.0.1:" + std::to_string(api().port()) + "/services/tinker-local");
  const RawResponse prefixed = api().get("/services/tinker-local/api/v1/healthz");
  ASSERT_EQ(prefixed.status, 200) << prefixed.describe();
  EXPECT_EQ(prefixed.json(), json::parse(R"({"status":"ok"})"));
  EXPECT_EQ(api().get("/api/v1/healthz").status, 404);
}

}  // namespace
}  // namespace tinker::local::test
