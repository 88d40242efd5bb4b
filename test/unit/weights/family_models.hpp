// One tiny base model and one Tinker adapter per family the exporters know, with the families'
// real parameter names (as the cookbook's tests and the Hugging Face checkpoints spell them) and
// small shapes: hidden 16, vocabulary 32, LoRA rank 4, alpha 8. The merge-planning and PEFT tests
// share them, so each family's names are written down once.
#pragma once

#include "unit/weights/lora_fixtures.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace tinker::test::lora_fixtures {

constexpr std::int64_t kHidden = 16;
constexpr std::int64_t kVocab = 32;
constexpr std::int64_t kRank = 4;
constexpr int kAlpha = 8;

struct FamilyCase {
  std::string config_json;
  std::vector<BaseTensor> base;
  std::vector<AdapterTensor> adapter;

  /// The adapter tensor called `name` (for expected values).
  const AdapterTensor& tensor(const std::string& name) const {
    for (const auto& t : adapter) {
      if (t.name == name) return t;
    }
    throw std::runtime_error("no adapter tensor " + name);
  }
};

/// Writes `family` as <root>/base and <root>/adapter.
inline void write_family(const std::filesystem::path& root, const FamilyCase& family) {
  write_model(root / "base", family.config_json, family.base);
  write_adapter(root / "adapter", family.adapter, static_cast<int>(kRank), kAlpha);
}

/// The attention and MLP weights of one standard decoder layer ("model.layers.<n>.").
inline void add_standard_layer(std::vector<BaseTensor>& base, const std::string& layer) {
  const std::vector<BaseTensor> tensors{
      {layer + "input_layernorm.weight", {kHidden}},      {layer + "self_attn.q_proj.weight", {32, kHidden}},
      {layer + "self_attn.k_proj.weight", {16, kHidden}}, {layer + "self_attn.v_proj.weight", {16, kHidden}},
      {layer + "self_attn.o_proj.weight", {kHidden, 32}}, {layer + "post_attention_layernorm.weight", {kHidden}},
      {layer + "mlp.gate_proj.weight", {24, kHidden}},    {layer + "mlp.up_proj.weight", {24, kHidden}},
      {layer + "mlp.down_proj.weight", {kHidden, 24}},
  };
  base.insert(base.end(), tensors.begin(), tensors.end());
}

/// Dense Qwen3 (Qwen3-8B: separate lm_head), every projection and the unembedding adapted.
inline FamilyCase qwen3_dense() {
  FamilyCase f;
  f.config_json =
      R"({"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 16, "tie_word_embeddings": false})";
  f.base = {{"model.embed_tokens.weight", {kVocab, kHidden}},
            {"model.layers.0.self_attn.q_norm.weight", {8}},
            {"model.layers.0.self_attn.k_norm.weight", {8}},
            {"model.norm.weight", {kHidden}},
            {"lm_head.weight", {kVocab, kHidden}}};
  add_standard_layer(f.base, "model.layers.0.");
  const std::string layer = "base_model.model.model.layers.0.";
  append(f.adapter, lora_pair(layer + "self_attn.q_proj", kRank, kHidden, 32, 100));
  append(f.adapter, lora_pair(layer + "self_attn.k_proj", kRank, kHidden, 16, 200));
  append(f.adapter, lora_pair(layer + "self_attn.v_proj", kRank, kHidden, 16, 300));
  append(f.adapter, lora_pair(layer + "self_attn.o_proj", kRank, 32, kHidden, 400));
  append(f.adapter, lora_pair(layer + "mlp.gate_proj", kRank, kHidden, 24, 500));
  append(f.adapter, lora_pair(layer + "mlp.up_proj", kRank, kHidden, 24, 600));
  append(f.adapter, lora_pair(layer + "mlp.down_proj", kRank, 24, kHidden, 700));
  append(f.adapter, lora_pair("base_model.model.model.unembed_tokens", kRank, kHidden, kVocab, 800));
  return f;
}

/// Llama 3.2 1B: tied embeddings (no lm_head.weight), so the unembedding adapts embed_tokens.
inline FamilyCase llama3_tied() {
  FamilyCase f;
  f.config_json =
      R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 16, "tie_word_embeddings": true})";
  f.base = {{"model.embed_tokens.weight", {kVocab, kHidden}}, {"model.norm.weight", {kHidden}}};
  add_standard_layer(f.base, "model.layers.0.");
  append(f.adapter, lora_pair("base_model.model.model.layers.0.self_attn.q_proj", kRank, kHidden, 32, 100));
  append(f.adapter, lora_pair("base_model.model.model.layers.0.self_attn.v_proj", kRank, kHidden, 16, 200));
  append(f.adapter, lora_pair("base_model.model.model.unembed_tokens", kRank, kHidden, kVocab, 300));
  return f;
}

/// Tinker's expert pairs as it trains them: w1 (gate) and w3 (up) share lora_A across experts,
/// w2 (down) shares lora_B.
inline void add_expert_pairs(std::vector<AdapterTensor>& adapter, const std::string& experts, std::int64_t count,
                             std::int64_t intermediate, bool with_up = true) {
  append(adapter, expert_pair(experts + ".w1", 1, count, kRank, kHidden, intermediate, 2000));
  if (with_up) append(adapter, expert_pair(experts + ".w3", 1, count, kRank, kHidden, intermediate, 4000));
  append(adapter, expert_pair(experts + ".w2", count, 1, kRank, intermediate, kHidden, 6000));
}

/// Qwen3 MoE (Qwen3-30B-A3B): one weight per expert.
inline FamilyCase qwen3_moe() {
  FamilyCase f;
  f.config_json = R"({"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "num_experts": 4})";
  f.base = {{"model.embed_tokens.weight", {kVocab, kHidden}},
            {"model.layers.0.self_attn.q_proj.weight", {32, kHidden}},
            {"model.layers.0.self_attn.o_proj.weight", {kHidden, 32}},
            {"model.layers.0.mlp.gate.weight", {4, kHidden}},
            {"lm_head.weight", {kVocab, kHidden}}};
  for (int e = 0; e < 4; ++e) {
    const std::string expert = "model.layers.0.mlp.experts." + std::to_string(e) + ".";
    f.base.push_back({expert + "gate_proj.weight", {12, kHidden}});
    f.base.push_back({expert + "up_proj.weight", {12, kHidden}});
    f.base.push_back({expert + "down_proj.weight", {kHidden, 12}});
  }
  append(f.adapter, lora_pair("base_model.model.model.layers.0.self_attn.q_proj", kRank, kHidden, 32, 100));
  add_expert_pairs(f.adapter, "base_model.model.model.layers.0.mlp.experts", 4, 12);
  return f;
}

/// Qwen3.5-4B: a vision model ("model.language_model." prefix) with tied embeddings, whose
/// linear-attention layers fuse Q (8 rows), K (8) and V (16) into in_proj_qkv.
inline FamilyCase qwen3_5_dense() {
  FamilyCase f;
  f.config_json =
      R"({"architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5", "tie_word_embeddings": true,
          "text_config": {"model_type": "qwen3_5_text", "hidden_size": 16, "tie_word_embeddings": true}})";
  const std::string lm = "model.language_model.";
  f.base = {{lm + "embed_tokens.weight", {kVocab, kHidden}},
            {lm + "layers.0.linear_attn.in_proj_qkv.weight", {32, kHidden}},
            {lm + "layers.0.linear_attn.in_proj_z.weight", {16, kHidden}},
            {lm + "layers.0.linear_attn.in_proj_b.weight", {4, kHidden}},
            {lm + "layers.0.linear_attn.in_proj_a.weight", {4, kHidden}},
            {lm + "layers.0.linear_attn.conv1d.weight", {32, 1, 4}},
            {lm + "layers.0.linear_attn.out_proj.weight", {kHidden, 16}},
            {lm + "layers.1.self_attn.q_proj.weight", {64, kHidden}},
            {lm + "layers.1.self_attn.o_proj.weight", {kHidden, 32}},
            {lm + "norm.weight", {kHidden}},
            {"model.visual.patch_embed.proj.weight", {8, 3, 2, 2, 2}}};
  const std::string layer0 = "base_model.model.model.layers.0.linear_attn.";
  append(f.adapter, lora_pair(layer0 + "in_proj_q", kRank, kHidden, 8, 100));
  append(f.adapter, lora_pair(layer0 + "in_proj_k", kRank, kHidden, 8, 200));
  append(f.adapter, lora_pair(layer0 + "in_proj_v", kRank, kHidden, 16, 300));
  append(f.adapter, lora_pair(layer0 + "out_proj", kRank, 16, kHidden, 400));
  append(f.adapter, lora_pair("base_model.model.model.layers.1.self_attn.q_proj", kRank, kHidden, 64, 500));
  append(f.adapter, lora_pair("base_model.model.model.unembed_tokens", kRank, kHidden, kVocab, 600));
  return f;
}

/// Qwen3.5/3.6 MoE (Qwen3.6-35B-A3B): experts fused as gate_up_proj [E, 2 I, H] ([gate | up] on
/// dim 1) and down_proj [E, H, I]; separate lm_head.
inline FamilyCase qwen3_5_moe() {
  FamilyCase f;
  f.config_json =
      R"({"architectures": ["Qwen3_5MoeForConditionalGeneration"], "model_type": "qwen3_5_moe",
          "text_config": {"model_type": "qwen3_5_moe_text", "num_experts": 3}})";
  const std::string lm = "model.language_model.";
  f.base = {{lm + "embed_tokens.weight", {kVocab, kHidden}},
            {lm + "layers.0.linear_attn.in_proj_qkv.weight", {32, kHidden}},
            {lm + "layers.0.mlp.gate.weight", {3, kHidden}},
            {lm + "layers.0.mlp.experts.gate_up_proj", {3, 24, kHidden}},
            {lm + "layers.0.mlp.experts.down_proj", {3, kHidden, 12}},
            {lm + "layers.0.mlp.shared_expert.gate_proj.weight", {12, kHidden}},
            {lm + "layers.0.mlp.shared_expert.up_proj.weight", {12, kHidden}},
            {lm + "layers.0.mlp.shared_expert.down_proj.weight", {kHidden, 12}},
            {lm + "layers.0.mlp.shared_expert_gate.weight", {1, kHidden}},
            {"lm_head.weight", {kVocab, kHidden}}};
  add_expert_pairs(f.adapter, "base_model.model.model.layers.0.mlp.experts", 3, 12);
  append(f.adapter, lora_pair("base_model.model.model.layers.0.mlp.shared_expert.up_proj", kRank, kHidden, 12, 100));
  append(f.adapter, lora_pair("base_model.model.model.unembed_tokens", kRank, kHidden, kVocab, 200));
  return f;
}

/// Qwen3-VL MoE: "model.language_model." prefix, experts fused as gate_up_proj [E, H, 2 I] (dim 2)
/// and down_proj [E, I, H]; the default profile.
inline FamilyCase qwen3_vl_moe() {
  FamilyCase f;
  f.config_json = R"({"architectures": ["Qwen3VLMoeForConditionalGeneration"], "model_type": "qwen3_vl_moe"})";
  const std::string lm = "model.language_model.";
  f.base = {{lm + "embed_tokens.weight", {kVocab, kHidden}},
            {lm + "layers.0.self_attn.q_proj.weight", {32, kHidden}},
            {lm + "layers.0.mlp.gate.weight", {2, kHidden}},
            {lm + "layers.0.mlp.experts.gate_up_proj", {2, kHidden, 24}},
            {lm + "layers.0.mlp.experts.down_proj", {2, 12, kHidden}},
            {"model.visual.blocks.0.attn.qkv.weight", {24, 8}},
            {"lm_head.weight", {kVocab, kHidden}}};
  append(f.adapter, lora_pair("base_model.model.model.layers.0.self_attn.q_proj", kRank, kHidden, 32, 100));
  add_expert_pairs(f.adapter, "base_model.model.model.layers.0.mlp.experts", 2, 12);
  return f;
}

/// gpt-oss (bf16 checkpoint layout): attention is ".attn" to Tinker, ".self_attn" to Hugging Face;
/// experts fused as gate_up_proj [E, H, 2 I], gate and up interleaved; down_proj [E, I, H].
inline FamilyCase gpt_oss() {
  FamilyCase f;
  f.config_json =
      R"({"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "num_local_experts": 4, "hidden_size": 16})";
  const std::string layer = "model.layers.0.";
  f.base = {{"model.embed_tokens.weight", {kVocab, kHidden}},
            {layer + "self_attn.q_proj.weight", {32, kHidden}},
            {layer + "self_attn.q_proj.bias", {32}},
            {layer + "self_attn.o_proj.weight", {kHidden, 32}},
            {layer + "self_attn.o_proj.bias", {kHidden}},
            {layer + "self_attn.sinks", {4}},
            {layer + "mlp.router.weight", {4, kHidden}},
            {layer + "mlp.router.bias", {4}},
            {layer + "mlp.experts.gate_up_proj", {4, kHidden, 24}},
            {layer + "mlp.experts.gate_up_proj_bias", {4, 24}},
            {layer + "mlp.experts.down_proj", {4, 12, kHidden}},
            {layer + "mlp.experts.down_proj_bias", {4, kHidden}},
            {"model.norm.weight", {kHidden}},
            {"lm_head.weight", {kVocab, kHidden}}};
  append(f.adapter, lora_pair("base_model.model.model.layers.0.attn.q_proj", kRank, kHidden, 32, 100));
  append(f.adapter, lora_pair("base_model.model.model.layers.0.attn.o_proj", kRank, 32, kHidden, 200));
  add_expert_pairs(f.adapter, "base_model.model.model.layers.0.mlp.experts", 4, 12);
  return f;
}

/// The DeepSeek V3 layout Kimi K2 shares: multi-head latent attention, a dense first layer, then
/// MoE layers with one weight per expert and shared experts. `prefix` is "" (Kimi K2, DeepSeek V3)
/// or "language_model." (Kimi K2.5).
inline std::vector<BaseTensor> deepseek_layout(const std::string& prefix, int experts) {
  const std::string m = prefix + "model.";
  std::vector<BaseTensor> base{{m + "embed_tokens.weight", {kVocab, kHidden}},
                               {m + "layers.0.self_attn.q_a_proj.weight", {12, kHidden}},
                               {m + "layers.0.self_attn.q_a_layernorm.weight", {12}},
                               {m + "layers.0.self_attn.q_b_proj.weight", {32, 12}},
                               {m + "layers.0.self_attn.kv_a_proj_with_mqa.weight", {12, kHidden}},
                               {m + "layers.0.self_attn.kv_b_proj.weight", {32, 8}},
                               {m + "layers.0.self_attn.o_proj.weight", {kHidden, 16}},
                               {m + "layers.0.mlp.gate_proj.weight", {24, kHidden}},
                               {m + "layers.0.mlp.up_proj.weight", {24, kHidden}},
                               {m + "layers.0.mlp.down_proj.weight", {kHidden, 24}},
                               {m + "layers.1.mlp.gate.weight", {experts, kHidden}},
                               {m + "layers.1.mlp.gate.e_score_correction_bias", {experts}, st::Dtype::f32},
                               {m + "layers.1.mlp.shared_experts.gate_proj.weight", {8, kHidden}},
                               {m + "layers.1.mlp.shared_experts.up_proj.weight", {8, kHidden}},
                               {m + "layers.1.mlp.shared_experts.down_proj.weight", {kHidden, 8}},
                               {m + "norm.weight", {kHidden}},
                               {prefix + "lm_head.weight", {kVocab, kHidden}}};
  for (int e = 0; e < experts; ++e) {
    const std::string expert = m + "layers.1.mlp.experts." + std::to_string(e) + ".";
    base.push_back({expert + "gate_proj.weight", {8, kHidden}});
    base.push_back({expert + "up_proj.weight", {8, kHidden}});
    base.push_back({expert + "down_proj.weight", {kHidden, 8}});
  }
  return base;
}

/// Kimi K2: DeepSeek V3's architecture under model_type "kimi_k2" (the default profile).
inline FamilyCase kimi_k2() {
  FamilyCase f;
  f.config_json = R"({"architectures": ["DeepseekV3ForCausalLM"], "model_type": "kimi_k2", "n_routed_experts": 3})";
  f.base = deepseek_layout("", 3);
  append(f.adapter, lora_pair("base_model.model.model.layers.0.self_attn.q_a_proj", kRank, kHidden, 12, 100));
  append(f.adapter, lora_pair("base_model.model.model.layers.0.self_attn.q_b_proj", kRank, 12, 32, 200));
  add_expert_pairs(f.adapter, "base_model.model.model.layers.1.mlp.experts", 3, 8);
  append(f.adapter, lora_pair("base_model.model.model.layers.1.mlp.shared_experts.gate_proj", kRank, kHidden, 8, 300));
  return f;
}

/// Kimi K2.5: Kimi K2's text model under "language_model.model." (and "language_model.lm_head")
/// in a vision model; model_type only at the top, the text model's facts in text_config.
inline FamilyCase kimi_k25() {
  FamilyCase f;
  f.config_json =
      R"({"model_type": "kimi_k25", "architectures": ["KimiK25ForConditionalGeneration"],
          "vision_config": {"hidden_size": 8},
          "text_config": {"model_type": "kimi_k2", "architectures": ["DeepseekV3ForCausalLM"], "n_routed_experts": 2}})";
  f.base = deepseek_layout("language_model.", 2);
  f.base.push_back({"vision_tower.encoder.blocks.0.wqkv.weight", {24, 8}});
  f.base.push_back({"mm_projector.proj.0.weight", {kHidden, 8}});
  append(f.adapter, lora_pair("base_model.model.model.layers.0.self_attn.q_a_proj", kRank, kHidden, 12, 100));
  add_expert_pairs(f.adapter, "base_model.model.model.layers.1.mlp.experts", 2, 8, /*with_up=*/true);
  append(f.adapter, lora_pair("base_model.model.model.unembed_tokens", kRank, kHidden, kVocab, 300));
  return f;
}

/// DeepSeek V3.1: refused as a PEFT adapter, planned for a merge like Kimi K2.
inline FamilyCase deepseek_v3() {
  FamilyCase f = kimi_k2();
  f.config_json = R"({"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "n_routed_experts": 3})";
  return f;
}

/// Nemotron 3 Nano: layers under "backbone.", a Mamba layer (0) whose in_proj fuses gate (12 rows),
/// x (12) and B, C, dt (10); an MoE layer (1) whose experts have only up and down projections;
/// an attention layer (2); "lm_head" at the top. Tinker's names mix "model." and "backbone."
/// prefixes (both occur), and w3 is an empty placeholder.
inline FamilyCase nemotron_h() {
  FamilyCase f;
  f.config_json = R"({"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "n_routed_experts": 4})";
  f.base = {{"backbone.embeddings.weight", {kVocab, kHidden}},
            {"backbone.layers.0.norm.weight", {kHidden}},
            {"backbone.layers.0.mixer.in_proj.weight", {34, kHidden}},
            {"backbone.layers.0.mixer.conv1d.weight", {20, 1, 4}},
            {"backbone.layers.0.mixer.conv1d.bias", {20}},
            {"backbone.layers.0.mixer.A_log", {2}, st::Dtype::f32},
            {"backbone.layers.0.mixer.D", {2}, st::Dtype::f32},
            {"backbone.layers.0.mixer.dt_bias", {2}, st::Dtype::f32},
            {"backbone.layers.0.mixer.norm.weight", {12}},
            {"backbone.layers.0.mixer.out_proj.weight", {kHidden, 12}},
            {"backbone.layers.1.norm.weight", {kHidden}},
            {"backbone.layers.1.mixer.gate.weight", {4, kHidden}},
            {"backbone.layers.1.mixer.gate.e_score_correction_bias", {4}, st::Dtype::f32},
            {"backbone.layers.1.mixer.shared_experts.up_proj.weight", {12, kHidden}},
            {"backbone.layers.1.mixer.shared_experts.down_proj.weight", {kHidden, 12}},
            {"backbone.layers.2.norm.weight", {kHidden}},
            {"backbone.layers.2.mixer.q_proj.weight", {32, kHidden}},
            {"backbone.layers.2.mixer.k_proj.weight", {16, kHidden}},
            {"backbone.layers.2.mixer.v_proj.weight", {16, kHidden}},
            {"backbone.layers.2.mixer.o_proj.weight", {kHidden, 32}},
            {"backbone.norm_f.weight", {kHidden}},
            {"lm_head.weight", {kVocab, kHidden}}};
  for (int e = 0; e < 4; ++e) {
    const std::string expert = "backbone.layers.1.mixer.experts." + std::to_string(e) + ".";
    f.base.push_back({expert + "up_proj.weight", {12, kHidden}});
    f.base.push_back({expert + "down_proj.weight", {kHidden, 12}});
  }
  append(f.adapter, lora_pair("base_model.model.backbone.layers.0.mixer.gate_proj", kRank, kHidden, 12, 100));
  append(f.adapter, lora_pair("base_model.model.backbone.layers.0.mixer.x_proj", kRank, kHidden, 12, 200));
  append(f.adapter, lora_pair("base_model.model.backbone.layers.0.mixer.out_proj", kRank, 12, kHidden, 300));
  add_expert_pairs(f.adapter, "base_model.model.model.layers.1.mixer.experts", 4, 12, /*with_up=*/false);
  f.adapter.push_back({"base_model.model.model.layers.1.mixer.experts.w3.lora_A.weight", {0}});
  f.adapter.push_back({"base_model.model.model.layers.1.mixer.experts.w3.lora_B.weight", {0}});
  append(f.adapter,
         lora_pair("base_model.model.backbone.layers.1.mixer.shared_experts.up_proj", kRank, kHidden, 12, 400));
  append(f.adapter, lora_pair("base_model.model.backbone.layers.2.mixer.q_proj", kRank, kHidden, 32, 500));
  append(f.adapter, lora_pair("base_model.model.model.lm_head", kRank, kHidden, kVocab, 600));
  return f;
}

/// gpt-oss as released: experts in MXFP4 (blocks [E, out, in / 32, 16], scales [E, out, in / 32]);
/// hidden and intermediate 32 so a row is one block.
inline FamilyCase gpt_oss_mxfp4() {
  FamilyCase f;
  f.config_json =
      R"({"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "quantization_config": {"quant_method": "mxfp4"}})";
  const std::string experts = "model.layers.0.mlp.experts.";
  f.base = {{"model.layers.0.self_attn.q_proj.weight", {32, 32}},
            {experts + "gate_up_proj_blocks", {2, 64, 1, 16}, st::Dtype::u8},
            {experts + "gate_up_proj_scales", {2, 64, 1}, st::Dtype::u8},
            {experts + "gate_up_proj_bias", {2, 64}},
            {experts + "down_proj_blocks", {2, 32, 1, 16}, st::Dtype::u8},
            {experts + "down_proj_scales", {2, 32, 1}, st::Dtype::u8},
            {experts + "down_proj_bias", {2, 32}},
            {"lm_head.weight", {32, 32}}};
  const std::string adapter = "base_model.model.model.layers.0.mlp.experts";
  append(f.adapter, expert_pair(adapter + ".w1", 1, 2, kRank, 32, 32, 1));
  append(f.adapter, expert_pair(adapter + ".w3", 1, 2, kRank, 32, 32, 100));
  append(f.adapter, expert_pair(adapter + ".w2", 2, 1, kRank, 32, 32, 200));
  return f;
}

/// Kimi K2 as released: routed experts in compressed-tensors pack-quantized INT4.
inline FamilyCase kimi_k2_int4() {
  FamilyCase f = kimi_k2();
  f.config_json = R"({"architectures": ["DeepseekV3ForCausalLM"], "model_type": "kimi_k2",
      "quantization_config": {"quant_method": "compressed-tensors", "format": "pack-quantized",
        "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int",
          "symmetric": true, "strategy": "group", "group_size": 8}}}}})";
  std::vector<BaseTensor> base;
  for (auto& tensor : f.base) {
    if (tensor.name.find(".experts.") == std::string::npos) {
      base.push_back(tensor);
      continue;
    }
    const std::string stem(tensor.name.substr(0, tensor.name.size() - std::string(".weight").size()));
    const std::int64_t rows = tensor.shape[0];
    const std::int64_t cols = tensor.shape[1];
    base.push_back({stem + ".weight_packed", {rows, cols / 8}, st::Dtype::i32});
    base.push_back({stem + ".weight_scale", {rows, cols / 8}, st::Dtype::bf16});
    base.push_back({stem + ".weight_shape", {2}, st::Dtype::i32, {rows, cols}});
  }
  f.base = base;
  return f;
}

}  // namespace tinker::test::lora_fixtures
