// Bad forward_backward / optim_step input: a UserError naming the field, and no state change.
#include "programs/local/model/tiny_lm_internal.hpp"
#include "unit/programs/local/model/model_test_support.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

namespace tinker::local::model {
namespace {

using namespace testing;
using ::testing::HasSubstr;

constexpr int kValidationVocab = 53;

class TinyLmValidation : public ::testing::Test {
 protected:
  TinyLmValidation() : base("validation", small_arch(kValidationVocab)), lora(base, lora_settings(2, 1)) {
    // Leave non-zero accumulated gradients, so that "untouched" is a real check.
    forward_backward(base, lora, sft_batch(kValidationVocab, 1, 6), false);
  }

  ForwardBackwardInput good_rl_batch(const std::string& loss) {
    std::vector<Datum> data;
    for (int i = 0; i < 3; ++i) {
      data.push_back(rl_datum(random_tokens(40 + i, 9, kValidationVocab), std::vector<float>(8, -4.0f),
                              std::vector<float>(8, 1.0f)));
    }
    return ForwardBackwardInput(std::move(data), loss);
  }

  // Expects `input` to be refused with `message`, leaving the adapters and gradients untouched.
  void expect_refused(const ForwardBackwardInput& input, const std::string& message) {
    const std::vector<double> grads = lora.impl().grads;
    const std::string bytes = lora.serialize(true);
    for (bool forward_only : {false, true}) {
      try {
        forward_backward(base, lora, input, forward_only);
        ADD_FAILURE() << "accepted, expected: " << message;
      } catch (const UserError& e) {
        EXPECT_THAT(e.what(), HasSubstr(message));
      }
    }
    try {
      forward_base(base, input);
      ADD_FAILURE() << "forward_base accepted, expected: " << message;
    } catch (const UserError& e) {
      EXPECT_THAT(e.what(), HasSubstr(message));
    }
    EXPECT_EQ(lora.impl().grads, grads);
    EXPECT_EQ(lora.serialize(true), bytes);
  }

  BaseModel base;
  LoraState lora;
};

TEST_F(TinyLmValidation, UnknownLossFunction) {
  ForwardBackwardInput input = sft_batch(kValidationVocab, 1, 5);
  input.loss_fn = "hinge";
  expect_refused(input, "loss_fn: unknown loss function 'hinge'");
}

TEST_F(TinyLmValidation, MissingRequiredKeys) {
  ForwardBackwardInput ce = sft_batch(kValidationVocab, 2, 5);
  ce.data[1].loss_fn_inputs.erase("weights");
  expect_refused(ce, "data[1].loss_fn_inputs: missing required key 'weights' for loss_fn cross_entropy");
  for (const char* loss : {loss_fn::importance_sampling, loss_fn::ppo, loss_fn::cispo, loss_fn::dro}) {
    for (const char* key : {"target_tokens", "logprobs", "advantages"}) {
      ForwardBackwardInput rl = good_rl_batch(loss);
      rl.data[2].loss_fn_inputs.erase(key);
      expect_refused(rl, "data[2].loss_fn_inputs: missing required key '" + std::string(key) + "' for loss_fn " + loss);
    }
  }
}

TEST_F(TinyLmValidation, WrongDtypes) {
  ForwardBackwardInput input = sft_batch(kValidationVocab, 2, 5);
  input.data[0].loss_fn_inputs["target_tokens"] = TensorData(std::vector<float>{1, 2, 3, 4});
  expect_refused(input, "data[0].loss_fn_inputs.target_tokens: dtype float32, expected int64");
  input = sft_batch(kValidationVocab, 2, 5);
  input.data[1].loss_fn_inputs["weights"] = TensorData(std::vector<std::int64_t>{1, 1, 1, 1});
  expect_refused(input, "data[1].loss_fn_inputs.weights: dtype int64, expected float32");
  ForwardBackwardInput rl = good_rl_batch(loss_fn::ppo);
  rl.data[1].loss_fn_inputs["advantages"] = TensorData(std::vector<std::int64_t>(8, 1));
  expect_refused(rl, "data[1].loss_fn_inputs.advantages: dtype int64, expected float32");
}

TEST_F(TinyLmValidation, LengthMismatch) {
  std::vector<Datum> data = sft_batch(kValidationVocab, 3, 9).data;
  data[2].loss_fn_inputs["weights"] = TensorData(std::vector<float>(7, 1.0f));
  expect_refused(ForwardBackwardInput(data, loss_fn::cross_entropy),
                 "data[2].loss_fn_inputs.weights: length 7 != model_input length 8");
  ForwardBackwardInput rl = good_rl_batch(loss_fn::importance_sampling);
  rl.data[0].loss_fn_inputs["logprobs"] = TensorData(std::vector<float>(9, -1.0f));
  expect_refused(rl, "data[0].loss_fn_inputs.logprobs: length 9 != model_input length 8");
}

TEST_F(TinyLmValidation, TokenIdsOutsideTheVocabulary) {
  ForwardBackwardInput input = sft_batch(kValidationVocab, 1, 6);
  std::get<EncodedTextChunk>(input.data[0].model_input.chunks[0]).tokens[3] = kValidationVocab;
  expect_refused(input, "data[0].model_input.chunks[0].tokens[3]: token id 53 is outside the vocabulary [0, 53)");
  input = sft_batch(kValidationVocab, 1, 6);
  std::get<EncodedTextChunk>(input.data[0].model_input.chunks[0]).tokens[0] = -1;
  expect_refused(input, "data[0].model_input.chunks[0].tokens[0]: token id -1");
  input = sft_batch(kValidationVocab, 1, 6);
  input.data[0].loss_fn_inputs["target_tokens"] = TensorData(std::vector<std::int64_t>{1, 2, 1000, 3, 4});
  expect_refused(input, "data[0].loss_fn_inputs.target_tokens[2]: token id 1000 is outside the vocabulary");
}

TEST_F(TinyLmValidation, NonTextChunks) {
  ForwardBackwardInput input = sft_batch(kValidationVocab, 2, 6);
  input.data[1].model_input.append(ImageChunk({1, 2}, ImageFormat::png, 2));
  expect_refused(input, "data[1].model_input.chunks[1]: image chunks are not supported");
}

TEST_F(TinyLmValidation, SequenceLongerThanTheContext) {
  ForwardBackwardInput input = sft_batch(kValidationVocab, 1, 130);  // 129 input tokens > 128
  expect_refused(input, "data[0].model_input: length 129 exceeds the model's max context 128");
}

TEST_F(TinyLmValidation, NonFiniteValues) {
  ForwardBackwardInput rl = good_rl_batch(loss_fn::dro);
  std::vector<float> advantages(8, 1.0f);
  advantages[5] = std::numeric_limits<float>::quiet_NaN();
  rl.data[1].loss_fn_inputs["advantages"] = TensorData(advantages);
  expect_refused(rl, "data[1].loss_fn_inputs.advantages: data[5] is NaN");
}

TEST_F(TinyLmValidation, MalformedSparseTensor) {
  ForwardBackwardInput input = sft_batch(kValidationVocab, 1, 6);
  TensorData sparse = TensorData::sparse_csr(std::vector<float>{1.0f, 1.0f}, 1, 5, {0, 2}, {0, 3});
  sparse.sparse_col_indices = std::vector<std::int64_t>{0, 9};
  input.data[0].loss_fn_inputs["weights"] = sparse;
  expect_refused(input, "data[0].loss_fn_inputs.weights");
}

TEST_F(TinyLmValidation, SparseWeightsAreAccepted) {
  ForwardBackwardInput dense = sft_batch(kValidationVocab, 1, 6);
  ForwardBackwardInput sparse = dense;
  dense.data[0].loss_fn_inputs["weights"] = TensorData(std::vector<float>{1, 0, 0, 1, 0});
  sparse.data[0].loss_fn_inputs["weights"] =
      TensorData::sparse_csr(std::vector<float>{1.0f, 1.0f}, 1, 5, {0, 2}, {0, 3});
  EXPECT_EQ(forward_base(base, sparse), forward_base(base, dense));
}

TEST_F(TinyLmValidation, BadLossConfig) {
  ForwardBackwardInput ppo = good_rl_batch(loss_fn::ppo);
  ppo.loss_fn_config = LossFnConfig{{"clip_low_threshold", 1.5}, {"clip_high_threshold", 1.2}};
  expect_refused(ppo, "loss_fn_config.clip_high_threshold");
  ppo.loss_fn_config = LossFnConfig{{"clip_low_threshold", -0.1}};
  expect_refused(ppo, "loss_fn_config.clip_low_threshold");
  ForwardBackwardInput cispo = good_rl_batch(loss_fn::cispo);
  cispo.loss_fn_config = LossFnConfig{{"clip_high_threshold", std::numeric_limits<double>::infinity()}};
  expect_refused(cispo, "loss_fn_config.clip_high_threshold: must be a finite number");
  ForwardBackwardInput dro = good_rl_batch(loss_fn::dro);
  dro.loss_fn_config = LossFnConfig{{"beta", -1.0}};
  expect_refused(dro, "loss_fn_config.beta");
}

TEST_F(TinyLmValidation, UnknownConfigKeysAndExtraInputsAreIgnored) {
  ForwardBackwardInput ppo = good_rl_batch(loss_fn::ppo);
  const ForwardBackwardOutput plain = forward_base(base, ppo);
  ppo.loss_fn_config = LossFnConfig{{"something_else", 3.0}};
  ppo.data[0].loss_fn_inputs.emplace("weights", TensorData(std::vector<float>(8, 0.0f)));
  EXPECT_EQ(forward_base(base, ppo), plain);
}

TEST_F(TinyLmValidation, EmptyBatchAndEmptySequenceAreFine) {
  const ForwardBackwardOutput none = forward_base(base, ForwardBackwardInput({}, loss_fn::cross_entropy));
  EXPECT_TRUE(none.loss_fn_outputs.empty());
  EXPECT_EQ(none.metrics.at("loss:sum"), 0.0);
  LossFnInputs inputs;
  inputs.emplace("target_tokens", TensorData(std::vector<std::int64_t>{}));
  inputs.emplace("weights", TensorData(std::vector<float>{}));
  const ForwardBackwardOutput empty =
      forward_backward(base, lora, ForwardBackwardInput({Datum(ModelInput(), inputs)}, loss_fn::cross_entropy), false);
  ASSERT_EQ(empty.loss_fn_outputs.size(), 1u);
  EXPECT_TRUE(logprobs_of(empty, 0).empty());
}

TEST_F(TinyLmValidation, BadAdamParamsChangeNothing) {
  const std::vector<std::pair<std::function<void(AdamParams&)>, std::string>> cases = {
      {[](AdamParams& p) { p.learning_rate = -1.0; }, "adam_params.learning_rate"},
      {[](AdamParams& p) { p.learning_rate = std::nan(""); }, "adam_params.learning_rate"},
      {[](AdamParams& p) { p.beta1 = 1.0; }, "adam_params.beta1"},
      {[](AdamParams& p) { p.beta2 = -0.1; }, "adam_params.beta2"},
      {[](AdamParams& p) { p.eps = -1e-8; }, "adam_params.eps"},
      {[](AdamParams& p) { p.weight_decay = -0.5; }, "adam_params.weight_decay"},
      {[](AdamParams& p) { p.grad_clip_norm = -1.0; }, "adam_params.grad_clip_norm"},
  };
  const std::vector<double> grads = lora.impl().grads;
  const std::string bytes = lora.serialize(true);
  for (const auto& [mutate, field] : cases) {
    AdamParams params(1e-3);
    mutate(params);
    try {
      optim_step(lora, params);
      ADD_FAILURE() << "accepted bad " << field;
    } catch (const UserError& e) {
      EXPECT_THAT(e.what(), HasSubstr(field));
    }
  }
  EXPECT_EQ(lora.impl().grads, grads);
  EXPECT_EQ(lora.serialize(true), bytes);
}

TEST_F(TinyLmValidation, BadRankIsAUserError) {
  EXPECT_THROW(LoraState(base, lora_settings(0)), UserError);
  EXPECT_THROW(LoraState(base, lora_settings(100000)), UserError);
}

}  // namespace
}  // namespace tinker::local::model
