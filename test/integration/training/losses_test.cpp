// tinker::losses and top-k cross-entropy through the public API against in-process tinker-local:
// DPO steps with reference logprobs from compute_logprobs widen the chosen-vs-rejected margin;
// (N, K) targets travel both wires and come back shaped (N, K).
#include "integration/support/local_service.hpp"
#include "integration/support/training_data.hpp"
#include "integration/sync/sync_support.hpp"

#include <tinker/losses.hpp>
#include <tinker/service_client.hpp>
#include <tinker/sync/sampling_client.hpp>
#include <tinker/sync/training_client.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace tinker::test {
namespace {

namespace asio = boost::asio;

// A datum over prompt + response: targets are the sequence shifted by one, weights 1 on the
// response tokens only (as a renderer's supervised example trains on the reply).
Datum response_datum(const std::vector<TokenId>& prompt, const std::vector<TokenId>& response) {
  std::vector<TokenId> sequence = prompt;
  sequence.insert(sequence.end(), response.begin(), response.end());
  std::vector<TokenId> input(sequence.begin(), sequence.end() - 1);
  std::vector<TokenId> targets(sequence.begin() + 1, sequence.end());
  std::vector<float> weights(targets.size(), 0.0f);
  for (std::size_t t = prompt.size() - 1; t < targets.size(); ++t) weights[t] = 1.0f;
  LossFnInputs inputs{{"target_tokens", TensorData::from_tokens(targets)}, {"weights", TensorData(weights)}};
  return Datum(ModelInput::from_ints(input), std::move(inputs));
}

// Three preference pairs laid out as the cookbook does: chosen at even indices, rejected at odd.
std::vector<Datum> preference_pairs() {
  std::vector<Datum> data;
  for (TokenId p = 0; p < 3; ++p) {
    const std::vector<TokenId> prompt{10 + p, 20 + p, 30 + p, 40 + p};
    data.push_back(response_datum(prompt, {100 + p, 101, 102, 103}));
    data.push_back(response_datum(prompt, {500 + p, 501, 502, 503}));
  }
  return data;
}

class DpoRun {
 public:
  losses::ReferenceLogprobs reference;
  std::vector<float> initial_policy;  // the training model's logprobs before any step
  std::vector<Metrics> metrics;       // of each DPO step
  std::vector<float> final_policy;
  losses::ReferenceLogprobs empty_reference{{1.0f}};  // of an empty batch: must come back empty
};

asio::awaitable<std::vector<float>> forward_logprobs(TrainingClient& training, const std::vector<Datum>& data) {
  const ForwardBackwardInput input(data, loss_fn::cross_entropy);
  auto future = co_await training.async_forward(input, use_awaitable);
  co_return all_logprobs(co_await future.async_get(use_awaitable));
}

asio::awaitable<DpoRun> dpo_steps(ServiceClient& service, int steps) {
  const LoraTrainingOptions options(std::string(tiny_model), 8);
  TrainingClient training = co_await service.async_create_lora_training_client(options, use_awaitable);
  const std::vector<Datum> data = preference_pairs();
  // The reference is the initial policy, as the cookbook's train_dpo makes it.
  SamplingClient reference = co_await training.async_save_weights_and_get_sampling_client(use_awaitable);
  DpoRun run;
  run.reference = co_await losses::async_reference_logprobs(reference, data, use_awaitable);
  run.initial_policy = co_await forward_logprobs(training, data);
  run.empty_reference = co_await losses::async_reference_logprobs(reference, {}, use_awaitable);
  for (int step = 0; step < steps; ++step) {
    auto gradients =
        co_await training.async_forward_backward_custom(data, losses::dpo(run.reference, 0.1), use_awaitable);
    const AdamParams adam(5e-3);
    auto update = co_await training.async_optim_step(adam, use_awaitable);
    run.metrics.push_back((co_await gradients.async_get(use_awaitable)).metrics);
    co_await update.async_get(use_awaitable);
  }
  run.final_policy = co_await forward_logprobs(training, data);
  co_return run;
}

class LossesTest : public LocalService {};

TEST_F(LossesTest, DpoStepsWidenTheMarginFromComputedReferenceLogprobs) {
  auto service = make_service_client();
  const DpoRun result = run(dpo_steps(*service, 6));

  // compute_logprobs of the full sequences, aligned, equals the policy's own logprobs at step 0.
  std::vector<float> reference_flat;
  for (const auto& datum : result.reference) reference_flat.insert(reference_flat.end(), datum.begin(), datum.end());
  ASSERT_EQ(reference_flat.size(), result.initial_policy.size());
  for (std::size_t i = 0; i < reference_flat.size(); ++i) {
    EXPECT_NEAR(reference_flat[i], result.initial_policy[i], 1e-5) << i;
  }

  EXPECT_TRUE(result.empty_reference.empty());

  ASSERT_EQ(result.metrics.size(), 6u);
  const Metrics& first = result.metrics.front();
  const Metrics& last = result.metrics.back();
  for (const char* name : {"dpo_loss", "accuracy", "margin", "chosen_reward", "rejected_reward", "num_pairs"}) {
    EXPECT_TRUE(first.contains(name)) << name;
  }
  // Policy == reference at the first step: margin 0 and loss log 2.
  EXPECT_NEAR(first.at("margin"), 0.0, 1e-5);
  EXPECT_NEAR(first.at("dpo_loss"), std::log(2.0), 1e-5);
  EXPECT_GT(last.at("margin"), first.at("margin") + 0.05);
  EXPECT_LT(last.at("dpo_loss"), first.at("dpo_loss"));
  EXPECT_EQ(last.at("accuracy"), 1.0);
  EXPECT_GT(last.at("chosen_reward"), last.at("rejected_reward"));
}

asio::awaitable<std::string> dpo_with_bad_reference(ServiceClient& service) {
  const LoraTrainingOptions options(std::string(tiny_model), 8);
  TrainingClient training = co_await service.async_create_lora_training_client(options, use_awaitable);
  const std::vector<Datum> data = preference_pairs();
  losses::ReferenceLogprobs reference(data.size(), std::vector<float>(7, -1.0f));
  reference[3].pop_back();
  diagnostics diag;
  auto [code, future] = co_await training.async_forward_backward_custom(data, losses::dpo(reference), diag,
                                                                        asio::as_tuple(asio::use_awaitable));
  co_return code ? diag.message : std::string("no error");
}

TEST_F(LossesTest, DpoWithMismatchedReferenceFailsNamingTheDatum) {
  auto service = make_service_client();
  const std::string message = run(dpo_with_bad_reference(*service));
  EXPECT_NE(message.find("data[3]"), std::string::npos) << message;
  EXPECT_NE(message.find("reference logprobs"), std::string::npos) << message;
}

// --- top-k cross-entropy -------------------------------------------------------------------

// Datum 0 of tiny_batch with K = 3 candidates per position (the true next token first).
Datum topk_datum() {
  const Datum plain = tiny_batch(1, 9).front();
  const std::vector<std::int64_t> targets = plain.loss_fn_inputs.at("target_tokens").to_dense_ints();
  std::vector<std::int64_t> topk;
  std::vector<float> weights;
  for (std::size_t t = 0; t < targets.size(); ++t) {
    for (std::int64_t k = 0; k < 3; ++k) {
      topk.push_back(k == 0 ? targets[t] : (targets[t] + 37 * k) % 1000);
      weights.push_back(k == 0 ? 0.7f : 0.15f);
    }
  }
  const std::vector<std::int64_t> shape{static_cast<std::int64_t>(targets.size()), 3};
  LossFnInputs inputs{{"target_tokens", TensorData(topk, shape)}, {"weights", TensorData(weights, shape)}};
  return Datum(plain.model_input, std::move(inputs));
}

class TopKRun {
 public:
  TensorData forward_logprobs;
  std::vector<double> losses;  // loss:sum of each forward_backward step
};

asio::awaitable<TopKRun> topk_steps(ServiceClient& service) {
  const LoraTrainingOptions options(std::string(tiny_model), 8);
  TrainingClient training = co_await service.async_create_lora_training_client(options, use_awaitable);
  const std::vector<Datum> data{topk_datum()};
  const ForwardBackwardInput input(data, loss_fn::cross_entropy);
  TopKRun run;
  auto forward = co_await training.async_forward(input, use_awaitable);
  run.forward_logprobs = (co_await forward.async_get(use_awaitable)).loss_fn_outputs.at(0).at("logprobs");
  for (int step = 0; step < 5; ++step) {
    auto gradients = co_await training.async_forward_backward(input, use_awaitable);
    const AdamParams adam(1e-3);
    auto update = co_await training.async_optim_step(adam, use_awaitable);
    run.losses.push_back((co_await gradients.async_get(use_awaitable)).metrics.at("loss:sum"));
    co_await update.async_get(use_awaitable);
  }
  co_return run;
}

TEST_F(LossesTest, TopKCrossEntropyTravelsBothWiresShapedNByK) {
  auto protobuf_service = make_service_client();
  const TopKRun protobuf = run(topk_steps(*protobuf_service));
  ServiceClientOptions json_options(client_options());
  json_options.json_bulk_paths = true;
  auto json_service = make_service_client(json_options);
  const TopKRun json = run(topk_steps(*json_service));

  const std::vector<std::int64_t> shape = topk_datum().loss_fn_inputs.at("target_tokens").effective_shape();
  ASSERT_EQ(shape.size(), 2u);
  EXPECT_EQ(shape[1], 3);
  EXPECT_EQ(protobuf.forward_logprobs.effective_shape(), shape);
  EXPECT_EQ(json.forward_logprobs.effective_shape(), shape);
  // Before any step both models equal the base model (LoRA B = 0): the same logprobs.
  EXPECT_EQ(protobuf.forward_logprobs.to_dense_floats(), json.forward_logprobs.to_dense_floats());
  for (const TopKRun* result : {&protobuf, &json}) {
    ASSERT_EQ(result->losses.size(), 5u);
    EXPECT_LT(result->losses.back(), result->losses.front());
  }
}

// --- the blocking form of reference_logprobs ------------------------------------------------

class SyncLossesTest : public SyncService {};

TEST_F(SyncLossesTest, BlockingReferenceLogprobsEqualThePolicysForward) {
  sync::ServiceClient service = make_sync_service();
  sync::TrainingClient training = service.create_lora_training_client(std::string(tiny_model), 8);
  const std::vector<Datum> data = preference_pairs();
  sync::SamplingClient reference = training.save_weights_and_get_sampling_client();
  const losses::ReferenceLogprobs logprobs = losses::reference_logprobs(reference, data);
  const ForwardBackwardOutput forward = training.forward(ForwardBackwardInput(data, loss_fn::cross_entropy)).get();
  ASSERT_EQ(logprobs.size(), data.size());
  for (std::size_t i = 0; i < data.size(); ++i) {
    const std::vector<float> policy = forward.loss_fn_outputs.at(i).at("logprobs").to_dense_floats();
    ASSERT_EQ(logprobs[i].size(), policy.size()) << i;
    for (std::size_t t = 0; t < policy.size(); ++t) EXPECT_NEAR(logprobs[i][t], policy[t], 1e-5) << i << "," << t;
  }
  EXPECT_TRUE(losses::reference_logprobs(reference, {}).empty());
}

}  // namespace
}  // namespace tinker::test
