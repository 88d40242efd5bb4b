// find_quantized_weights on the headers of synthetic gpt-oss (MXFP4) and Kimi K2/K2.5
// (pack-quantized INT4) models with their real parameter names: the logical names the merge
// planner targets, their shapes, and malformed parts refused with the tensor named.
#include "weights/quantized.hpp"

#include "support/expect_error.hpp"
#include "unit/weights/quantized_test_support.hpp"

#include <gtest/gtest.h>

#include <array>
#include <tuple>
#include <utility>

namespace tinker::weights::quantized_test {
namespace {

using Shape = std::vector<std::int64_t>;

// A one-layer gpt-oss: hidden 64, intermediate 32, 4 experts (the real model: 2880, 2880, 32).
std::map<std::string, TensorLayout> gpt_oss_tensors() {
  const std::string experts = "model.layers.0.mlp.experts.";
  return {
      {experts + "gate_up_proj_blocks", {Dtype::u8, {4, 64, 2, 16}}},  // [E, 2 * intermediate, hidden / 32, 16]
      {experts + "gate_up_proj_scales", {Dtype::u8, {4, 64, 2}}},
      {experts + "gate_up_proj_bias", {Dtype::bf16, {4, 64}}},
      {experts + "down_proj_blocks", {Dtype::u8, {4, 64, 1, 16}}},  // [E, hidden, intermediate / 32, 16]
      {experts + "down_proj_scales", {Dtype::u8, {4, 64, 1}}},
      {experts + "down_proj_bias", {Dtype::bf16, {4, 64}}},
      {"model.layers.0.mlp.router.weight", {Dtype::bf16, {4, 64}}},
      {"model.layers.0.self_attn.q_proj.weight", {Dtype::bf16, {64, 64}}},
      {"model.embed_tokens.weight", {Dtype::bf16, {128, 64}}},
  };
}

// Kimi's routed experts of layer 1 (hidden 64, expert dim 32, group 32), as the cookbook's tests
// build them, under `prefix` ("" for K2, "language_model." for K2.5), next to bf16 shared experts.
std::map<std::string, TensorLayout> kimi_tensors(const std::string& prefix) {
  std::map<std::string, TensorLayout> tensors{
      {prefix + "model.layers.1.mlp.shared_experts.gate_proj.weight", {Dtype::bf16, {32, 64}}},
      {prefix + "model.layers.1.self_attn.q_a_proj.weight", {Dtype::bf16, {64, 64}}},
  };
  for (const auto* e : {"0", "1"}) {
    const auto base = prefix + "model.layers.1.mlp.experts." + e + ".";
    const std::array<std::tuple<std::string, std::int64_t, std::int64_t>, 3> projections{
        {{"gate_proj", 32, 64}, {"up_proj", 32, 64}, {"down_proj", 64, 32}}};
    for (const auto& [proj, rows, cols] : projections) {
      tensors[base + proj + ".weight_packed"] = {Dtype::i32, {rows, cols / 8}};
      tensors[base + proj + ".weight_scale"] = {Dtype::bf16, {rows, cols / 32}};
      tensors[base + proj + ".weight_shape"] = {Dtype::i32, {2}};
    }
  }
  return tensors;
}

TEST(QuantizedWeights, GptOssExpertsAreTheirFusedNamesInTheUnquantizedLayout) {
  auto layout = make_layout(mxfp4_config(), gpt_oss_tensors());
  detail::find_quantized_weights(layout);
  ASSERT_EQ(layout.quantized.size(), 2U);
  const auto& gate_up = layout.quantized.at("model.layers.0.mlp.experts.gate_up_proj");
  EXPECT_EQ(gate_up.kind, QuantizedKind::mxfp4);
  EXPECT_EQ(gate_up.parts, (std::vector<std::string>{"model.layers.0.mlp.experts.gate_up_proj_blocks",
                                                     "model.layers.0.mlp.experts.gate_up_proj_scales"}));
  EXPECT_EQ(gate_up.logical.dtype, Dtype::bf16);
  EXPECT_EQ(gate_up.logical.shape, (Shape{4, 64, 64}));  // [E, hidden (in), 2 * intermediate (out)]
  EXPECT_EQ(gate_up.group_size, 32);
  EXPECT_TRUE(gate_up.unsupported.empty());
  const auto& down = layout.quantized.at("model.layers.0.mlp.experts.down_proj");
  EXPECT_EQ(down.logical.shape, (Shape{4, 32, 64}));  // [E, intermediate (in), hidden (out)]
  EXPECT_EQ(layout.tensors.size(), 9U);               // the parts stay base tensors, copied or rewritten
}

TEST(QuantizedWeights, BlocksAreMxfp4OnlyWhenTheConfigSaysSo) {
  auto layout = make_layout(R"({"model_type": "gpt_oss", "architectures": ["GptOssForCausalLM"]})", gpt_oss_tensors());
  detail::find_quantized_weights(layout);
  EXPECT_TRUE(layout.quantized.empty());
  layout.config_json.clear();
  detail::find_quantized_weights(layout);
  EXPECT_TRUE(layout.quantized.empty());
  // A model in the cookbook's "mxfp4" family also carrying a plain tensor of the logical name:
  // the plain tensor is the target.
  auto tensors = gpt_oss_tensors();
  tensors["model.layers.0.mlp.experts.down_proj"] = {Dtype::bf16, {4, 32, 64}};
  auto both = make_layout(mxfp4_config(), tensors);
  detail::find_quantized_weights(both);
  EXPECT_EQ(both.quantized.size(), 1U);
  EXPECT_TRUE(both.quantized.contains("model.layers.0.mlp.experts.gate_up_proj"));
}

TEST(QuantizedWeights, KimiPackedExpertsAreVirtualWeightKeys) {
  const std::array<std::pair<std::string, bool>, 2> variants{{{"", false}, {"language_model.", true}}};
  for (const auto& [prefix, nested] : variants) {
    auto layout = make_layout(pack_quantized_config(32, nested), kimi_tensors(prefix));
    detail::find_quantized_weights(layout);
    ASSERT_EQ(layout.quantized.size(), 6U) << prefix;
    const auto& gate = layout.quantized.at(prefix + "model.layers.1.mlp.experts.0.gate_proj.weight");
    EXPECT_EQ(gate.kind, QuantizedKind::packed_int4);
    const auto base = prefix + "model.layers.1.mlp.experts.0.gate_proj";
    EXPECT_EQ(gate.parts,
              (std::vector<std::string>{base + ".weight_packed", base + ".weight_scale", base + ".weight_shape"}));
    EXPECT_EQ(gate.logical.dtype, Dtype::bf16);
    EXPECT_EQ(gate.logical.shape, (Shape{32, 64}));
    EXPECT_EQ(gate.group_size, 32);
    EXPECT_TRUE(gate.unsupported.empty());
    EXPECT_EQ(layout.quantized.at(prefix + "model.layers.1.mlp.experts.1.down_proj.weight").logical.shape,
              (Shape{64, 32}));
    EXPECT_FALSE(layout.quantized.contains(prefix + "model.layers.1.mlp.shared_experts.gate_proj.weight"));
  }
}

TEST(QuantizedWeights, PackedWeightsNeedThePackQuantizedFormat) {
  auto layout =
      make_layout(R"({"model_type": "kimi_k2", "quantization_config": {"quant_method": "fp8"}})", kimi_tensors(""));
  detail::find_quantized_weights(layout);
  EXPECT_TRUE(layout.quantized.empty());
}

TEST(QuantizedWeights, GroupSizeComesFromTheConfigElseTheScale) {
  const std::map<std::string, TensorLayout> per_channel{{"m.proj.weight_packed", {Dtype::i32, {4, 8}}},
                                                        {"m.proj.weight_scale", {Dtype::f16, {4, 1}}},
                                                        {"m.proj.weight_shape", {Dtype::i64, {2}}}};
  auto inferred = make_layout(pack_quantized_config(0), per_channel);
  detail::find_quantized_weights(inferred);
  EXPECT_EQ(inferred.quantized.at("m.proj.weight").group_size, 64);
  auto stated = make_layout(pack_quantized_config(32), per_channel);
  test::expect_tinker_error(errc::invalid_file,
                            "tensor 'm.proj.weight_scale': a scale must be BF16, F16 or F32 "
                            "[rows, cols / group_size] = [4, 64 / 32], not F16 [4, 1]",
                            [&] { detail::find_quantized_weights(stated); });
}

TEST(QuantizedWeights, UnsupportedPackedFormsAreRecordedWithTheReason) {
  auto zero_point_tensors = kimi_tensors("");
  zero_point_tensors["model.layers.1.mlp.experts.0.up_proj.weight_zero_point"] = {Dtype::i32, {4, 2}};
  auto zero_points = make_layout(pack_quantized_config(32), zero_point_tensors);
  detail::find_quantized_weights(zero_points);
  EXPECT_NE(zero_points.quantized.at("model.layers.1.mlp.experts.0.up_proj.weight").unsupported.find("asymmetric"),
            std::string::npos);
  EXPECT_TRUE(zero_points.quantized.at("model.layers.1.mlp.experts.0.gate_proj.weight").unsupported.empty());

  auto eight_bit =
      make_layout(pack_quantized_config(16, false, true, 8), {{"m.proj.weight_packed", {Dtype::i32, {4, 8}}},
                                                              {"m.proj.weight_scale", {Dtype::bf16, {4, 2}}},
                                                              {"m.proj.weight_shape", {Dtype::i32, {2}}}});
  detail::find_quantized_weights(eight_bit);
  const auto& weight = eight_bit.quantized.at("m.proj.weight");
  EXPECT_EQ(weight.logical.shape, (Shape{4, 32}));  // four 8-bit values an int32
  EXPECT_NE(weight.unsupported.find("8 bits"), std::string::npos);
}

void expect_invalid(const std::map<std::string, TensorLayout>& tensors, const std::string& config,
                    const std::string& text) {
  auto layout = make_layout(config, tensors);
  test::expect_tinker_error(errc::invalid_file, text, [&] { detail::find_quantized_weights(layout); });
}

TEST(QuantizedWeights, InconsistentMxfp4PartsNameTheTensor) {
  auto no_scales = gpt_oss_tensors();
  no_scales.erase("model.layers.0.mlp.experts.down_proj_scales");
  expect_invalid(no_scales, mxfp4_config(),
                 "/models/base: tensor 'model.layers.0.mlp.experts.down_proj_blocks': its scales tensor "
                 "'model.layers.0.mlp.experts.down_proj_scales' is not in the model");
  auto wrong_scales = gpt_oss_tensors();
  wrong_scales["model.layers.0.mlp.experts.down_proj_scales"] = {Dtype::u8, {4, 64, 2}};
  expect_invalid(wrong_scales, mxfp4_config(),
                 "tensor 'model.layers.0.mlp.experts.down_proj_scales': MXFP4 scales must be U8 (or F8_E8M0) of the "
                 "blocks' shape without the last axis, not U8 [4, 64, 2] for blocks U8 [4, 64, 1, 16]");
  auto float_scales = gpt_oss_tensors();
  float_scales["model.layers.0.mlp.experts.down_proj_scales"] = {Dtype::f32, {4, 64, 1}};
  expect_invalid(float_scales, mxfp4_config(), "down_proj_scales': MXFP4 scales must be U8");
  auto e8m0_scales = gpt_oss_tensors();
  e8m0_scales["model.layers.0.mlp.experts.down_proj_scales"] = {Dtype::f8_e8m0, {4, 64, 1}};
  auto accepted = make_layout(mxfp4_config(), e8m0_scales);
  detail::find_quantized_weights(accepted);
  EXPECT_EQ(accepted.quantized.size(), 2U);
  auto wide_blocks = gpt_oss_tensors();
  wide_blocks["model.layers.0.mlp.experts.down_proj_blocks"] = {Dtype::u8, {4, 64, 1, 32}};
  expect_invalid(
      wide_blocks, mxfp4_config(),
      "tensor 'model.layers.0.mlp.experts.down_proj_blocks': MXFP4 blocks must be U8 [..., rows, blocks, 16], "
      "not U8 [4, 64, 1, 32]");
  auto flat_blocks = gpt_oss_tensors();
  flat_blocks["model.layers.0.mlp.experts.down_proj_blocks"] = {Dtype::u8, {64, 16}};
  expect_invalid(flat_blocks, mxfp4_config(), "down_proj_blocks': MXFP4 blocks must be U8");
  auto huge = gpt_oss_tensors();
  huge["model.layers.0.mlp.experts.down_proj_blocks"] = {Dtype::u8, {INT64_MAX / 2, 64, 1, 16}};
  huge["model.layers.0.mlp.experts.down_proj_scales"] = {Dtype::u8, {INT64_MAX / 2, 64, 1}};
  expect_invalid(huge, mxfp4_config(), "down_proj_blocks': its shape is negative or too large");
}

TEST(QuantizedWeights, InconsistentPackedPartsNameTheTensor) {
  const std::string base = "model.layers.1.mlp.experts.0.down_proj";
  const auto config = pack_quantized_config(32);
  auto no_shape = kimi_tensors("");
  no_shape.erase(base + ".weight_shape");
  expect_invalid(
      no_shape, config,
      "tensor '" + base + ".weight_packed': its shape tensor '" + base + ".weight_shape' is not in the model");
  auto no_scale = kimi_tensors("");
  no_scale.erase(base + ".weight_scale");
  expect_invalid(
      no_scale, config,
      "tensor '" + base + ".weight_packed': its scale tensor '" + base + ".weight_scale' is not in the model");
  auto three_d = kimi_tensors("");
  three_d[base + ".weight_packed"] = {Dtype::i32, {1, 64, 4}};
  expect_invalid(
      three_d, config,
      "tensor '" + base + ".weight_packed': a packed weight must be I32 [rows, cols / 8], not I32 [1, 64, 4]");
  auto bytes_packed = kimi_tensors("");
  bytes_packed[base + ".weight_packed"] = {Dtype::u8, {64, 16}};
  expect_invalid(bytes_packed, config, "weight_packed': a packed weight must be I32");
  auto short_scale = kimi_tensors("");
  short_scale[base + ".weight_scale"] = {Dtype::bf16, {63, 1}};
  expect_invalid(short_scale, config, "tensor '" + base + ".weight_scale': a scale must be BF16, F16 or F32");
  auto int_scale = kimi_tensors("");
  int_scale[base + ".weight_scale"] = {Dtype::i32, {64, 1}};
  expect_invalid(int_scale, config, "weight_scale': a scale must be BF16, F16 or F32");
  auto float_shape = kimi_tensors("");
  float_shape[base + ".weight_shape"] = {Dtype::f32, {2}};
  expect_invalid(float_shape, config,
                 "tensor '" + base + ".weight_shape': weight_shape must be I32 or I64 [2], not F32 [2]");
  // A group of 48 does not divide the 32 columns of down_proj.
  expect_invalid(kimi_tensors(""), pack_quantized_config(48), "weight_scale': a scale must be BF16, F16 or F32");
}

TEST(QuantizedWeights, ConfigThatIsNotJsonIsAnInvalidFile) {
  expect_invalid(kimi_tensors(""), "{\"quantization_config\": ", "/models/base/config.json: not a JSON object");
}

}  // namespace
}  // namespace tinker::weights::quantized_test
