// The computations behind the engine's operations, behind one interface so that the ordering,
// futures and checkpoint logic is the same for the real tiny model and for null-model mode.
//
// Thread safety: the model backend is called on worker threads. Calls on distinct states may run
// concurrently; a `ModelState` is used by one call at a time (the engine runs a model's
// operations strictly in sequence), and a `const ModelState` may be read by many calls at once.
// The null backend is cheap and called inline on the io thread.
#pragma once

#include <tinker/local/server.hpp>
#include <tinker/types.hpp>

#include "programs/local/model/tiny_lm.hpp"
#include "programs/local/tokenizer/archive_writer.hpp"

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::local {
class LocalTokenizers;
}

namespace tinker::local::engine_detail {

/// The trainable state of one model (LoRA adapters, gradients, optimizer moments), opaque to
/// the engine.
class ModelState {
 public:
  virtual ~ModelState() = default;
  virtual model::LoraSettings settings() const = 0;
};

/// What a checkpoint archive holds: adapter_model.safetensors and adapter_config.json's values.
struct AdapterExport {
  std::vector<SafetensorsTensor> tensors;
  double lora_alpha = 0.0;
  std::vector<std::string> target_modules;
};

class Backend {
 public:
  virtual ~Backend() = default;

  /// True for the null model: calls are cheap, run inline on the io thread.
  virtual bool inline_compute() const noexcept = 0;
  /// The id of `base`'s tokenizer (what get_info reports).
  virtual std::string tokenizer_id(const CatalogueEntry& base) const = 0;
  virtual std::string arch() const = 0;

  /// A fresh state over `base` (frozen weights built on first use and shared).
  virtual std::unique_ptr<ModelState> create(const CatalogueEntry& base, const model::LoraSettings& lora) = 0;
  virtual ForwardBackwardOutput forward_backward(ModelState& state, const ForwardBackwardInput& input,
                                                 bool forward_only) = 0;
  virtual OptimStepResponse optim_step(ModelState& state, const AdamParams& params) = 0;
  /// One Dimuon step (doc/local.md#dimuon).
  virtual OptimStepResponse optim_step(ModelState& state, const DimuonParams& params) = 0;
  virtual std::string serialize(const ModelState& state, bool include_optimizer) = 0;
  /// Throws UserError if `bytes` do not fit `base`.
  virtual std::unique_ptr<ModelState> deserialize(const CatalogueEntry& base, std::string_view bytes,
                                                  bool load_optimizer) = 0;
  /// An independent copy (the immutable snapshot a sampler reads).
  virtual std::unique_ptr<ModelState> copy(const ModelState& state) = 0;
  /// `weights` null = the base model alone.
  virtual SampleResponse sample(const CatalogueEntry& base, const ModelState* weights, const ModelInput& prompt,
                                const model::SampleSettings& settings) = 0;
  /// The adapters in PEFT form, for checkpoint archives.
  virtual AdapterExport export_adapters(const ModelState& state) = 0;
  /// A state holding an adapter read from files (model::LoraState::import_adapters). Throws
  /// UserError naming the tensor when it does not fit `base`.
  virtual std::unique_ptr<ModelState> import_adapter(const CatalogueEntry& base, int rank,
                                                     const std::vector<model::NamedTensor>& tensors,
                                                     double lora_alpha) = 0;
  /// Reads and checks `base`'s weights now when they come from a model directory, so a bad one
  /// fails the server's start rather than a later create_model. Throws tinker::error.
  virtual void preload(const CatalogueEntry& base) { static_cast<void>(base); }
};

/// What the model needs of a tokenizer: its id (get_info), its vocabulary size (the model's
/// width) and a decoder (stop strings). `decode` must be safe to call from many threads.
struct TokenizerInfo {
  std::string id;
  int vocab_size = 0;
  std::function<std::string(std::span<const TokenId>)> decode;
};

/// Reports the tokenizer ids of `options` (by each entry's kind).
std::unique_ptr<Backend> make_null_backend(const ServerOptions& options);
/// The tiny LoRA language model over one tokenizer for every catalogue entry.
std::unique_ptr<Backend> make_model_backend(TokenizerInfo tokenizer);
/// The same over the local tokenizers, each entry over the one of its kind (an entry whose kind
/// has no tokenizer is refused when a model of it is created).
std::unique_ptr<Backend> make_model_backend(const LocalTokenizers& tokenizers);

}  // namespace tinker::local::engine_detail
