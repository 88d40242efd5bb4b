// The stored credentials against tinker-local (doc/service.md#stored-credentials): a client made
// from an environment holding only HOME (and the server's URL) authenticates with the file's
// default key; and ServiceClient::async_check_access, async and blocking, reports a refused key
// and a billing hold at once with exactly one request.
#include "integration/sync/sync_support.hpp"
#include "support/temp_files.hpp"

#include <tinker/credentials.hpp>

#include <gtest/gtest.h>

#include <boost/asio/use_future.hpp>

#include <chrono>
#include <map>

namespace tinker::test {
namespace {

constexpr std::string_view integration_stored_key = "tml-stored-integration-key";
constexpr std::string_view integration_refused_key = "tml-refused-integration-key";

class StoredCredentials : public SyncService {
 protected:
  local::ServerOptions server_options() const override {
    local::ServerOptions options = fast_server_options();
    options.api_keys = {std::string(test_api_key), std::string(integration_stored_key)};
    return options;
  }

  ClientOptions::EnvLookup environment(std::map<std::string, std::string> extra = {}) const {
    std::map<std::string, std::string> variables = {{"HOME", home.path().string()},
                                                    {"TINKER_BASE_URL", server->base_url()},
                                                    {"TINKER_LOG", "off"},
                                                    {"TINKER_TELEMETRY", "0"}};
    for (auto& [name, value] : extra) variables[name] = value;
    return [variables = std::move(variables)](std::string_view name) -> std::optional<std::string> {
      const auto it = variables.find(std::string(name));
      if (it == variables.end()) return std::nullopt;
      return it->second;
    };
  }

  void store_default(std::string_view key) const {
    CredentialStore store;
    store.put(StoredCredential("manual-test", Secret(std::string(key)), "test"), true);
    store.save(*CredentialStore::default_path(environment()));
  }

  std::size_t capability_requests() const {
    std::size_t count = 0;
    for (const local::RequestRecord& record : server->audit().requests) {
      if (record.path.ends_with("/get_server_capabilities")) ++count;
    }
    return count;
  }

  ClientOptions options_with_key(std::string_view key) const {
    ClientOptions options = client_options();
    options.api_key = Secret(std::string(key));
    return options;
  }

  TempDir home{"tinker-home"};
};

TEST_F(StoredCredentials, AClientFromTheEnvironmentUsesTheStoredDefaultKey) {
  store_default(integration_stored_key);
  const ClientOptions options = ClientOptions::from_environment(environment());
  ASSERT_EQ(options.api_key, Secret(std::string(integration_stored_key)));
  sync::ServiceClient service{ServiceClientOptions(options)};
  sync::TrainingClient training = service.create_lora_training_client(std::string(tiny_model), 4);
  EXPECT_FALSE(training.model_id().empty());
  EXPECT_NO_THROW(service.check_access());
}

TEST_F(StoredCredentials, TheEnvironmentKeyWinsOverTheStoredOne) {
  store_default(integration_stored_key);
  const ClientOptions options =
      ClientOptions::from_environment(environment({{"TINKER_API_KEY", std::string(integration_refused_key)}}));
  sync::ServiceClient service{ServiceClientOptions(options)};
  const sync::Result<GetServerCapabilitiesResponse> access = service.try_check_access();
  ASSERT_TRUE(access.has_error());
  EXPECT_EQ(access.error().code, make_error_code(errc::authentication_failed));
  EXPECT_EQ(access.error().message().find(integration_refused_key), std::string::npos);
}

TEST_F(StoredCredentials, CheckAccessAsyncAcceptsAGoodKeyAndRefusesAnotherAtOnce) {
  auto good = make_service_client(ServiceClientOptions(options_with_key(integration_stored_key)));
  auto accepted = good->async_check_access(boost::asio::use_future);
  const GetServerCapabilitiesResponse capabilities = run_until_ready(io, accepted);
  EXPECT_FALSE(capabilities.supported_models.empty());

  auto bad = make_service_client(ServiceClientOptions(options_with_key(integration_refused_key)));
  diagnostics diag;
  auto refused = bad->async_check_access(diag, boost::asio::use_future);
  try {
    run_until_ready(io, refused);
    ADD_FAILURE() << "a refused key was accepted";
  } catch (const boost::system::system_error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::authentication_failed));
  }
  EXPECT_EQ(diag.http_status, 401);
  EXPECT_EQ(diag.message.find(integration_refused_key), std::string::npos);
}

TEST_F(StoredCredentials, ABillingHoldIsReportedAfterOneRequestAsyncAndBlocking) {
  local::FaultRule hold("get_server_capabilities", local::FaultKind::status);
  hold.status = 402;
  hold.probability = 1.0;  // every call
  server->set_faults({hold});

  const std::size_t before = capability_requests();
  auto service = make_service_client(ServiceClientOptions(options_with_key(integration_stored_key)));
  const auto started = std::chrono::steady_clock::now();
  auto check = service->async_check_access(boost::asio::use_future);
  try {
    run_until_ready(io, check, std::chrono::seconds(10));
    ADD_FAILURE() << "a 402 was not reported";
  } catch (const boost::system::system_error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::payment_required));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
  EXPECT_EQ(capability_requests(), before + 1);

  sync::ServiceClient blocking{ServiceClientOptions(options_with_key(integration_stored_key))};
  const sync::Result<GetServerCapabilitiesResponse> access = blocking.try_check_access();
  ASSERT_TRUE(access.has_error());
  EXPECT_EQ(access.error().code, make_error_code(errc::payment_required));
  EXPECT_EQ(capability_requests(), before + 2);
}

}  // namespace
}  // namespace tinker::test
