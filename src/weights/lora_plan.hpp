// What the exporters share: a Tinker adapter loaded into memory, the base model's layout read from
// its headers, the per-family merge profile, and the plan of LoRA deltas to add to base tensors.
//
// Tinker names an adapter's matrices "base_model.model.<module>.lora_A.weight" ([rank, in]) and
// ".lora_B.weight" ([out, rank]); MoE experts are one 3-D pair per projection, "...experts.w1/w2/w3"
// ([E, rank, in] and [E, out, rank], either side possibly shared with E = 1); the unembedding is
// "model.unembed_tokens". The update of a module is delta W = (lora_alpha / r) B A.
#pragma once

#include <tinker/safetensors.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace tinker::weights::detail {

/// A dense row-major f32 tensor.
struct FloatTensor {
  std::vector<std::int64_t> shape;
  std::vector<float> values;
};

/// One adapted module: `name` is the adapter key with ".lora_A"/".lora_B" removed
/// ("base_model.model.model.layers.0.self_attn.q_proj.weight").
struct AdapterPair {
  std::string name;
  std::shared_ptr<const FloatTensor> a;
  std::shared_ptr<const FloatTensor> b;
};

/// A Tinker checkpoint's adapter: adapter_model.safetensors + adapter_config.json.
struct TinkerAdapter {
  std::filesystem::path directory;
  double lora_alpha = 0;
  std::int64_t rank = 0;
  std::vector<AdapterPair> pairs;  ///< sorted by name
  std::uint64_t bytes_read = 0;

  double scale() const noexcept { return lora_alpha / static_cast<double>(rank); }
};

/// Loads and checks an adapter directory: both files present, "r" and "lora_alpha" in the config,
/// every lora_A with its lora_B, 2-D (or 3-D for experts) float tensors whose rank dimension agrees.
/// Errors name the file and the tensor.
TinkerAdapter load_tinker_adapter(const std::filesystem::path& directory);

/// A base tensor as its header describes it.
struct TensorLayout {
  safetensors::Dtype dtype = safetensors::Dtype::f32;
  std::vector<std::int64_t> shape;
};

/// How a quantized base stores one logical weight across several tensors (quantized.hpp decodes it).
enum class QuantizedKind {
  mxfp4,        ///< gpt-oss: "<name>_blocks" (U8, 4-bit E2M1 pairs) + "<name>_scales" (U8, E8M0 per 32 values)
  packed_int4,  ///< compressed-tensors pack-quantized (Kimi K2/K2.5): weight_packed (I32), weight_scale, weight_shape
};
struct QuantizedWeight {
  QuantizedKind kind = QuantizedKind::mxfp4;
  std::vector<std::string> parts;  ///< the base tensors holding it, in the order the decoder takes them
  TensorLayout logical;            ///< the weight as a float tensor: dtype it dequantizes to, shape
  std::int64_t group_size = 32;    ///< values sharing one scale (MXFP4: 32; packed INT4: quantization_config's)
  /// Non-empty when the weight can be named (and planned) but not decoded, with the reason
  /// (asymmetric or non-4-bit pack-quantized); dequantize and encode then throw it.
  std::string unsupported;
};

/// The base model as the planners see it: config.json's facts and every weight header.
struct ModelLayout {
  std::filesystem::path directory;
  std::string config_json;  ///< config.json as read
  std::string model_type;   ///< "model_type" (or text_config's when the top level has none)
  std::vector<std::string> architectures;
  std::string quant_method;  ///< quantization_config.quant_method ("mxfp4", "compressed-tensors", "fp8"), or ""
  std::string quant_format;  ///< quantization_config.format ("pack-quantized"), or ""
  std::map<std::string, TensorLayout> tensors;
  /// Logical weights stored quantized, by the name the planner targets ("...experts.gate_up_proj",
  /// "...experts.3.down_proj.weight"): a merge target is in `tensors` or here.
  std::map<std::string, QuantizedWeight> quantized;
};

/// Reads config.json and the safetensors headers of `directory` (no tensor data).
ModelLayout read_model_layout(const std::filesystem::path& directory);

enum class ExpertLayout {
  separate,            ///< one weight per expert: experts.<e>.gate_proj.weight (Qwen3 MoE, DeepSeek, Kimi)
  fused_interleaved,   ///< experts.gate_up_proj [E, in, 2*out] as g0, u0, g1, u1, ... (gpt-oss)
  fused_concatenated,  ///< experts.gate_up_proj as [gate | up] on dim 1 or 2 (Qwen3.5, Qwen3-VL)
};

/// How one family's adapter names and tensors map onto its Hugging Face weights.
struct MergeProfile {
  std::string family = "default";  ///< default, gpt_oss, deepseek, nemotron, qwen3_5, kimi_k25
  ExpertLayout expert_layout = ExpertLayout::separate;
  /// str.replace pairs applied (in order) to non-expert target names after the standard remaps.
  std::vector<std::pair<std::string, std::string>> extra_key_remaps;
  bool has_language_model_prefix = false;  ///< "model." -> "model.language_model." (vision models)
  std::vector<std::pair<std::string, std::string>> expert_key_remaps = {
      {".w1.weight", ".gate_proj.weight"}, {".w3.weight", ".up_proj.weight"}, {".w2.weight", ".down_proj.weight"}};
  /// Modules Tinker trains apart that Hugging Face fuses, in row order: {"in_proj", {"gate_proj", "x_proj"}}.
  std::vector<std::pair<std::string, std::vector<std::string>>> fused_projection_map;
  bool split_qkv_projections = false;  ///< Qwen3.5's in_proj_q/k/v -> in_proj_qkv
};

/// Detects the family from config.json and the weight names (first match: gpt-oss, DeepSeek,
/// Nemotron, Qwen3.5, Kimi K2.5; otherwise the default profile).
MergeProfile detect_merge_profile(const ModelLayout& model);

/// One LoRA delta to add to a base tensor. The delta is scale * B A:
/// - 2-D op (expert < 0, !expert_3d): A [r, in], B [out, r]; adds to the whole target [out, in], or
///   to rows [slice_start, slice_start + out) when slice_start >= 0;
/// - one expert of a 3-D pair (expert >= 0): A[e or 0] and B[e or 0] (a side with E = 1 is shared),
///   added to a 2-D target (separate layout);
/// - expert_3d: every expert at once into a fused 3-D target [E, ., .]: with fused_proj_idx 0 or 1
///   into the gate or up half (interleaved: every other column of the last dim; concatenated: the
///   half along the axis that is twice the delta), otherwise the whole target (the delta transposed
///   when the target stores [E, out, in]).
struct MergeOp {
  std::string target;
  std::string adapter_name;  ///< for error messages
  std::shared_ptr<const FloatTensor> a;
  std::shared_ptr<const FloatTensor> b;
  float scale = 1.0F;
  int expert = -1;
  bool expert_3d = false;
  int fused_proj_idx = -1;
  bool interleaved = false;
  std::int64_t slice_start = -1;
};

/// Every op, grouped by target tensor name, checked against the base's shapes.
struct MergePlan {
  MergeProfile profile;
  std::map<std::string, std::vector<MergeOp>> ops;
};

/// Plans the merge of `adapter` into `model`: maps every adapter name to its base tensor(s) and
/// checks each delta's shape against the target's. Throws errc::invalid_argument naming the
/// adapter tensor and the base tensor when a name has no target or a shape does not fit.
MergePlan plan_merge(const TinkerAdapter& adapter, const ModelLayout& model);

/// Adds the deltas of `ops` (all targeting one tensor of shape `shape`) to `target`, its values
/// in f32. `threads` > 1 splits the rows between threads.
void apply_merge_ops(std::span<float> target, std::span<const std::int64_t> shape, const std::vector<MergeOp>& ops,
                     unsigned threads);

/// A PEFT adapter in memory: keys "base_model.model.<module>.lora_A.weight" / ".lora_B.weight" with
/// the serving framework's names, tensors unscaled.
struct PeftAdapter {
  std::vector<std::pair<std::string, std::shared_ptr<const FloatTensor>>> tensors;  ///< sorted by key
  std::vector<std::string> target_modules;                                          ///< sorted leaf names
  std::map<std::string, std::int64_t> rank_pattern;  ///< fused modules whose rank is a sum of ranks
  double lora_alpha = 0;
  std::int64_t rank = 0;
  MergeProfile profile;
};

/// Tinker's names -> PEFT's (per family: remaps, expert expansion, fused projections, serving
/// prefixes). Throws errc::invalid_argument for DeepSeek V3 (with the reason) and for names with no
/// counterpart in the base.
PeftAdapter convert_to_peft(const TinkerAdapter& adapter, const ModelLayout& model);

}  // namespace tinker::weights::detail
