// Hugging Face directories of tinker-local's model (include/tinker/local/model_dir.hpp): reading a
// base model's weights from one, and reading a PEFT adapter directory for `--adapter`.
#pragma once

#include <tinker/local/server.hpp>

#include "programs/local/model/tiny_lm.hpp"

#include <filesystem>
#include <memory>
#include <string_view>
#include <vector>

namespace tinker::local::hf_dir {

/// config.json's "model_type" for tinker-local's model.
inline constexpr std::string_view model_type = "tinker_local_tiny";

/// The base model of an entry with a model_dir: config.json, then every weight checked (present,
/// of its shape, a float dtype, finite values; no other tensor). `tokenizer_vocab` is the size of
/// the tokenizer the server runs the entry over, which config.json's vocab_size must equal.
/// Throws tinker::error: errc::invalid_file naming the file and the tensor or key, errc::io_error.
std::shared_ptr<const model::BaseModel> load_base_model(const CatalogueEntry& entry, int tokenizer_vocab);

/// A PEFT LoRA adapter directory as read from its files.
struct AdapterFiles {
  std::filesystem::path weights_file;  ///< <dir>/adapter_model.safetensors, for messages
  int rank = 0;                        ///< adapter_config.json "r"
  /// The alpha whose (alpha / r) scales B A: "lora_alpha", times sqrt(r) with "use_rslora".
  double lora_alpha = 0;
  std::vector<model::NamedTensor> tensors;  ///< every tensor, widened to f32
};

/// Reads adapter_config.json and adapter_model.safetensors of `dir`. Refuses what one rank and
/// one alpha cannot express (rank_pattern, alpha_pattern, DoRA) and tensors that are not 2-D
/// floats. Throws tinker::error: errc::invalid_file naming the file and the key or tensor,
/// errc::io_error.
AdapterFiles read_peft_adapter(const std::filesystem::path& dir);

}  // namespace tinker::local::hf_dir
