// llama.cpp's names for the dense families a GGUF LoRA adapter can be exported for: the
// architecture llama.cpp converts a Hugging Face model to (it must equal the base GGUF's
// "general.architecture", or llama.cpp refuses the adapter), and the GGUF name of each Hugging
// Face weight (gguf-py's tensor_mapping.py: "model.layers.3.self_attn.q_proj.weight" ->
// "blk.3.attn_q.weight").
#pragma once

#include "weights/lora_plan.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace tinker::weights::detail {

/// The llama.cpp architecture of `model`: "llama" (LlamaForCausalLM: Llama 3.x), "qwen2"
/// (Qwen2ForCausalLM: Qwen2, Qwen2.5) or "qwen3" (Qwen3ForCausalLM: dense Qwen3). Chosen by
/// config.json's first "architectures" entry, as llama.cpp's converter does, or by "model_type"
/// when the config lists no architecture. "" for any other family (MoE ones included).
std::string gguf_architecture_for(const ModelLayout& model);

/// The supported families for error messages: "llama (Llama 3), qwen2 (Qwen2, Qwen2.5), qwen3 (dense Qwen3)".
std::string_view gguf_supported_families() noexcept;

/// The GGUF name of the Hugging Face tensor `hf_name` (".weight" or ".bias") in `architecture`,
/// or nullopt when that architecture has no such tensor.
std::optional<std::string> gguf_tensor_name(std::string_view architecture, std::string_view hf_name);

/// True when llama.cpp's converter permutes the rows of q_proj and k_proj for `architecture` (Llama's
/// rotary embedding pairs dimensions (i, i + d/2) in Hugging Face and (2i, 2i + 1) in ggml).
bool gguf_permutes_qk(std::string_view architecture) noexcept;

}  // namespace tinker::weights::detail
