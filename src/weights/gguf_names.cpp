// The dense families llama.cpp has an architecture for, and the Hugging Face -> GGUF tensor names of
// those families (llama.cpp's gguf-py constants.py and tensor_mapping.py). All three share
// the Llama layout; Qwen3 adds per-head norms of q and k.
#include "weights/gguf_names.hpp"

#include <algorithm>
#include <array>
#include <charconv>

namespace tinker::weights::detail {
namespace {

struct GgufFamily {
  std::string_view architecture;  // llama.cpp's name
  std::string_view hf_class;      // config.json "architectures"[0]
  std::string_view model_type;    // config.json "model_type"
};

constexpr std::array<GgufFamily, 3> gguf_families{{
    {"llama", "LlamaForCausalLM", "llama"},
    {"qwen2", "Qwen2ForCausalLM", "qwen2"},
    {"qwen3", "Qwen3ForCausalLM", "qwen3"},
}};

// Weights outside the decoder layers.
constexpr std::array<std::pair<std::string_view, std::string_view>, 3> gguf_global_tensors{{
    {"model.embed_tokens", "token_embd"},
    {"model.norm", "output_norm"},
    {"lm_head", "output"},
}};

// Weights of "model.layers.<n>.", by the name after the layer number.
constexpr std::array<std::pair<std::string_view, std::string_view>, 9> gguf_layer_tensors{{
    {"self_attn.q_proj", "attn_q"},
    {"self_attn.k_proj", "attn_k"},
    {"self_attn.v_proj", "attn_v"},
    {"self_attn.o_proj", "attn_output"},
    {"mlp.gate_proj", "ffn_gate"},
    {"mlp.up_proj", "ffn_up"},
    {"mlp.down_proj", "ffn_down"},
    {"input_layernorm", "attn_norm"},
    {"post_attention_layernorm", "ffn_norm"},
}};

// Qwen3 only: RMS norms over each head of q and k.
constexpr std::array<std::pair<std::string_view, std::string_view>, 2> gguf_qwen3_layer_tensors{{
    {"self_attn.q_norm", "attn_q_norm"},
    {"self_attn.k_norm", "attn_k_norm"},
}};

const GgufFamily* find_family(std::string_view architecture) noexcept {
  const auto* it = std::find_if(gguf_families.begin(), gguf_families.end(),
                                [&](const GgufFamily& family) { return family.architecture == architecture; });
  return it == gguf_families.end() ? nullptr : it;
}

template <std::size_t N>
std::optional<std::string_view> lookup(const std::array<std::pair<std::string_view, std::string_view>, N>& table,
                                       std::string_view key) {
  for (const auto& [hf, gguf] : table) {
    if (hf == key) return gguf;
  }
  return std::nullopt;
}

// "model.layers.<n>.<rest>" -> {n, rest}, n a plain decimal number.
std::optional<std::pair<std::string_view, std::string_view>> split_layer(std::string_view module) {
  constexpr std::string_view prefix = "model.layers.";
  if (!module.starts_with(prefix)) return std::nullopt;
  module.remove_prefix(prefix.size());
  const std::size_t dot = module.find('.');
  if (dot == 0 || dot == std::string_view::npos) return std::nullopt;
  const std::string_view number = module.substr(0, dot);
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec != std::errc{} || end != number.data() + number.size()) return std::nullopt;
  if (number.size() > 1 && number.front() == '0') return std::nullopt;  // one spelling per layer
  return std::pair{number, module.substr(dot + 1)};
}

}  // namespace

std::string gguf_architecture_for(const ModelLayout& model) {
  for (const GgufFamily& family : gguf_families) {
    const bool matches = model.architectures.empty() ? model.model_type == family.model_type
                                                     : model.architectures.front() == family.hf_class;
    if (matches) return std::string(family.architecture);
  }
  return {};
}

std::string_view gguf_supported_families() noexcept {
  return "llama (Llama 3), qwen2 (Qwen2, Qwen2.5), qwen3 (dense Qwen3)";
}

std::optional<std::string> gguf_tensor_name(std::string_view architecture, std::string_view hf_name) {
  if (find_family(architecture) == nullptr) return std::nullopt;
  std::string_view suffix;
  for (std::string_view candidate : {std::string_view(".weight"), std::string_view(".bias")}) {
    if (hf_name.ends_with(candidate)) suffix = candidate;
  }
  if (suffix.empty()) return std::nullopt;
  const std::string_view module = hf_name.substr(0, hf_name.size() - suffix.size());

  if (const auto global = lookup(gguf_global_tensors, module)) return std::string(*global).append(suffix);
  const auto layer = split_layer(module);
  if (!layer) return std::nullopt;
  auto name = lookup(gguf_layer_tensors, layer->second);
  if (!name && architecture == "qwen3") name = lookup(gguf_qwen3_layer_tensors, layer->second);
  if (!name) return std::nullopt;
  return std::string("blk.").append(layer->first).append(".").append(*name).append(suffix);
}

bool gguf_permutes_qk(std::string_view architecture) noexcept {
  return architecture == "llama";
}

}  // namespace tinker::weights::detail
