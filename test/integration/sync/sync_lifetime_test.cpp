// Lifetimes: sync objects share the runtime (io thread), the last one shuts it down, and a
// Future that outlives them all fails cleanly instead of hanging.
#include "integration/sync/sync_support.hpp"

#include <boost/asio/post.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>

namespace tinker::test {
namespace {

using SyncLifetime = SyncService;
using Clock = std::chrono::steady_clock;

TEST_F(SyncLifetime, TrainingClientOutlivesItsServiceClient) {
  std::optional<sync::TrainingClient> training;
  std::optional<sync::SamplingClient> sampler;
  {
    sync::ServiceClient service = make_sync_service();
    training = service.create_lora_training_client(std::string(tiny_model), 4);
    sampler = service.create_sampling_client(SamplingSource::from_base_model(std::string(tiny_model)));
  }
  // The io thread still runs for them.
  EXPECT_EQ(training->forward_backward(tiny_cross_entropy_input()).get().loss_fn_outputs.size(), tiny_batch().size());
  training->optim_step(AdamParams(1e-3)).get();
  EXPECT_EQ(sampler->compute_logprobs(ModelInput::from_ints({1, 2, 3})).get().size(), 3u);

  // The last one shuts down (client on its thread, then stop and join) without hanging.
  training.reset();
  const auto start = Clock::now();
  sampler.reset();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
}

TEST_F(SyncLifetime, FutureOutlivingEveryClientFailsCleanly) {
  Future<ForwardBackwardOutput> pending;
  {
    sync::ServiceClient service = make_sync_service();
    sync::TrainingClient training = service.create_lora_training_client(std::string(tiny_model), 4);
    pending = training.forward_backward(tiny_cross_entropy_input());
  }
  // The runtime is gone: either the result had already arrived, or the poll was stopped and get()
  // says so. It must not wait (errc::timeout would mean a hang).
  try {
    ForwardBackwardOutput output = pending.get(std::chrono::seconds(10));
    EXPECT_EQ(output.loss_fn_outputs.size(), tiny_batch().size());
  } catch (const error& e) {
    EXPECT_NE(e.code(), errc::timeout) << e.what();
  }
}

TEST_F(SyncLifetime, LastHandleReleasedOnTheIoThreadShutsDownWithoutJoiningItself) {
  std::optional<sync::TrainingClient> training;
  boost::asio::any_io_executor executor;
  {
    sync::ServiceClient service = make_sync_service();
    training = service.create_lora_training_client(std::string(tiny_model), 4);
    executor = service.executor();
  }
  std::promise<void> released;
  auto released_future = released.get_future();
  // The handler holds the last sync object and drops it on the io thread.
  boost::asio::post(executor, [last = std::move(*training), &released]() mutable {
    last = sync::TrainingClient();
    released.set_value();
  });
  training.reset();
  EXPECT_TRUE(ready_within(released_future)) << "the runtime hung shutting down on its own thread";
}

TEST_F(SyncLifetime, ServiceClientFromTheEnvironment) {
  auto set = [](const char* name, const std::string& value) { ::setenv(name, value.c_str(), 1); };
  set("TINKER_API_KEY", std::string(test_api_key));
  set("TINKER_BASE_URL", server->base_url());
  set("TINKER_TELEMETRY", "0");
  set("TINKER_LOG", "off");
  std::optional<GetServerCapabilitiesResponse> capabilities;
  try {
    sync::ServiceClient service;
    capabilities = service.get_server_capabilities();
  } catch (...) {
    for (const char* name : {"TINKER_API_KEY", "TINKER_BASE_URL", "TINKER_TELEMETRY", "TINKER_LOG"}) ::unsetenv(name);
    throw;
  }
  for (const char* name : {"TINKER_API_KEY", "TINKER_BASE_URL", "TINKER_TELEMETRY", "TINKER_LOG"}) ::unsetenv(name);
  ASSERT_TRUE(capabilities.has_value());
  bool has_tiny = false;
  for (const auto& model : capabilities->supported_models) has_tiny = has_tiny || model.model_name == tiny_model;
  EXPECT_TRUE(has_tiny);
}

}  // namespace
}  // namespace tinker::test
