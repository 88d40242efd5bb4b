// LoraState::serialize / deserialize: a small self-checking little-endian binary format.
//
// Layout (all integers little-endian):
//   "TINYLORA"                      8-byte magic
//   u32 format version (1)
//   u32 vocab_size, d_model, d_mlp  the base architecture the adapters fit
//   u32 rank
//   u32 flags                       bit 0 train_attn, 1 train_mlp, 2 train_unembed, 3 optimizer state,
//                                   4 the optimizer state is Dimuon's (else AdamW's)
//   u64 LoRA seed
//   u64 parameter count P
//   [u64 optimizer step]            when flag 3 is set
//   f32[P] parameters               each adapted matrix's A then B (see LoraState::Impl)
//   [f32[P] Adam m, f32[P] Adam v]  when flag 3 is set and flag 4 is not
//   [f32[P] Dimuon momentum]        when flags 3 and 4 are set
//   u64 FNV-1a-64 of all preceding bytes
// Floats are stored as their IEEE bit patterns, so a round trip is bit-identical. Accumulated
// gradients are not saved: a checkpoint is taken between optimizer steps (as the real service
// does), and a loaded state starts with zero gradients.
#include "programs/local/model/random.hpp"
#include "programs/local/model/tiny_lm_internal.hpp"

#include <bit>
#include <cstring>

namespace tinker::local::model {
namespace {

constexpr std::string_view kMagic = "TINYLORA";
constexpr std::uint32_t kFormatVersion = 1;
constexpr std::uint32_t kFlagAttn = 1U << 0;
constexpr std::uint32_t kFlagMlp = 1U << 1;
constexpr std::uint32_t kFlagUnembed = 1U << 2;
constexpr std::uint32_t kFlagOptimizer = 1U << 3;
constexpr std::uint32_t kFlagDimuon = 1U << 4;
constexpr std::size_t kHeaderSize = 8 + 4 * 6 + 8 + 8;

class Writer {
 public:
  void bytes(std::string_view b) { out_.append(b); }
  void u32(std::uint32_t v) { put(v, 4); }
  void u64(std::uint64_t v) { put(v, 8); }
  void floats(const std::vector<float>& values) {
    for (float f : values) u32(std::bit_cast<std::uint32_t>(f));
  }
  std::string take() { return std::move(out_); }
  const std::string& text() const { return out_; }

 private:
  void put(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  std::uint32_t u32() { return static_cast<std::uint32_t>(get(4)); }
  std::uint64_t u64() { return get(8); }
  void floats(std::vector<float>& values) {
    for (float& f : values) f = std::bit_cast<float>(u32());
  }

 private:
  // Callers check the total size first; this guards against logic errors only.
  std::uint64_t get(int n) {
    if (pos_ + static_cast<std::size_t>(n) > in_.size()) throw UserError("checkpoint: truncated");
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(in_[pos_ + i])) << (8 * i);
    pos_ += static_cast<std::size_t>(n);
    return v;
  }
  std::string_view in_;
  std::size_t pos_ = 0;
};

std::string describe(std::uint32_t vocab, std::uint32_t d_model, std::uint32_t d_mlp) {
  return "vocab_size=" + std::to_string(vocab) + ", d_model=" + std::to_string(d_model) +
         ", d_mlp=" + std::to_string(d_mlp);
}

}  // namespace

std::string LoraState::serialize(bool include_optimizer) const {
  const Impl& s = *impl_;
  Writer w;
  w.bytes(kMagic);
  w.u32(kFormatVersion);
  w.u32(static_cast<std::uint32_t>(s.arch.vocab_size));
  w.u32(static_cast<std::uint32_t>(s.arch.d_model));
  w.u32(static_cast<std::uint32_t>(s.arch.d_mlp));
  w.u32(static_cast<std::uint32_t>(s.settings.rank));
  std::uint32_t flags = 0;
  if (s.settings.train_attn) flags |= kFlagAttn;
  if (s.settings.train_mlp) flags |= kFlagMlp;
  if (s.settings.train_unembed) flags |= kFlagUnembed;
  // A model steps with one optimizer only: Dimuon's state exists once it has taken a Dimuon step.
  const bool dimuon = include_optimizer && !s.dimuon_momentum.empty();
  if (include_optimizer) flags |= kFlagOptimizer;
  if (dimuon) flags |= kFlagDimuon;
  w.u32(flags);
  w.u64(s.settings.seed);
  w.u64(s.params.size());
  if (include_optimizer) w.u64(dimuon ? s.dimuon_step : s.adam_step);
  w.floats(s.params);
  if (dimuon) {
    w.floats(s.dimuon_momentum);
  } else if (include_optimizer) {
    w.floats(s.adam_m);
    w.floats(s.adam_v);
  }
  w.u64(fnv1a64(w.text()));
  return w.take();
}

LoraState LoraState::deserialize(const BaseModel& base, std::string_view bytes, bool load_optimizer) {
  if (bytes.size() < kHeaderSize + 8 || bytes.substr(0, kMagic.size()) != kMagic) {
    throw UserError("checkpoint: not a tiny-lm LoRA checkpoint (bad magic or too short)");
  }
  Reader r(bytes.substr(kMagic.size()));
  const std::uint32_t version = r.u32();
  if (version != kFormatVersion) throw UserError("checkpoint: unsupported format version " + std::to_string(version));
  const std::uint32_t vocab = r.u32();
  const std::uint32_t d_model = r.u32();
  const std::uint32_t d_mlp = r.u32();
  const std::uint32_t rank = r.u32();
  const std::uint32_t flags = r.u32();
  const std::uint64_t seed = r.u64();
  const std::uint64_t count = r.u64();
  const bool has_optimizer = (flags & kFlagOptimizer) != 0;
  const bool dimuon = has_optimizer && (flags & kFlagDimuon) != 0;

  const std::uint64_t header = kHeaderSize + (has_optimizer ? 8 : 0);
  const std::uint64_t vectors = has_optimizer ? (dimuon ? 2 : 3) : 1;
  if (count > bytes.size() || bytes.size() != header + count * 4 * vectors + 8) {
    throw UserError("checkpoint: size " + std::to_string(bytes.size()) +
                    " bytes does not match its header (truncated or corrupt)");
  }
  const std::string_view body = bytes.substr(0, bytes.size() - 8);
  Reader trailer(bytes.substr(bytes.size() - 8));
  if (trailer.u64() != fnv1a64(body)) throw UserError("checkpoint: checksum mismatch (corrupt data)");

  const Architecture& arch = base.arch();
  if (vocab != static_cast<std::uint32_t>(arch.vocab_size) || d_model != static_cast<std::uint32_t>(arch.d_model) ||
      d_mlp != static_cast<std::uint32_t>(arch.d_mlp)) {
    throw UserError("checkpoint: made for an architecture with " + describe(vocab, d_model, d_mlp) +
                    ", but base model " + base.name() + " has " +
                    describe(static_cast<std::uint32_t>(arch.vocab_size), static_cast<std::uint32_t>(arch.d_model),
                             static_cast<std::uint32_t>(arch.d_mlp)));
  }
  if (rank < 1 || rank > 1024) throw UserError("checkpoint: invalid LoRA rank " + std::to_string(rank));
  LoraSettings settings;
  settings.rank = static_cast<int>(rank);
  settings.seed = seed;
  settings.train_attn = (flags & kFlagAttn) != 0;
  settings.train_mlp = (flags & kFlagMlp) != 0;
  settings.train_unembed = (flags & kFlagUnembed) != 0;
  LoraState state(base, settings);
  Impl& s = *state.impl_;
  if (s.params.size() != count) throw UserError("checkpoint: parameter count does not match its LoRA settings");
  if (load_optimizer && !has_optimizer) throw UserError("checkpoint: has no optimizer state to load");

  const std::uint64_t step = has_optimizer ? r.u64() : 0;
  r.floats(s.params);
  if (load_optimizer && dimuon) {
    s.dimuon_step = step;
    s.dimuon_momentum.assign(s.params.size(), 0.0f);
    r.floats(s.dimuon_momentum);
  } else if (load_optimizer) {
    s.adam_step = step;
    r.floats(s.adam_m);
    r.floats(s.adam_v);
  }
  return state;
}

}  // namespace tinker::local::model
