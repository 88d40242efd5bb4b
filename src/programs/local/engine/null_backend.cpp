// Null-model mode: every operation answers at once with well-formed, correctly sized results and
// no model computation, so clients can be benchmarked against the server's protocol work alone.
#include "programs/local/engine/backend.hpp"
#include "programs/local/tokenizer/tokenizer_store.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>

namespace tinker::local::engine_detail {
namespace {

/// Every token gets this logprob: a fixed, plausible value (not a model).
constexpr float null_logprob = -1.0f;
/// Null samples draw token ids below this bound (any tokenizer has at least this many ids).
constexpr TokenId null_vocab = 256;

class NullState final : public ModelState {
 public:
  explicit NullState(model::LoraSettings settings) : settings_(settings) {}
  model::LoraSettings settings() const override { return settings_; }

 private:
  model::LoraSettings settings_;
};

class NullBackend final : public Backend {
 public:
  explicit NullBackend(const ServerOptions& options)
      : bpe_id_(options.bpe_tokenizer_id), sp_id_(options.sp_tokenizer_id), vl_id_(options.vl_tokenizer_id) {}

  bool inline_compute() const noexcept override { return true; }
  std::string tokenizer_id(const CatalogueEntry& base) const override {
    switch (base.tokenizer) {
      case TinyTokenizer::sentencepiece: return sp_id_;
      case TinyTokenizer::byte_level_bpe_vl: return vl_id_;
      case TinyTokenizer::byte_level_bpe: break;
    }
    return bpe_id_;
  }
  std::string arch() const override { return "tinker-local-null"; }

  std::unique_ptr<ModelState> create(const CatalogueEntry&, const model::LoraSettings& lora) override {
    return std::make_unique<NullState>(lora);
  }

  ForwardBackwardOutput forward_backward(ModelState&, const ForwardBackwardInput& input, bool) override {
    ForwardBackwardOutput output;
    output.loss_fn_outputs.reserve(input.data.size());
    double loss = 0.0;
    for (const Datum& datum : input.data) {
      auto n = static_cast<std::size_t>(datum.model_input.length());
      // Shaped like target_tokens when it is there: (N,) or (N, K) for top-k cross-entropy.
      std::optional<std::vector<std::int64_t>> shape;
      if (auto targets = datum.loss_fn_inputs.find("target_tokens"); targets != datum.loss_fn_inputs.end()) {
        shape = targets->second.effective_shape();
        n = 1;
        for (std::int64_t extent : *shape) n *= static_cast<std::size_t>(std::max<std::int64_t>(extent, 0));
        if (shape->size() != 2) shape.reset();
      }
      LossFnOutput record;
      record.emplace("logprobs", TensorData(std::vector<float>(n, null_logprob), std::move(shape)));
      output.loss_fn_outputs.push_back(std::move(record));
      // cross_entropy of the fixed logprob: -sum(weights * p), or one per token without weights.
      auto weights = datum.loss_fn_inputs.find("weights");
      if (weights != datum.loss_fn_inputs.end() && weights->second.dtype() == DType::float32 &&
          !weights->second.is_sparse()) {
        for (float w : weights->second.floats()) loss -= static_cast<double>(w) * null_logprob;
      } else {
        loss -= static_cast<double>(n) * null_logprob;
      }
    }
    output.metrics.emplace("loss:sum", loss);
    return output;
  }

  OptimStepResponse optim_step(ModelState&, const AdamParams&) override { return OptimStepResponse(Metrics{}); }
  OptimStepResponse optim_step(ModelState&, const DimuonParams&) override { return OptimStepResponse(Metrics{}); }

  std::string serialize(const ModelState& state, bool) override {
    model::LoraSettings s = state.settings();
    char text[160];
    std::snprintf(text, sizeof text, "tinker-local null-model state %d %llu %d %d %d\n", s.rank,
                  static_cast<unsigned long long>(s.seed), s.train_mlp ? 1 : 0, s.train_attn ? 1 : 0,
                  s.train_unembed ? 1 : 0);
    return text;
  }

  std::unique_ptr<ModelState> deserialize(const CatalogueEntry&, std::string_view bytes, bool) override {
    std::string text(bytes.substr(0, 159));
    model::LoraSettings s;
    unsigned long long seed = 0;
    int mlp = 0, attn = 0, unembed = 0;
    if (std::sscanf(text.c_str(), "tinker-local null-model state %d %llu %d %d %d", &s.rank, &seed, &mlp, &attn,
                    &unembed) != 5) {
      throw UserError("the checkpoint was not written by a null-model server");
    }
    s.seed = seed;
    s.train_mlp = mlp != 0;
    s.train_attn = attn != 0;
    s.train_unembed = unembed != 0;
    return std::make_unique<NullState>(s);
  }

  std::unique_ptr<ModelState> copy(const ModelState& state) override {
    return std::make_unique<NullState>(state.settings());
  }

  SampleResponse sample(const CatalogueEntry&, const ModelState*, const ModelInput& prompt,
                        const model::SampleSettings& settings) override {
    if (settings.num_samples < 1) throw UserError("num_samples: must be at least 1");
    std::int64_t max_tokens = settings.params.max_tokens.value_or(settings.default_max_tokens);
    if (max_tokens < 0) throw UserError("sampling_params.max_tokens: must not be negative");
    auto prompt_length = static_cast<std::size_t>(prompt.length());
    if (prompt_length == 0) throw UserError("prompt: must not be empty");
    std::uint64_t seed = settings.params.seed.value_or(settings.fallback_seed);

    SampleResponse response;
    response.sequences.reserve(static_cast<std::size_t>(settings.num_samples));
    for (std::int64_t i = 0; i < settings.num_samples; ++i) {
      std::vector<TokenId> tokens(static_cast<std::size_t>(max_tokens));
      for (std::size_t j = 0; j < tokens.size(); ++j) {
        tokens[j] = static_cast<TokenId>((seed + static_cast<std::uint64_t>(i) * 31 + j) % null_vocab);
      }
      std::vector<float> logprobs(tokens.size(), null_logprob);
      response.sequences.emplace_back(StopReason::length, std::move(tokens), std::move(logprobs));
    }
    if (settings.prompt_logprobs) {
      std::vector<std::optional<float>> values(prompt_length, null_logprob);
      values[0] = std::nullopt;
      response.prompt_logprobs = std::move(values);
    }
    if (settings.topk_prompt_logprobs > 0) {
      std::vector<std::optional<std::vector<TopkEntry>>> rows(prompt_length);
      for (std::size_t p = 1; p < prompt_length; ++p) {
        std::vector<TopkEntry> row;
        for (std::int64_t k = 0; k < settings.topk_prompt_logprobs; ++k) {
          row.emplace_back(static_cast<TokenId>(k % null_vocab), null_logprob - static_cast<float>(k));
        }
        rows[p] = std::move(row);
      }
      response.topk_prompt_logprobs = std::move(rows);
    }
    return response;
  }

  /// The tensors are not kept (there are no weights); the state covers the rank only.
  std::unique_ptr<ModelState> import_adapter(const CatalogueEntry&, int rank, const std::vector<model::NamedTensor>&,
                                             double) override {
    model::LoraSettings settings;
    settings.rank = rank;
    return std::make_unique<NullState>(settings);
  }

  /// No tensors (there are no weights); the config names what a real adapter would cover.
  AdapterExport export_adapters(const ModelState& state) override {
    model::LoraSettings s = state.settings();
    AdapterExport adapter;
    adapter.lora_alpha = s.rank;
    if (s.train_attn) adapter.target_modules.insert(adapter.target_modules.end(), {"q_proj", "v_proj"});
    if (s.train_mlp) adapter.target_modules.insert(adapter.target_modules.end(), {"up_proj", "down_proj"});
    if (s.train_unembed) adapter.target_modules.emplace_back("unembed_tokens");
    return adapter;
  }

 private:
  std::string bpe_id_;
  std::string sp_id_;
  std::string vl_id_;
};

}  // namespace

std::unique_ptr<Backend> make_null_backend(const ServerOptions& options) {
  return std::make_unique<NullBackend>(options);
}

}  // namespace tinker::local::engine_detail
