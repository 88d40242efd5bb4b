// The fixture of every integration test: tinker-local started in-process on an ephemeral
// loopback port, and an io_context (run on the test's thread) for the SDK's clients.
//
// The Hugging Face hub cache where the server installs its tokenizer is one temporary directory
// per test process (trained once, reused); HF_HUB_CACHE points the SDK at it.
#pragma once

#include <tinker/local/server.hpp>
#include <tinker/service_client.hpp>

#include <gtest/gtest.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <chrono>
#include <filesystem>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tinker::test {

inline constexpr std::string_view test_api_key = "tml-integration-test-key";
inline constexpr std::string_view tiny_model = "tinker-local/tiny-lm";

/// The per-process hub cache (created on first use, removed at exit); also exported as
/// HF_HUB_CACHE so the SDK finds the tokenizer there, with HF_HUB_OFFLINE=1.
const std::filesystem::path& shared_hf_hub_cache();

/// Ephemeral port, the shared hub cache, a 200 ms long-poll hold, quiet logging.
local::ServerOptions fast_server_options();

/// The token of a co_await that must not throw: the error code comes back with the value.
inline constexpr auto no_throw = boost::asio::as_tuple(tinker::use_awaitable);

/// A fault injected on the first call of `endpoint` only, answered with a Retry-After of 1 ms so
/// the client's transport retry takes that hint instead of its half-second back-off.
local::FaultRule fault_once(const char* endpoint, local::FaultKind kind, int status = 500);

/// A sampling client on the tiny base model.
boost::asio::awaitable<SamplingClient> base_sampler(ServiceClient& service, SamplingRetryConfig retry = {});

/// Runs `io` until `future` is ready or `timeout` passes (then throws std::runtime_error, so a
/// hung test fails instead of blocking the run).
template <class T>
T run_until_ready(boost::asio::io_context& io, std::future<T>& future,
                  std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (future.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("integration test timed out");
    io.run_one_for(std::chrono::milliseconds(50));
  }
  return future.get();
}

class LocalService : public ::testing::Test {
 protected:
  /// (Re)starts the server with `options`; SetUp starts it with server_options().
  void start_server(local::ServerOptions options);
  void SetUp() override;
  void TearDown() override;

  /// Client options aimed at the server, with the test key and quiet logging.
  ClientOptions client_options() const;
  /// A ServiceClient on `io` with client_options().
  std::unique_ptr<ServiceClient> make_service_client();
  std::unique_ptr<ServiceClient> make_service_client(ServiceClientOptions options);

  /// Runs a coroutine on `io` to completion and returns its value (rethrows its exception).
  template <class T>
  T run(boost::asio::awaitable<T> coroutine, std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
    auto future = boost::asio::co_spawn(io, std::move(coroutine), boost::asio::use_future);
    return run_until_ready(io, future, timeout);
  }

  /// Override to start with other server options (called by SetUp).
  virtual local::ServerOptions server_options() const { return fast_server_options(); }

  boost::asio::io_context io;
  std::unique_ptr<local::Server> server;
};

}  // namespace tinker::test
