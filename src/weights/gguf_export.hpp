// The steps of build_gguf_adapter: a PEFT adapter (convert_to_peft) mapped onto llama.cpp's tensor
// names and conventions, then written as a GGUF LoRA adapter.
//
// llama.cpp's rules (its convert_lora_to_gguf.py and the adapter loader, llama-adapter.cpp):
// - metadata: general.architecture (must equal the base GGUF's), general.type = "adapter",
//   adapter.type = "lora", adapter.lora.alpha (f32; the scale is alpha / rank, the rank read from
//   each lora_b);
// - per adapted weight W [out, in] named <gguf> ("blk.0.attn_q.weight"): "<gguf>.lora_a" holding
//   PEFT's lora_A [r, in] and "<gguf>.lora_b" holding lora_B [out, r], neither transposed, so the
//   ggml dimensions are [in, r] and [r, out] (the loader checks a.ne[0] = W.ne[0], b.ne[1] = W.ne[1],
//   a.ne[1] = b.ne[0]);
// - Llama: the rows of q_proj's and k_proj's lora_B are permuted as the converter permutes the
//   weights themselves (ggml's rotary embedding pairs neighbouring dimensions).
#pragma once

#include "weights/gguf_writer.hpp"
#include "weights/lora_plan.hpp"

#include <tinker/weights.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace tinker::weights::detail {

/// One adapted weight as llama.cpp stores it.
struct GgufLoraPair {
  std::string name;                      ///< the GGUF weight ("blk.0.attn_q.weight")
  std::string peft_module;               ///< "model.layers.0.self_attn.q_proj", for messages
  std::shared_ptr<const FloatTensor> a;  ///< [r, in]
  std::shared_ptr<const FloatTensor> b;  ///< [out, r], rows permuted where llama.cpp permutes the weight
};

struct GgufAdapterPlan {
  std::string architecture;  ///< "llama", "qwen2", "qwen3"
  double lora_alpha = 0;
  std::vector<GgufLoraPair> pairs;  ///< decoder layers in order, then the unembedding
};

/// Throws errc::invalid_argument naming the model type and the supported families unless llama.cpp
/// has a dense architecture for `model`; returns that architecture.
std::string require_gguf_architecture(const ModelLayout& model);

/// Maps `peft` onto llama.cpp's names for `model`. Throws errc::invalid_argument naming the PEFT
/// key for a module llama.cpp has no tensor for, a weight missing from the base, shapes that do not
/// fit it, an unpaired lora_A/lora_B, and an adapted unembedding on a base that ties it to the
/// token embeddings (llama.cpp has no separate output matrix to adapt there).
GgufAdapterPlan plan_gguf_adapter(const PeftAdapter& peft, const ModelLayout& model);

/// "f32", "f16", "bf16" -> the ggml type; throws errc::invalid_argument for anything else.
GgmlType gguf_out_type(std::string_view out_type);

/// Writes `plan` to `output` (must not exist) with its LoRA tensors in `type`; `name` goes to
/// general.name and general.base_model.0.name. Returns the file's size.
std::uint64_t write_gguf_adapter(const GgufAdapterPlan& plan, const std::string& name, GgmlType type,
                                 const std::filesystem::path& output, const ProgressCallback& progress);

}  // namespace tinker::weights::detail
