// LoRA adapters: parameter layout, initialisation, effective weights and the chain rule to A, B.
#include "programs/local/model/kernels.hpp"
#include "programs/local/model/random.hpp"
#include "programs/local/model/tiny_lm_internal.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tinker::local::model {
namespace {

// Largest rank accepted: far beyond the matrices' own ranks, it only bounds memory.
constexpr int kMaxRank = 1024;

std::string adapter_shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i == 0 ? "" : ", ") + std::to_string(shape[i]);
  return text + "]";
}

bool enabled(const LoraSettings& s, Target t) noexcept {
  switch (t) {
    case Target::query:
    case Target::value: return s.train_attn;
    case Target::mlp_up:
    case Target::mlp_down: return s.train_mlp;
    case Target::unembed: break;
  }
  return s.train_unembed;
}

void shape_of(const Architecture& arch, Target t, int& in, int& out) noexcept {
  in = arch.d_model;
  out = arch.d_model;
  if (t == Target::mlp_up) out = arch.d_mlp;
  if (t == Target::mlp_down) in = arch.d_mlp;
  if (t == Target::unembed) out = arch.vocab_size;
}

}  // namespace

// A is drawn from the LoRA seed with standard deviation 1/sqrt(in) (so A x has unit-order entries
// for the unit-order residual stream); B starts at zero, so a new adapter equals the base model.
LoraState::Impl::Impl(const Architecture& arch_, LoraSettings settings_) : arch(arch_), settings(settings_) {
  if (settings.rank < 1 || settings.rank > kMaxRank) {
    throw UserError("lora_config.rank: " + std::to_string(settings.rank) + " is outside [1, " +
                    std::to_string(kMaxRank) + "]");
  }
  const int r = settings.rank;
  scale = kLoraAlpha / r;
  std::size_t offset = 0;
  for (Target t : kAllTargets) {
    if (!enabled(settings, t)) continue;
    LoraPart part;
    part.target = t;
    shape_of(arch, t, part.in, part.out);
    part.a_offset = offset;
    part.b_offset = offset + static_cast<std::size_t>(r) * part.in;
    offset = part.b_offset + static_cast<std::size_t>(part.out) * r;
    parts.push_back(part);
  }
  params.assign(offset, 0.0f);
  grads.assign(offset, 0.0);
  adam_m.assign(offset, 0.0f);
  adam_v.assign(offset, 0.0f);
  for (const LoraPart& part : parts) {
    Rng rng(derive_seed(settings.seed, index_of(part.target)));
    const double std_dev = 1.0 / std::sqrt(static_cast<double>(part.in));
    const std::size_t count = static_cast<std::size_t>(r) * part.in;
    for (std::size_t i = 0; i < count; ++i) params[part.a_offset + i] = static_cast<float>(std_dev * rng.normal());
  }
}

const LoraPart* LoraState::Impl::find(Target t) const noexcept {
  for (const LoraPart& part : parts) {
    if (part.target == t) return &part;
  }
  return nullptr;
}

void check_same_architecture(const BaseModel& base, const LoraState::Impl& lora) {
  const Architecture& a = base.arch();
  if (a.vocab_size != lora.arch.vocab_size || a.d_model != lora.arch.d_model || a.d_mlp != lora.arch.d_mlp) {
    throw std::invalid_argument("tiny_lm: the LoRA state was made for another architecture than base model " +
                                base.name());
  }
}

EffectiveWeights::EffectiveWeights(const BaseModel& base_model, const LoraState::Impl* lora)
    : arch(base_model.arch()), base(base_model.weights()) {
  for (Target t : kAllTargets) {
    const LoraPart* part = lora != nullptr ? lora->find(t) : nullptr;
    targets_[index_of(t)] = &base.target(t);
    if (part == nullptr) continue;
    Matrix& w = owned_[index_of(t)];
    w = base.target(t);
    const int r = lora->settings.rank;
    const float* a = lora->params.data() + part->a_offset;
    const float* b = lora->params.data() + part->b_offset;
    for (int o = 0; o < part->out; ++o) {
      double* row = w.row(o);
      for (int k = 0; k < r; ++k) {
        const double coefficient = lora->scale * b[static_cast<std::size_t>(o) * r + k];
        if (coefficient == 0.0) continue;
        kernels::axpy(coefficient, a + static_cast<std::size_t>(k) * part->in, row, part->in);
      }
    }
    targets_[index_of(t)] = &w;
  }
}

WeightGrads::WeightGrads(const EffectiveWeights& weights, const LoraState::Impl& lora) {
  for (const LoraPart& part : lora.parts) {
    const Matrix& w = weights.get(part.target);
    of[index_of(part.target)] = Matrix(w.rows, w.cols);
  }
}

// W_eff = W + s B A: dL/dB = s G A^T and dL/dA = s B^T G, with G = dL/dW_eff.
void accumulate_lora_grads(const LoraState::Impl& lora, const WeightGrads& grads, std::vector<double>& lora_grads) {
  const int r = lora.settings.rank;
  for (const LoraPart& part : lora.parts) {
    const Matrix& g = grads.of[index_of(part.target)];
    const float* a = lora.params.data() + part.a_offset;
    const float* b = lora.params.data() + part.b_offset;
    double* da = lora_grads.data() + part.a_offset;
    double* db = lora_grads.data() + part.b_offset;
    for (int o = 0; o < part.out; ++o) {
      const double* g_row = g.row(o);
      for (int k = 0; k < r; ++k) {
        const float* a_row = a + static_cast<std::size_t>(k) * part.in;
        double* da_row = da + static_cast<std::size_t>(k) * part.in;
        const double b_ok = lora.scale * b[static_cast<std::size_t>(o) * r + k];
        if (b_ok != 0.0) kernels::axpy(b_ok, g_row, da_row, part.in);
        db[static_cast<std::size_t>(o) * r + k] += lora.scale * kernels::dot(g_row, a_row, part.in);
      }
    }
  }
}

LoraState::LoraState(const BaseModel& base, LoraSettings settings)
    : impl_(std::make_unique<Impl>(base.arch(), settings)) {}
LoraState::~LoraState() = default;
LoraState::LoraState(const LoraState& other) : impl_(std::make_unique<Impl>(*other.impl_)) {}
LoraState& LoraState::operator=(const LoraState& other) {
  if (this != &other) impl_ = std::make_unique<Impl>(*other.impl_);
  return *this;
}
LoraState::LoraState(LoraState&&) noexcept = default;
LoraState& LoraState::operator=(LoraState&&) noexcept = default;

const LoraSettings& LoraState::settings() const noexcept {
  return impl_->settings;
}
std::size_t LoraState::parameter_count() const noexcept {
  return impl_->params.size();
}
double LoraState::lora_alpha() const noexcept {
  return kLoraAlpha;
}

std::vector<std::string> LoraState::target_modules() const {
  std::vector<std::string> names;
  for (const LoraPart& part : impl_->parts) names.emplace_back(peft_short_name(part.target));
  return names;
}

std::vector<NamedTensor> LoraState::export_adapters() const {
  std::vector<NamedTensor> tensors;
  const int r = impl_->settings.rank;
  for (const LoraPart& part : impl_->parts) {
    const std::string module = peft_module(part.target);
    const auto a_begin = impl_->params.begin() + static_cast<std::ptrdiff_t>(part.a_offset);
    const auto b_begin = impl_->params.begin() + static_cast<std::ptrdiff_t>(part.b_offset);
    NamedTensor a;
    a.name = module + ".lora_A.weight";
    a.shape = {r, part.in};
    a.values.assign(a_begin, b_begin);
    NamedTensor b;
    b.name = module + ".lora_B.weight";
    b.shape = {part.out, r};
    b.values.assign(b_begin, b_begin + static_cast<std::ptrdiff_t>(part.out) * r);
    tensors.push_back(std::move(a));
    tensors.push_back(std::move(b));
  }
  return tensors;
}

namespace {

// The target whose module `module` names (Tinker's or PEFT's name), or nullopt.
std::optional<Target> target_of_module(std::string_view module) {
  for (Target t : kAllTargets) {
    if (module == peft_module(t) || module == peft_alias(t)) return t;
  }
  return std::nullopt;
}

// One adapter matrix located: its target and whether it is B.
struct AdapterSlot {
  Target target = Target::query;
  bool is_b = false;
};

AdapterSlot locate_adapter_tensor(const std::string& name) {
  constexpr std::string_view a_suffix = ".lora_A.weight";
  constexpr std::string_view b_suffix = ".lora_B.weight";
  const std::string_view view = name;
  const bool is_a = view.ends_with(a_suffix);
  const bool is_b = view.ends_with(b_suffix);
  std::optional<Target> target;
  if (is_a || is_b) target = target_of_module(view.substr(0, view.size() - a_suffix.size()));
  if (!target) {
    throw UserError("tensor '" + name + "': not an adapter matrix of tinker-local's model (expected " +
                    peft_module(Target::query) + ".lora_A.weight and the like for q_proj, v_proj, up_proj, " +
                    "down_proj and unembed_tokens / lm_head)");
  }
  return AdapterSlot{*target, is_b};
}

bool present(const std::vector<AdapterSlot>& slots, Target t) {
  return std::any_of(slots.begin(), slots.end(), [t](const AdapterSlot& s) { return s.target == t; });
}

// Which parts the tensors hold; a part must have both of its matrices.
LoraSettings settings_of(const std::vector<AdapterSlot>& slots, int rank) {
  LoraSettings settings;
  settings.rank = rank;
  settings.train_attn = present(slots, Target::query) || present(slots, Target::value);
  settings.train_mlp = present(slots, Target::mlp_up) || present(slots, Target::mlp_down);
  settings.train_unembed = present(slots, Target::unembed);
  if (!settings.train_attn && !settings.train_mlp && !settings.train_unembed) {
    throw UserError("the adapter has no tensors");
  }
  return settings;
}

}  // namespace

LoraState LoraState::import_adapters(const BaseModel& base, int rank, const std::vector<NamedTensor>& tensors,
                                     double lora_alpha) {
  if (!(lora_alpha > 0.0) || !std::isfinite(lora_alpha)) {
    throw UserError("lora_alpha: must be a positive number, got " + std::to_string(lora_alpha));
  }
  std::vector<AdapterSlot> slots;
  for (const NamedTensor& tensor : tensors) slots.push_back(locate_adapter_tensor(tensor.name));
  LoraState state(base, settings_of(slots, rank));
  Impl& impl = *state.impl_;
  // delta W = (lora_alpha / r) B A = (kLoraAlpha / r) B' A with B' = (lora_alpha / kLoraAlpha) B.
  const double b_factor = lora_alpha / kLoraAlpha;
  std::vector<bool> filled(2 * kAllTargets.size(), false);
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const NamedTensor& tensor = tensors[i];
    const LoraPart& part = *impl.find(slots[i].target);
    const std::size_t slot = 2 * index_of(part.target) + (slots[i].is_b ? 1 : 0);
    if (filled[slot]) throw UserError("tensor '" + tensor.name + "': the same matrix is given twice");
    filled[slot] = true;
    const std::vector<std::int64_t> shape =
        slots[i].is_b ? std::vector<std::int64_t>{part.out, rank} : std::vector<std::int64_t>{rank, part.in};
    if (tensor.shape != shape || tensor.values.size() != static_cast<std::size_t>(shape[0] * shape[1])) {
      throw UserError("tensor '" + tensor.name + "': shape " + adapter_shape_text(tensor.shape) + ", expected " +
                      adapter_shape_text(shape) + " (rank " + std::to_string(rank) + ")");
    }
    float* out = impl.params.data() + (slots[i].is_b ? part.b_offset : part.a_offset);
    for (float value : tensor.values) {
      if (!std::isfinite(value)) throw UserError("tensor '" + tensor.name + "': holds a value that is not finite");
      *out++ = slots[i].is_b ? static_cast<float>(value * b_factor) : value;
    }
  }
  for (const LoraPart& part : impl.parts) {
    for (int is_b = 0; is_b < 2; ++is_b) {
      if (filled[2 * index_of(part.target) + static_cast<std::size_t>(is_b)]) continue;
      throw UserError(std::string("tensor '") + peft_module(part.target) + (is_b != 0 ? ".lora_B" : ".lora_A") +
                      ".weight' is missing (its module's other matrices are present)");
    }
  }
  return state;
}

}  // namespace tinker::local::model
