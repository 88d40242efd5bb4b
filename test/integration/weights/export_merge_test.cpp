// A merge checked end to end, offline (doc/export.md, doc/local.md#model-directories): tinker-local's
// base model exported as a Hugging Face directory (f32 and bf16), a LoRA trained on it through the
// public API, its checkpoint downloaded and exported both ways (tinker::weights::build_merged_model
// against the exported base, build_lora_adapter), and both outputs served again by tinker-local: the
// merged directory as a base model, the PEFT adapter as sampler weights. compute_logprobs of each
// must give the LoRA sampler's logprobs within the rounding of the base dtype.
#include "integration/sync/sync_support.hpp"
#include "support/temp_files.hpp"

#include <tinker/download.hpp>
#include <tinker/local/model_dir.hpp>
#include <tinker/safetensors.hpp>
#include <tinker/sync/rest_client.hpp>
#include <tinker/sync/sampling_client.hpp>
#include <tinker/sync/training_client.hpp>
#include <tinker/weights.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace tinker::test {
namespace {

namespace fs = std::filesystem;
namespace st = tinker::safetensors;

constexpr int kTrainingSteps = 3;
constexpr double kLearningRate = 5e-4;

// Logprobs of every prompt, concatenated (the first position of each has none).
using Logprobs = std::vector<float>;

// Prompts the training batch does not contain, so the comparison covers unseen text too.
std::vector<ModelInput> comparison_prompts() {
  std::vector<ModelInput> prompts;
  for (int p = 0; p < 3; ++p) {
    std::vector<TokenId> tokens;
    for (int i = 0; i < 24; ++i)
      tokens.push_back(static_cast<TokenId>((100 + 37 * p + 5 * (i % 4) + 211 * (i / 8)) % 1000));
    prompts.push_back(ModelInput::from_ints(std::move(tokens)));
  }
  return prompts;
}

Logprobs prompt_logprobs_of(const sync::SamplingClient& sampler) {
  Logprobs all;
  for (ModelInput& prompt : comparison_prompts()) {
    const PromptLogprobs values = sampler.compute_logprobs(std::move(prompt)).get();
    EXPECT_FALSE(values.at(0).has_value());
    for (std::size_t i = 1; i < values.size(); ++i) all.push_back(values[i].value());
  }
  return all;
}

float max_logprob_difference(const Logprobs& a, const Logprobs& b) {
  EXPECT_EQ(a.size(), b.size());
  float worst = 0.0f;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

std::string exported_base_name(st::Dtype dtype) {
  return "local/base-" + std::string(dtype == st::Dtype::bf16 ? "bf16" : "f32");
}
std::string merged_model_name(st::Dtype dtype) {
  return "local/merged-" + std::string(dtype == st::Dtype::bf16 ? "bf16" : "f32");
}
std::string peft_adapter_name(st::Dtype dtype) {
  return std::string("peft-") + (dtype == st::Dtype::bf16 ? "bf16" : "f32");
}

class ExportMerge : public SyncService {
 protected:
  // Server 1 serves the exported bases (written before it starts).
  local::ServerOptions server_options() const override {
    local::ServerOptions options = fast_server_options();
    for (const st::Dtype dtype : dtypes) {
      const fs::path dir = base_dir(dtype);
      if (!fs::exists(dir)) local::export_model(options, tiny_model, dir, dtype);
      options.catalogue.push_back(local::model_dir_entry(exported_base_name(dtype), dir));
    }
    return options;
  }

  fs::path base_dir(st::Dtype dtype) const { return scratch.path() / ("base-" + std::string(st::to_string(dtype))); }

  // What the first server gives for one base dtype.
  struct Trained {
    Logprobs base;     // the base model alone
    Logprobs lora;     // the trained LoRA's sampler
    fs::path adapter;  // its downloaded checkpoint (Tinker's names)
    std::string path;  // its tinker:// path
  };

  Trained train_on(st::Dtype dtype) {
    sync::ServiceClient service = make_sync_service();
    LoraTrainingOptions lora(exported_base_name(dtype), 8);
    lora.seed = 3;
    sync::TrainingClient training = service.create_lora_training_client(lora);
    // A mild fine-tune: it moves logprobs by about a nat, while each weight stays near its base
    // value, so rounding the merged weights is rounding weights of the base's own scale.
    for (int step = 0; step < kTrainingSteps; ++step) {
      training.forward_backward(tiny_cross_entropy_input()).get();
      training.optim_step(AdamParams(kLearningRate)).get();
    }
    Trained trained;
    trained.path = training.save_weights_for_sampler("tuned").get().path.value();
    trained.lora = prompt_logprobs_of(service.create_sampling_client(SamplingSource::from_model_path(trained.path)));
    trained.base =
        prompt_logprobs_of(service.create_sampling_client(SamplingSource::from_base_model(exported_base_name(dtype))));
    DownloadOptions download(scratch.path() / "downloads");
    trained.adapter = service.create_rest_client().download_checkpoint(trained.path, download).path;
    return trained;
  }

  const std::vector<st::Dtype> dtypes{st::Dtype::f32, st::Dtype::bf16};
  const TempDir scratch{"tinker-export-merge"};
};

TEST_F(ExportMerge, MergedAndPeftExportsReproduceTheLoraSampler) {
  {
    const GetServerCapabilitiesResponse capabilities = make_sync_service().get_server_capabilities();
    std::vector<std::string> served;
    for (const SupportedModel& model : capabilities.supported_models) served.push_back(model.model_name.value_or(""));
    for (const st::Dtype dtype : dtypes) {
      EXPECT_NE(std::find(served.begin(), served.end(), exported_base_name(dtype)), served.end())
          << exported_base_name(dtype);
    }
  }
  std::map<st::Dtype, Trained> trained;
  for (const st::Dtype dtype : dtypes) trained[dtype] = train_on(dtype);

  // Export both ways, against the exported base directories.
  local::ServerOptions second = fast_server_options();
  for (const st::Dtype dtype : dtypes) {
    weights::MergedModelOptions merge;
    merge.adapter_dir = trained[dtype].adapter;
    merge.base_model_dir = base_dir(dtype);
    merge.output_dir = scratch.path() / ("merged-" + std::string(st::to_string(dtype)));
    const weights::ExportSummary merged = weights::build_merged_model(merge);
    EXPECT_EQ(merged.tensors_changed, 5u) << "q_proj, v_proj, up_proj, down_proj and lm_head";
    weights::LoraAdapterOptions peft;
    peft.adapter_dir = trained[dtype].adapter;
    peft.base_model_dir = base_dir(dtype);
    peft.output_dir = scratch.path() / ("peft-" + std::string(st::to_string(dtype)));
    weights::build_lora_adapter(peft);

    // The merged model keeps the base's dtype in every tensor.
    const st::SafetensorsFile weights = st::SafetensorsFile::open(merge.output_dir / "model.safetensors");
    for (const st::TensorInfo& tensor : weights.tensors()) EXPECT_EQ(tensor.dtype, dtype) << tensor.name;

    second.catalogue.push_back(local::model_dir_entry(exported_base_name(dtype), base_dir(dtype)));
    second.catalogue.push_back(local::model_dir_entry(merged_model_name(dtype), merge.output_dir));
    second.adapters.emplace_back(peft_adapter_name(dtype), peft.output_dir, exported_base_name(dtype));
  }
  // The adapter trained on the bf16 base, served over the f32 base it was rounded from: the bf16
  // reference below.
  second.adapters.emplace_back("bf16-adapter-on-f32-base", scratch.path() / "peft-BF16",
                               exported_base_name(st::Dtype::f32));

  // Server 2 serves the merged directories as base models and the PEFT adapters as sampler weights.
  start_server(second);
  sync::ServiceClient service = make_sync_service();
  std::map<st::Dtype, Logprobs> merged;
  std::map<st::Dtype, Logprobs> peft;
  for (const st::Dtype dtype : dtypes) {
    merged[dtype] =
        prompt_logprobs_of(service.create_sampling_client(SamplingSource::from_base_model(merged_model_name(dtype))));
    peft[dtype] = prompt_logprobs_of(service.create_sampling_client(
        SamplingSource::from_model_path("tinker://local-imports/sampler_weights/" + peft_adapter_name(dtype))));
  }
  const Logprobs unrounded_base = prompt_logprobs_of(service.create_sampling_client(
      SamplingSource::from_model_path("tinker://local-imports/sampler_weights/bf16-adapter-on-f32-base")));

  const Trained& f32 = trained[st::Dtype::f32];
  const Trained& bf16 = trained[st::Dtype::bf16];
  const float f32_lora_effect = max_logprob_difference(f32.lora, f32.base);
  const float bf16_lora_effect = max_logprob_difference(bf16.lora, bf16.base);
  const float base_rounding = max_logprob_difference(bf16.lora, unrounded_base);
  const float f32_merge_error = max_logprob_difference(merged[st::Dtype::f32], f32.lora);
  const float bf16_merge_error = max_logprob_difference(merged[st::Dtype::bf16], bf16.lora);
  const std::string measured = "LoRA effect f32 " + std::to_string(f32_lora_effect) + ", bf16 " +
                               std::to_string(bf16_lora_effect) + "; base rounding to bf16 " +
                               std::to_string(base_rounding) + " (without the adapter " +
                               std::to_string(max_logprob_difference(f32.base, bf16.base)) + "); merge error f32 " +
                               std::to_string(f32_merge_error) + ", bf16 " + std::to_string(bf16_merge_error);
  RecordProperty("measured", measured);

  // The comparisons mean something only if the adapter moved the model well beyond every bound below.
  ASSERT_GT(f32_lora_effect, 0.2f) << measured;
  ASSERT_GT(bf16_lora_effect, 0.2f) << measured;

  // f32 base. The LoRA sampler computes W + (alpha/r) B A in double from the f32 matrices; the merge
  // computes it in f32 and rounds W' to f32 once. Each merged weight is off by float reassociation
  // and one rounding: a relative error of a few times 2^-24 (6e-8) of the terms involved. The
  // network is one layer over a residual stream of norm ~7 with logits of order 1, so such weight
  // errors move a logprob by well under 1e-5. 1e-4 leaves a margin of 10x over that estimate and is
  // still far below the LoRA's effect: a missing, transposed or mis-scaled delta fails it.
  EXPECT_LE(f32_merge_error, 1e-4f) << measured;

  // bf16 base. The merge rounds each adapted W' = W + (alpha/r) B A to bf16 (nearest even: a
  // relative error of at most 2^-8, half a unit in the last of bf16's 8 significant bits), which the
  // LoRA sampler, adding the delta in double to the bf16 base, never does. The reference is the same
  // kind of rounding at the same operating point: the same adapter over the f32 base versus over its
  // bf16 rounding, i.e. the effect of rounding every base weight to bf16 once, with the adapter on
  // top. The merge rounds 5 of the 7 matrices (embed_tokens, k_proj and o_proj stay exact) whose
  // values are within a mild fine-tune of the base's, so its error is of that scale: at most 2x it.
  // An error of the LoRA's own size (the delta lost or misapplied) is far beyond that.
  EXPECT_GT(base_rounding, 0.0f) << "the bf16 base must differ from the f32 one, or the reference is void";
  EXPECT_LE(bf16_merge_error, 2.0f * base_rounding) << measured;
  EXPECT_LT(2.0f * base_rounding, 0.25f * bf16_lora_effect) << measured;

  // PEFT reloaded: the same matrices under PEFT's names (lm_head for unembed_tokens) in the
  // adapter's own dtype (f32), the same rank and alpha: tinker-local rebuilds the identical adapter,
  // so its logprobs are the LoRA sampler's exactly.
  for (const st::Dtype dtype : dtypes) {
    EXPECT_EQ(peft[dtype], trained[dtype].lora) << "PEFT over " << exported_base_name(dtype);
  }
}

}  // namespace
}  // namespace tinker::test
