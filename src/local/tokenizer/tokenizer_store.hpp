// The tokenizer of tinker-local's tiny models: a SentencePiece model trained on a bundled
// public-domain corpus the first time it is needed, installed in the Hugging Face cache layout
// under the tokenizer id that `get_info` reports, so clients find it as they find a real model's.
#pragma once

#include <tinker/types/common.hpp>

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::local {

/// The tokenizer id `get_info` reports for every tiny model.
inline constexpr std::string_view tiny_tokenizer_id = "tinker-local/tiny-sp-1k";

/// `$HF_HUB_CACHE`, else `$HF_HOME/hub`, else `$XDG_CACHE_HOME/huggingface/hub`, else
/// `$HOME/.cache/huggingface/hub`.
std::filesystem::path default_hf_hub_cache();

/// A loaded SentencePiece model. Encode and decode are safe from many threads at once.
class LocalTokenizer {
 public:
  ~LocalTokenizer();
  LocalTokenizer(const LocalTokenizer&) = delete;
  LocalTokenizer& operator=(const LocalTokenizer&) = delete;

  const std::string& id() const noexcept;
  const std::filesystem::path& model_file() const noexcept;
  int vocab_size() const noexcept;
  std::vector<TokenId> encode(std::string_view text) const;
  std::string decode(std::span<const TokenId> tokens) const;

  /// Loads `model_file` (a SentencePiece .model); throws tinker::error naming the file on failure.
  static std::shared_ptr<const LocalTokenizer> load(std::string id, const std::filesystem::path& model_file);

 private:
  LocalTokenizer();
  class Impl;
  std::unique_ptr<Impl> impl_;
};

/// Makes sure the tiny tokenizer is installed under `hub_cache` (training it on the bundled corpus
/// if missing; concurrent callers and processes are safe: it is written to a temporary directory
/// and renamed into place), then loads it. The result is deterministic: the same corpus gives the
/// same model file on every machine.
///   <hub_cache>/models--tinker-local--tiny-sp-1k/refs/main            (holds <rev>)
///   <hub_cache>/models--tinker-local--tiny-sp-1k/snapshots/<rev>/tokenizer.model
///   .../snapshots/<rev>/tokenizer_config.json, special_tokens_map.json
/// `tokenizer_id` names the repo (tests install the same tokenizer under an id of their own).
std::shared_ptr<const LocalTokenizer> ensure_tiny_tokenizer(const std::filesystem::path& hub_cache,
                                                            std::string_view tokenizer_id = tiny_tokenizer_id);

/// The repo ids `ensure_tiny_tokenizer` installs (the tokenizer id and its base-model alias),
/// which the server also serves through its Hub-compatible endpoint.
std::vector<std::string> installed_tokenizer_repos(std::string_view tokenizer_id = tiny_tokenizer_id);

/// The bundled public-domain corpus (also used by tests and samples as training text).
std::string_view bundled_corpus();

}  // namespace tinker::local
