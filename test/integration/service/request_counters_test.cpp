// ServiceClient::counters() (doc/bench.md#request-counters): every request the client sent, as the server's arrival
// log counts them, and the retries, 429s, 5xx answers and transport errors of injected faults, one per layer that
// retries them (doc/protocol.md#retries).
#include "integration/support/local_service.hpp"
#include "integration/support/training_data.hpp"

#include <tinker/service_client.hpp>
#include <tinker/sync/service_client.hpp>

#include <gtest/gtest.h>

#include <boost/asio/use_awaitable.hpp>

namespace tinker::test {
namespace {

namespace asio = boost::asio;
using asio::use_awaitable;

asio::awaitable<TrainingClient> create_training(ServiceClient& service) {
  co_return co_await service.async_create_lora_training_client(LoraTrainingOptions(std::string(tiny_model), 4),
                                                               use_awaitable);
}

asio::awaitable<void> one_step(TrainingClient training) {
  const ForwardBackwardInput input(tiny_batch(2, 8), loss_fn::cross_entropy);
  auto gradients = co_await training.async_forward_backward(input, use_awaitable);
  const AdamParams adam(1e-3);
  auto update = co_await training.async_optim_step(adam, use_awaitable);
  co_await gradients.async_get(use_awaitable);
  co_await update.async_get(use_awaitable);
}

asio::awaitable<void> one_sample(ServiceClient& service) {
  SamplingClient sampler = co_await service.async_create_sampling_client(
      SamplingSource::from_base_model(std::string(tiny_model)), use_awaitable);
  const ModelInput prompt = ModelInput::from_ints(std::vector<TokenId>{5, 6, 7});
  const SamplingParams params(4);
  const SampleOptions options;
  auto future = co_await sampler.async_sample(prompt, 1, params, options, use_awaitable);
  co_await future.async_get(use_awaitable);
}

RequestCounters minus(const RequestCounters& after, const RequestCounters& before) {
  RequestCounters delta;
  delta.requests = after.requests - before.requests;
  delta.retries = after.retries - before.retries;
  delta.rate_limited = after.rate_limited - before.rate_limited;
  delta.server_errors = after.server_errors - before.server_errors;
  delta.transport_errors = after.transport_errors - before.transport_errors;
  return delta;
}

class RequestCountersTest : public LocalService {
 protected:
  // The faults' counters around one training step on a fresh model.
  RequestCounters step_with(const std::vector<local::FaultRule>& faults) {
    TrainingClient training = run(create_training(*service));
    const RequestCounters before = service->counters();
    server->set_faults(faults);
    run(one_step(training));
    server->set_faults({});
    return minus(service->counters(), before);
  }

  void SetUp() override {
    LocalService::SetUp();
    service = make_service_client();
  }

  std::unique_ptr<ServiceClient> service;
};

TEST_F(RequestCountersTest, EveryRequestTheServerReceivedIsCountedAndNothingElse) {
  EXPECT_EQ(service->counters().requests, 0u) << "construction sends nothing";
  run(one_sample(*service));
  TrainingClient training = run(create_training(*service));
  run(one_step(training));
  const RequestCounters counters = service->counters();
  EXPECT_EQ(counters.requests, server->audit().requests.size());
  EXPECT_EQ(counters.retries, 0u);
  EXPECT_EQ(counters.rate_limited, 0u);
  EXPECT_EQ(counters.server_errors, 0u);
  EXPECT_EQ(counters.transport_errors, 0u);
}

TEST_F(RequestCountersTest, ATransportRetryAfterA5xx) {
  const RequestCounters delta = step_with({fault_once("optim_step", local::FaultKind::status, 500)});
  EXPECT_EQ(delta.server_errors, 1u);
  EXPECT_EQ(delta.retries, 1u);
  EXPECT_EQ(delta.transport_errors, 0u);
}

TEST_F(RequestCountersTest, AConnectionResetIsATransportErrorAndARetry) {
  const RequestCounters delta = step_with({fault_once("forward_backward", local::FaultKind::reset_before)});
  EXPECT_EQ(delta.transport_errors, 1u);
  EXPECT_EQ(delta.retries, 1u);
  EXPECT_EQ(delta.server_errors, 0u);
}

TEST_F(RequestCountersTest, APollAfterAFailedPollIsARetry) {
  const RequestCounters delta = step_with({fault_once("retrieve_future", local::FaultKind::status, 503)});
  EXPECT_EQ(delta.server_errors, 1u);
  EXPECT_EQ(delta.retries, 1u);
}

TEST_F(RequestCountersTest, APollAskedAgainAfterAnUnreadableAnswerIsARetry) {
  const RequestCounters delta = step_with({fault_once("retrieve_future", local::FaultKind::malformed_json)});
  EXPECT_EQ(delta.retries, 1u);
  EXPECT_EQ(delta.server_errors, 0u);
  EXPECT_EQ(delta.transport_errors, 0u);
}

TEST_F(RequestCountersTest, ASampleResentAfterBackpressureCountsThe429AndTheRetry) {
  run(one_sample(*service));  // bootstrap first, so only the sample's own requests follow
  const RequestCounters before = service->counters();
  server->set_faults({fault_once("asample", local::FaultKind::status, 429)});
  run(one_sample(*service));
  const RequestCounters delta = minus(service->counters(), before);
  EXPECT_EQ(delta.rate_limited, 1u);
  EXPECT_EQ(delta.retries, 1u);
  EXPECT_EQ(delta.server_errors, 0u);
}

TEST_F(RequestCountersTest, TheBlockingFacadeReadsTheSameCounters) {
  sync::ServiceClient blocking{ServiceClientOptions(client_options())};
  EXPECT_EQ(blocking.counters().requests, 0u);
  blocking.get_server_capabilities();
  EXPECT_EQ(blocking.counters().requests, server->audit().requests.size());
}

}  // namespace
}  // namespace tinker::test
