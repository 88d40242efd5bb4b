// Telemetry as tinker-local receives it, field by field against what the Python SDK 0.25 sends
// (doc/protocol.md#telemetry): a session with a user error, a REST failure, an unhandled error and an orderly shutdown;
// and nothing at all with telemetry off.
#include "integration/support/local_service.hpp"

#include <tinker/service_client.hpp>
#include <tinker/version.hpp>

#include <gtest/gtest.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace tinker::test {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using boost::system::error_code;

asio::awaitable<error_code> failing_sample(SamplingClient sampler) {
  const SamplingParams params(2);
  const std::vector<TokenId> tokens{1, 2, 3};
  const ModelInput prompt = ModelInput::from_ints(tokens);
  const SampleOptions options;
  auto [ec, pending] = co_await sampler.async_sample(prompt, 1, params, options, no_throw);
  co_return ec;
}

asio::awaitable<error_code> missing_run(RestClient rest) {
  const std::string run_id = "no-such-run";
  auto [ec, run] = co_await rest.async_get_training_run(run_id, AccessScope::owned, no_throw);
  co_return ec;
}

asio::awaitable<error_code> from_bad_path(ServiceClient& service, std::string path) {
  const FromStateOptions options;
  auto [ec, training] = co_await service.async_create_training_client_from_state(std::move(path), options, no_throw);
  co_return ec;
}

std::set<std::string> keys_of(const json::object& object) {
  std::set<std::string> keys;
  for (const auto& entry : object) keys.insert(std::string(entry.key()));
  return keys;
}

std::string text_of(const json::object& object, std::string_view key) {
  const json::value* value = object.if_contains(key);
  return value != nullptr && value->is_string() ? std::string(value->get_string()) : std::string();
}

class TelemetryTest : public LocalService {
 protected:
  /// The events received so far, in order, after checking each batch's envelope against `info`.
  std::vector<json::object> received_events(const TelemetryInfo& info) {
    std::vector<json::object> events;
    for (const std::string& body : server->telemetry_batches()) {
      const json::object batch = json::parse(body).as_object();
      EXPECT_EQ(keys_of(batch),
                (std::set<std::string>{"events", "platform", "process_uuid", "sdk_version", "session_id"}));
      EXPECT_EQ(text_of(batch, "platform"), "Linux");
      EXPECT_EQ(text_of(batch, "sdk_version"), protocol_version);
      EXPECT_EQ(text_of(batch, "session_id"), info.session_id);
      EXPECT_EQ(text_of(batch, "process_uuid"), info.process_uuid);
      EXPECT_EQ(body.find("tml-"), std::string::npos) << "a credential in " << body;
      EXPECT_EQ(body.find("eyJ"), std::string::npos) << "a JWT in " << body;
      for (const json::value& event : batch.at("events").as_array()) events.push_back(event.as_object());
    }
    return events;
  }

  /// Runs the io_context until `count` events arrived (or 30 s passed: a hung test fails instead of blocking).
  void wait_for_events(const TelemetryInfo& info, std::size_t count) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline && received_events(info).size() < count) {
      io.run_one_for(std::chrono::milliseconds(20));
    }
  }
};

const std::regex uuid4("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
const std::set<std::string> envelope{"event", "event_id", "event_session_index", "severity", "timestamp"};

std::set<std::string> envelope_and(std::initializer_list<std::string> more) {
  std::set<std::string> keys = envelope;
  keys.insert(more.begin(), more.end());
  return keys;
}

void expect_session_end(const json::object& event) {
  EXPECT_EQ(keys_of(event), envelope_and({"duration"}));
  EXPECT_EQ(text_of(event, "event"), "SESSION_END");
  EXPECT_EQ(text_of(event, "severity"), "INFO");
  EXPECT_TRUE(std::regex_match(text_of(event, "duration"), std::regex("[0-9]+:[0-5][0-9]:[0-5][0-9](\\.[0-9]{6})?")))
      << text_of(event, "duration");
}

void expect_user_error(const json::object& event, std::string_view error_type, std::int64_t status) {
  EXPECT_EQ(keys_of(event), envelope_and({"event_name", "event_data"}));
  EXPECT_EQ(text_of(event, "event"), "GENERIC_EVENT");
  EXPECT_EQ(text_of(event, "severity"), "WARNING");
  EXPECT_EQ(text_of(event, "event_name"), "user_error");
  const json::object& data = event.at("event_data").as_object();
  EXPECT_EQ(keys_of(data), (std::set<std::string>{"body", "error_type", "message", "status_code"}));
  EXPECT_EQ(text_of(data, "error_type"), error_type);
  EXPECT_EQ(data.at("status_code").as_int64(), status);
  EXPECT_TRUE(data.at("body").is_object()) << "the JSON error body, as Python's APIStatusError.body";
}

TEST_F(TelemetryTest, ASessionWithErrorsAndAnOrderlyShutdownSendsWhatPythonSends) {
  ClientOptions options = client_options();
  options.telemetry_enabled = true;
  auto service = make_service_client(ServiceClientOptions(options));
  SamplingClient sampler = run(base_sampler(*service));
  const TelemetryInfo info = service->telemetry();

  local::FaultRule refuse("asample", local::FaultKind::status);
  refuse.status = 422;  // a user error no retry layer repeats (a 400 may be a proxy's, and retried)
  refuse.on_calls = {1};
  server->set_faults({refuse});
  EXPECT_EQ(run(failing_sample(sampler)), errc::unprocessable_entity);
  EXPECT_EQ(run(missing_run(service->create_rest_client())), errc::not_found);
  // An argument carrying the API key: the event must not.
  EXPECT_EQ(run(from_bad_path(*service, "file:///" + std::string(test_api_key))), errc::invalid_argument);

  sampler = SamplingClient();
  service.reset();  // the orderly end: SESSION_END, then the queue is flushed
  wait_for_events(info, 7);
  const std::vector<json::object> events = received_events(info);
  ASSERT_EQ(events.size(), 7u);

  for (std::size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].at("event_session_index").as_int64(), static_cast<std::int64_t>(i));
    EXPECT_TRUE(std::regex_match(text_of(events[i], "event_id"), uuid4)) << text_of(events[i], "event_id");
    EXPECT_NO_THROW(parse_timestamp(text_of(events[i], "timestamp")));
  }
  EXPECT_EQ(keys_of(events[0]), envelope);
  EXPECT_EQ(text_of(events[0], "event"), "SESSION_START");
  EXPECT_EQ(text_of(events[0], "severity"), "INFO");

  expect_user_error(events[1], "tinker::errc::unprocessable_entity",
                    422);  // the sample: a public call, fatal as in Python
  expect_session_end(events[2]);
  expect_user_error(events[3], "tinker::errc::not_found", 404);  // REST: as Python's session-less client, no end

  EXPECT_EQ(keys_of(events[4]), envelope_and({"error_type", "error_message"}));
  EXPECT_EQ(text_of(events[4], "event"), "UNHANDLED_EXCEPTION");
  EXPECT_EQ(text_of(events[4], "severity"), "ERROR");
  EXPECT_EQ(text_of(events[4], "error_type"), "tinker::errc::invalid_argument");
  EXPECT_NE(text_of(events[4], "error_message").find("file:///***"), std::string::npos)
      << text_of(events[4], "error_message");
  expect_session_end(events[5]);
  expect_session_end(events[6]);  // the orderly shutdown
}

TEST_F(TelemetryTest, TelemetryOffSendsNothing) {
  auto service = make_service_client();  // client_options(): telemetry off, as with TINKER_TELEMETRY=0
  SamplingClient sampler = run(base_sampler(*service));
  EXPECT_EQ(run(from_bad_path(*service, "not-a-path")), errc::invalid_argument);
  sampler = SamplingClient();
  service.reset();
  io.restart();
  io.run_for(std::chrono::milliseconds(300));
  EXPECT_TRUE(server->telemetry_batches().empty());
  for (const auto& request : server->audit().requests) EXPECT_NE(request.path, "/api/v1/telemetry");
}

}  // namespace
}  // namespace tinker::test
