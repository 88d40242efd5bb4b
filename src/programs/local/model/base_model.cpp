// The frozen base model: weights drawn deterministically from a seed derived from the model name.
#include "programs/local/model/random.hpp"
#include "programs/local/model/tiny_lm_internal.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace tinker::local::model {
namespace {

// Fills `m` with normal(0, std^2) draws from its own stream `index` of `seed`, each rounded to
// float32: the model computes in double, but its weights are floats so that a float32 export of
// the base model (export_weights, model.safetensors) is exact and reloads bit for bit.
Matrix random_matrix(int rows, int cols, double std_dev, std::uint64_t seed, std::uint64_t index) {
  Matrix m(rows, cols);
  Rng rng(derive_seed(seed, index));
  for (double& x : m.values) x = static_cast<float>(std_dev * rng.normal());
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

BaseModel::Weights::Weights(const Architecture& arch, const std::vector<NamedTensor>& tensors) {
  const std::vector<WeightSpec> specs = BaseModel::weight_specs(arch);
  for (const WeightSpec& spec : specs) {
    Matrix* matrix = named(spec.name);
    *matrix = Matrix(static_cast<int>(spec.shape[0]), static_cast<int>(spec.shape[1]));
  }
  std::vector<bool> seen(specs.size(), false);
  for (const NamedTensor& tensor : tensors) {
    const auto spec =
        std::find_if(specs.begin(), specs.end(), [&](const WeightSpec& s) { return s.name == tensor.name; });
    if (spec == specs.end()) throw std::invalid_argument("tiny_lm: unexpected weight " + tensor.name);
    const auto index = static_cast<std::size_t>(spec - specs.begin());
    if (seen[index]) throw std::invalid_argument("tiny_lm: weight " + tensor.name + " given twice");
    seen[index] = true;
    Matrix& matrix = *named(tensor.name);
    if (tensor.shape != spec->shape || tensor.values.size() != matrix.values.size()) {
      throw std::invalid_argument("tiny_lm: weight " + tensor.name + " has the wrong shape");
    }
    std::copy(tensor.values.begin(), tensor.values.end(), matrix.values.begin());
  }
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (!seen[i]) throw std::invalid_argument("tiny_lm: weight " + specs[i].name + " is missing");
  }
}

Matrix* BaseModel::Weights::named(std::string_view name) noexcept {
  const std::pair<std::string_view, Matrix*> table[] = {
      {"model.embed_tokens.weight", &embed},
      {"model.layers.0.self_attn.q_proj.weight", &wq},
      {"model.layers.0.self_attn.k_proj.weight", &wk},
      {"model.layers.0.self_attn.v_proj.weight", &wv},
      {"model.layers.0.self_attn.o_proj.weight", &wo},
      {"model.layers.0.mlp.up_proj.weight", &w1},
      {"model.layers.0.mlp.down_proj.weight", &w2},
      {"lm_head.weight", &unembed},
      {"model.image_projection.weight", &image_projection},
  };
  for (const auto& [entry_name, matrix] : table) {
    if (entry_name == name) return matrix;
  }
  return nullptr;
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
  return "base_model.model.model.unembed_tokens";
}

const char* peft_alias(Target t) noexcept {
  return t == Target::unembed ? "base_model.model.lm_head" : peft_module(t);
}

const char* peft_short_name(Target t) noexcept {
  switch (t) {
    case Target::query: return "q_proj";
    case Target::value: return "v_proj";
    case Target::mlp_up: return "up_proj";
    case Target::mlp_down: return "down_proj";
    case Target::unembed: break;
  }
  return "unembed_tokens";
}

BaseModel::BaseModel(std::string name, Architecture arch) : name_(std::move(name)), arch_(arch) {
  check_architecture(arch_);
  weights_ = std::make_unique<Weights>(arch_, fnv1a64(name_));
}

BaseModel::BaseModel(std::string name, Architecture arch, const std::vector<NamedTensor>& weights)
    : name_(std::move(name)), arch_(arch) {
  check_architecture(arch_);
  weights_ = std::make_unique<Weights>(arch_, weights);
}

BaseModel::~BaseModel() = default;

// The names a Hugging Face checkpoint of a one-layer decoder has (Llama/Qwen naming), so the
// exporters' generic rules (q_proj, up_proj, lm_head, ...) apply to this model unchanged.
std::vector<WeightSpec> BaseModel::weight_specs(const Architecture& arch) {
  const std::int64_t v = arch.vocab_size;
  const std::int64_t d = arch.d_model;
  const std::int64_t m = arch.d_mlp;
  std::vector<WeightSpec> specs = {
      {"model.embed_tokens.weight", {v, d}},
      {"model.layers.0.self_attn.q_proj.weight", {d, d}},
      {"model.layers.0.self_attn.k_proj.weight", {d, d}},
      {"model.layers.0.self_attn.v_proj.weight", {d, d}},
      {"model.layers.0.self_attn.o_proj.weight", {d, d}},
      {"model.layers.0.mlp.up_proj.weight", {m, d}},
      {"model.layers.0.mlp.down_proj.weight", {d, m}},
      {"lm_head.weight", {v, d}},
  };
  if (arch.vision) specs.push_back({"model.image_projection.weight", {d, kImageFeatures}});
  return specs;
}

std::vector<NamedTensor> BaseModel::export_weights() const {
  std::vector<NamedTensor> tensors;
  for (WeightSpec& spec : weight_specs(arch_)) {
    const Matrix& matrix = *weights_->named(spec.name);
    NamedTensor tensor;
    tensor.values.assign(matrix.values.begin(), matrix.values.end());  // exact: the values are floats
    tensor.name = std::move(spec.name);
    tensor.shape = std::move(spec.shape);
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

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
