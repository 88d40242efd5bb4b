// Checkpoint bytes: bit-identical round trips with and without optimizer state, rejected input,
// and the PEFT export.
#include "programs/local/model/tiny_lm_internal.hpp"
#include "unit/programs/local/model/model_test_support.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tinker::local::model {
namespace {

using namespace testing;
using ::testing::HasSubstr;

constexpr int kSerializationVocab = 71;

class TinyLmSerialization : public ::testing::Test {
 protected:
  TinyLmSerialization()
      : base("serial", small_arch(kSerializationVocab)),
        batch(sft_batch(kSerializationVocab, 3, 10)),
        lora(base, lora_settings(4, 2)) {
    for (int i = 0; i < 3; ++i) step_once(lora);
  }

  void step_once(LoraState& state) {
    forward_backward(base, state, batch, false);
    optim_step(state, adam);
  }

  std::vector<float> logprobs(LoraState& state) {
    const auto out = forward_backward(base, state, batch, true);
    std::vector<float> all;
    for (std::size_t i = 0; i < out.loss_fn_outputs.size(); ++i) {
      const auto lp = logprobs_of(out, i);
      all.insert(all.end(), lp.begin(), lp.end());
    }
    return all;
  }

  void expect_rejected(std::string_view bytes, const std::string& message, bool load_optimizer = false) {
    try {
      LoraState::deserialize(base, bytes, load_optimizer);
      ADD_FAILURE() << "accepted: " << message;
    } catch (const UserError& e) {
      EXPECT_THAT(e.what(), HasSubstr(message));
    }
  }

  BaseModel base;
  ForwardBackwardInput batch;
  AdamParams adam{2e-3};
  LoraState lora;
};

TEST_F(TinyLmSerialization, WeightsOnlyRoundTripIsBitIdentical) {
  const std::string bytes = lora.serialize(false);
  LoraState loaded = LoraState::deserialize(base, bytes, false);
  EXPECT_EQ(loaded.impl().params, lora.impl().params);
  EXPECT_EQ(logprobs(loaded), logprobs(lora));
  EXPECT_EQ(loaded.serialize(false), bytes);
  EXPECT_EQ(loaded.settings().rank, 4);
  EXPECT_EQ(loaded.settings().seed, 2u);
  // Without optimizer state the moments start fresh.
  EXPECT_EQ(loaded.impl().adam_step, 0u);
  EXPECT_THAT(loaded.impl().adam_m, ::testing::Each(0.0f));
}

TEST_F(TinyLmSerialization, OptimizerRoundTripContinuesTrainingIdentically) {
  const std::string bytes = lora.serialize(true);
  LoraState loaded = LoraState::deserialize(base, bytes, true);
  EXPECT_EQ(loaded.serialize(true), bytes);
  LoraState weights_only = LoraState::deserialize(base, bytes, false);
  for (int i = 0; i < 3; ++i) {
    step_once(lora);
    step_once(loaded);
    step_once(weights_only);
  }
  EXPECT_EQ(loaded.serialize(true), lora.serialize(true));
  EXPECT_EQ(logprobs(loaded), logprobs(lora));
  // Fresh moments change the trajectory, so the optimizer state really was restored.
  EXPECT_NE(weights_only.impl().params, lora.impl().params);
}

TEST_F(TinyLmSerialization, AccumulatedGradientsAreNotSaved) {
  forward_backward(base, lora, batch, false);
  const LoraState loaded = LoraState::deserialize(base, lora.serialize(true), true);
  EXPECT_THAT(loaded.impl().grads, ::testing::Each(0.0));
}

TEST_F(TinyLmSerialization, DisabledPartsRoundTrip) {
  LoraSettings settings = lora_settings(3, 5);
  settings.train_attn = false;
  settings.train_unembed = false;
  LoraState mlp_only(base, settings);
  step_once(mlp_only);
  const LoraState loaded = LoraState::deserialize(base, mlp_only.serialize(false), false);
  EXPECT_FALSE(loaded.settings().train_attn);
  EXPECT_TRUE(loaded.settings().train_mlp);
  EXPECT_FALSE(loaded.settings().train_unembed);
  EXPECT_EQ(loaded.impl().params, mlp_only.impl().params);
}

TEST_F(TinyLmSerialization, WrongArchitectureIsRejected) {
  const BaseModel other("serial", small_arch(kSerializationVocab + 1));
  try {
    LoraState::deserialize(other, lora.serialize(false), false);
    FAIL() << "accepted a checkpoint of another architecture";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("architecture"));
  }
}

TEST_F(TinyLmSerialization, DamagedBytesAreRejected) {
  const std::string bytes = lora.serialize(true);
  expect_rejected(bytes.substr(0, bytes.size() - 1), "truncated");
  expect_rejected(bytes.substr(0, 20), "not a tiny-lm LoRA checkpoint");
  expect_rejected("", "not a tiny-lm LoRA checkpoint");
  expect_rejected(bytes + "x", "does not match its header");
  std::string flipped = bytes;
  flipped[bytes.size() / 2] = static_cast<char>(flipped[bytes.size() / 2] ^ 0x10);
  expect_rejected(flipped, "checksum");
  std::string magic = bytes;
  magic[0] = 'X';
  expect_rejected(magic, "bad magic");
  expect_rejected(lora.serialize(false), "no optimizer state", true);
}

TEST_F(TinyLmSerialization, ExportUsesPeftNamesAndShapes) {
  const std::vector<NamedTensor> tensors = lora.export_adapters();
  ASSERT_EQ(tensors.size(), 10u);
  const int d = 32;
  const int m = 64;
  const int r = 4;
  const std::vector<std::pair<std::string, std::vector<std::int64_t>>> expected = {
      {"base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight", {r, d}},
      {"base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight", {d, r}},
      {"base_model.model.model.layers.0.self_attn.v_proj.lora_A.weight", {r, d}},
      {"base_model.model.model.layers.0.self_attn.v_proj.lora_B.weight", {d, r}},
      {"base_model.model.model.layers.0.mlp.up_proj.lora_A.weight", {r, d}},
      {"base_model.model.model.layers.0.mlp.up_proj.lora_B.weight", {m, r}},
      {"base_model.model.model.layers.0.mlp.down_proj.lora_A.weight", {r, m}},
      {"base_model.model.model.layers.0.mlp.down_proj.lora_B.weight", {d, r}},
      {"base_model.model.model.unembed_tokens.lora_A.weight", {r, d}},
      {"base_model.model.model.unembed_tokens.lora_B.weight", {kSerializationVocab, r}},
  };
  std::size_t total = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    EXPECT_EQ(tensors[i].name, expected[i].first);
    EXPECT_EQ(tensors[i].shape, expected[i].second);
    EXPECT_EQ(tensors[i].values.size(), static_cast<std::size_t>(expected[i].second[0] * expected[i].second[1]));
    total += tensors[i].values.size();
  }
  EXPECT_EQ(total, lora.parameter_count());
  // The exported values are the adapters themselves (B trained away from zero).
  EXPECT_THAT(tensors[9].values, ::testing::Contains(::testing::Ne(0.0f)));
  EXPECT_EQ(lora.target_modules(),
            (std::vector<std::string>{"q_proj", "v_proj", "up_proj", "down_proj", "unembed_tokens"}));
  EXPECT_GT(lora.lora_alpha(), 0.0);
}

}  // namespace
}  // namespace tinker::local::model
