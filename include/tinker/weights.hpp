/// \file
/// Taking trained weights out of Tinker (`doc/export.md`): a Tinker LoRA adapter (the
/// `adapter_model.safetensors` + `adapter_config.json` of a downloaded checkpoint) turned into
///
/// - a PEFT adapter vLLM, SGLang and transformers load (`build_lora_adapter`),
/// - a merged Hugging Face model, W' = W + (alpha / r) B A in the base's dtype and shard layout
///   (`build_merged_model`), streamed shard by shard in bounded memory, on every core,
/// - a llama.cpp LoRA adapter, GGUF (`build_gguf_adapter`).
///
/// Each needs the base model's Hugging Face directory (`config.json` and safetensors weights;
/// the PEFT and GGUF forms read only its headers). The model family is detected from
/// `config.json` and the weight names as the cookbook does (`describe_base_model`). Every output
/// is built in a staging location and renamed into place at the end: a failure, or an
/// interrupted export, leaves nothing that looks complete; the output must not exist.
///
/// Errors are `tinker::error`: errc::invalid_file naming the file and tensor for a malformed
/// input, errc::invalid_argument for an adapter that does not fit the base (rank, shapes, family)
/// or an output that exists, errc::io_error for a failed read or write.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::weights {

/// Progress of a long export, reported from the exporting thread.
struct ExportProgress {
  std::string_view stage;         ///< "reading adapter", "merging", "writing", ...
  std::uint64_t bytes_done = 0;   ///< of bytes_total
  std::uint64_t bytes_total = 0;  ///< 0 when not known
  std::size_t tensors_done = 0;   ///< of tensors_total
  std::size_t tensors_total = 0;  ///< 0 when not known
};
/// Called with the progress of an export, on the exporting thread; an exception it throws stops
/// the export (nothing is left at the output).
using ProgressCallback = std::function<void(const ExportProgress&)>;

/// What an export did.
struct ExportSummary {
  std::filesystem::path output;     ///< the final path
  std::string family;               ///< the merge profile: "default", "gpt_oss", "qwen3_5", "nemotron", ...
  std::size_t tensors_written = 0;  ///< tensors in the output
  std::size_t tensors_changed = 0;  ///< base tensors a LoRA delta was added to (merged), adapted modules (PEFT, GGUF)
  std::uint64_t bytes_read = 0;     ///< from the adapter and the base
  std::uint64_t bytes_written = 0;  ///< the output's size
  double seconds = 0;               ///< wall time of the whole export
};

/// What the base model directory says about itself, as the exporters see it.
struct BaseModelInfo {
  std::string model_type;                  ///< config.json "model_type" ("qwen3", "gpt_oss", "nemotron_h", ...)
  std::vector<std::string> architectures;  ///< config.json "architectures"
  std::string family;                      ///< the merge profile chosen
  std::string expert_layout;               ///< "separate", "fused_interleaved", "fused_concatenated"
  std::string quantization;                ///< "", "mxfp4", "pack-quantized", "fp8", ...
  std::size_t tensors = 0;                 ///< weight tensors in the safetensors files
  std::uint64_t bytes = 0;                 ///< their total size
  bool peft_supported = true;              ///< false: `peft_refusal` says why (DeepSeek V3)
  std::string peft_refusal;                ///< why PEFT export is refused, when it is
  bool gguf_supported = false;             ///< a dense family llama.cpp has an architecture for
  std::string gguf_architecture;           ///< "llama", "qwen2", "qwen3", ... when supported
};

/// Reads `config.json` and the weight headers of `base_model_dir`.
BaseModelInfo describe_base_model(const std::filesystem::path& base_model_dir);

/// What build_lora_adapter converts, and where to.
struct LoraAdapterOptions {
  std::filesystem::path adapter_dir;     ///< adapter_model.safetensors + adapter_config.json (Tinker's names)
  std::filesystem::path base_model_dir;  ///< config.json + safetensors (headers only are read)
  std::filesystem::path output_dir;      ///< must not exist
  /// `base_model_name_or_path` in adapter_config.json ("Qwen/Qwen3-8B"; a Tinker name's
  /// ":peft:<context length>" is dropped, `model_lookup_name`); empty: the directory.
  std::string base_model_name;
  ProgressCallback progress;  ///< optional
};
/// Tinker's adapter -> PEFT (`adapter_model.safetensors` with the Hugging Face parameter names,
/// expert tensors expanded to one 2-D pair per expert, serving prefix remaps, and
/// `adapter_config.json` with r, lora_alpha, target_modules, rank_pattern/alpha_pattern).
/// DeepSeek V3 is refused (no LoRA serving support in vLLM or SGLang: merge instead).
ExportSummary build_lora_adapter(const LoraAdapterOptions& options);

/// What build_merged_model merges, and where to.
struct MergedModelOptions {
  std::filesystem::path adapter_dir;     ///< adapter_model.safetensors + adapter_config.json (Tinker's names)
  std::filesystem::path base_model_dir;  ///< config.json, safetensors shards, tokenizer files, ...
  std::filesystem::path output_dir;      ///< must not exist
  /// Worker threads for the merge arithmetic; 0: every core.
  unsigned threads = 0;
  ProgressCallback progress;  ///< optional
};
/// Base + adapter -> a merged model in the base's dtype and shard layout: each adapted weight
/// gets W + (alpha / r) B A computed in f32 and rounded to the base dtype (nearest, ties to
/// even); every other tensor and file is copied unchanged. Quantized expert weights (gpt-oss
/// MXFP4, Kimi's packed INT4) that receive a delta are decoded, merged and encoded again into the
/// same tensors, as the cookbook does. Resident memory is the adapter plus a fixed working set
/// (at most 128 MiB of buffers), whatever the size of the model.
ExportSummary build_merged_model(const MergedModelOptions& options);

/// What build_gguf_adapter converts, and where to.
struct GgufAdapterOptions {
  std::filesystem::path adapter_dir;     ///< adapter_model.safetensors + adapter_config.json (Tinker's names)
  std::filesystem::path base_model_dir;  ///< config.json + safetensors headers
  std::filesystem::path output_file;     ///< e.g. adapter.gguf; must not exist
  /// Element type of the LoRA tensors: "f32", "f16" (default) or "bf16".
  std::string out_type = "f16";
  /// The base model's name for general.name ("<name> LoRA") and general.base_model.0.name
  /// ("meta-llama/Llama-3.2-1B"; a ":suffix" is dropped as in LoraAdapterOptions); empty:
  /// config.json's "_name_or_path", else the directory's name.
  std::string base_model_name;
  ProgressCallback progress;  ///< optional
};
/// Base + adapter -> a GGUF LoRA adapter for llama.cpp's `--lora` (the tensor names and metadata
/// of llama.cpp's convert_lora_to_gguf.py), for the dense families llama.cpp supports.
ExportSummary build_gguf_adapter(const GgufAdapterOptions& options);

}  // namespace tinker::weights
