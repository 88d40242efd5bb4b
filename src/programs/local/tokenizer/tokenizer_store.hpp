// The tokenizers of tinker-local's tiny models, built the first time they are needed from a
// bundled public-domain corpus: a byte-level BPE `tokenizer.json` (most models), the same with
// Qwen's thinking, vision and tool markup added (the vision model), and a SentencePiece model (one
// model, so that backend stays covered). Each is installed in the Hugging Face cache
// layout under the tokenizer id that `get_info` reports, so clients find it as they find a real
// model's.
#pragma once

#include <tinker/local/server.hpp>
#include <tinker/types/common.hpp>

#include <array>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::local {

/// The default tokenizer ids (ServerOptions::bpe_tokenizer_id, sp_tokenizer_id, vl_tokenizer_id).
inline constexpr std::string_view tiny_bpe_tokenizer_id = "tinker-local/tiny-bpe-1k";
inline constexpr std::string_view tiny_sp_tokenizer_id = "tinker-local/tiny-sp-1k";
inline constexpr std::string_view tiny_vl_tokenizer_id = "tinker-local/tiny-bpe-vl";

/// Every kind of tiny tokenizer, in the order they are installed.
inline constexpr std::array<TinyTokenizer, 3> all_tiny_tokenizers = {
    TinyTokenizer::byte_level_bpe, TinyTokenizer::sentencepiece, TinyTokenizer::byte_level_bpe_vl};

/// `tiny_bpe_tokenizer_id`, `tiny_sp_tokenizer_id` or `tiny_vl_tokenizer_id`.
std::string_view default_tokenizer_id(TinyTokenizer kind) noexcept;
/// `options.bpe_tokenizer_id`, `options.sp_tokenizer_id` or `options.vl_tokenizer_id`.
const std::string& tokenizer_id_of(const ServerOptions& options, TinyTokenizer kind) noexcept;

/// `$HF_HUB_CACHE`, else `$HF_HOME/hub`, else `$XDG_CACHE_HOME/huggingface/hub`, else
/// `$HOME/.cache/huggingface/hub`.
std::filesystem::path default_hf_hub_cache();

/// A loaded tiny tokenizer: SentencePiece through libsentencepiece, byte-level BPE through the
/// SDK's `tokenizer.json` backend. Encode and decode are safe from many threads at once.
class LocalTokenizer {
 public:
  ~LocalTokenizer();
  LocalTokenizer(const LocalTokenizer&) = delete;
  LocalTokenizer& operator=(const LocalTokenizer&) = delete;

  const std::string& id() const noexcept;
  TinyTokenizer kind() const noexcept;
  /// `tokenizer.model` (SentencePiece) or `tokenizer.json` (both byte-level BPEs).
  const std::filesystem::path& model_file() const noexcept;
  int vocab_size() const noexcept;
  /// Ordinary text: no BOS/EOS added. Special tokens written in the text (byte-level BPE's
  /// "<|im_end|>") become their ids, as Hugging Face does.
  std::vector<TokenId> encode(std::string_view text) const;
  /// SentencePiece drops its control tokens (<s>, </s>); byte-level BPE writes its special tokens
  /// as their text, as Hugging Face's decode does by default, so stop strings can name them.
  std::string decode(std::span<const TokenId> tokens) const;

  /// Loads `model_file` (a SentencePiece .model or a tokenizer.json, by `kind`); throws
  /// tinker::error naming the file on failure.
  static std::shared_ptr<const LocalTokenizer> load(std::string id, const std::filesystem::path& model_file,
                                                    TinyTokenizer kind = TinyTokenizer::sentencepiece);

 private:
  LocalTokenizer();
  class Impl;
  std::unique_ptr<Impl> impl_;
};

/// Makes sure the tiny tokenizer of `kind` is installed under `hub_cache` as `tokenizer_id`
/// (empty: `default_tokenizer_id(kind)`) and as each of `aliases` (building it from the bundled
/// corpus if missing; concurrent callers and processes are safe: a snapshot is written to a
/// temporary directory and renamed into place), then loads it. The result is deterministic: the
/// same corpus gives the same files on every machine.
///   <hub_cache>/models--tinker-local--tiny-bpe-1k/refs/main            (holds <rev>)
///   <hub_cache>/models--tinker-local--tiny-bpe-1k/snapshots/<rev>/tokenizer.json, tokenizer_config.json
///   <hub_cache>/models--tinker-local--tiny-sp-1k/snapshots/<rev>/tokenizer.model,
///       tokenizer_config.json, special_tokens_map.json
///   <hub_cache>/models--tinker-local--tiny-bpe-vl/snapshots/<rev>/tokenizer.json, tokenizer_config.json
std::shared_ptr<const LocalTokenizer> ensure_tiny_tokenizer(const std::filesystem::path& hub_cache, TinyTokenizer kind,
                                                            std::string_view tokenizer_id = {},
                                                            std::span<const std::string> aliases = {});

/// The tokenizers of a server's catalogue, one per kind (null for a kind no entry uses).
class LocalTokenizers {
 public:
  std::shared_ptr<const LocalTokenizer> byte_level_bpe;
  std::shared_ptr<const LocalTokenizer> sentencepiece;
  std::shared_ptr<const LocalTokenizer> byte_level_bpe_vl;

  const std::shared_ptr<const LocalTokenizer>& of(TinyTokenizer kind) const noexcept {
    return const_cast<LocalTokenizers&>(*this).of(kind);
  }
  std::shared_ptr<const LocalTokenizer>& of(TinyTokenizer kind) noexcept {
    switch (kind) {
      case TinyTokenizer::sentencepiece: return sentencepiece;
      case TinyTokenizer::byte_level_bpe_vl: return byte_level_bpe_vl;
      case TinyTokenizer::byte_level_bpe: break;
    }
    return byte_level_bpe;
  }
  /// True when no kind is loaded.
  bool empty() const noexcept { return !byte_level_bpe && !sentencepiece && !byte_level_bpe_vl; }
};

/// The repo ids a catalogue's tokenizer of `kind` is installed and served under: the tokenizer
/// id, then the names of the catalogue's "tinker-local/..." entries using it (a SamplingClient
/// looks its tokenizer up by base model name). Entries named like real models ("Qwen/...") get
/// no such alias, which would shadow the real tokenizers in the user's cache. Empty if no entry
/// uses `kind`.
std::vector<std::string> tokenizer_repos(const ServerOptions& options, TinyTokenizer kind);

/// Installs (`ensure_tiny_tokenizer`) and loads every tokenizer `options.catalogue` uses, under
/// `tokenizer_repos`.
LocalTokenizers ensure_catalogue_tokenizers(const std::filesystem::path& hub_cache, const ServerOptions& options);

/// The bundled public-domain corpus (also used by tests and samples as training text).
std::string_view bundled_corpus();

}  // namespace tinker::local
