// Tokenizers: the `tinker::Tokenizer` interface, the SentencePiece backend, the tokenizer-id rules
// of spec 11.7, the search for a tokenizer file on disk, and a process-wide cache.
//
// `TrainingClient::get_tokenizer()` / `SamplingClient::get_tokenizer()` end in
// `get_tokenizer_for(model_name, tokenizer_id)`: the id is resolved (spec 11.7), a file for it is
// looked for in $TINKER_TOKENIZER_PATH and then in the Hugging Face hub cache (where tinker-local
// installs its tokenizers), and the loaded tokenizer is cached by resolved id and revision.
// Nothing is downloaded: a missing tokenizer is an error listing every path that was looked at.
//
// Backends are hidden behind the abstract class (no sentencepiece header here). Today only
// SentencePiece `.model` files load; Hugging Face `tokenizer.json` and tiktoken files are
// recognised, and reported as not supported yet, so a later backend only adds a loader.
#pragma once

#include <tinker/config.hpp>
#include <tinker/types/common.hpp>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tinker {

/// The file format (and so the backend) of a tokenizer.
enum class TokenizerFormat {
  sentencepiece,   ///< SentencePiece model proto, `tokenizer.model`
  tokenizer_json,  ///< Hugging Face `tokenizer.json` (recognised; a backend comes later)
  tiktoken,        ///< tiktoken BPE ranks, `tiktoken.model` (Kimi; recognised, not supported)
};

/// "sentencepiece", "tokenizer.json" or "tiktoken".
const char* to_string(TokenizerFormat format) noexcept;

/// A loaded tokenizer. Immutable after loading: every method is safe to call from many threads
/// at once. Shared as `std::shared_ptr<const Tokenizer>`.
///
/// "Special" tokens follow the Hugging Face meaning: control tokens (BOS, EOS, PAD, ...) and the
/// unknown token. Ordinary text never encodes to a control token (a literal "<s>" in the text is
/// encoded as text).
class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  /// Token ids of `text`. With `add_special_tokens` the backend's BOS/EOS policy applies (for
  /// SentencePiece: see `SentencePieceOptions`). Throws tinker::error (invalid_argument) if the
  /// backend rejects the text.
  std::vector<TokenId> encode(std::string_view text, bool add_special_tokens = false) const {
    return do_encode(text, add_special_tokens);
  }

  /// Text of `tokens`. Special tokens are written as their token text ("<s>") unless
  /// `skip_special_tokens`, which drops them. Throws tinker::error (invalid_argument) naming the
  /// index of an id outside [0, vocab_size()).
  std::string decode(std::span<const TokenId> tokens, bool skip_special_tokens = false) const;

  /// Number of ids: every id in [0, vocab_size()) has a token.
  int vocab_size() const noexcept { return do_vocab_size(); }

  std::optional<TokenId> bos_id() const noexcept { return do_bos_id(); }
  std::optional<TokenId> eos_id() const noexcept { return do_eos_id(); }
  std::optional<TokenId> pad_id() const noexcept { return do_pad_id(); }
  std::optional<TokenId> unk_id() const noexcept { return do_unk_id(); }

  /// The id of a token (a vocabulary entry such as "▁the" or "<s>", not text), if it has one.
  std::optional<TokenId> token_to_id(std::string_view token) const { return do_token_to_id(token); }
  /// The token of an id, or nullopt outside [0, vocab_size()).
  std::optional<std::string> id_to_token(TokenId id) const;
  /// True for control tokens and the unknown token; false outside the vocabulary.
  bool is_special(TokenId id) const { return in_vocabulary(id) && do_is_special(id); }

  /// The resolved tokenizer id (e.g. "tinker-local/tiny-sp-1k"), as given when loading.
  const std::string& id() const noexcept { return id_; }
  /// The file it was loaded from.
  const std::filesystem::path& file() const noexcept { return file_; }
  TokenizerFormat format() const noexcept { return format_; }

 protected:
  Tokenizer(std::string id, std::filesystem::path file, TokenizerFormat format);

  bool in_vocabulary(TokenId id) const noexcept { return id >= 0 && id < vocab_size(); }

  // Backends implement these; ids passed to them are already checked to be in the vocabulary.
  virtual std::vector<TokenId> do_encode(std::string_view text, bool add_special_tokens) const = 0;
  /// Decodes a run of ordinary (non-special) tokens.
  virtual std::string do_decode_ordinary(std::span<const TokenId> tokens) const = 0;
  virtual int do_vocab_size() const noexcept = 0;
  virtual std::optional<TokenId> do_bos_id() const noexcept = 0;
  virtual std::optional<TokenId> do_eos_id() const noexcept = 0;
  virtual std::optional<TokenId> do_pad_id() const noexcept = 0;
  virtual std::optional<TokenId> do_unk_id() const noexcept = 0;
  virtual std::optional<TokenId> do_token_to_id(std::string_view token) const = 0;
  virtual std::string do_id_to_token(TokenId id) const = 0;
  virtual bool do_is_special(TokenId id) const = 0;

 private:
  std::string id_;
  std::filesystem::path file_;
  TokenizerFormat format_;
};

/// What `add_special_tokens=true` adds for a SentencePiece model. Defaults as Hugging Face's
/// Llama/SentencePiece tokenizers: BOS in front, no EOS. A marker the model lacks is not added.
class SentencePieceOptions {
 public:
  SentencePieceOptions() = default;

  bool add_bos = true;
  bool add_eos = false;
};

/// Loads a SentencePiece model file. Throws tinker::error (invalid_configuration) naming the file
/// when it is missing, unreadable or not a valid SentencePiece model.
std::shared_ptr<const Tokenizer> load_sentencepiece_tokenizer(const std::filesystem::path& model_file, std::string id,
                                                              SentencePieceOptions options = {});

// ---- Tokenizer ids (spec 11.7) --------------------------------------------------------------

/// A resolved tokenizer id: the Hugging Face repo id to look for, and a pinned revision.
class TokenizerRef {
 public:
  TokenizerRef() = default;
  explicit TokenizerRef(std::string id_, std::optional<std::string> revision_ = std::nullopt)
      : id(std::move(id_)), revision(std::move(revision_)) {}

  std::string id;                       ///< "org/name" (or a bare name)
  std::optional<std::string> revision;  ///< pinned commit (spec 11.7 step 3); nullopt = "main"
  /// Ids starting with "TML/" or "thinkingmachines/" (spec 11.7 step 2): the Python SDK loads them
  /// from Thinking Machines' private tokenizer package. Here they are looked for like any other id,
  /// and a failure says where to put the files.
  bool private_package = false;

  friend bool operator==(const TokenizerRef&, const TokenizerRef&) = default;
};

/// Spec 11.7 steps 1-3. `model_name` (required) and `tokenizer_id` are truncated at their first
/// ':'. A missing or empty tokenizer id (choice: "" names no repo, so it counts as null) is derived
/// from the model name: "meta-llama/Llama-3*" -> "thinkingmachineslabinc/meta-llama-3-instruct-tokenizer";
/// exactly two '/' ("org/model/variant") -> "org/model"; else the model name. Kimi ids get their
/// pinned revision. Throws tinker::error (invalid_argument) for an empty model name or a result
/// that is not a safe repo id (path components "." or "..", characters outside
/// [A-Za-z0-9._-] and '/', more than one '/').
TokenizerRef resolve_tokenizer_id(std::string_view model_name, std::optional<std::string_view> tokenizer_id);

// ---- Finding a tokenizer file ---------------------------------------------------------------

/// Environment lookup (the same type ClientOptions::from_environment takes). An empty value is
/// treated as unset.
using EnvLookup = ClientOptions::EnvLookup;

/// Reads the process environment.
EnvLookup process_environment();

/// A tokenizer file found on disk.
class TokenizerFile {
 public:
  TokenizerFile() = default;

  std::filesystem::path path;
  TokenizerFormat format = TokenizerFormat::sentencepiece;
  /// Every path looked at, in order, the last one being `path`.
  std::vector<std::filesystem::path> searched;
};

/// The hub cache directory, as Hugging Face chooses it: $HF_HUB_CACHE, else $HF_HOME/hub, else
/// $XDG_CACHE_HOME/huggingface/hub, else $HOME/.cache/huggingface/hub; nullopt if none is set.
std::optional<std::filesystem::path> hf_hub_cache_dir(const EnvLookup& env);

/// Looks for the tokenizer file of `ref`, stopping at the first location that has one:
///
/// 1. $TINKER_TOKENIZER_PATH, a ':'-separated list; each entry is either
///    - a file: used for every id (format from its name: "*.json" is tokenizer.json,
///      "tiktoken.model" is tiktoken, anything else SentencePiece), or
///    - a directory D, looked at as <D>/<org>/<name>/ (the id as a relative path), then as a hub
///      cache (<D>/models--<org>--<name>, layout below), then <D>/ itself (a directory holding one
///      tokenizer, used for every id). The revision only applies to the hub layout.
/// 2. The hub cache (`hf_hub_cache_dir`): <hub>/models--<org>--<name>/refs/<revision or "main">
///    holds a commit hash naming <hub>/models--<org>--<name>/snapshots/<hash>/; a revision with no
///    refs file is taken as the commit itself (snapshots/<revision>/).
///
/// In each directory the files are tried in the order tokenizer.model, tokenizer.json,
/// tiktoken.model. Throws tinker::error (invalid_configuration) listing every path looked at when
/// nothing is found.
TokenizerFile find_tokenizer_file(const TokenizerRef& ref, const EnvLookup& env);

/// Loads a found file with the backend of its format, under `id`. tokenizer.json and tiktoken
/// files throw tinker::error (invalid_configuration) saying that format is not supported yet.
std::shared_ptr<const Tokenizer> load_tokenizer(const TokenizerFile& file, std::string id);

/// find_tokenizer_file + load_tokenizer.
std::shared_ptr<const Tokenizer> load_tokenizer(const TokenizerRef& ref, const EnvLookup& env);

// ---- Cache ----------------------------------------------------------------------------------

/// Loaded tokenizers by resolved id and revision. The first successful load of a key is kept for
/// the cache's lifetime (later environment changes do not replace it, as Python's cached
/// get_tokenizer); a failed load is not remembered, so the next call tries again. When many
/// threads ask for the same key at once, exactly one loads it and all get the same pointer;
/// different keys load in parallel.
class TokenizerCache {
 public:
  using Loader = std::function<std::shared_ptr<const Tokenizer>(const TokenizerRef&, const EnvLookup&)>;

  /// Uses `load_tokenizer(ref, env)`.
  TokenizerCache();
  /// Uses `loader` (tests count loads with it).
  explicit TokenizerCache(Loader loader);
  ~TokenizerCache();
  TokenizerCache(const TokenizerCache&) = delete;
  TokenizerCache& operator=(const TokenizerCache&) = delete;

  /// The process-wide cache used by `get_tokenizer_for`.
  static TokenizerCache& global();

  std::shared_ptr<const Tokenizer> get(const TokenizerRef& ref, const EnvLookup& env);
  /// resolve_tokenizer_id + get.
  std::shared_ptr<const Tokenizer> get(std::string_view model_name, std::optional<std::string_view> tokenizer_id,
                                       const EnvLookup& env);

  /// Number of loaded tokenizers.
  std::size_t size() const;

 private:
  class Slot;
  Loader loader_;
  mutable std::mutex mutex_;  // guards slots_ only; loading happens under the slot's own mutex
  std::unordered_map<std::string, std::shared_ptr<Slot>> slots_;
};

/// The tokenizer of a model (spec 11.7), from the process-wide cache. `tokenizer_id` is
/// `get_info`'s `model_data.tokenizer_id` (nullopt for a SamplingClient).
std::shared_ptr<const Tokenizer> get_tokenizer_for(std::string_view model_name,
                                                   std::optional<std::string_view> tokenizer_id,
                                                   const EnvLookup& env = process_environment());

}  // namespace tinker
