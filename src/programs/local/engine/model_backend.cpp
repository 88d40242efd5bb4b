// The real backend: the tiny LoRA language model (src/programs/local/model) over the local tokenizers.
#include "programs/local/engine/backend.hpp"
#include "programs/local/model_dir/model_dir.hpp"
#include "programs/local/tokenizer/tokenizer_store.hpp"

#include <tinker/error.hpp>

#include <algorithm>
#include <climits>
#include <map>
#include <mutex>

namespace tinker::local::engine_detail {
namespace {

class LoraModelState final : public ModelState {
 public:
  LoraModelState(std::shared_ptr<const model::BaseModel> base_, model::LoraState lora_)
      : base(std::move(base_)), lora(std::move(lora_)) {}
  model::LoraSettings settings() const override { return lora.settings(); }

  std::shared_ptr<const model::BaseModel> base;
  model::LoraState lora;
};

const LoraModelState& lora_of(const ModelState& state) {
  return static_cast<const LoraModelState&>(state);
}
LoraModelState& lora_of(ModelState& state) {
  return static_cast<LoraModelState&>(state);
}

/// The tokenizer of each kind (CatalogueEntry::tokenizer).
using TokenizersByKind = std::map<TinyTokenizer, TokenizerInfo>;

class ModelBackend final : public Backend {
 public:
  explicit ModelBackend(TokenizersByKind tokenizers) : tokenizers_(std::move(tokenizers)) {}

  bool inline_compute() const noexcept override { return false; }
  std::string tokenizer_id(const CatalogueEntry& base) const override { return tokenizer_of(base).id; }
  std::string arch() const override { return "tinker-local-tiny-lm"; }

  std::unique_ptr<ModelState> create(const CatalogueEntry& base, const model::LoraSettings& lora) override {
    auto weights = base_model(base);
    model::LoraState state(*weights, lora);
    return std::make_unique<LoraModelState>(std::move(weights), std::move(state));
  }

  ForwardBackwardOutput forward_backward(ModelState& state, const ForwardBackwardInput& input,
                                         bool forward_only) override {
    LoraModelState& s = lora_of(state);
    return model::forward_backward(*s.base, s.lora, input, forward_only);
  }

  OptimStepResponse optim_step(ModelState& state, const AdamParams& params) override {
    return model::optim_step(lora_of(state).lora, params);
  }

  OptimStepResponse optim_step(ModelState& state, const DimuonParams& params) override {
    return model::optim_step(lora_of(state).lora, params);
  }

  std::string serialize(const ModelState& state, bool include_optimizer) override {
    return lora_of(state).lora.serialize(include_optimizer);
  }

  std::unique_ptr<ModelState> deserialize(const CatalogueEntry& base, std::string_view bytes,
                                          bool load_optimizer) override {
    auto weights = base_model(base);
    model::LoraState state = model::LoraState::deserialize(*weights, bytes, load_optimizer);
    return std::make_unique<LoraModelState>(std::move(weights), std::move(state));
  }

  std::unique_ptr<ModelState> copy(const ModelState& state) override {
    const LoraModelState& s = lora_of(state);
    return std::make_unique<LoraModelState>(s.base, s.lora);
  }

  SampleResponse sample(const CatalogueEntry& base, const ModelState* weights, const ModelInput& prompt,
                        const model::SampleSettings& settings) override {
    const model::Detokenizer& detokenize = tokenizer_of(base).decode;
    if (weights == nullptr) return model::sample(*base_model(base), nullptr, prompt, settings, detokenize);
    const LoraModelState& s = lora_of(*weights);
    return model::sample(*s.base, &s.lora, prompt, settings, detokenize);
  }

  AdapterExport export_adapters(const ModelState& state) override {
    const model::LoraState& lora = lora_of(state).lora;
    AdapterExport adapter;
    for (model::NamedTensor& tensor : lora.export_adapters()) {
      adapter.tensors.push_back(
          SafetensorsTensor{std::move(tensor.name), std::move(tensor.shape), std::move(tensor.values)});
    }
    adapter.lora_alpha = lora.lora_alpha();
    adapter.target_modules = lora.target_modules();
    return adapter;
  }

  std::unique_ptr<ModelState> import_adapter(const CatalogueEntry& base, int rank,
                                             const std::vector<model::NamedTensor>& tensors,
                                             double lora_alpha) override {
    auto weights = base_model(base);
    model::LoraState state = model::LoraState::import_adapters(*weights, rank, tensors, lora_alpha);
    return std::make_unique<LoraModelState>(std::move(weights), std::move(state));
  }

  void preload(const CatalogueEntry& base) override {
    if (!base.model_dir.empty()) base_model(base);
  }

 private:
  const TokenizerInfo& tokenizer_of(const CatalogueEntry& entry) const {
    const auto it = tokenizers_.find(entry.tokenizer);
    if (it == tokenizers_.end()) {
      throw tinker::error(errc::invalid_configuration, "base model " + entry.name + ": its tokenizer is not loaded");
    }
    return it->second;
  }

  /// One immutable BaseModel per catalogue name, built (or read from its model directory) on first
  /// use and shared by every model.
  std::shared_ptr<const model::BaseModel> base_model(const CatalogueEntry& entry) {
    std::lock_guard lock(mutex_);
    auto it = bases_.find(entry.name);
    if (it != bases_.end()) return it->second;
    if (!entry.model_dir.empty()) {
      auto base = hf_dir::load_base_model(entry, tokenizer_of(entry).vocab_size);
      bases_.emplace(entry.name, base);
      return base;
    }
    model::Architecture arch;
    arch.vocab_size = tokenizer_of(entry).vocab_size;
    arch.d_model = entry.d_model;
    arch.d_mlp = entry.d_mlp;
    arch.max_context = static_cast<int>(std::clamp<std::int64_t>(entry.max_context_length, 1, INT_MAX));
    arch.vision = entry.vision;
    auto base = std::make_shared<const model::BaseModel>(entry.name, arch);
    bases_.emplace(entry.name, base);
    return base;
  }

  TokenizersByKind tokenizers_;
  std::mutex mutex_;  // guards bases_ (workers build base models on first use)
  std::map<std::string, std::shared_ptr<const model::BaseModel>> bases_;
};

}  // namespace

std::unique_ptr<Backend> make_model_backend(TokenizerInfo tokenizer) {
  if (tokenizer.vocab_size < 2) throw tinker::error(errc::invalid_configuration, "the tiny model needs a vocabulary");
  TokenizersByKind tokenizers{{TinyTokenizer::byte_level_bpe, tokenizer},
                              {TinyTokenizer::byte_level_bpe_vl, tokenizer},
                              {TinyTokenizer::sentencepiece, std::move(tokenizer)}};
  return std::make_unique<ModelBackend>(std::move(tokenizers));
}

std::unique_ptr<Backend> make_model_backend(const LocalTokenizers& tokenizers) {
  TokenizersByKind infos;
  for (const TinyTokenizer kind : all_tiny_tokenizers) {
    std::shared_ptr<const LocalTokenizer> tokenizer = tokenizers.of(kind);
    if (!tokenizer) continue;
    if (tokenizer->vocab_size() < 2)
      throw tinker::error(errc::invalid_configuration, "the tiny model needs a vocabulary");
    TokenizerInfo info;
    info.id = tokenizer->id();
    info.vocab_size = tokenizer->vocab_size();
    info.decode = [tokenizer](std::span<const TokenId> tokens) { return tokenizer->decode(tokens); };
    infos.emplace(kind, std::move(info));
  }
  if (infos.empty()) throw tinker::error(errc::invalid_configuration, "the tiny model needs a tokenizer");
  return std::make_unique<ModelBackend>(std::move(infos));
}

}  // namespace tinker::local::engine_detail
