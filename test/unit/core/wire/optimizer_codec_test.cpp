// Optimizer wire forms (doc/training.md#optimizers): optimizer_config on create_model and
// load_weights, optim_params vs the 0.25 adam_params on optim_step, unknown optimizers kept, and the
// client-side checks of DimuonParams.
#include <tinker/codec.hpp>
#include <tinker/error.hpp>
#include <tinker/types.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <type_traits>

namespace tinker {
namespace {

static_assert(!std::is_aggregate_v<DimuonParams>);
static_assert(!std::is_aggregate_v<AdamOptimizerConfig>);
static_assert(!std::is_aggregate_v<DimuonOptimizerConfig>);
static_assert(!std::is_aggregate_v<UnknownOptimizerConfig>);

TEST(OptimizerCodec, OptimizerConfigs) {
  EXPECT_EQ(to_json(AdamOptimizerConfig()), R"({"type":"adamw"})");
  EXPECT_EQ(to_json(DimuonOptimizerConfig()), R"({"type":"dimuon","version":1})");
  EXPECT_EQ(from_json<DimuonOptimizerConfig>(R"({"type":"dimuon","version":1})"), DimuonOptimizerConfig(1));
}

TEST(OptimizerCodec, CreateModelOmitsTheDefaultAndCarriesDimuon) {
  CreateModelRequest request("S", 0, "Qwen/Qwen3-8B", LoraConfig(8, 0));
  const std::string adam_body =
      R"({"session_id":"S","model_seq_id":0,"base_model":"Qwen/Qwen3-8B",)"
      R"("lora_config":{"rank":8,"seed":0,"train_unembed":true,"train_mlp":true,"train_attn":true},)"
      R"("type":"create_model"})";
  EXPECT_EQ(to_json(request), adam_body);  // the 0.25 body, unchanged
  request.optimizer_config = DimuonOptimizerConfig();
  EXPECT_EQ(to_json(request),
            R"({"session_id":"S","model_seq_id":0,"base_model":"Qwen/Qwen3-8B",)"
            R"("lora_config":{"rank":8,"seed":0,"train_unembed":true,"train_mlp":true,"train_attn":true},)"
            R"("optimizer_config":{"type":"dimuon","version":1},"type":"create_model"})");
  EXPECT_EQ(from_json<CreateModelRequest>(to_json(request)), request);
  EXPECT_FALSE(from_json<CreateModelRequest>(adam_body).optimizer_config.has_value());
}

TEST(OptimizerCodec, LoadWeightsCarriesOptimizerConfig) {
  LoadWeightsRequest request("S:train:0", 3, "tinker://S:train:0/weights/w", true);
  EXPECT_EQ(to_json(request),
            R"({"model_id":"S:train:0","seq_id":3,"path":"tinker://S:train:0/weights/w","optimizer":true,)"
            R"("type":"load_weights"})");
  request.optimizer_config = AdamOptimizerConfig();
  EXPECT_EQ(to_json(request),
            R"({"model_id":"S:train:0","seq_id":3,"path":"tinker://S:train:0/weights/w","optimizer":true,)"
            R"("optimizer_config":{"type":"adamw"},"type":"load_weights"})");
  EXPECT_EQ(from_json<LoadWeightsRequest>(to_json(request)), request);
}

TEST(OptimizerCodec, OptimStepInBothGenerations) {
  // 0.25: adam_params, the Python SDK 0.25's body (its numbers written as this SDK writes them).
  EXPECT_EQ(to_json(OptimStepRequest("S:train:0", 2, AdamParams())),
            R"({"adam_params":{"learning_rate":1e-04,"beta1":0.9,"beta2":0.95,"eps":1e-12,)"
            R"("weight_decay":0,"grad_clip_norm":0},"model_id":"S:train:0","seq_id":2,"type":"optim_step"})");
  // Later servers: optim_params; AdamW's has no type tag (the SDK's AdamParams has none).
  EXPECT_EQ(to_json(OptimStepRequest("S:train:0", 2, OptimParams(AdamParams()))),
            R"({"optim_params":{"learning_rate":1e-04,"beta1":0.9,"beta2":0.95,"eps":1e-12,)"
            R"("weight_decay":0,"grad_clip_norm":0},"model_id":"S:train:0","seq_id":2,"type":"optim_step"})");
  // Dimuon: tagged; damping and the rank exponent omitted while unset (the server's defaults).
  EXPECT_EQ(to_json(OptimStepRequest("S:train:0", 2, OptimParams(DimuonParams(0.02)))),
            R"({"optim_params":{"type":"dimuon","learning_rate":0.02,"grad_clip_norm":0,"beta1":0.9},)"
            R"("model_id":"S:train:0","seq_id":2,"type":"optim_step"})");
  DimuonParams full(0.02);
  full.grad_clip_norm = 1.0;
  full.beta1 = 0.5;
  full.damping = 0.25;
  full.rank_lr_correction_exponent = 0.0;
  EXPECT_EQ(to_json(full), R"({"type":"dimuon","learning_rate":0.02,"grad_clip_norm":1,"beta1":0.5,"damping":0.25,)"
                           R"("rank_lr_correction_exponent":0})");
}

TEST(OptimizerCodec, OptimParamsDecodeByType) {
  const auto tagless =
      from_json<OptimStepRequest>(R"({"optim_params":{"learning_rate":0.5},"model_id":"m","seq_id":1})");
  ASSERT_TRUE(tagless.optim_params.has_value());
  EXPECT_EQ(std::get<AdamParams>(*tagless.optim_params), AdamParams(0.5));
  EXPECT_FALSE(tagless.adam_params.has_value());
  const auto adamw =
      from_json<OptimStepRequest>(R"({"optim_params":{"type":"adamw","learning_rate":0.5},"model_id":"m","seq_id":1})");
  EXPECT_EQ(std::get<AdamParams>(*adamw.optim_params), AdamParams(0.5));
  const auto dimuon = from_json<OptimStepRequest>(
      R"({"optim_params":{"type":"dimuon","learning_rate":0.5,"damping":2},"model_id":"m","seq_id":1})");
  DimuonParams expected(0.5);
  expected.damping = 2.0;
  EXPECT_EQ(std::get<DimuonParams>(*dimuon.optim_params), expected);
  // A step of an optimizer nobody knows cannot be applied: an error naming the field.
  try {
    (void)from_json<OptimStepRequest>(R"({"optim_params":{"type":"sgd","learning_rate":1},"model_id":"m","seq_id":1})");
    FAIL() << "decoded an unknown optimizer's step";
  } catch (const error& e) {
    EXPECT_NE(e.diag().message.find("optim_params.type"), std::string::npos) << e.diag().message;
    EXPECT_NE(e.diag().message.find("sgd"), std::string::npos) << e.diag().message;
  }
  // learning_rate is required for Dimuon.
  EXPECT_THROW((void)from_json<DimuonParams>(R"({"type":"dimuon"})"), error);
}

TEST(OptimizerCodec, UnknownOptimizerConfigIsKept) {
  const std::string body =
      R"({"model_id":"m","optimizer_config":{"type":"lion","betas":[0.9,0.99]},"type":"load_weights"})";
  const auto response = from_json<LoadWeightsResponse>(body);
  ASSERT_TRUE(response.optimizer_config.has_value());
  const auto* unknown = std::get_if<UnknownOptimizerConfig>(&*response.optimizer_config);
  ASSERT_NE(unknown, nullptr);
  EXPECT_EQ(unknown->type, "lion");
  EXPECT_EQ(optimizer_type(*response.optimizer_config), "lion");
  EXPECT_EQ(unknown->fields.at("betas").text(), "[0.9,0.99]");
  EXPECT_EQ(to_json(response), body);  // written back unchanged
  EXPECT_FALSE(params_match(*response.optimizer_config, AdamParams()));
  EXPECT_FALSE(params_match(*response.optimizer_config, DimuonParams(1.0)));
  // A config without a type is malformed.
  EXPECT_THROW((void)from_json<LoadWeightsResponse>(R"({"optimizer_config":{"version":1}})"), error);
}

TEST(OptimizerCodec, WeightsInfoSaysTheCheckpointsOptimizer) {
  const auto info = from_json<WeightsInfoResponse>(
      R"({"base_model":"b","is_lora":true,"lora_rank":8,"optimizer_config":{"type":"dimuon","version":1}})");
  EXPECT_EQ(info.optimizer_config, OptimizerConfig(DimuonOptimizerConfig()));
  EXPECT_FALSE(from_json<WeightsInfoResponse>(R"({"base_model":"b","is_lora":true})").optimizer_config.has_value());
}

TEST(OptimizerCodec, ParamsMatchTheirOptimizer) {
  EXPECT_TRUE(params_match(AdamOptimizerConfig(), AdamParams()));
  EXPECT_FALSE(params_match(AdamOptimizerConfig(), DimuonParams(1.0)));
  EXPECT_TRUE(params_match(DimuonOptimizerConfig(), DimuonParams(1.0)));
  EXPECT_FALSE(params_match(DimuonOptimizerConfig(), AdamParams()));
  EXPECT_EQ(optimizer_type(OptimParams(AdamParams())), "adamw");
  EXPECT_EQ(optimizer_type(OptimParams(DimuonParams())), "dimuon");
}

TEST(OptimizerCodec, DimuonParamsChecksNameTheField) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  auto problem_of = [](auto change) {
    DimuonParams p(0.01);
    change(p);
    return optim_params_problem(p);
  };
  EXPECT_EQ(optim_params_problem(DimuonParams(0.01)), "");
  EXPECT_EQ(problem_of([](DimuonParams& p) { p.grad_clip_norm = -1.0; }), "");  // nonpositive: no clipping
  EXPECT_EQ(problem_of([&](DimuonParams& p) { p.learning_rate = -1.0; }),
            "dimuon_params.learning_rate: must be finite and >= 0, got -1");
  EXPECT_EQ(problem_of([&](DimuonParams& p) { p.learning_rate = nan; }),
            "dimuon_params.learning_rate: must be finite and >= 0, got nan");
  EXPECT_EQ(problem_of([&](DimuonParams& p) { p.grad_clip_norm = inf; }),
            "dimuon_params.grad_clip_norm: must be finite (0 or less: no clipping), got inf");
  EXPECT_EQ(problem_of([&](DimuonParams& p) { p.beta1 = 1.0; }), "dimuon_params.beta1: must be in [0, 1), got 1");
  EXPECT_EQ(problem_of([&](DimuonParams& p) { p.beta1 = nan; }), "dimuon_params.beta1: must be in [0, 1), got nan");
  EXPECT_EQ(problem_of([&](DimuonParams& p) { p.damping = 0.0; }),
            "dimuon_params.damping: must be finite and > 0, got 0");
  EXPECT_EQ(problem_of([&](DimuonParams& p) { p.damping = inf; }),
            "dimuon_params.damping: must be finite and > 0, got inf");
  EXPECT_EQ(problem_of([&](DimuonParams& p) { p.rank_lr_correction_exponent = nan; }),
            "dimuon_params.rank_lr_correction_exponent: must be finite (0 disables), got nan");
  // AdamParams are the server's to check, as in 0.25.
  EXPECT_EQ(optim_params_problem(AdamParams(-1.0)), "");
}

}  // namespace
}  // namespace tinker
