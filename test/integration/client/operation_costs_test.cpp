// FutureStatus::encode_time, body_bytes and submit_time (doc/bench.md#operation-costs): filled for the training
// operations, chunked forward_backward included, and for sample/compute_logprobs; the bytes are exactly those of the
// bodies sent (the public codecs give them), every re-sent attempt counted.
#include "integration/support/local_service.hpp"
#include "integration/support/training_data.hpp"

#include <tinker/codec.hpp>
#include <tinker/service_client.hpp>

#include <gtest/gtest.h>

#include <boost/asio/use_awaitable.hpp>

namespace tinker::test {
namespace {

namespace asio = boost::asio;
using asio::use_awaitable;
using Clock = std::chrono::steady_clock;

// A status and how long the caller waited from the call until it held the future.
template <class T>
class Submitted {
 public:
  Future<T> future;
  Clock::duration observed{};
};

asio::awaitable<TrainingClient> create_training(ServiceClient& service) {
  co_return co_await service.async_create_lora_training_client(LoraTrainingOptions(std::string(tiny_model), 4),
                                                               use_awaitable);
}

asio::awaitable<Submitted<ForwardBackwardOutput>> forward_backward(TrainingClient training, std::vector<Datum> batch) {
  Submitted<ForwardBackwardOutput> submitted;
  const ForwardBackwardInput input(std::move(batch), loss_fn::cross_entropy);
  const auto called = Clock::now();
  submitted.future = co_await training.async_forward_backward(input, use_awaitable);
  submitted.observed = Clock::now() - called;
  co_await submitted.future.async_get(use_awaitable);
  co_return submitted;
}

asio::awaitable<Submitted<OptimStepResponse>> optim_step(TrainingClient training, AdamParams adam) {
  Submitted<OptimStepResponse> submitted;
  const auto called = Clock::now();
  submitted.future = co_await training.async_optim_step(adam, use_awaitable);
  submitted.observed = Clock::now() - called;
  co_await submitted.future.async_get(use_awaitable);
  co_return submitted;
}

asio::awaitable<Submitted<SampleResponse>> sample(SamplingClient sampler, ModelInput prompt, SamplingParams params) {
  Submitted<SampleResponse> submitted;
  const SampleOptions options;
  const auto called = Clock::now();
  submitted.future = co_await sampler.async_sample(prompt, 2, params, options, use_awaitable);
  submitted.observed = Clock::now() - called;
  co_await submitted.future.async_get(use_awaitable);
  co_return submitted;
}

// The figures every measured future shows once accepted.
template <class T>
void expect_measured(const Submitted<T>& submitted) {
  const FutureStatus status = submitted.future.status();
  EXPECT_GT(status.encode_time.count(), 0);
  EXPECT_GT(status.body_bytes, 0u);
  ASSERT_TRUE(status.submit_time.has_value());
  EXPECT_GT(status.submit_time->count(), 0);
  EXPECT_LE(*status.submit_time, submitted.observed) << "accepted before the caller held the future";
  EXPECT_LE(status.encode_time, *status.submit_time) << "the encoding is part of the submit";
}

class OperationCostsTest : public LocalService {};

TEST_F(OperationCostsTest, TrainingOperationsReportTheExactBodiesTheySent) {
  auto service = make_service_client();
  TrainingClient training = run(create_training(*service));
  const std::vector<Datum> batch = tiny_batch(3, 16);
  const auto gradients = run(forward_backward(training, batch));
  const AdamParams adam(1e-3);
  const auto update = run(optim_step(training, adam));

  expect_measured(gradients);
  expect_measured(update);
  // seq_ids 1 and 2: the model's creation was 0. forward_backward goes as protobuf, optim_step as JSON
  // (as optim_params: tinker-local's client/config is post-0.25, doc/training.md#optimizers).
  const ForwardBackwardRequest gradients_body(training.model_id(), 1,
                                              ForwardBackwardInput(batch, loss_fn::cross_entropy));
  EXPECT_EQ(gradients.future.status().body_bytes, to_protobuf(gradients_body).size());
  EXPECT_EQ(update.future.status().body_bytes,
            to_json(OptimStepRequest(training.model_id(), 2, OptimParams(adam))).size());
}

class ChunkedCostsTest : public LocalService {
 protected:
  local::ServerOptions server_options() const override {
    auto options = fast_server_options();
    options.client_config.fwdbwd_max_chunk_len = 2;
    return options;
  }
};

TEST_F(ChunkedCostsTest, AChunkedForwardBackwardCountsEveryChunk) {
  auto service = make_service_client();
  TrainingClient training = run(create_training(*service));
  const std::vector<Datum> batch = tiny_batch(5, 8);
  const auto gradients = run(forward_backward(training, batch));

  expect_measured(gradients);
  // Chunks of 2, 2 and 1 datums with seq_ids 1, 2, 3.
  std::size_t expected = 0;
  for (std::size_t first = 0, seq = 1; first < batch.size(); first += 2, ++seq) {
    const std::vector<Datum> chunk(batch.begin() + static_cast<std::ptrdiff_t>(first),
                                   batch.begin() + static_cast<std::ptrdiff_t>(std::min(first + 2, batch.size())));
    const ForwardBackwardRequest body(training.model_id(), static_cast<std::int64_t>(seq),
                                      ForwardBackwardInput(chunk, loss_fn::cross_entropy));
    expected += to_protobuf(body).size();
  }
  EXPECT_EQ(gradients.future.status().body_bytes, expected);
}

TEST_F(OperationCostsTest, ASampleCountsEveryAttemptItsBodyWasSentIn) {
  auto service = make_service_client();
  SamplingClient sampler = run(base_sampler(*service));
  const ModelInput prompt = ModelInput::from_ints(std::vector<TokenId>{11, 12, 13, 14});
  SamplingParams params(4, 1.0);
  params.seed = 3;
  const auto first = run(sample(sampler, prompt, params));
  expect_measured(first);
  const std::size_t one_body = to_json(SampleRequest(sampler.sampling_session_id(), 0, prompt, params, 2)).size();
  EXPECT_EQ(first.future.status().body_bytes, one_body);

  // A 429 makes the client back off and send the same request again (doc/sampling.md#backpressure-and-retries).
  local::FaultRule busy("asample", local::FaultKind::status);
  busy.status = 429;
  busy.on_calls = {1};
  server->set_faults({busy});
  const auto second = run(sample(sampler, prompt, params));
  expect_measured(second);
  EXPECT_EQ(second.future.status().body_bytes, 2 * one_body) << "seq_id 1 has as many digits as 0";
}

TEST_F(OperationCostsTest, ComputeLogprobsIsMeasuredToo) {
  auto service = make_service_client();
  SamplingClient sampler = run(base_sampler(*service));
  const ModelInput prompt = ModelInput::from_ints(std::vector<TokenId>{21, 22, 23});
  auto submitted = sampler.async_compute_logprobs(prompt, asio::use_future);
  Future<PromptLogprobs> future = run_until_ready(io, submitted);
  const FutureStatus status = future.status();
  EXPECT_GT(status.encode_time.count(), 0);
  EXPECT_GT(status.body_bytes, 0u);
  EXPECT_TRUE(status.submit_time.has_value());
}

}  // namespace
}  // namespace tinker::test
