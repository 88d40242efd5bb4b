// The frozen base model: deterministic by name, nearly uniform, yet context-dependent.
#include "programs/local/model/tiny_lm_internal.hpp"
#include "unit/programs/local/model/model_test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace tinker::local::model {
namespace {

using namespace testing;

constexpr int kBaseModelVocab = 131;

std::vector<float> base_logprobs(const BaseModel& base, const std::vector<TokenId>& sequence) {
  return logprobs_of(forward_base(base, ForwardBackwardInput({cross_entropy_datum(sequence)}, loss_fn::cross_entropy)),
                     0);
}

TEST(TinyLmBaseModel, SameNameSameWeightsDifferentNamesDiffer) {
  const std::vector<TokenId> text = random_tokens(1, 24, kBaseModelVocab);
  const BaseModel a("Qwen/Qwen3-8B", small_arch(kBaseModelVocab));
  const BaseModel b("Qwen/Qwen3-8B", small_arch(kBaseModelVocab));
  const BaseModel c("meta-llama/Llama-3.2-1B", small_arch(kBaseModelVocab));
  EXPECT_EQ(a.weights().unembed.values, b.weights().unembed.values);
  EXPECT_EQ(a.weights().wq.values, b.weights().wq.values);
  EXPECT_EQ(base_logprobs(a, text), base_logprobs(b, text));
  EXPECT_NE(base_logprobs(a, text), base_logprobs(c, text));
  EXPECT_EQ(a.name(), "Qwen/Qwen3-8B");
  EXPECT_EQ(a.arch().vocab_size, kBaseModelVocab);
}

// Pins the generators: a change to the PRNG, the normal sampler or the init scales would
// silently change every model, invalidating saved checkpoints and recorded expectations. The
// draws are rounded to float32 (so an f32 export is exact): the pinned draw, then its rounding.
TEST(TinyLmBaseModel, WeightsArePinned) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(Rng(0).next(), 0x99ec5f36cb75f2b4ULL);
  const BaseModel model("pinned", small_arch(kBaseModelVocab));
  auto as_float = [](double draw) { return static_cast<double>(static_cast<float>(draw)); };
  EXPECT_EQ(model.weights().embed.values[0], as_float(0x1.5cad676cfa308p-1));
  EXPECT_EQ(model.weights().embed.values[1], as_float(0x1.8500d686f90e8p-1));
  EXPECT_EQ(model.weights().unembed.values[0], as_float(0x1.08e342c710a07p-5));
  for (const double weight : model.weights().wq.values) EXPECT_EQ(weight, as_float(weight));
}

TEST(TinyLmBaseModel, NextTokenDistributionDependsOnContext) {
  const BaseModel base("context", small_arch(kBaseModelVocab));
  std::vector<TokenId> first = random_tokens(5, 12, kBaseModelVocab);
  std::vector<TokenId> second = first;
  second[2] = (second[2] + 1) % kBaseModelVocab;  // change one early token; same final input and target
  const std::vector<float> a = base_logprobs(base, first);
  const std::vector<float> b = base_logprobs(base, second);
  EXPECT_EQ(a[0], b[0]);  // position 0 cannot see the change
  EXPECT_GT(std::abs(a.back() - b.back()), 1e-4);
  // The position matters too: the same token pair at a different offset.
  const std::vector<float> shifted = base_logprobs(base, {first[10], first[11]});
  EXPECT_NE(shifted[0], a.back());
}

TEST(TinyLmBaseModel, InitialCrossEntropyIsNearLogVocab) {
  const BaseModel base("flat", small_arch(kBaseModelVocab));
  const std::vector<float> lp = base_logprobs(base, random_tokens(77, 100, kBaseModelVocab));
  double sum = 0.0;
  for (float p : lp) sum -= p;
  const double mean = sum / static_cast<double>(lp.size());
  EXPECT_NEAR(mean, std::log(static_cast<double>(kBaseModelVocab)), 0.4);
  // Not perfectly flat either: the distribution over the vocabulary has visible structure.
  const EffectiveWeights weights(base, nullptr);
  Activations acts(base.arch(), false);
  std::vector<double> distribution(kBaseModelVocab);
  step(weights, 3, acts, distribution.data());
  const auto [lo, hi] = std::minmax_element(distribution.begin(), distribution.end());
  EXPECT_GT(*hi - *lo, 0.5);
}

TEST(TinyLmBaseModel, NewAdapterEqualsTheBaseModel) {
  const BaseModel base("fresh", small_arch(kBaseModelVocab));
  LoraState lora(base, lora_settings(8, 123));
  const ForwardBackwardInput batch = sft_batch(kBaseModelVocab, 2, 9);
  EXPECT_EQ(forward_backward(base, lora, batch, true), forward_base(base, batch));
}

TEST(TinyLmBaseModel, OutputsHaveTheDocumentedShape) {
  const BaseModel base("shape", small_arch(kBaseModelVocab));
  const ForwardBackwardInput batch = sft_batch(kBaseModelVocab, 2, 9);
  const ForwardBackwardOutput out = forward_base(base, batch);
  EXPECT_EQ(out.loss_fn_output_type, "ArrayRecord");
  ASSERT_EQ(out.loss_fn_outputs.size(), 2u);
  double total = 0.0;
  for (const LossFnOutput& record : out.loss_fn_outputs) {
    ASSERT_EQ(record.size(), 2u);
    EXPECT_EQ(record.at("logprobs").effective_shape(), std::vector<std::int64_t>{8});
    EXPECT_EQ(record.at("logprobs").dtype(), DType::float32);
    const auto losses = record.at("elementwise_loss").floats();
    const auto logprobs = record.at("logprobs").floats();
    ASSERT_EQ(losses.size(), 8u);
    for (std::size_t i = 0; i < 8; ++i) {
      EXPECT_LT(logprobs[i], 0.0f);
      EXPECT_FLOAT_EQ(losses[i], -logprobs[i]);  // cross_entropy with weight 1
      total += losses[i];
    }
  }
  EXPECT_EQ(out.metrics.size(), 1u);
  EXPECT_NEAR(out.metrics.at("loss:sum"), total, 1e-4);
}

TEST(TinyLmBaseModel, LongSequencesHaveNoPositionCap) {
  Architecture arch = small_arch(kBaseModelVocab);
  arch.max_context = 5000;
  const BaseModel base("long", arch);
  const std::vector<float> lp = base_logprobs(base, random_tokens(8, 601, kBaseModelVocab));
  ASSERT_EQ(lp.size(), 600u);
  for (float p : lp) ASSERT_TRUE(std::isfinite(p) && p < 0.0f);
}

TEST(TinyLmBaseModel, InvalidArchitectureIsAProgrammingError) {
  EXPECT_THROW(BaseModel("x", small_arch(1)), std::invalid_argument);
  Architecture arch = small_arch();
  arch.d_model = 0;
  EXPECT_THROW(BaseModel("x", arch), std::invalid_argument);
}

}  // namespace
}  // namespace tinker::local::model
