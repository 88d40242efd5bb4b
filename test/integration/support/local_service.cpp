#include "integration/support/local_service.hpp"
#include "support/temp_files.hpp"

#include <cstdlib>

namespace tinker::test {
namespace {

namespace fs = std::filesystem;

class HubCache {
 public:
  HubCache() {
    ::setenv("HF_HUB_CACHE", path.c_str(), 1);
    // A tokenizer missing from this cache is never asked of the public Hub (tests that download
    // point HF_ENDPOINT at tinker-local and lift this themselves).
    ::setenv("HF_HUB_OFFLINE", "1", 1);
  }
  const TempDir directory{"tinker-integration-hub"};
  const fs::path path = directory.path();
};

}  // namespace

const fs::path& shared_hf_hub_cache() {
  static const HubCache cache;
  return cache.path;
}

local::ServerOptions fast_server_options() {
  local::ServerOptions options;
  options.hf_hub_cache = shared_hf_hub_cache();
  options.long_poll_hold = std::chrono::milliseconds(200);
  options.log_level = LogLevel::off;
  return options;
}

void LocalService::start_server(local::ServerOptions options) {
  if (server) server->stop();
  server = std::make_unique<local::Server>(std::move(options));
  server->start();
}

void LocalService::SetUp() {
  start_server(server_options());
}

void LocalService::TearDown() {
  // Clients are destroyed by the tests before this; drain what they posted while stopping.
  io.run_for(std::chrono::milliseconds(10));
  if (server) server->stop();
}

ClientOptions LocalService::client_options() const {
  ClientOptions options(server->base_url(), Secret(std::string(test_api_key)));
  options.log_level = LogLevel::off;
  options.telemetry_enabled = false;
  return options;
}

std::unique_ptr<ServiceClient> LocalService::make_service_client() {
  return make_service_client(ServiceClientOptions(client_options()));
}

std::unique_ptr<ServiceClient> LocalService::make_service_client(ServiceClientOptions options) {
  return std::make_unique<ServiceClient>(io.get_executor(), std::move(options));
}

local::FaultRule fault_once(const char* endpoint, local::FaultKind kind, int status) {
  local::FaultRule rule(endpoint, kind);
  rule.status = status;
  rule.on_calls = {1};
  rule.retry_after = local::RetryAfterForm::milliseconds;
  rule.retry_after_value = std::chrono::milliseconds(1);
  return rule;
}

// Named locals, no temporaries inside co_await (GCC 12, doc/architecture.md).
boost::asio::awaitable<SamplingClient> base_sampler(ServiceClient& service, SamplingRetryConfig retry) {
  const SamplingSource source = SamplingSource::from_base_model(std::string(tiny_model));
  co_return co_await service.async_create_sampling_client(source, std::move(retry), use_awaitable);
}

}  // namespace tinker::test
