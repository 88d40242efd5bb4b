// The calls that close the gap to the Python SDK, through the public API against tinker-local, async and blocking:
// SamplingClient::get_base_model, RestClient::whoami, telemetry() on every client, the weights access token on the
// create-from-state path, TINKER_PROJECT_ID, and a sampler's own retry settings.
#include "client/session/holder.hpp"
#include "core/wire/base64url.hpp"
#include "integration/support/local_service.hpp"

#include <tinker/rest_client.hpp>
#include <tinker/service_client.hpp>
#include <tinker/sync/service_client.hpp>

#include <gtest/gtest.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <tuple>

namespace tinker::test {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

// A sampler on sampler weights saved by a new LoRA model: its base model is known only to the server.
asio::awaitable<SamplingClient> checkpoint_sampler(ServiceClient& service) {
  const LoraTrainingOptions options(std::string(tiny_model), 4);
  TrainingClient training = co_await service.async_create_lora_training_client(options, use_awaitable);
  const std::string name = "parity";
  const std::optional<std::int64_t> no_ttl;
  auto saving = co_await training.async_save_weights_for_sampler(name, no_ttl, use_awaitable);
  const SaveWeightsForSamplerResponse saved = co_await saving.async_get(use_awaitable);
  const SamplingSource source = SamplingSource::from_model_path(saved.path.value());
  co_return co_await service.async_create_sampling_client(source, use_awaitable);
}

asio::awaitable<std::string> base_model_of(SamplingClient sampler) {
  co_return co_await sampler.async_get_base_model(use_awaitable);
}

// One short sample; the error it ended with (at submit or in its result) and that error's diagnostics.
asio::awaitable<std::tuple<error_code, diagnostics>> try_sample(SamplingClient sampler) {
  // Named locals, no temporaries inside co_await (GCC 12, doc/architecture.md).
  diagnostics diag;
  const SamplingParams params(2);
  const std::vector<TokenId> tokens{1, 2, 3};
  const ModelInput prompt = ModelInput::from_ints(tokens);
  const SampleOptions options;
  auto [submit_ec, pending] = co_await sampler.async_sample(prompt, 1, params, options, diag, no_throw);
  if (submit_ec) co_return std::make_tuple(submit_ec, diag);
  auto [ec, response] = co_await pending.async_get(diag, no_throw);
  co_return std::make_tuple(ec, diag);
}

// ---- get_base_model ---------------------------------------------------------------------------------------------

TEST_F(LocalService, GetBaseModelOfASamplerOnABaseModelAndOnSavedWeights) {
  auto service = make_service_client();
  const SamplingClient on_base = run(base_sampler(*service));
  EXPECT_EQ(run(base_model_of(on_base)), tiny_model);
  const SamplingClient on_weights = run(checkpoint_sampler(*service));
  const auto asked_before = server->audit().requests.size();
  EXPECT_EQ(run(base_model_of(on_weights)), tiny_model);
  const auto audit = server->audit();
  const bool asked =
      std::any_of(audit.requests.begin() + static_cast<std::ptrdiff_t>(asked_before), audit.requests.end(),
                  [](const local::RequestRecord& record) { return record.path.starts_with("/api/v1/samplers/"); });
  EXPECT_TRUE(asked) << "the base model of a sampler on saved weights is the server's answer";
}

class SyncParity : public LocalService {
 protected:
  sync::ServiceClient make_sync_service(ClientOptions options) const {
    return sync::ServiceClient(ServiceClientOptions(std::move(options)));
  }
};

TEST_F(SyncParity, GetBaseModelBlocking) {
  sync::ServiceClient service = make_sync_service(client_options());
  sync::SamplingClient sampler =
      service.create_sampling_client(SamplingSource::from_base_model(std::string(tiny_model)));
  EXPECT_EQ(sampler.get_base_model(), tiny_model);
  const sync::Result<std::string> again = sampler.try_get_base_model();
  ASSERT_TRUE(again.has_value()) << again.error().message();
  EXPECT_EQ(*again, tiny_model);
}

// ---- whoami -----------------------------------------------------------------------------------------------------

class JwtParity : public SyncParity {
 protected:
  local::ServerOptions server_options() const override {
    local::ServerOptions options = fast_server_options();
    options.client_config.pjwt_auth_enabled = true;
    return options;
  }
};

asio::awaitable<WhoamiResponse> whoami_of(RestClient rest) {
  co_return co_await rest.async_whoami(use_awaitable);
}

asio::awaitable<std::tuple<error_code, WhoamiResponse>> try_whoami(RestClient rest, diagnostics& diag) {
  co_return co_await rest.async_whoami(diag, no_throw);
}

TEST_F(JwtParity, WhoamiReadsTheIdentityFromTheExchangedJwtWithoutARequestOfItsOwn) {
  auto service = make_service_client();
  const WhoamiResponse me = run(whoami_of(service->create_rest_client()));
  EXPECT_TRUE(me.user_urn.starts_with("tml:organization_user:")) << me.user_urn;
  ASSERT_TRUE(me.email.has_value());
  EXPECT_TRUE(me.email->ends_with("@tinker-local.invalid")) << *me.email;
  const auto requests = server->audit().requests.size();
  EXPECT_EQ(run(whoami_of(service->create_rest_client())), me);
  EXPECT_EQ(server->audit().requests.size(), requests) << "whoami reads the JWT the client holds";

  ClientOptions other = client_options();
  other.api_key = Secret("tml-another-user-key");
  sync::ServiceClient blocking = make_sync_service(other);
  const WhoamiResponse them = blocking.create_rest_client().whoami();
  EXPECT_NE(them.user_urn, me.user_urn) << "another key is another user";
}

TEST_F(SyncParity, WhoamiWithAPlainKeyOnAServerWithoutJwtsSaysWhy) {
  auto service = make_service_client();
  diagnostics diag;
  auto [ec, me] = run(try_whoami(service->create_rest_client(), diag));
  EXPECT_EQ(ec, errc::invalid_configuration);
  EXPECT_NE(diag.message.find("JWT auth off"), std::string::npos) << diag.message;
  EXPECT_NE(diag.message.find("plain API key"), std::string::npos) << diag.message;

  sync::ServiceClient blocking = make_sync_service(client_options());
  const sync::Result<WhoamiResponse> result = blocking.create_rest_client().try_whoami();
  ASSERT_TRUE(result.has_error());
  EXPECT_EQ(result.error().code, errc::invalid_configuration);
  EXPECT_EQ(result.error().message().find(std::string(test_api_key)), std::string::npos);
}

// A JWT issued by "passport-..." given as the API key (the server accepts it as a key: JWT auth stays off).
std::string passport_jwt() {
  return wire::base64url_encode(R"({"alg":"none","typ":"JWT"})") + "." +
         wire::base64url_encode(R"({"sub":"user:passport-42","email":"","iss":"passport-test","exp":4102444800})") +
         ".c2ln";
}

class PassportParity : public SyncParity {
 protected:
  local::ServerOptions server_options() const override {
    local::ServerOptions options = fast_server_options();
    options.api_keys = {std::string(test_api_key), passport_jwt()};
    return options;
  }
};

TEST_F(PassportParity, WhoamiReadsAPassportJwtGivenAsTheKey) {
  ClientOptions options = client_options();
  options.api_key = Secret(passport_jwt());
  sync::ServiceClient service = make_sync_service(options);
  const WhoamiResponse me = service.create_rest_client().whoami();
  EXPECT_EQ(me.user_urn, "user:passport-42");
  EXPECT_EQ(me.email, std::nullopt) << "an empty email claim is none";
}

// ---- telemetry() on every client --------------------------------------------------------------------------------

ClientOptions with_telemetry(ClientOptions options) {
  options.telemetry_enabled = true;
  return options;
}

asio::awaitable<TrainingClient> lora_model(ServiceClient& service) {
  const LoraTrainingOptions options(std::string(tiny_model), 4);
  co_return co_await service.async_create_lora_training_client(options, use_awaitable);
}

TEST_F(LocalService, EveryClientReportsTheTelemetrySessionAndProcess) {
  auto service = make_service_client(ServiceClientOptions(with_telemetry(client_options())));
  const TelemetryInfo before = service->telemetry();
  EXPECT_TRUE(before.enabled);
  EXPECT_TRUE(before.session_id.starts_with("sessionless-")) << before.session_id;
  EXPECT_EQ(before.process_uuid.size(), 36u) << before.process_uuid;

  const SamplingClient sampler = run(base_sampler(*service));
  const TelemetryInfo after = service->telemetry();
  EXPECT_EQ(after.session_id, service->session_id());
  EXPECT_EQ(after.process_uuid, before.process_uuid);
  EXPECT_EQ(sampler.telemetry(), after);
  EXPECT_EQ(service->create_rest_client().telemetry(), after);
  const TrainingClient training = run(lora_model(*service));
  EXPECT_EQ(training.telemetry(), after);

  auto off = make_service_client();  // client_options(): telemetry off, as TINKER_TELEMETRY=0
  EXPECT_EQ(off->telemetry(), TelemetryInfo());
}

TEST_F(SyncParity, BlockingClientsReportTelemetryToo) {
  sync::ServiceClient service = make_sync_service(with_telemetry(client_options()));
  sync::SamplingClient sampler =
      service.create_sampling_client(SamplingSource::from_base_model(std::string(tiny_model)));
  const TelemetryInfo info = service.telemetry();
  EXPECT_EQ(info.session_id, service.session_id());
  EXPECT_EQ(sampler.telemetry(), info);
  EXPECT_EQ(service.create_rest_client().telemetry(), info);
  EXPECT_EQ(service.create_lora_training_client(std::string(tiny_model), 4).telemetry(), info);
}

// ---- weights access token ---------------------------------------------------------------------------------------

asio::awaitable<std::string> private_checkpoint(ServiceClient& owner) {
  const LoraTrainingOptions options(std::string(tiny_model), 4);
  TrainingClient training = co_await owner.async_create_lora_training_client(options, use_awaitable);
  const std::string name = "shared-by-token";
  const SaveStateOptions save;
  auto saving = co_await training.async_save_state(name, save, use_awaitable);
  co_return (co_await saving.async_get(use_awaitable)).path;
}

asio::awaitable<std::tuple<error_code, TrainingClient>> from_state(ServiceClient& service, std::string path,
                                                                   FromStateOptions options) {
  co_return co_await service.async_create_training_client_from_state(std::move(path), std::move(options), no_throw);
}

TEST_F(SyncParity, TheWeightsAccessTokenAuthenticatesWeightsInfoAndTheLoad) {
  ClientOptions owner_options = client_options();
  owner_options.api_key = Secret("tml-checkpoint-owner-key");
  auto owner = make_service_client(ServiceClientOptions(owner_options));
  const std::string path = run(private_checkpoint(*owner));

  auto other = make_service_client();  // another user
  auto [denied, none] = run(from_state(*other, path, FromStateOptions()));
  EXPECT_EQ(denied, errc::not_found) << "weights_info with the caller's own key cannot see the checkpoint";

  FromStateOptions with_token;
  with_token.weights_access_token = owner_options.api_key.reveal();
  auto [ec, training] = run(from_state(*other, path, with_token));
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_TRUE(training.model_id().starts_with(other->session_id()));

  sync::ServiceClient blocking = make_sync_service(client_options());
  const sync::TrainingClient loaded = blocking.create_training_client_from_state(path, with_token);
  EXPECT_TRUE(loaded.valid());

  FromStateOptions bad_token;
  bad_token.weights_access_token = "not-a-key";
  const sync::Result<sync::TrainingClient> refused = blocking.try_create_training_client_from_state(path, bad_token);
  ASSERT_TRUE(refused.has_error());
  EXPECT_EQ(refused.error().code, errc::invalid_argument);
  EXPECT_NE(refused.error().diag.message.find("weights_access_token"), std::string::npos);
  EXPECT_EQ(refused.error().message().find("not-a-key"), std::string::npos) << "the token is never quoted";
}

// ---- TINKER_PROJECT_ID ------------------------------------------------------------------------------------------

TEST_F(LocalService, TinkerProjectIdIsReadWhenNoProjectIsGiven) {
  ::setenv("TINKER_PROJECT_ID", "project-from-environment", 1);
  auto from_environment = detail::ClientHolder::create(io.get_executor(), ServiceClientOptions(client_options()));
  ClientOptions explicit_project = client_options();
  explicit_project.project_id = "project-given";
  auto given = detail::ClientHolder::create(io.get_executor(), ServiceClientOptions(explicit_project));
  ::setenv("TINKER_PROJECT_ID", "", 1);
  auto empty = detail::ClientHolder::create(io.get_executor(), ServiceClientOptions(client_options()));
  ::unsetenv("TINKER_PROJECT_ID");
  EXPECT_EQ(from_environment->options().client.project_id, "project-from-environment");
  EXPECT_EQ(given->options().client.project_id, "project-given");
  EXPECT_EQ(empty->options().client.project_id, std::nullopt) << "an empty value is no project, as in Python";
}

asio::awaitable<BillingUsageResponse> usage_this_hour(RestClient rest) {
  // The previous and the current hour, so that a run crossing the hour is still covered.
  const auto hour = std::chrono::floor<std::chrono::hours>(std::chrono::system_clock::now());
  const Timestamp start = std::chrono::time_point_cast<std::chrono::microseconds>(hour - std::chrono::hours(1));
  const Timestamp end = start + std::chrono::hours(2);
  co_return co_await rest.async_get_billing_usage(start, end, use_awaitable);
}

TEST_F(LocalService, TinkerProjectIdReachesTheServerWithTheSession) {
  ::setenv("TINKER_PROJECT_ID", "project-on-the-wire", 1);
  auto service = make_service_client();
  ::unsetenv("TINKER_PROJECT_ID");
  run(checkpoint_sampler(*service));  // a session, a run and a checkpoint: billed usage of the session
  const BillingUsageResponse usage = run(usage_this_hour(service->create_rest_client()));
  const auto of_a_session = std::count_if(usage.data.begin(), usage.data.end(),
                                          [](const BillingUsageEntry& entry) { return entry.session_id.has_value(); });
  ASSERT_GT(of_a_session, 0);
  for (const BillingUsageEntry& entry : usage.data) {
    if (entry.session_id) {
      EXPECT_EQ(entry.project_id, "project-on-the-wire");
    }
  }
}

// ---- a sampler's retry settings ---------------------------------------------------------------------------------

asio::awaitable<std::tuple<error_code, diagnostics>> create_with(ServiceClient& service, SamplingRetryConfig retry) {
  diagnostics diag;
  const SamplingSource source = SamplingSource::from_base_model(std::string(tiny_model));
  auto [ec, sampler] = co_await service.async_create_sampling_client(source, std::move(retry), diag, no_throw);
  co_return std::make_tuple(ec, diag);
}

TEST_F(SyncParity, InvalidRetrySettingsFailTheCreationNamingTheField) {
  auto service = make_service_client();
  sync::ServiceClient blocking = make_sync_service(client_options());
  const SamplingSource source = SamplingSource::from_base_model(std::string(tiny_model));
  const auto expect_refused = [&](SamplingRetryConfig retry, const std::string& field) {
    auto [ec, diag] = run(create_with(*service, retry));
    EXPECT_EQ(ec, errc::invalid_argument) << field;
    EXPECT_NE(diag.message.find("SamplingRetryConfig::" + field), std::string::npos) << diag.message;
    const sync::Result<sync::SamplingClient> refused = blocking.try_create_sampling_client(source, retry);
    ASSERT_TRUE(refused.has_error()) << field;
    EXPECT_NE(refused.error().diag.message.find(field), std::string::npos) << refused.error().message();
  };
  SamplingRetryConfig retry;
  retry.max_connections = 0;
  expect_refused(retry, "max_connections");
  retry = SamplingRetryConfig();
  retry.progress_timeout = std::chrono::milliseconds(0);
  expect_refused(retry, "progress_timeout");
  retry = SamplingRetryConfig();
  retry.retry_delay_base = std::chrono::milliseconds(-1);
  expect_refused(retry, "retry_delay_base");
  retry = SamplingRetryConfig();
  retry.retry_delay_max = std::chrono::milliseconds(100);
  expect_refused(retry, "retry_delay_max");
  retry = SamplingRetryConfig();
  retry.jitter_factor = 1.5;
  expect_refused(retry, "jitter_factor");

  retry = SamplingRetryConfig();
  retry.max_connections = 1;
  retry.jitter_factor = 0;
  EXPECT_TRUE(blocking.create_sampling_client(source, retry).valid()) << "valid settings are accepted";
}

// The first poll of a sample answers 410 (the result is lost): resubmission starts a fresh attempt, unless the
// sampler's settings turned retries off.
TEST_F(LocalService, RetriesOffHandALostResultToTheCaller) {
  auto service = make_service_client();
  local::FaultRule lost("retrieve_future", local::FaultKind::status);
  lost.status = 410;
  lost.on_calls = {1};
  SamplingRetryConfig quick;
  quick.retry_delay_base = std::chrono::milliseconds(1);
  quick.retry_delay_max = std::chrono::milliseconds(5);
  const SamplingClient retrying = run(base_sampler(*service, quick));
  server->set_faults({lost});
  auto [retried, retried_diag] = run(try_sample(retrying));
  EXPECT_FALSE(retried) << retried.message() << ": " << retried_diag.message;

  SamplingRetryConfig single = quick;
  single.enable_retry_logic = false;
  const SamplingClient once = run(base_sampler(*service, single));
  server->set_faults({lost});
  auto [failed, failed_diag] = run(try_sample(once));
  EXPECT_EQ(failed, errc::gone) << failed_diag.message;
}

// Results held back longer than the progress timeout: the stuck detector fails the sample, unless the sampler's
// settings turned it off.
TEST_F(LocalService, StuckDetectionCanBeTurnedOff) {
  auto service = make_service_client();
  local::FaultRule slow("retrieve_future", local::FaultKind::delay);
  slow.delay = std::chrono::milliseconds(600);
  slow.on_calls = {1};
  SamplingRetryConfig impatient;
  impatient.progress_timeout = std::chrono::milliseconds(50);
  const SamplingClient watched = run(base_sampler(*service, impatient));
  server->set_faults({slow});
  auto [stuck, stuck_diag] = run(try_sample(watched));
  EXPECT_EQ(stuck, errc::timeout);
  EXPECT_NE(stuck_diag.message.find("No progress made in 0.05s"), std::string::npos) << stuck_diag.message;

  impatient.enable_stuck_detection = false;
  const SamplingClient patient = run(base_sampler(*service, impatient));
  server->set_faults({slow});
  auto [ec, diag] = run(try_sample(patient));
  EXPECT_FALSE(ec) << ec.message() << ": " << diag.message;
}

}  // namespace
}  // namespace tinker::test
