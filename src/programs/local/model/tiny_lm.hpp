// The tiny language model of tinker-local: frozen base weights seeded by the model's name, LoRA
// adapters trained with real gradients, five losses, AdamW, Dimuon and a sampler.
//
// Contract between the model (src/programs/local/model/) and the engine (src/programs/local/engine/).
// Thread safety: BaseModel and a `const LoraState` are immutable and may be read from many
// threads at once; a non-const LoraState is used by one thread at a time (the engine runs one
// model's operations strictly in sequence).
//
// Learning rates: the LoRA scale is lora_alpha / rank with lora_alpha = 512, chosen so that
// Tinker's usual Adam learning rates train this tiny model visibly. With rank 4..32,
// cross_entropy on a small fixed dataset halves within 40 steps for lr 1e-4 .. 5e-3 (1e-3 is a
// good default; 1e-2 and above may diverge). See test/unit/programs/local/model/training_test.cpp.
#pragma once

#include <tinker/types.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::local {

/// A problem with the caller's input. The engine fails the future with category "user" and this
/// message, which names the datum index and the key, e.g. "data[2].loss_fn_inputs.weights: length
/// 7 != model_input length 8".
class UserError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace model {

struct Architecture {
  int vocab_size = 0;
  int d_model = 32;
  int d_mlp = 64;
  int max_context = 2048;
  /// Takes image chunks: each image becomes as many positions as Qwen-VL's count for its size,
  /// embedded by a frozen projection of its pooled pixels (images.hpp).
  bool vision = false;
};

/// A named float tensor, row-major: a frozen weight of the base model or an adapter matrix, named as
/// Hugging Face (model.safetensors) or PEFT (adapter_model.safetensors) name it.
struct NamedTensor {
  std::string name;
  std::vector<std::int64_t> shape;
  std::vector<float> values;
};

/// The name and shape of one frozen weight.
struct WeightSpec {
  std::string name;
  std::vector<std::int64_t> shape;
};

class BaseModel {
 public:
  /// Deterministic: the same name and architecture give bit-identical weights on every run. The
  /// weights are float32 values (held in doubles), so an f32 export holds them exactly.
  BaseModel(std::string name, Architecture arch);
  /// A model with the given weights, named as `weight_specs(arch)` lists them (any order; each
  /// exactly once, with its shape). Throws std::invalid_argument naming the tensor otherwise
  /// (loaders check files against weight_specs first, to name the file too).
  BaseModel(std::string name, Architecture arch, const std::vector<NamedTensor>& weights);
  ~BaseModel();
  BaseModel(const BaseModel&) = delete;
  BaseModel& operator=(const BaseModel&) = delete;

  const std::string& name() const noexcept;
  const Architecture& arch() const noexcept;

  /// Every frozen weight of a model of `arch`, with the Hugging Face name a checkpoint of this
  /// shape has and its shape in PyTorch's orientation (a Linear weight is [out, in]):
  /// model.embed_tokens.weight [V, d], model.layers.0.self_attn.{q,k,v,o}_proj.weight [d, d],
  /// model.layers.0.mlp.up_proj.weight [m, d], model.layers.0.mlp.down_proj.weight [d, m],
  /// lm_head.weight [V, d], and for vision models model.image_projection.weight [d, 6].
  static std::vector<WeightSpec> weight_specs(const Architecture& arch);
  /// The weights, in weight_specs order (float32, exact).
  std::vector<NamedTensor> export_weights() const;

  class Weights;
  const Weights& weights() const noexcept;

 private:
  std::string name_;
  Architecture arch_;
  std::unique_ptr<Weights> weights_;
};

struct LoraSettings {
  int rank = 32;
  std::uint64_t seed = 0;
  bool train_mlp = true;
  bool train_attn = true;
  bool train_unembed = true;
};

/// LoRA adapters of one model, their accumulated gradients and the Adam moments.
class LoraState {
 public:
  /// A new adapter (A from settings.seed, B = 0: equal to the base model). Throws UserError for a
  /// rank outside [1, 1024]. Disabled parts (train_* false) have no parameters at all.
  LoraState(const BaseModel& base, LoraSettings settings);
  ~LoraState();
  LoraState(const LoraState&);
  LoraState& operator=(const LoraState&);
  LoraState(LoraState&&) noexcept;
  LoraState& operator=(LoraState&&) noexcept;

  const LoraSettings& settings() const noexcept;
  std::size_t parameter_count() const noexcept;

  /// Bit-exact binary form: adapters, and with `include_optimizer` the Adam moments and step.
  std::string serialize(bool include_optimizer) const;
  /// Inverse of serialize. Throws UserError if the bytes do not fit `base` (wrong architecture,
  /// corrupt data), or if `load_optimizer` is true and the bytes hold no optimizer state. With
  /// `load_optimizer` false the optimizer state starts fresh. Accumulated gradients are never
  /// saved; a loaded state starts with none.
  static LoraState deserialize(const BaseModel& base, std::string_view bytes, bool load_optimizer);

  /// The adapters as Tinker names them in a checkpoint archive's adapter_model.safetensors:
  /// "<module>.lora_A.weight" [rank, in] and "<module>.lora_B.weight" [out, rank] per adapted
  /// matrix, modules base_model.model.model.layers.0.self_attn.{q,v}_proj (train_attn),
  /// base_model.model.model.layers.0.mlp.{up,down}_proj (train_mlp) and
  /// base_model.model.model.unembed_tokens (train_unembed; PEFT and Hugging Face call it lm_head).
  /// The update is delta W = (lora_alpha() / rank) * B A.
  std::vector<NamedTensor> export_adapters() const;
  /// PEFT `lora_alpha` for adapter_config.json (the scale is lora_alpha / rank).
  double lora_alpha() const noexcept;
  /// `target_modules` for adapter_config.json, e.g. {"q_proj", "v_proj", "unembed_tokens"}.
  std::vector<std::string> target_modules() const;

  /// An adapter of rank `rank` from its matrices, named as export_adapters names them or as a PEFT
  /// adapter does (the unembedding as base_model.model.lm_head), whose update is
  /// (lora_alpha / rank) B A. The modules present decide the parts (train_attn: q_proj and v_proj,
  /// train_mlp: up_proj and down_proj, train_unembed), each with both matrices. B is stored rescaled
  /// to this model's own alpha, so delta W is the adapter's (exactly when lora_alpha equals
  /// lora_alpha()). Throws UserError naming the tensor for an unknown, duplicate, misshapen or
  /// non-finite one, a half-present part, or no tensors at all.
  static LoraState import_adapters(const BaseModel& base, int rank, const std::vector<NamedTensor>& tensors,
                                   double lora_alpha);

  class Impl;
  Impl& impl() noexcept { return *impl_; }
  const Impl& impl() const noexcept { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

/// Validates every datum (token ids within the vocabulary, context length, required loss_fn_inputs
/// of each loss (doc/protocol.md#core-types) with their dtypes and lengths, known loss_fn,
/// text chunks, and image chunks for a vision model), then computes per-position logprobs of the
/// target tokens and the loss. Unless
/// `forward_only`, adds the loss's gradients to `lora`'s accumulators. Nothing is changed when
/// validation fails. Output: one record per datum with "logprobs" and "elementwise_loss" (float32,
/// shaped like target_tokens: [N], or [N, K] for cross_entropy's top-k form); metrics "loss:sum"
/// (and only `name:reduction` keys).
ForwardBackwardOutput forward_backward(const BaseModel& base, LoraState& lora, const ForwardBackwardInput& input,
                                       bool forward_only);

/// Same computation without a trainable state (the base model alone), forward only.
ForwardBackwardOutput forward_base(const BaseModel& base, const ForwardBackwardInput& input);

/// One AdamW step with every AdamParams field (global-norm clip first, decoupled weight decay),
/// then clears the accumulated gradients. Metrics: "grad_norm:mean" (before clipping).
OptimStepResponse optim_step(LoraState& lora, const AdamParams& params);

/// Dimuon's defaults where DimuonParams leave a setting empty (doc/local.md#dimuon).
inline constexpr double kDimuonDefaultDamping = 0.1;
inline constexpr double kDimuonDefaultRankExponent = 0.5;

/// One Dimuon step (doc/local.md#dimuon): global-norm clip, momentum (running average with beta1),
/// then per LoRA factor a row/column-preconditioned, Newton-Schulz-orthogonalised direction of
/// Frobenius norm sqrt(rank), scaled by learning_rate * (rank / 32)^(-rank_lr_correction_exponent).
/// Clears the accumulated gradients. Throws UserError naming the field for invalid settings.
/// Metrics: "grad_norm:mean" (before clipping).
OptimStepResponse optim_step(LoraState& lora, const DimuonParams& params);

/// Turns generated token ids into text, for stop strings. May be empty (stop strings then never
/// match; stop token ids still do).
using Detokenizer = std::function<std::string(std::span<const TokenId>)>;

struct SampleSettings {
  std::int64_t num_samples = 1;
  SamplingParams params;
  std::int64_t default_max_tokens = 16;  ///< when params.max_tokens is absent
  std::uint64_t fallback_seed = 0;       ///< used when params.seed is absent
  bool prompt_logprobs = false;
  std::int64_t topk_prompt_logprobs = 0;
  /// The catalogue entry's end-of-sequence token: a stop token when params.stop is unset.
  std::optional<TokenId> eos_token_id;
};

/// Generates from the base model plus `lora` (nullptr = base model only). Honours temperature
/// (0 = argmax), top_k, top_p, max_tokens, stop strings and stop token ids (the stop token is
/// included in `tokens`, stop_reason "stop"), the seed (same seed and inputs, same output), and
/// returns per-token logprobs consistent with forward_backward on the same weights. A prompt
/// position followed by an image position has no prompt logprob (nullopt, as the first has).
/// Throws UserError for invalid prompts or parameters.
SampleResponse sample(const BaseModel& base, const LoraState* lora, const ModelInput& prompt,
                      const SampleSettings& settings, const Detokenizer& detokenize);

}  // namespace model
}  // namespace tinker::local
