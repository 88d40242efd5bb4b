// The frozen base model: weights drawn deterministically from a seed derived from the model name.
#include "programs/local/model/random.hpp"
#include "programs/local/model/tiny_lm_internal.hpp"

#include <cmath>
#include <stdexcept>
#include <utility>

namespace tinker::local::model {
namespace {

// Fills `m` with normal(0, std^2) draws from its own stream `index` of `seed`.
Matrix random_matrix(int rows, int cols, double std_dev, std::uint64_t seed, std::uint64_t index) {
  Matrix m(rows, cols);
  Rng rng(derive_seed(seed, index));
  for (double& x : m.values) x = std_dev * rng.normal();
  return m;
}

void check_architecture(const Architecture& arch) {
  if (arch.vocab_size < 2) throw std::invalid_argument("tiny_lm: vocab_size must be >= 2");
  if (arch.d_model < 2) throw std::invalid_argument("tiny_lm: d_model must be >= 2");
  if (arch.d_mlp < 1) throw std::invalid_argument("tiny_lm: d_mlp must be >= 1");
  if (arch.max_context < 1) throw std::invalid_argument("tiny_lm: max_context must be >= 1");
}

}  // namespace

// Scales chosen so that the base model is nearly uniform (cross-entropy of random text is
// within a few tenths of a nat of ln V) yet clearly context-dependent: the attention logits
// have unit-order spread, the MLP works in tanh's curved range, and the unembedding maps the
// residual stream (norm ~7) to logits with a standard deviation of roughly 0.35.
BaseModel::Weights::Weights(const Architecture& arch, std::uint64_t seed) {
  const int d = arch.d_model;
  const int m = arch.d_mlp;
  const int v = arch.vocab_size;
  const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(d));
  const double inv_sqrt_m = 1.0 / std::sqrt(static_cast<double>(m));
  embed = random_matrix(v, d, 1.0, seed, 0);
  wq = random_matrix(d, d, inv_sqrt_d, seed, 1);
  wk = random_matrix(d, d, inv_sqrt_d, seed, 2);
  wv = random_matrix(d, d, inv_sqrt_d, seed, 3);
  wo = random_matrix(d, d, inv_sqrt_d, seed, 4);
  w1 = random_matrix(m, d, 0.5 * inv_sqrt_d, seed, 5);
  w2 = random_matrix(d, m, inv_sqrt_m, seed, 6);
  unembed = random_matrix(v, d, 0.05, seed, 7);
  // Image cells land at about the scale of token embeddings (a component's standard deviation
  // is near 1 for a mid-grey cell), so attention treats them alike; the colour features then
  // move each component by up to about one unit.
  if (arch.vision) image_projection = random_matrix(d, kImageFeatures, 0.6, seed, 8);
}

const Matrix& BaseModel::Weights::target(Target t) const noexcept {
  switch (t) {
    case Target::query: return wq;
    case Target::value: return wv;
    case Target::mlp_up: return w1;
    case Target::mlp_down: return w2;
    case Target::unembed: break;
  }
  return unembed;
}

const char* peft_module(Target t) noexcept {
  switch (t) {
    case Target::query: return "base_model.model.model.layers.0.self_attn.q_proj";
    case Target::value: return "base_model.model.model.layers.0.self_attn.v_proj";
    case Target::mlp_up: return "base_model.model.model.layers.0.mlp.up_proj";
    case Target::mlp_down: return "base_model.model.model.layers.0.mlp.down_proj";
    case Target::unembed: break;
  }
  return "base_model.model.lm_head";
}

const char* peft_short_name(Target t) noexcept {
  switch (t) {
    case Target::query: return "q_proj";
    case Target::value: return "v_proj";
    case Target::mlp_up: return "up_proj";
    case Target::mlp_down: return "down_proj";
    case Target::unembed: break;
  }
  return "lm_head";
}

BaseModel::BaseModel(std::string name, Architecture arch) : name_(std::move(name)), arch_(arch) {
  check_architecture(arch_);
  weights_ = std::make_unique<Weights>(arch_, fnv1a64(name_));
}

BaseModel::~BaseModel() = default;

const std::string& BaseModel::name() const noexcept {
  return name_;
}
const Architecture& BaseModel::arch() const noexcept {
  return arch_;
}
const BaseModel::Weights& BaseModel::weights() const noexcept {
  return *weights_;
}

}  // namespace tinker::local::model
