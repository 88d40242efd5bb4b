// Internals of the tiny model shared by its translation units (and white-box tests): weight
// matrices, the LoRA parameter layout, the transformer step and its backward pass.
//
// The network (one layer, single head, no norms; everything computed in double):
//   h0_t = E[x_t] + P(t)                      token embedding + sinusoidal position (no length cap)
//   h0_t = G f_t + P(t)                       at an image position: the cell's features f_t (inputs.hpp)
//   q_t, k_t, v_t = Wq h0_t, Wk h0_t, Wv h0_t causal single-head attention over positions <= t
//   c_t = sum_j softmax_j(q_t.k_j / sqrt(d)) v_j
//   h1_t = h0_t + Wo c_t                      residual
//   g_t = tanh(W1 h1_t);  h2_t = h1_t + W2 g_t  MLP with residual
//   z_t = U h2_t;  logprobs_t = log_softmax(z_t)
// Matrices are stored row-major as [out, in] (PEFT/PyTorch orientation: y = W x).
#pragma once

#include "programs/local/model/inputs.hpp"
#include "programs/local/model/tiny_lm.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::local::model {

/// A dense row-major [rows, cols] matrix of doubles.
struct Matrix {
  int rows = 0;
  int cols = 0;
  std::vector<double> values;

  Matrix() = default;
  Matrix(int rows_, int cols_) : rows(rows_), cols(cols_), values(static_cast<std::size_t>(rows_) * cols_, 0.0) {}

  double* data() noexcept { return values.data(); }
  const double* data() const noexcept { return values.data(); }
  double* row(int r) noexcept { return values.data() + static_cast<std::size_t>(r) * cols; }
  const double* row(int r) const noexcept { return values.data() + static_cast<std::size_t>(r) * cols; }
};

/// y = W x (y has W.rows entries, x has W.cols).
void matvec(const Matrix& w, const double* x, double* y) noexcept;
/// y += W^T x (y has W.cols entries, x has W.rows).
void add_matvec_transposed(const Matrix& w, const double* x, double* y) noexcept;
/// G += dy x^T.
void add_outer(Matrix& g, const double* dy, const double* x) noexcept;

/// The matrices a LoRA adapter can modify, in parameter-layout order.
enum class Target { query, value, mlp_up, mlp_down, unembed };
inline constexpr std::array<Target, 5> kAllTargets = {Target::query, Target::value, Target::mlp_up, Target::mlp_down,
                                                      Target::unembed};
constexpr std::size_t index_of(Target t) noexcept {
  return static_cast<std::size_t>(t);
}

/// Module path of a target in Tinker's adapter names (without ".lora_A.weight").
const char* peft_module(Target t) noexcept;
/// The short module name listed in target_modules ("q_proj", "unembed_tokens", ...).
const char* peft_short_name(Target t) noexcept;
/// The name PEFT adapters give the target's module where Tinker's differs (the unembedding:
/// "base_model.model.lm_head"), else peft_module(t).
const char* peft_alias(Target t) noexcept;

class BaseModel::Weights {
 public:
  /// Drawn from `seed`, each value rounded to float32.
  Weights(const Architecture& arch, std::uint64_t seed);
  /// From tensors named as BaseModel::weight_specs(arch) lists them; throws std::invalid_argument.
  Weights(const Architecture& arch, const std::vector<NamedTensor>& tensors);

  Matrix embed;             // [V, d]
  Matrix wq;                // [d, d]
  Matrix wk;                // [d, d]
  Matrix wv;                // [d, d]
  Matrix wo;                // [d, d]
  Matrix w1;                // [m, d]
  Matrix w2;                // [d, m]
  Matrix unembed;           // [V, d]
  Matrix image_projection;  // G [d, kImageFeatures]; vision models only (else 0x0), frozen

  const Matrix& target(Target t) const noexcept;
  /// The matrix called `name` in BaseModel::weight_specs, or nullptr.
  Matrix* named(std::string_view name) noexcept;
  const Matrix* named(std::string_view name) const noexcept { return const_cast<Weights*>(this)->named(name); }
};

/// Where one adapted matrix's A [rank, in] and B [out, rank] live in the flat parameter vector.
struct LoraPart {
  Target target = Target::query;
  int in = 0;
  int out = 0;
  std::size_t a_offset = 0;
  std::size_t b_offset = 0;
};

/// LoRA scale numerator: delta W = (kLoraAlpha / rank) * B A. With Adam the size of an update
/// of B A x is then independent of the rank (the usual alpha/r argument).
inline constexpr double kLoraAlpha = 512.0;

class LoraState::Impl {
 public:
  Impl(const Architecture& arch, LoraSettings settings);

  Architecture arch;
  LoraSettings settings;
  double scale = 1.0;
  std::vector<LoraPart> parts;  // enabled targets only, in kAllTargets order
  std::vector<float> params;    // the adapters: each part's A then B
  std::vector<double> grads;    // accumulated since the last optim_step (not serialized)
  std::vector<float> adam_m;    // first moments
  std::vector<float> adam_v;    // second moments
  std::uint64_t adam_step = 0;  // number of optim_steps taken
  // Dimuon's state (dimuon.cpp): the running average of gradients, empty until the first Dimuon
  // step (a model steps with one optimizer only: the engine refuses the other's parameters).
  std::vector<float> dimuon_momentum;
  std::uint64_t dimuon_step = 0;  // number of Dimuon steps taken

  const LoraPart* find(Target t) const noexcept;
  bool trains(Target t) const noexcept { return find(t) != nullptr; }
};

/// Dimuon's direction for one LoRA factor from its momentum (dimuon.cpp): preconditioned by the
/// damped row/column second moments, orthogonalised by Newton-Schulz, scaled to Frobenius norm
/// sqrt(rank); all zero for a zero momentum.
Matrix dimuon_direction(const Matrix& momentum, double damping, int rank);
/// Dimuon's learning-rate factor (rank / 32)^(-exponent) (1 when exponent is 0).
double dimuon_rank_factor(int rank, double exponent);

/// Throws std::invalid_argument if `lora` was made for another architecture than `base` (a
/// programming error of the caller, not a user error).
void check_same_architecture(const BaseModel& base, const LoraState::Impl& lora);

/// The weights a forward pass uses: W + scale * B A for adapted matrices, the base otherwise.
class EffectiveWeights {
 public:
  EffectiveWeights(const BaseModel& base, const LoraState::Impl* lora);
  EffectiveWeights(const EffectiveWeights&) = delete;
  EffectiveWeights& operator=(const EffectiveWeights&) = delete;

  const Architecture& arch;
  const BaseModel::Weights& base;
  const Matrix& get(Target t) const noexcept { return *targets_[index_of(t)]; }

 private:
  std::array<Matrix, kAllTargets.size()> owned_;
  std::array<const Matrix*, kAllTargets.size()> targets_{};
};

/// Per-position activations of one sequence; doubles as the KV cache of the sampler.
struct Activations {
  explicit Activations(const Architecture& arch, bool keep_for_backward_)
      : d(arch.d_model), m(arch.d_mlp), keep_for_backward(keep_for_backward_) {}

  int d;
  int m;
  bool keep_for_backward;  // keep attention weights (the rest is always kept: it is the cache)
  int length = 0;
  std::vector<double> h0, q, k, v, c, h1, g, h2;  // [length, d] (g: [length, m])
  std::vector<double> attention;                  // row t holds t+1 weights, rows concatenated
};

/// Appends position `acts.length` holding `token` and writes the log-probabilities of the next
/// token over the whole vocabulary to `logprobs` (V entries). Sampling and training both run
/// through this function, so their logprobs are bit-identical for the same weights.
void step(const EffectiveWeights& weights, TokenId token, Activations& acts, double* logprobs);
/// The same for position `position` of `sequence`: its token, or its image cell's features
/// projected by the base model's image projection.
void step(const EffectiveWeights& weights, const InputSequence& sequence, std::size_t position, Activations& acts,
          double* logprobs);

/// Gradients with respect to the effective weights of the adapted matrices.
struct WeightGrads {
  explicit WeightGrads(const EffectiveWeights& weights, const LoraState::Impl& lora);
  std::array<Matrix, kAllTargets.size()> of;  // empty (0x0) for targets without an adapter
  bool has(Target t) const noexcept { return !of[index_of(t)].values.empty(); }
};

/// Backpropagates dL/dlogprob of each position's targets through a sequence whose forward pass
/// left `acts` and `logprobs` ([length, V]); adds to `grads`. `targets` and `dlogprob` hold K
/// entries per position, row-major (K = targets.size() / length; 1 for the usual (N,) targets).
void backward(const EffectiveWeights& weights, const Activations& acts, const std::vector<TokenId>& targets,
              const std::vector<double>& logprobs, const std::vector<double>& dlogprob, WeightGrads& grads);

/// Adds the chain rule through W_eff = W + scale * B A to `lora_grads` (laid out like params).
void accumulate_lora_grads(const LoraState::Impl& lora, const WeightGrads& grads, std::vector<double>& lora_grads);

}  // namespace tinker::local::model
