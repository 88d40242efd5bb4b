// The client holder against in-process tinker-local: bootstrap order and single flight, JWT
// mode (exchange, use, refresh), credential command, heartbeat with its failure warning and
// recovery line, telemetry, shutdown leaving nothing on the io_context, and the session-less
// public calls (get_server_capabilities, weights_info, get_sampler).
#include "client/session/holder.hpp"
#include "integration/support/local_service.hpp"

#include <tinker/rest_client.hpp>
#include <tinker/service_client.hpp>

#include <gtest/gtest.h>

#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <vector>

namespace tinker::test {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using detail::ClientHolder;
using std::chrono::milliseconds;

class LogLine {
 public:
  LogLine(LogLevel level_, std::string text_) : level(level_), text(std::move(text_)) {}
  LogLevel level;
  std::string text;
};

asio::awaitable<error_code> ensure_session_of(std::shared_ptr<ClientHolder> holder) {
  diagnostics diag;
  const error_code ec = co_await holder->ensure_session(diag);
  if (ec) ADD_FAILURE() << "ensure_session: " << ec.message() << ": " << diag.message;
  co_return ec;
}

asio::awaitable<std::tuple<error_code, std::string>> ensure_config_of(std::shared_ptr<ClientHolder> holder) {
  diagnostics diag;
  const error_code ec = co_await holder->ensure_config(diag);
  co_return std::make_tuple(ec, diag.message);
}

asio::awaitable<int> two_concurrent_bootstraps(std::shared_ptr<ClientHolder> holder) {
  auto executor = co_await asio::this_coro::executor;
  auto first = asio::co_spawn(executor, ensure_session_of(holder), asio::use_awaitable);
  auto second = asio::co_spawn(executor, ensure_session_of(holder), asio::use_awaitable);
  const error_code a = co_await std::move(first);
  const error_code b = co_await std::move(second);
  co_return (a ? 1 : 0) + (b ? 1 : 0);
}

std::vector<std::string> paths_of(const local::AuditReport& audit) {
  std::vector<std::string> paths;
  for (const auto& record : audit.requests) paths.push_back(record.path);
  return paths;
}

std::size_t count_of(const local::AuditReport& audit, std::string_view path) {
  return static_cast<std::size_t>(std::count_if(audit.requests.begin(), audit.requests.end(),
                                                [&](const local::RequestRecord& r) { return r.path == path; }));
}

class HolderTest : public LocalService {
 protected:
  std::shared_ptr<ClientHolder> make_holder(ClientOptions client, LogLevel level = LogLevel::debug) {
    client.log_level = level;
    ServiceClientOptions options(std::move(client));
    options.log = [this](LogLevel l, std::string_view text) { lines.emplace_back(l, std::string(text)); };
    return ClientHolder::create(io.get_executor(), std::move(options));
  }
  std::shared_ptr<ClientHolder> make_holder() { return make_holder(client_options()); }

  void run_for(milliseconds duration) {
    const auto until = std::chrono::steady_clock::now() + duration;
    while (std::chrono::steady_clock::now() < until) io.run_one_for(milliseconds(5));
  }

  bool logged(LogLevel level, std::string_view needle) const {
    return std::any_of(lines.begin(), lines.end(), [&](const LogLine& line) {
      return line.level == level && line.text.find(needle) != std::string::npos;
    });
  }

  // Shuts `holder` down, drops it, and checks that the io_context then runs out of work.
  void expect_nothing_left_running(std::shared_ptr<ClientHolder> holder) {
    holder->shutdown();
    holder.reset();
    io.restart();
    const auto start = std::chrono::steady_clock::now();
    io.run_for(std::chrono::seconds(10));
    EXPECT_TRUE(io.stopped()) << "work was still queued 10 s after shutdown";
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(6));
  }

  std::vector<LogLine> lines;
};

TEST_F(HolderTest, BootstrapOrderIsConfigDynamicConfigSessionAndConcurrentCallersShareIt) {
  auto holder = make_holder();
  EXPECT_EQ(run(two_concurrent_bootstraps(holder)), 0);
  EXPECT_FALSE(holder->session_id().empty());
  const auto audit = server->audit();
  const std::vector<std::string> expected = {"/api/v1/client/config", "/api/v1/client/dynamic_config",
                                             "/api/v1/create_session"};
  EXPECT_EQ(paths_of(audit), expected);
  EXPECT_EQ(audit.requests.at(0).content_type, "application/json");
  EXPECT_FALSE(audit.requests.at(2).idempotency_key.empty());
  EXPECT_EQ(holder->next_model_seq_id(), 0);
  EXPECT_EQ(holder->next_model_seq_id(), 1);
  EXPECT_EQ(holder->next_sampling_seq_id(), 0);
  // Already bootstrapped: no further request.
  EXPECT_FALSE(run(ensure_session_of(holder)));
  EXPECT_EQ(server->audit().requests.size(), 3u);
  expect_nothing_left_running(std::move(holder));
}

TEST_F(HolderTest, WithoutDynamicConfigTheDefaultsApply) {
  local::ServerOptions options = fast_server_options();
  options.client_config.dynamic_config_enabled = false;  // 404
  start_server(options);
  auto holder = make_holder();
  EXPECT_FALSE(run(ensure_session_of(holder)));
  EXPECT_EQ(count_of(server->audit(), "/api/v1/client/dynamic_config"), 1u);  // 404 is not retried
  expect_nothing_left_running(std::move(holder));
}

TEST_F(HolderTest, AFailedBootstrapIsRetriedByTheNextCaller) {
  local::FaultRule refuse("client/config", local::FaultKind::status);
  refuse.status = 403;  // not retryable
  refuse.probability = 1.0;
  refuse.max_fires = 1;
  server->set_faults({refuse});
  auto holder = make_holder();
  auto [ec, message] = run(ensure_config_of(holder));
  EXPECT_EQ(ec, make_error_code(errc::permission_denied));
  EXPECT_EQ(message.find(test_api_key), std::string::npos);
  std::tie(ec, message) = run(ensure_config_of(holder));
  EXPECT_FALSE(ec) << message;
  EXPECT_EQ(count_of(server->audit(), "/api/v1/client/config"), 2u);
  expect_nothing_left_running(std::move(holder));
}

class JwtHolderTest : public HolderTest {
 protected:
  local::ServerOptions server_options() const override {
    local::ServerOptions options = fast_server_options();
    options.client_config.pjwt_auth_enabled = true;
    return options;
  }
};

TEST_F(JwtHolderTest, TheJwtIsExchangedAndUsedForEveryLaterRequest) {
  auto holder = make_holder();
  EXPECT_FALSE(run(ensure_session_of(holder)));
  const std::vector<std::string> expected = {"/api/v1/client/config", "/api/v1/auth/token",
                                             "/api/v1/client/dynamic_config", "/api/v1/create_session"};
  EXPECT_EQ(paths_of(server->audit()), expected);
  // The server's JWTs live an hour; the raw API key never expires. Once the server's clock has
  // passed the JWT's expiry, a request fails: it carried the JWT, not the key.
  server->advance_clock(std::chrono::hours(2));
  diagnostics diag;
  auto future = RestClient(holder).async_get_sampler("no-such-sampler", diag, asio::use_future);
  try {
    run_until_ready(io, future);
    ADD_FAILURE() << "expected a failure";
  } catch (const boost::system::system_error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::authentication_failed)) << diag.message;
  }
  expect_nothing_left_running(std::move(holder));
}

TEST_F(JwtHolderTest, TheRefreshLoopFetchesANewJwtBeforeExpiry) {
  auto holder = make_holder();
  ClientHolder::Timing timing;
  timing.jwt_refresh_lead = std::chrono::seconds(3600) - milliseconds(1500);  // due in ~1.5 s
  holder->set_timing(timing);
  EXPECT_FALSE(std::get<0>(run(ensure_config_of(holder))));
  EXPECT_EQ(count_of(server->audit(), "/api/v1/auth/token"), 1u);
  run_for(milliseconds(2500));
  EXPECT_GE(count_of(server->audit(), "/api/v1/auth/token"), 2u);
  expect_nothing_left_running(std::move(holder));
}

TEST_F(JwtHolderTest, ACredentialCommandAloneAuthenticatesTheExchange) {
  ClientOptions options = client_options();
  options.api_key = Secret();
  options.credential_command = "printf '%s\\n' tml-from-the-command";
  auto holder = make_holder(options);
  auto [ec, message] = run(ensure_config_of(holder));
  EXPECT_FALSE(ec) << message;
  EXPECT_EQ(count_of(server->audit(), "/api/v1/auth/token"), 1u);
  expect_nothing_left_running(std::move(holder));
}

TEST_F(HolderTest, ACredentialCommandAloneIsRefusedWhenTheServerUsesNoJwts) {
  ClientOptions options = client_options();
  options.api_key = Secret();
  options.credential_command = "printf tml-from-the-command";
  auto holder = make_holder(options);
  auto [ec, message] = run(ensure_config_of(holder));
  EXPECT_EQ(ec, make_error_code(errc::invalid_configuration));
  EXPECT_NE(message.find("no API key"), std::string::npos) << message;
  expect_nothing_left_running(std::move(holder));
}

TEST_F(HolderTest, CreateChecksTheKeyWithoutQuotingIt) {
  ClientOptions bad = client_options();
  bad.api_key = Secret("sk-not-a-tinker-key-123456");
  try {
    make_holder(bad);
    ADD_FAILURE() << "expected a configuration error";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_configuration));
    EXPECT_EQ(std::string(e.what()).find("sk-not-a-tinker-key-123456"), std::string::npos) << e.what();
  }
  ClientOptions none = client_options();
  none.api_key = Secret();
  EXPECT_THROW(make_holder(none), error);
}

TEST_F(HolderTest, HeartbeatsArriveAndFailuresWarnThenRecover) {
  auto holder = make_holder();
  ClientHolder::Timing timing;
  timing.heartbeat_interval = milliseconds(40);
  timing.heartbeat_warning_after = milliseconds(200);
  holder->set_timing(timing);
  EXPECT_FALSE(run(ensure_session_of(holder)));
  run_for(milliseconds(300));
  EXPECT_GE(count_of(server->audit(), "/api/v1/session_heartbeat"), 3u);
  EXPECT_FALSE(logged(LogLevel::warning, "heartbeat"));

  local::FaultRule failing("session_heartbeat", local::FaultKind::status);
  failing.status = 503;
  failing.probability = 1.0;
  server->set_faults({failing});
  run_for(milliseconds(500));
  EXPECT_TRUE(logged(LogLevel::warning, "session heartbeat failing")) << lines.size();
  EXPECT_FALSE(logged(LogLevel::info, "recovered"));

  server->set_faults({});
  run_for(milliseconds(200));
  EXPECT_TRUE(logged(LogLevel::info, "session heartbeat recovered"));
  for (const auto& line : lines) EXPECT_EQ(line.text.find(test_api_key), std::string::npos) << line.text;
  const std::size_t before = count_of(server->audit(), "/api/v1/session_heartbeat");
  expect_nothing_left_running(std::move(holder));
  EXPECT_LE(count_of(server->audit(), "/api/v1/session_heartbeat"), before + 1);
}

TEST_F(HolderTest, TheDynamicConfigIsRefreshedInTheBackgroundAndFailuresKeepTheLastOne) {
  local::ServerOptions options = fast_server_options();
  options.client_config.dynamic_refresh_interval_sec = 0;  // the client's minimum interval applies
  start_server(options);
  auto holder = make_holder();
  ClientHolder::Timing timing;
  timing.dynamic_config_min_interval = milliseconds(50);
  holder->set_timing(timing);
  EXPECT_FALSE(run(ensure_session_of(holder)));
  run_for(milliseconds(300));
  const std::size_t fetched = count_of(server->audit(), "/api/v1/client/dynamic_config");
  EXPECT_GE(fetched, 3u);

  local::FaultRule failing("client/dynamic_config", local::FaultKind::status);
  failing.status = 503;
  failing.probability = 1.0;
  server->set_faults({failing});
  run_for(milliseconds(200));
  EXPECT_GT(count_of(server->audit(), "/api/v1/client/dynamic_config"), fetched) << "the loop goes on after failures";
  expect_nothing_left_running(std::move(holder));
}

TEST_F(HolderTest, ShutdownEndsAHeartbeatInFlight) {
  auto holder = make_holder();
  ClientHolder::Timing timing;
  timing.heartbeat_interval = milliseconds(20);
  holder->set_timing(timing);
  EXPECT_FALSE(run(ensure_session_of(holder)));
  local::FaultRule slow("session_heartbeat", local::FaultKind::delay);
  slow.delay = milliseconds(8000);
  slow.probability = 1.0;
  server->set_faults({slow});
  run_for(milliseconds(100));  // a heartbeat is now held by the server
  expect_nothing_left_running(std::move(holder));
}

TEST_F(HolderTest, TelemetrySendsSessionStartAndFlushesErrorsAtOnce) {
  ClientOptions options = client_options();
  options.telemetry_enabled = true;
  auto holder = make_holder(options);
  ClientHolder::Timing timing;
  timing.telemetry_flush_interval = milliseconds(100);
  holder->set_timing(timing);
  EXPECT_FALSE(run(ensure_session_of(holder)));
  run_for(milliseconds(300));
  EXPECT_EQ(count_of(server->audit(), "/api/v1/telemetry"), 1u);  // SESSION_START

  timing.telemetry_flush_interval = std::chrono::minutes(10);
  holder->set_timing(timing);
  run_for(milliseconds(150));  // the loop is now sleeping for 10 minutes
  TelemetryEvent failure(TelemetryEventKind::generic_event, std::string(), 0, Severity::error, Timestamp{});
  failure.event_name = "test.error";
  holder->telemetry(failure);
  run_for(milliseconds(300));
  EXPECT_EQ(count_of(server->audit(), "/api/v1/telemetry"), 2u);

  // Queued at shutdown: sent once more, then nothing is left running.
  TelemetryEvent info(TelemetryEventKind::generic_event, std::string(), 0, Severity::info, Timestamp{});
  info.event_name = "test.info";
  holder->telemetry(info);
  expect_nothing_left_running(std::move(holder));
  EXPECT_EQ(count_of(server->audit(), "/api/v1/telemetry"), 3u);
}

TEST_F(HolderTest, TelemetryOffSendsNothing) {
  auto holder = make_holder();  // client_options() turns telemetry off (TINKER_TELEMETRY=0)
  EXPECT_FALSE(run(ensure_session_of(holder)));
  TelemetryEvent failure(TelemetryEventKind::generic_event, std::string(), 0, Severity::error, Timestamp{});
  holder->telemetry(failure);
  run_for(milliseconds(200));
  EXPECT_EQ(count_of(server->audit(), "/api/v1/telemetry"), 0u);
  expect_nothing_left_running(std::move(holder));
}

TEST_F(HolderTest, ServerCapabilitiesThroughThePublicApiNeedNoSession) {
  auto service = make_service_client();
  auto future = service->async_get_server_capabilities(asio::use_future);
  const GetServerCapabilitiesResponse capabilities = run_until_ready(io, future);
  const bool has_tiny = std::any_of(capabilities.supported_models.begin(), capabilities.supported_models.end(),
                                    [](const SupportedModel& m) { return m.model_name == tiny_model; });
  EXPECT_TRUE(has_tiny);
  EXPECT_EQ(count_of(server->audit(), "/api/v1/create_session"), 0u);
  EXPECT_TRUE(service->session_id().empty());
}

asio::awaitable<std::string> saved_checkpoint(ServiceClient& service) {
  const LoraTrainingOptions options(std::string(tiny_model), 4);
  TrainingClient training = co_await service.async_create_lora_training_client(options, use_awaitable);
  const SaveStateOptions save_options;
  auto saving = co_await training.async_save_state("holder-test", save_options, use_awaitable);
  co_return (co_await saving.async_get(use_awaitable)).path;
}

TEST_F(HolderTest, WeightsInfoThroughThePublicApi) {
  auto service = make_service_client();
  const std::string path = run(saved_checkpoint(*service));
  RestClient rest = service->create_rest_client();
  auto info_future = rest.async_get_weights_info(path, asio::use_future);
  const WeightsInfoResponse info = run_until_ready(io, info_future);
  EXPECT_EQ(info.base_model, tiny_model);
  EXPECT_TRUE(info.is_lora);
  EXPECT_EQ(info.lora_rank, 4);

  diagnostics diag;
  auto missing = rest.async_get_weights_info("tinker://nobody:train:0/weights/none", diag, asio::use_future);
  try {
    run_until_ready(io, missing);
    ADD_FAILURE() << "expected a failure";
  } catch (const boost::system::system_error& e) {
    EXPECT_TRUE(e.code() == errc::not_found || e.code() == errc::bad_request) << e.code().message();
    EXPECT_NE(diag.http_status, 0);
  }
}

}  // namespace
}  // namespace tinker::test
