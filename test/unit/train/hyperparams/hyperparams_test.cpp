// Learning-rate schedules, the cookbook's get_lr and LoRA parameter counts, against values
// worked out by hand.
#include <tinker/train/hyperparams.hpp>

#include "support/expect_error.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

namespace tinker::train {
namespace {

using test::expect_tinker_error;

TEST(LrSchedule, WithoutWarmupItIsTheCookbooksSchedule) {
  // compute_schedule_lr_multiplier: linear 1 - step/total, cosine (1 + cos(pi step/total)) / 2.
  const LrSchedule linear(LrShape::linear);
  EXPECT_DOUBLE_EQ(linear.multiplier(0, 8), 1.0);
  EXPECT_DOUBLE_EQ(linear.multiplier(3, 8), 0.625);
  EXPECT_DOUBLE_EQ(linear.multiplier(7, 8), 0.125);
  const LrSchedule cosine(LrShape::cosine);
  EXPECT_DOUBLE_EQ(cosine.multiplier(0, 8), 1.0);
  EXPECT_NEAR(cosine.multiplier(3, 8), 0.6913417161825449, 1e-15);
  EXPECT_DOUBLE_EQ(cosine.multiplier(4, 8), 0.5);
  EXPECT_DOUBLE_EQ(LrSchedule().multiplier(7, 8), 1.0);
}

TEST(LrSchedule, WarmupRisesToTheBaseThenDecaysOverTheRest) {
  const LrSchedule schedule(LrShape::linear, 4);
  EXPECT_DOUBLE_EQ(schedule.multiplier(0, 12), 0.25);
  EXPECT_DOUBLE_EQ(schedule.multiplier(3, 12), 1.0);
  EXPECT_DOUBLE_EQ(schedule.multiplier(4, 12), 1.0);  // first decay step: t = 0 of 8
  EXPECT_DOUBLE_EQ(schedule.multiplier(8, 12), 0.5);  // t = 4 of 8
  EXPECT_DOUBLE_EQ(schedule.multiplier(11, 12), 0.125);
  EXPECT_DOUBLE_EQ(schedule.learning_rate(2e-4, 8, 12), 1e-4);
  EXPECT_DOUBLE_EQ(LrSchedule(LrShape::constant, 2).multiplier(0, 5), 0.5);
}

TEST(LrSchedule, MinRatioIsTheFloor) {
  const LrSchedule linear(LrShape::linear, 0, 0.1);
  EXPECT_DOUBLE_EQ(linear.multiplier(0, 10), 1.0);
  EXPECT_DOUBLE_EQ(linear.multiplier(5, 10), 0.1 + 0.9 * 0.5);
  const LrSchedule cosine(LrShape::cosine, 2, 0.2);
  EXPECT_DOUBLE_EQ(cosine.multiplier(6, 10), 0.2 + 0.8 * 0.5);  // t = 4 of 8
}

TEST(LrSchedule, BadValuesNameTheField) {
  expect_tinker_error(errc::invalid_argument, "warmup_steps", [] { LrSchedule(LrShape::linear, -1).multiplier(0, 5); });
  expect_tinker_error(errc::invalid_argument, "min_ratio",
                      [] { LrSchedule(LrShape::linear, 0, 1.5).multiplier(0, 5); });
  expect_tinker_error(errc::invalid_argument, "total_steps", [] { LrSchedule().multiplier(0, 0); });
  expect_tinker_error(errc::invalid_argument, "step must be in [0, 5), got 5", [] { LrSchedule().multiplier(5, 5); });
}

TEST(LrSchedule, ShapesHaveNames) {
  for (const auto shape : {LrShape::constant, LrShape::linear, LrShape::cosine}) {
    EXPECT_EQ(parse_lr_shape(to_string(shape)), shape);
  }
  expect_tinker_error(errc::invalid_argument, "constant, linear, cosine", [] { parse_lr_shape("step"); });
}

TEST(GetLr, TheCookbooksFormula) {
  // 5e-5 * 10 (LoRA) * (2000 / hidden_size) ^ exponent; Qwen 0.0775, Llama 0.781.
  EXPECT_NEAR(get_lr("Qwen/Qwen3-8B"), 5e-4 * std::pow(2000.0 / 4096.0, 0.0775), 1e-18);
  EXPECT_NEAR(get_lr("Qwen/Qwen3-8B"), 0.00047297908091376354, 1e-15);
  EXPECT_NEAR(get_lr("meta-llama/Llama-3.1-8B"), 0.0002856415043086949, 1e-15);
  EXPECT_NEAR(get_lr("meta-llama/Llama-3.3-70B-Instruct", false), 1.6623286309571608e-05, 1e-17);
  EXPECT_NEAR(get_lr("Qwen/Qwen3-30B-A3B:peft:131072"), 0.0004990818286656736, 1e-15);
}

TEST(GetLr, RefusesFamiliesWithoutAFormulaAndUnknownSizes) {
  expect_tinker_error(errc::invalid_argument, "deepseek-ai/DeepSeek-V3.1", [] { get_lr("deepseek-ai/DeepSeek-V3.1"); });
  expect_tinker_error(errc::invalid_argument, "hidden size", [] { get_lr("Qwen/Qwen9-1T"); });
}

TEST(LoraParamCount, ServedModelsPerTarget) {
  // Llama-3.2-1B, per rank: mlp 16 * 3 * (2048 + 8192), attn 16 * (4096 + 2560 + 2560 + 4096),
  // unembed 2048 + 128256.
  EXPECT_EQ(lora_param_count("meta-llama/Llama-3.2-1B", 1), 491'520 + 212'992 + 130'304);
  EXPECT_EQ(lora_param_count("meta-llama/Llama-3.2-1B"), 32 * (491'520 + 212'992 + 130'304));
  LoraTargets attention_only;
  attention_only.mlp = false;
  attention_only.unembed = false;
  EXPECT_EQ(lora_param_count("Qwen/Qwen3-8B:peft:131072", 8, attention_only), 8 * 958'464);
  expect_tinker_error(errc::invalid_argument, "rank", [] { lora_param_count("Qwen/Qwen3-8B", 0); });
  expect_tinker_error(errc::invalid_argument, "lora_param_count_from_config", [] { lora_param_count("acme/m"); });
  LoraTargets none;
  none.mlp = none.attn = none.unembed = false;
  expect_tinker_error(errc::invalid_argument, "LoraTargets", [&] { lora_param_count("Qwen/Qwen3-8B", 8, none); });
}

// The models' config.json fields that the count reads.
constexpr const char* llama_1b_config = R"({"hidden_size": 2048, "num_hidden_layers": 16, "intermediate_size": 8192,
  "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64, "vocab_size": 128256})";
constexpr const char* qwen3_30b_a3b_config = R"({"hidden_size": 2048, "num_hidden_layers": 48,
  "intermediate_size": 6144, "moe_intermediate_size": 768, "num_experts": 128, "num_experts_per_tok": 8,
  "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 151936})";
constexpr const char* deepseek_v3_config = R"({"hidden_size": 7168, "num_hidden_layers": 61,
  "intermediate_size": 18432, "moe_intermediate_size": 2048, "n_routed_experts": 256, "n_shared_experts": 1,
  "first_k_dense_replace": 3, "num_attention_heads": 128, "q_lora_rank": 1536, "kv_lora_rank": 512,
  "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "vocab_size": 129280})";

TEST(LoraParamCount, FromConfigMatchesTheMeasuredCounts) {
  EXPECT_EQ(lora_param_count_from_config(llama_1b_config, 4), lora_param_count("meta-llama/Llama-3.2-1B", 4));
  // Experts share the hidden-side factor: 48 * 3 * (2048 + 128 * 768) = 14,450,688 per rank.
  EXPECT_EQ(lora_param_count_from_config(qwen3_30b_a3b_config, 1), 14'450'688 + 835'584 + 153'984);
  EXPECT_EQ(lora_param_count_from_config(deepseek_v3_config, 2), lora_param_count("deepseek-ai/DeepSeek-V3.1", 2));
}

TEST(LoraParamCount, FromConfigReadsTextConfigAndNamesMissingFields) {
  const std::string nested = std::string(R"({"architectures": ["X"], "text_config": )") + llama_1b_config + "}";
  EXPECT_EQ(lora_param_count_from_config(nested, 1), 491'520 + 212'992 + 130'304);
  expect_tinker_error(errc::invalid_argument, "\"vocab_size\"", [] {
    lora_param_count_from_config(R"({"hidden_size": 8, "num_hidden_layers": 1,
                           "intermediate_size": 8, "num_attention_heads": 2})");
  });
  expect_tinker_error(errc::invalid_argument, "not a JSON object", [] { lora_param_count_from_config("[]"); });
}

}  // namespace
}  // namespace tinker::train
