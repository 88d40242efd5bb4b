// The base model's weights by name (Hugging Face names and shapes, a model from explicit weights)
// and adapters imported from their matrices (Tinker's and PEFT's names, another alpha, errors).
#include "programs/local/model/tiny_lm_internal.hpp"
#include "unit/programs/local/model/model_test_support.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

namespace tinker::local::model {
namespace {

using namespace testing;
using ::testing::HasSubstr;

constexpr int kWeightsVocab = 67;

std::vector<float> batch_logprobs(const ForwardBackwardOutput& out) {
  std::vector<float> all;
  for (std::size_t i = 0; i < out.loss_fn_outputs.size(); ++i) {
    const auto lp = logprobs_of(out, i);
    all.insert(all.end(), lp.begin(), lp.end());
  }
  return all;
}

TEST(TinyLmWeights, SpecsHaveHuggingFaceNamesAndLinearOrientation) {
  Architecture arch = small_arch(kWeightsVocab);
  arch.d_mlp = 48;
  const std::vector<std::pair<std::string, std::vector<std::int64_t>>> expected = {
      {"model.embed_tokens.weight", {kWeightsVocab, 32}},   {"model.layers.0.self_attn.q_proj.weight", {32, 32}},
      {"model.layers.0.self_attn.k_proj.weight", {32, 32}}, {"model.layers.0.self_attn.v_proj.weight", {32, 32}},
      {"model.layers.0.self_attn.o_proj.weight", {32, 32}}, {"model.layers.0.mlp.up_proj.weight", {48, 32}},
      {"model.layers.0.mlp.down_proj.weight", {32, 48}},    {"lm_head.weight", {kWeightsVocab, 32}},
  };
  const std::vector<WeightSpec> specs = BaseModel::weight_specs(arch);
  ASSERT_EQ(specs.size(), expected.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    EXPECT_EQ(specs[i].name, expected[i].first);
    EXPECT_EQ(specs[i].shape, expected[i].second) << specs[i].name;
  }
  arch.vision = true;
  const std::vector<WeightSpec> vision = BaseModel::weight_specs(arch);
  ASSERT_EQ(vision.size(), expected.size() + 1);
  EXPECT_EQ(vision.back().name, "model.image_projection.weight");
  EXPECT_EQ(vision.back().shape, (std::vector<std::int64_t>{32, kImageFeatures}));
}

TEST(TinyLmWeights, ExportedMatricesAreTheModelsOwnAndFloatExact) {
  const BaseModel base("weights-io", small_arch(kWeightsVocab));
  const std::vector<NamedTensor> tensors = base.export_weights();
  const BaseModel::Weights& w = base.weights();
  // Row-major [out, in] as the model multiplies (y = W x): up_proj is W1 [m, d].
  const NamedTensor& up = tensors.at(5);
  ASSERT_EQ(up.name, "model.layers.0.mlp.up_proj.weight");
  EXPECT_EQ(up.values.at(3 * 32 + 5), static_cast<float>(w.w1.row(3)[5]));
  for (const NamedTensor& tensor : tensors) {
    const Matrix& matrix = *w.named(tensor.name);
    ASSERT_EQ(tensor.values.size(), matrix.values.size()) << tensor.name;
    for (std::size_t i = 0; i < matrix.values.size(); ++i) {
      // The seeded weights are floats, so nothing is lost in float32.
      ASSERT_EQ(static_cast<double>(tensor.values[i]), matrix.values[i]) << tensor.name << "[" << i << "]";
    }
  }
}

TEST(TinyLmWeights, ModelFromExportedWeightsComputesBitIdentically) {
  const Architecture arch = small_arch(kWeightsVocab);
  const BaseModel seeded("weights-io", arch);
  const BaseModel rebuilt("another name", arch, seeded.export_weights());
  const ForwardBackwardInput batch = sft_batch(kWeightsVocab, 3, 12);
  EXPECT_EQ(batch_logprobs(forward_base(rebuilt, batch)), batch_logprobs(forward_base(seeded, batch)));
  // And with an adapter on top: the LoRA path reads the same base matrices.
  LoraState on_seeded(seeded, lora_settings(4, 3));
  forward_backward(seeded, on_seeded, batch, false);
  optim_step(on_seeded, AdamParams(3e-3));
  LoraState on_rebuilt = LoraState::deserialize(rebuilt, on_seeded.serialize(false), false);
  EXPECT_EQ(batch_logprobs(forward_backward(rebuilt, on_rebuilt, batch, true)),
            batch_logprobs(forward_backward(seeded, on_seeded, batch, true)));
}

TEST(TinyLmWeights, ExplicitWeightsAreChecked) {
  const Architecture arch = small_arch(kWeightsVocab);
  const std::vector<NamedTensor> good = BaseModel("weights-io", arch).export_weights();
  auto rejected = [&](std::vector<NamedTensor> tensors, const std::string& message) {
    try {
      BaseModel model("bad", arch, tensors);
      ADD_FAILURE() << "accepted: " << message;
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr(message));
    }
  };
  std::vector<NamedTensor> missing = good;
  missing.pop_back();
  rejected(missing, "weight lm_head.weight is missing");
  std::vector<NamedTensor> misshapen = good;
  misshapen[1].shape = {16, 64};
  rejected(misshapen, "weight model.layers.0.self_attn.q_proj.weight has the wrong shape");
  std::vector<NamedTensor> extra = good;
  extra.push_back(NamedTensor{"model.norm.weight", {32}, std::vector<float>(32, 1.0f)});
  rejected(extra, "unexpected weight model.norm.weight");
  std::vector<NamedTensor> twice = good;
  twice.push_back(good[0]);
  rejected(twice, "given twice");
}

class TinyLmAdapterImport : public ::testing::Test {
 protected:
  TinyLmAdapterImport() : base("import", small_arch(kWeightsVocab)), batch(sft_batch(kWeightsVocab, 3, 12)) {
    LoraSettings settings = lora_settings(4, 9);
    trained = std::make_unique<LoraState>(base, settings);
    for (int i = 0; i < 3; ++i) {
      forward_backward(base, *trained, batch, false);
      optim_step(*trained, AdamParams(3e-3));
    }
  }

  std::vector<float> logprobs(LoraState& state) { return batch_logprobs(forward_backward(base, state, batch, true)); }

  std::string import_error(const std::vector<NamedTensor>& tensors, int rank = 4) {
    try {
      LoraState::import_adapters(base, rank, tensors, trained->lora_alpha());
    } catch (const UserError& e) {
      return e.what();
    }
    return "no error";
  }

  BaseModel base;
  ForwardBackwardInput batch;
  std::unique_ptr<LoraState> trained;
};

TEST_F(TinyLmAdapterImport, TinkerNamesRoundTripBitIdentically) {
  const std::vector<NamedTensor> tensors = trained->export_adapters();
  ASSERT_EQ(tensors.back().name, "base_model.model.model.unembed_tokens.lora_B.weight");
  LoraState imported = LoraState::import_adapters(base, 4, tensors, trained->lora_alpha());
  EXPECT_EQ(imported.impl().params, trained->impl().params);
  EXPECT_EQ(logprobs(imported), logprobs(*trained));
  EXPECT_EQ(imported.target_modules(), trained->target_modules());
}

TEST_F(TinyLmAdapterImport, PeftNamesAndAnotherAlphaGiveTheSameUpdate) {
  std::vector<NamedTensor> tensors = trained->export_adapters();
  for (NamedTensor& tensor : tensors) {
    const std::string tinker_unembed = "base_model.model.model.unembed_tokens";
    if (tensor.name.starts_with(tinker_unembed)) {
      tensor.name = "base_model.model.lm_head" + tensor.name.substr(tinker_unembed.size());
    }
    // alpha / 2 with B doubled: the same delta W (both scalings exact in binary floating point).
    if (tensor.name.find("lora_B") != std::string::npos) {
      for (float& value : tensor.values) value *= 2.0f;
    }
  }
  LoraState imported = LoraState::import_adapters(base, 4, tensors, trained->lora_alpha() / 2);
  EXPECT_EQ(imported.impl().params, trained->impl().params);
  EXPECT_EQ(logprobs(imported), logprobs(*trained));
}

TEST_F(TinyLmAdapterImport, PartsFollowTheModulesPresent) {
  std::vector<NamedTensor> tensors = trained->export_adapters();
  tensors.erase(tensors.begin(), tensors.begin() + 4);  // q_proj and v_proj
  LoraState imported = LoraState::import_adapters(base, 4, tensors, trained->lora_alpha());
  EXPECT_FALSE(imported.settings().train_attn);
  EXPECT_TRUE(imported.settings().train_mlp);
  EXPECT_TRUE(imported.settings().train_unembed);
  EXPECT_EQ(imported.target_modules(), (std::vector<std::string>{"up_proj", "down_proj", "unembed_tokens"}));
}

TEST_F(TinyLmAdapterImport, BadTensorsAreNamed) {
  const std::vector<NamedTensor> good = trained->export_adapters();
  std::vector<NamedTensor> unknown = good;
  unknown[0].name = "base_model.model.model.layers.0.self_attn.k_proj.lora_A.weight";
  EXPECT_THAT(import_error(unknown),
              HasSubstr("tensor 'base_model.model.model.layers.0.self_attn.k_proj.lora_A.weight'"));
  std::vector<NamedTensor> half = good;
  half.erase(half.begin() + 3);  // v_proj's B
  EXPECT_THAT(import_error(half),
              HasSubstr("tensor 'base_model.model.model.layers.0.self_attn.v_proj.lora_B.weight' is missing"));
  EXPECT_THAT(import_error(good, 8), HasSubstr("expected [8, 32] (rank 8)"));
  std::vector<NamedTensor> twice = good;
  twice.push_back(good[0]);
  EXPECT_THAT(import_error(twice), HasSubstr("given twice"));
  std::vector<NamedTensor> infinite = good;
  infinite[2].values[0] = std::nanf("");
  EXPECT_THAT(import_error(infinite), HasSubstr("not finite"));
  EXPECT_THAT(import_error({}), HasSubstr("no tensors"));
}

}  // namespace
}  // namespace tinker::local::model
