// forward_backward_custom (doc/training.md#custom-losses) checked against a reference built with
// finite differences: a model trained with the custom loss must end up exactly like a twin trained
// with the plain cross-entropy whose weights are minus the numerical derivative of the same loss.
#include "integration/support/local_service.hpp"
#include "integration/support/training_data.hpp"

#include <tinker/service_client.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace tinker::test {
namespace {

namespace asio = boost::asio;

// A nonlinear per-token loss of the logprobs.
double token_loss(double logprob) {
  return 0.5 * (logprob + 3.0) * (logprob + 3.0);
}
double token_loss_derivative(double logprob) {
  return logprob + 3.0;
}

CustomLossOutput custom_loss(const std::vector<Datum>&, const std::vector<std::vector<float>>& logprobs,
                             std::vector<std::vector<float>>* seen) {
  *seen = logprobs;
  CustomLossOutput out;
  for (const auto& datum_logprobs : logprobs) {
    std::vector<float> gradient;
    for (float lp : datum_logprobs) {
      out.loss += token_loss(lp);
      gradient.push_back(static_cast<float>(token_loss_derivative(lp)));
    }
    out.gradients.push_back(std::move(gradient));
  }
  out.metrics["custom_loss"] = out.loss;
  return out;
}

// Weights of the reference: minus the central difference of token_loss at each logprob.
std::vector<Datum> finite_difference_batch(const std::vector<Datum>& batch, const ForwardBackwardOutput& forward) {
  constexpr double h = 1e-3;
  std::vector<Datum> out;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    std::vector<float> weights;
    for (float lp : forward.loss_fn_outputs[i].at("logprobs").to_dense_floats()) {
      const double derivative = (token_loss(lp + h) - token_loss(lp - h)) / (2 * h);
      weights.push_back(static_cast<float>(-derivative));
    }
    LossFnInputs inputs{{"target_tokens", batch[i].loss_fn_inputs.at("target_tokens")},
                        {"weights", TensorData::from_floats(weights)}};
    out.emplace_back(batch[i].model_input, std::move(inputs));
  }
  return out;
}

class CustomLossRun {
 public:
  std::vector<std::vector<float>> logprobs_before;
  std::vector<std::vector<float>> logprobs_seen_by_loss;
  ForwardBackwardOutput custom_result;
  std::vector<float> custom_after;
  std::vector<float> reference_after;
};

asio::awaitable<ForwardBackwardOutput> forward_of(TrainingClient& training, const std::vector<Datum>& batch) {
  const ForwardBackwardInput input(batch, loss_fn::cross_entropy);
  Future<ForwardBackwardOutput> future = co_await training.async_forward(input, use_awaitable);
  co_return co_await future.async_get(use_awaitable);
}

asio::awaitable<void> step(TrainingClient& training) {
  const AdamParams adam(1e-3);
  Future<OptimStepResponse> future = co_await training.async_optim_step(adam, use_awaitable);
  co_await future.async_get(use_awaitable);
}

asio::awaitable<CustomLossRun> custom_versus_reference(ServiceClient& service) {
  LoraTrainingOptions options(std::string(tiny_model), 4);
  options.seed = 5;
  TrainingClient custom = co_await service.async_create_lora_training_client(options, use_awaitable);
  TrainingClient reference = co_await service.async_create_lora_training_client(options, use_awaitable);
  const std::vector<Datum> batch = tiny_batch(3, 6);
  CustomLossRun run;

  const ForwardBackwardOutput before = co_await forward_of(custom, batch);
  for (const auto& record : before.loss_fn_outputs)
    run.logprobs_before.push_back(record.at("logprobs").to_dense_floats());

  std::vector<std::vector<float>>* seen = &run.logprobs_seen_by_loss;
  const CustomLossFunction loss = [seen](const std::vector<Datum>& data, const std::vector<std::vector<float>>& lps) {
    return custom_loss(data, lps, seen);
  };
  Future<ForwardBackwardOutput> custom_future =
      co_await custom.async_forward_backward_custom(batch, loss, use_awaitable);
  run.custom_result = co_await custom_future.async_get(use_awaitable);
  co_await step(custom);

  const ForwardBackwardInput reference_input(finite_difference_batch(batch, before), loss_fn::cross_entropy);
  Future<ForwardBackwardOutput> reference_future =
      co_await reference.async_forward_backward(reference_input, use_awaitable);
  co_await reference_future.async_get(use_awaitable);
  co_await step(reference);

  run.custom_after = all_logprobs(co_await forward_of(custom, batch));
  run.reference_after = all_logprobs(co_await forward_of(reference, batch));
  co_return run;
}

class CustomLossTest : public LocalService {};

TEST_F(CustomLossTest, MatchesATwinTrainedWithFiniteDifferenceWeights) {
  auto service = make_service_client();
  const CustomLossRun result = run(custom_versus_reference(*service));

  EXPECT_EQ(result.logprobs_seen_by_loss, result.logprobs_before);
  ASSERT_TRUE(result.custom_result.metrics.contains("custom_loss"));
  ASSERT_EQ(result.custom_result.loss_fn_outputs.size(), 3u);
  ASSERT_EQ(result.custom_after.size(), result.reference_after.size());
  double largest_difference = 0.0;
  double largest_change = 0.0;
  std::size_t k = 0;
  for (const auto& datum : result.logprobs_before) {
    for (float before : datum) {
      largest_difference =
          std::max(largest_difference, std::abs(double(result.custom_after[k]) - result.reference_after[k]));
      largest_change = std::max(largest_change, std::abs(double(result.custom_after[k]) - before));
      ++k;
    }
  }
  EXPECT_GT(largest_change, 1e-4) << "the step must have changed the model";
  EXPECT_LT(largest_difference, 1e-3 * largest_change + 1e-5);
}

asio::awaitable<std::string> custom_with_bad_gradients(ServiceClient& service) {
  LoraTrainingOptions options(std::string(tiny_model), 4);
  TrainingClient training = co_await service.async_create_lora_training_client(options, use_awaitable);
  const std::vector<Datum> batch = tiny_batch(2, 4);
  const CustomLossFunction wrong_size = [](const std::vector<Datum>&, const std::vector<std::vector<float>>&) {
    return CustomLossOutput(1.0, {{1.0f}});
  };
  diagnostics diag;
  auto tuple_token = asio::as_tuple(asio::use_awaitable);
  auto [ec, future] = co_await training.async_forward_backward_custom(batch, wrong_size, diag, tuple_token);
  if (!ec) co_return "no error";
  // The model is still usable: the backward's turn was passed on.
  const AdamParams adam(1e-3);
  Future<OptimStepResponse> next = co_await training.async_optim_step(adam, use_awaitable);
  co_await next.async_get(use_awaitable);
  co_return diag.message;
}

TEST_F(CustomLossTest, GradientsOfTheWrongShapeAreAnErrorAndTheClientGoesOn) {
  auto service = make_service_client();
  const std::string message = run(custom_with_bad_gradients(*service));
  EXPECT_NE(message.find("gradients"), std::string::npos) << message;
}

}  // namespace
}  // namespace tinker::test
