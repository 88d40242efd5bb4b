// The repository `tinker checkpoint push-hf` uploads, made from a downloaded checkpoint as the
// Python SDK's push-hf makes it (doc/cli.md#checkpoint-push-hf): the PEFT files checked, the
// adapter config completed with the base model, the default repo id and revision derived from
// the run, the model card written, the files chosen by the allow/ignore patterns.
#pragma once

#include <tinker/types/checkpoint.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::cli {

/// What the Tinker API said about the checkpoint's weights (all unknown when it could not say).
class AdapterFacts {
 public:
  AdapterFacts() = default;
  std::string base_model = "unknown";
  std::optional<std::int64_t> lora_rank;
  std::optional<bool> train_mlp;
  std::optional<bool> train_attn;
  std::optional<bool> train_unembed;
};

/// Throws CliError unless `folder` holds adapter_config.json, adapter_model.safetensors (or
/// adapter_model.bin) and checkpoint_complete.
void check_peft_layout(const std::filesystem::path& folder);

/// Writes the base model into adapter_config.json when it names none (sorted keys, indented).
/// An unreadable config is left as it is.
void complete_adapter_config(const std::filesystem::path& folder, const std::string& base_model);

/// Python's sanitising of a derived repo name or revision: characters outside [A-Za-z0-9._-]
/// become '-', runs of '-' one, '-', '_', ' ' and '.' trimmed at both ends.
std::string sanitize_repo_name(std::string_view value);

/// "tinker-<base model's last part or adapter>-<run id>", sanitised and cut to 96 characters.
std::string default_repo_name(const TinkerPath& path, const std::string& base_model);
/// "weights-<name>" / "sampler_weights-<name>", sanitised.
std::string default_revision(const TinkerPath& path);

/// The README.md model card (YAML front matter with base_model, library_name peft and tags;
/// usage, source and details), exactly as the Python SDK writes it.
std::string model_card(const std::string& tinker_path, const std::string& repo_id, const AdapterFacts& facts);

/// The model card of a converted adapter (`push-hf --format peft`): the same front matter (with
/// pipeline_tag text-generation) and a text saying it is a standard PEFT adapter, how to load it
/// with PEFT and serve it with vLLM, where it came from. `facts.base_model` is the Hub id.
std::string peft_model_card(const std::string& tinker_path, const std::string& repo_id, const AdapterFacts& facts);

/// The first tinker:// path in a README, if any.
std::optional<std::string> tinker_path_in(std::string_view readme);

/// The files of `folder` (relative, '/'-separated, sorted) kept by the patterns as the Python
/// SDK's push-hf filters them: checkpoint_complete ignored unless allow patterns are given, and
/// huggingface_hub's .git / .cache/huggingface patterns always ignored.
std::vector<std::string> files_to_upload(const std::filesystem::path& folder, const std::vector<std::string>& allow,
                                         std::vector<std::string> ignore);

}  // namespace tinker::cli
