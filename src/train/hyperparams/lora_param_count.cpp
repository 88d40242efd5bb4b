// LoRA parameter counts: Tinker's measured per-rank counts for the models it serves, and the
// same count computed from a Hugging Face config.json for any other decoder.
//
// A LoRA of rank r on a linear layer d_in -> d_out adds r * (d_in + d_out) parameters. For MoE
// experts Tinker shares the factor on the hidden side across experts and keeps the other per
// expert, so a gate/up projection adds r * (hidden + experts * moe_intermediate) and a down
// projection the same. Router weights are not adapted. For multi-head latent attention
// (DeepSeek, Kimi) Tinker adapts q_a, kv_a and o but not the up-projections q_b and kv_b (the
// measured counts show exactly those three).
#include <tinker/error.hpp>
#include <tinker/model_name.hpp>
#include <tinker/train/hyperparams.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <array>
#include <initializer_list>
#include <optional>
#include <string>

namespace tinker::train {
namespace {
namespace lora_count {

// Parameters per unit of rank, by target.
struct PerRank {
  std::string_view model;
  std::int64_t mlp;
  std::int64_t attn;
  std::int64_t unembed;
};

// The cookbook's table (measured by Tinker on its served models).
constexpr std::array<PerRank, 38> served_models = {{
    {"Qwen/Qwen3-235B-A22B-Instruct-2507", 56'598'528, 3'176'448, 156'032},
    {"Qwen/Qwen3-30B-A3B", 14'450'688, 835'584, 153'984},
    {"Qwen/Qwen3-30B-A3B-Base", 14'450'688, 835'584, 153'984},
    {"Qwen/Qwen3-30B-A3B-Instruct-2507", 14'450'688, 835'584, 153'984},
    {"Qwen/Qwen3-32B", 5'898'240, 2'490'368, 157'056},
    {"Qwen/Qwen3-4B-Instruct-2507", 1'327'104, 737'280, 154'496},
    {"Qwen/Qwen3-8B", 1'769'472, 958'464, 156'032},
    {"Qwen/Qwen3-8B-Base", 1'769'472, 958'464, 156'032},
    {"Qwen/Qwen3-VL-235B-A22B-Instruct", 56'598'528, 3'176'448, 156'032},
    {"Qwen/Qwen3-VL-30B-A3B-Instruct", 14'450'688, 835'584, 153'984},
    {"Qwen/Qwen3.5-27B", 4'325'376, 2'965'504, 253'440},
    {"Qwen/Qwen3.5-35B-A3B", 16'281'600, 1'013'760, 250'368},
    {"Qwen/Qwen3.5-35B-A3B-Base", 16'281'600, 1'013'760, 250'368},
    {"Qwen/Qwen3.5-397B-A17B", 96'030'720, 2'841'600, 252'416},
    {"Qwen/Qwen3.5-4B", 1'130'496, 897'024, 250'880},
    {"Qwen/Qwen3.5-9B", 1'572'864, 1'130'496, 252'416},
    {"Qwen/Qwen3.5-9B-Base", 1'572'864, 1'130'496, 252'416},
    {"Qwen/Qwen3.6-27B", 4'325'376, 2'965'504, 253'440},
    {"Qwen/Qwen3.6-35B-A3B", 16'281'600, 1'013'760, 250'368},
    {"Qwen/Qwen3.8-27B", 4'325'376, 2'965'504, 253'440},
    {"deepseek-ai/DeepSeek-V3.1", 94'307'328, 2'440'000, 136'448},
    {"deepseek-ai/DeepSeek-V3.1-Base", 94'307'328, 2'440'000, 136'448},
    {"meta-llama/Llama-3.1-70B", 8'847'360, 4'096'000, 136'448},
    {"meta-llama/Llama-3.1-8B", 1'769'472, 851'968, 132'352},
    {"meta-llama/Llama-3.1-8B-Instruct", 1'769'472, 851'968, 132'352},
    {"meta-llama/Llama-3.2-1B", 491'520, 212'992, 130'304},
    {"meta-llama/Llama-3.2-3B", 946'176, 573'440, 131'328},
    {"meta-llama/Llama-3.3-70B-Instruct", 8'847'360, 4'096'000, 136'448},
    {"moonshotai/Kimi-K2-Thinking", 144'583'680, 1'940'288, 171'008},
    {"moonshotai/Kimi-K2.5", 144'583'680, 1'940'288, 171'008},
    {"moonshotai/Kimi-K2.6", 144'583'680, 1'940'288, 171'008},
    {"nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", 11'346'176, 584'832, 133'760},
    {"nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-BF16", 11'346'176, 584'832, 133'760},
    {"nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16", 111'349'760, 1'675'264, 135'168},
    {"nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16", 254'529'536, 4'134'912, 139'264},
    {"openai/gpt-oss-120b", 40'124'160, 746'496, 203'968},
    {"openai/gpt-oss-20b", 6'842'880, 497'664, 203'968},
    {"thinkingmachines/Inkling", 154'705'920, 3'424'256, 207'168},
}};

void check_rank_and_targets(int rank, const LoraTargets& targets, std::string_view function) {
  if (rank < 1) {
    throw error(errc::invalid_argument, std::string(function) + ": rank must be >= 1, got " + std::to_string(rank));
  }
  if (!targets.mlp && !targets.attn && !targets.unembed) {
    throw error(errc::invalid_argument, std::string(function) + ": LoraTargets must enable mlp, attn or unembed");
  }
}

std::int64_t total(const PerRank& per_rank, int rank, const LoraTargets& targets) {
  std::int64_t sum = 0;
  if (targets.mlp) sum += per_rank.mlp;
  if (targets.attn) sum += per_rank.attn;
  if (targets.unembed) sum += per_rank.unembed;
  return sum * rank;
}

// The fields of a config.json, looked up at the top level and then under text_config (VL and
// Qwen3.5 configs nest the language model's).
class ConfigFields {
 public:
  explicit ConfigFields(const boost::json::object& root) : root_(root) {
    if (const auto* text = root.if_contains("text_config"); text != nullptr && text->is_object()) {
      text_ = &text->get_object();
    }
  }

  std::optional<std::int64_t> find(std::string_view key) const {
    for (const auto* object : {text_, &root_}) {
      if (object == nullptr) continue;
      const auto* value = object->if_contains(key);
      if (value == nullptr) continue;
      if (value->is_int64()) return value->get_int64();
      if (value->is_uint64()) return static_cast<std::int64_t>(value->get_uint64());
    }
    return std::nullopt;
  }

  std::int64_t require(std::string_view key) const {
    const auto found = find(key);
    if (!found || *found < 0) {
      throw error(errc::invalid_argument,
                  "lora_param_count_from_config: config.json has no integer \"" + std::string(key) + "\"");
    }
    return *found;
  }

  std::int64_t first_of(std::initializer_list<std::string_view> keys, std::int64_t fallback) const {
    for (const auto key : keys) {
      if (const auto found = find(key)) return *found;
    }
    return fallback;
  }

 private:
  const boost::json::object& root_;
  const boost::json::object* text_ = nullptr;
};

std::int64_t attention_per_layer(const ConfigFields& config, std::int64_t hidden) {
  const auto heads = config.require("num_attention_heads");
  if (const auto kv_lora_rank = config.find("kv_lora_rank")) {
    // Multi-head latent attention: q_a (absent without q_lora_rank), kv_a, o.
    const auto rope_dim = config.require("qk_rope_head_dim");
    const auto v_dim = config.require("v_head_dim");
    const auto q_lora_rank = config.find("q_lora_rank");
    std::int64_t sum = (hidden + *kv_lora_rank + rope_dim) + (heads * v_dim + hidden);
    if (q_lora_rank && *q_lora_rank > 0) {
      sum += hidden + *q_lora_rank;
    } else {
      sum += hidden + heads * (config.require("qk_nope_head_dim") + rope_dim);  // q_proj
    }
    return sum;
  }
  const auto kv_heads = config.first_of({"num_key_value_heads"}, heads);
  const auto head_dim = config.first_of({"head_dim"}, heads > 0 ? hidden / heads : 0);
  const auto q_width = heads * head_dim;
  const auto kv_width = kv_heads * head_dim;
  return (hidden + q_width) + 2 * (hidden + kv_width) + (q_width + hidden);
}

std::int64_t mlp_per_layer(const ConfigFields& config, std::int64_t hidden, bool sparse) {
  if (!sparse) return 3 * (hidden + config.require("intermediate_size"));
  const auto experts = config.first_of({"num_experts", "n_routed_experts", "num_local_experts"}, 0);
  const auto expert_width = config.first_of({"moe_intermediate_size"}, config.first_of({"intermediate_size"}, 0));
  if (expert_width == 0) config.require("moe_intermediate_size");
  std::int64_t sum = 3 * (hidden + experts * expert_width);
  // Shared experts are one dense MLP (DeepSeek: n_shared_experts of moe width; Qwen2-MoE: its own width).
  if (const auto shared_width = config.find("shared_expert_intermediate_size"); shared_width && *shared_width > 0) {
    sum += 3 * (hidden + *shared_width);
  } else if (const auto shared = config.find("n_shared_experts"); shared && *shared > 0) {
    sum += 3 * (hidden + *shared * expert_width);
  }
  return sum;
}

}  // namespace lora_count
}  // namespace

std::int64_t lora_param_count(std::string_view model_name, int rank, LoraTargets targets) {
  lora_count::check_rank_and_targets(rank, targets, "lora_param_count");
  const auto model = model_lookup_name(model_name);
  const auto found = std::find_if(lora_count::served_models.begin(), lora_count::served_models.end(),
                                  [&](const auto& entry) { return entry.model == model; });
  if (found == lora_count::served_models.end()) {
    throw error(errc::invalid_argument, "lora_param_count: \"" + std::string(model) +
                                            "\" is not in the table of served models (count it from its "
                                            "config.json with lora_param_count_from_config)");
  }
  return lora_count::total(*found, rank, targets);
}

std::int64_t lora_param_count_from_config(std::string_view config_json, int rank, LoraTargets targets) {
  lora_count::check_rank_and_targets(rank, targets, "lora_param_count_from_config");
  boost::system::error_code code;
  const auto parsed = boost::json::parse(config_json, code);
  if (code || !parsed.is_object()) {
    throw error(errc::invalid_argument, "lora_param_count_from_config: config.json is not a JSON object");
  }
  const lora_count::ConfigFields config(parsed.get_object());
  const auto hidden = config.require("hidden_size");
  const auto layers = config.require("num_hidden_layers");
  const bool has_experts = config.first_of({"num_experts", "n_routed_experts", "num_local_experts"}, 0) > 0;
  // DeepSeek-style models keep their first layers dense.
  const auto dense_layers = has_experts ? std::min(layers, config.first_of({"first_k_dense_replace"}, 0)) : layers;
  lora_count::PerRank per_rank{"", 0, 0, 0};
  per_rank.mlp = dense_layers * (dense_layers > 0 ? lora_count::mlp_per_layer(config, hidden, false) : 0) +
                 (layers - dense_layers) * (has_experts ? lora_count::mlp_per_layer(config, hidden, true) : 0);
  per_rank.attn = layers * lora_count::attention_per_layer(config, hidden);
  per_rank.unembed = hidden + config.require("vocab_size");
  return lora_count::total(per_rank, rank, targets);
}

}  // namespace tinker::train
