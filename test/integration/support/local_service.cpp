#include "integration/support/local_service.hpp"

#include <cstdlib>
#include <random>

namespace tinker::test {
namespace {

namespace fs = std::filesystem;

class HubCache {
 public:
  HubCache() {
    std::random_device random;
    path = fs::temp_directory_path() / ("tinker-integration-hub-" + std::to_string(random()));
    fs::create_directories(path);
    ::setenv("HF_HUB_CACHE", path.c_str(), 1);
    // A tokenizer missing from this cache is never asked of the public Hub (tests that download
    // point HF_ENDPOINT at tinker-local and lift this themselves).
    ::setenv("HF_HUB_OFFLINE", "1", 1);
  }
  ~HubCache() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  fs::path path;
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

}  // namespace tinker::test
