/// \file
/// Tokenizers: the `tinker::Tokenizer` interface and its three backends (Hugging Face
/// `tokenizer.json`, tiktoken, SentencePiece), the tokenizer-id rules, the search for a tokenizer
/// on disk and on the Hugging Face Hub, and a process-wide cache.
///
/// `TrainingClient::async_get_tokenizer()` / `SamplingClient::async_get_tokenizer()` end in
/// `get_tokenizer_for(model_name, tokenizer_id)`: the id is resolved (`resolve_tokenizer_id`), a
/// file for it is looked for in $TINKER_TOKENIZER_PATH and then in the Hugging Face hub cache,
/// missing files are downloaded from the Hub into that cache (see <tinker/tokenizer_hub.hpp>),
/// and the loaded tokenizer is cached by resolved id and revision. `doc/tokenizers.md` describes
/// it all.
///
/// Backends are hidden behind the abstract class: no JSON, regex, Unicode or sentencepiece header
/// is included here.
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
  tokenizer_json,  ///< Hugging Face `tokenizer.json` (+ `tokenizer_config.json` beside it)
  tiktoken,        ///< tiktoken BPE ranks, `tiktoken.model` (Kimi K2; + `tokenizer_config.json`)
};

/// "sentencepiece", "tokenizer.json" or "tiktoken".
const char* to_string(TokenizerFormat format) noexcept;

/// What a model repository's `tokenizer_config.json` says beside its tokenizer file: the names of
/// its special tokens and its chat template (from `chat_template` there, or a `chat_template.jinja`
/// file in the same directory). Empty for a tokenizer loaded without one.
class TokenizerConfig {
 public:
  /// Nothing known.
  TokenizerConfig() = default;

  std::optional<std::string> bos_token;      ///< e.g. "<|begin_of_text|>"
  std::optional<std::string> eos_token;      ///< e.g. "<|im_end|>"
  std::optional<std::string> pad_token;      ///< the padding token's text
  std::optional<std::string> unk_token;      ///< the unknown token's text
  std::optional<std::string> chat_template;  ///< Jinja source, for the chat renderers
};

/// Reads `tokenizer_config.json`. Throws tinker::error (invalid_configuration) naming the file and
/// the JSON path of what is wrong (a special token given as an object uses its "content").
TokenizerConfig read_tokenizer_config(const std::filesystem::path& file);

/// How `Tokenizer::encode` reads its text. The default is what `encode(text)` does: added tokens
/// written in the text (such as "<|im_end|>") are matched, nothing is added around the text.
class EncodeOptions {
 public:
  /// Neither option.
  EncodeOptions() = default;
  /// `split_special_tokens` set: for text a user wrote, in which "<|im_start|>" is characters.
  static EncodeOptions split_special() {
    EncodeOptions options;
    options.split_special_tokens = true;
    return options;
  }

  /// Applies the backend's policy for special tokens around the text (tokenizer.json: its
  /// post-processor, e.g. Gemma's BOS; SentencePiece: see `SentencePieceOptions`; tiktoken: none).
  bool add_special_tokens = false;
  /// Hugging Face's `split_special_tokens=True`: special (control) tokens written in the text are
  /// not matched, their characters are encoded as ordinary text. Added tokens that are not special
  /// (Qwen3's "<think>" and "<tool_call>") are still matched, as in Hugging Face's fast tokenizers.
  /// tiktoken: no special token is matched (tiktoken's `encode_ordinary`). SentencePiece: no
  /// change, as it never matches control tokens written in the text.
  bool split_special_tokens = false;
};

/// A loaded tokenizer. Immutable after loading: every method is safe to call from many threads
/// at once. Shared as `std::shared_ptr<const Tokenizer>`.
///
/// "Special" tokens follow the Hugging Face meaning: control tokens (BOS, EOS, PAD, ...) and the
/// unknown token. Text encodes to a control token only where it writes one that the file lists as
/// an added token (tokenizer.json's "added_tokens", tiktoken's special tokens), and never with
/// `EncodeOptions::split_special_tokens`; SentencePiece never matches them (a literal "<s>" is
/// encoded as text).
///
/// A backend derives from Tokenizer and implements the protected `do_` functions; the public
/// functions check their arguments before calling them.
class Tokenizer {
 public:
  /// Virtual: backends derive from Tokenizer.
  virtual ~Tokenizer() = default;
  /// Not copyable (shared through pointers).
  Tokenizer(const Tokenizer&) = delete;
  /// Not copyable.
  Tokenizer& operator=(const Tokenizer&) = delete;

  /// Token ids of `text`, which must be UTF-8: invalid UTF-8 throws tinker::error
  /// (invalid_argument) naming the byte offset. With `add_special_tokens` the backend's policy
  /// applies (see EncodeOptions). Added tokens written in the text (such as "<|im_end|>") are
  /// matched whatever `add_special_tokens` says, as Hugging Face does; to encode them as
  /// characters, use the overload below with `split_special_tokens`.
  std::vector<TokenId> encode(std::string_view text, bool add_special_tokens = false) const;
  /// `encode` with `options`: e.g. `encode(text, EncodeOptions::split_special())` for text in
  /// which a written control token must stay text (a chat message quoting "<|im_end|>").
  std::vector<TokenId> encode(std::string_view text, const EncodeOptions& options) const;

  /// `encode` of every text, spread over up to `threads` threads (0: the hardware's count), in
  /// input order. A small batch stays on the calling thread (each extra thread gets at least 64 KiB
  /// of text). The first failure is rethrown after every thread has stopped.
  std::vector<std::vector<TokenId>> encode_batch(std::span<const std::string> texts, bool add_special_tokens = false,
                                                 unsigned threads = 0) const;
  /// `encode_batch` with `options` for every text.
  std::vector<std::vector<TokenId>> encode_batch(std::span<const std::string> texts, const EncodeOptions& options,
                                                 unsigned threads = 0) const;

  /// Text of `tokens`. Special tokens are written as their token text ("<|im_end|>") unless
  /// `skip_special_tokens`, which drops them. Throws tinker::error (invalid_argument) naming the
  /// index of an id outside [0, vocab_size()). Bytes that do not form UTF-8 (a multi-byte
  /// character cut by the end of the list) become U+FFFD, as Hugging Face does.
  std::string decode(std::span<const TokenId> tokens, bool skip_special_tokens = false) const;

  /// Number of ids: every id in [0, vocab_size()) has a token.
  int vocab_size() const noexcept { return do_vocab_size(); }

  /// The beginning-of-sequence token's id, if the tokenizer has one.
  std::optional<TokenId> bos_id() const noexcept { return do_bos_id(); }
  /// The end-of-sequence token's id, if the tokenizer has one.
  std::optional<TokenId> eos_id() const noexcept { return do_eos_id(); }
  /// The padding token's id, if the tokenizer has one.
  std::optional<TokenId> pad_id() const noexcept { return do_pad_id(); }
  /// The unknown token's id, if the tokenizer has one.
  std::optional<TokenId> unk_id() const noexcept { return do_unk_id(); }

  /// The special tokens and chat template of `tokenizer_config.json` (empty if there was none).
  const TokenizerConfig& config() const noexcept { return config_; }
  /// `config().chat_template`.
  const std::optional<std::string>& chat_template() const noexcept { return config_.chat_template; }

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
  /// The file's format (and so the backend).
  TokenizerFormat format() const noexcept { return format_; }

 protected:
  /// For backends: the tokenizer `id` loaded from `file` of `format`, with `config`.
  Tokenizer(std::string id, std::filesystem::path file, TokenizerFormat format, TokenizerConfig config = {});

  /// True for an id in [0, vocab_size()).
  bool in_vocabulary(TokenId id) const noexcept { return id >= 0 && id < vocab_size(); }

  // Backends implement these; ids passed to them are already checked to be in the vocabulary, and
  // text passed to do_encode is valid UTF-8.
  /// Implements encode(): `text` is valid UTF-8.
  virtual std::vector<TokenId> do_encode(std::string_view text, const EncodeOptions& options) const = 0;
  /// Decodes `tokens`. The default decodes runs of ordinary tokens with do_decode_ordinary and
  /// writes special tokens (do_is_special) as their text unless skipped.
  virtual std::string do_decode(std::span<const TokenId> tokens, bool skip_special_tokens) const;
  /// Decodes a run of ordinary (non-special) tokens (used by the default do_decode).
  virtual std::string do_decode_ordinary(std::span<const TokenId> tokens) const = 0;
  /// Implements vocab_size().
  virtual int do_vocab_size() const noexcept = 0;
  /// Implements bos_id().
  virtual std::optional<TokenId> do_bos_id() const noexcept = 0;
  /// Implements eos_id().
  virtual std::optional<TokenId> do_eos_id() const noexcept = 0;
  /// Implements pad_id().
  virtual std::optional<TokenId> do_pad_id() const noexcept = 0;
  /// Implements unk_id().
  virtual std::optional<TokenId> do_unk_id() const noexcept = 0;
  /// Implements token_to_id().
  virtual std::optional<TokenId> do_token_to_id(std::string_view token) const = 0;
  /// Implements id_to_token() for an id in the vocabulary.
  virtual std::string do_id_to_token(TokenId id) const = 0;
  /// Implements is_special() for an id in the vocabulary.
  virtual bool do_is_special(TokenId id) const = 0;

 private:
  std::string id_;
  std::filesystem::path file_;
  TokenizerFormat format_;
  TokenizerConfig config_;
};

/// What `add_special_tokens=true` adds for a SentencePiece model. Defaults as Hugging Face's
/// Llama/SentencePiece tokenizers: BOS in front, no EOS. A marker the model lacks is not added.
class SentencePieceOptions {
 public:
  /// BOS, no EOS.
  SentencePieceOptions() = default;

  bool add_bos = true;   ///< put the BOS token in front
  bool add_eos = false;  ///< put the EOS token at the end
};

/// Loads a SentencePiece model file. Throws tinker::error (invalid_configuration) naming the file
/// when it is missing, unreadable or not a valid SentencePiece model.
std::shared_ptr<const Tokenizer> load_sentencepiece_tokenizer(const std::filesystem::path& model_file, std::string id,
                                                              SentencePieceOptions options = {});

/// Loads a Hugging Face `tokenizer.json` (BPE models; the normalizers, pre-tokenizers,
/// post-processors and decoders listed in doc/tokenizers.md). `tokenizer_config.json` and
/// `chat_template.jinja` in the same directory are read when present. Throws tinker::error
/// (invalid_configuration) naming the file and the JSON path of what is malformed or unsupported.
std::shared_ptr<const Tokenizer> load_tokenizer_json(const std::filesystem::path& file, std::string id);

/// How a tiktoken rank file is split into pieces and which special tokens it has: a tiktoken
/// `.model` file holds only the ranks, the rest lives in the model's code.
class TiktokenOptions {
 public:
  /// No pattern, no special tokens (set them, or use a factory below).
  TiktokenOptions() = default;

  /// The Kimi K2 family's pattern; special tokens from the `tokenizer_config.json` beside the file
  /// (its `added_tokens_decoder`).
  static TiktokenOptions kimi_k2();
  /// OpenAI's cl100k_base encoding (pattern + special tokens), for a file holding its ranks.
  static TiktokenOptions cl100k_base();
  /// OpenAI's o200k_base encoding (pattern + special tokens), for a file holding its ranks.
  static TiktokenOptions o200k_base();

  std::string pattern;  ///< PCRE2-compatible split pattern
  /// Special tokens by id; merged with those of tokenizer_config.json when `read_config` is set.
  std::vector<std::pair<std::string, TokenId>> special_tokens;
  bool read_config = true;  ///< read `tokenizer_config.json` beside the file when present
  /// As Kimi's tokenizer: the ids right after the ranks are special tokens, named by the config or
  /// "<|reserved_token_{id}|>" (256 for kimi_k2(), 0 otherwise).
  int num_reserved_special_tokens = 0;
};

/// Loads a tiktoken rank file (lines of "<base64 token> <rank>"). Throws tinker::error
/// (invalid_configuration) naming the file and line of what is malformed.
std::shared_ptr<const Tokenizer> load_tiktoken_tokenizer(const std::filesystem::path& file, std::string id,
                                                         TiktokenOptions options = TiktokenOptions::kimi_k2());

// ---- Tokenizer ids (doc/tokenizers.md) -------------------------------------------------------

/// A resolved tokenizer id: the Hugging Face repo id to look for, and a pinned revision.
class TokenizerRef {
 public:
  /// An empty id.
  TokenizerRef() = default;
  /// The repo `id_` at `revision_` (nullopt: "main").
  explicit TokenizerRef(std::string id_, std::optional<std::string> revision_ = std::nullopt)
      : id(std::move(id_)), revision(std::move(revision_)) {}

  std::string id;                       ///< "org/name" (or a bare name)
  std::optional<std::string> revision;  ///< pinned commit (Kimi ids); nullopt = "main"
  /// Ids starting with "TML/" or "thinkingmachines/": the Python SDK loads them from Thinking
  /// Machines' private tokenizer package. Here they are looked for like any other id, and a
  /// failure says where to put the files.
  bool private_package = false;

  /// Equal when every field is equal.
  friend bool operator==(const TokenizerRef&, const TokenizerRef&) = default;
};

/// The Hugging Face repo (and revision) of a model's tokenizer, by the Python SDK's rules
/// (`doc/tokenizers.md`). `model_name` (required) and `tokenizer_id` are truncated at their first
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
  /// Nothing found.
  TokenizerFile() = default;

  std::filesystem::path path;                               ///< the file
  TokenizerFormat format = TokenizerFormat::sentencepiece;  ///< its format, from its name
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
///    - a directory D, looked at as `D/<org>/<name>/` (the id as a relative path), then as a hub
///      cache (`D/models--<org>--<name>`, layout below), then `D/` itself (a directory holding
///      one tokenizer, used for every id). The revision only applies to the hub layout.
/// 2. The hub cache (`hf_hub_cache_dir`): `<hub>/models--<org>--<name>/refs/<revision or main>`
///    holds a commit hash naming `<hub>/models--<org>--<name>/snapshots/<hash>/`; a revision with
///    no refs file is taken as the commit itself (`snapshots/<revision>/`).
///
/// In each directory the files are tried in the order tokenizer.json, tokenizer.model,
/// tiktoken.model (the fast tokenizer first, as transformers' AutoTokenizer). Throws tinker::error
/// (invalid_configuration) listing every path looked at when nothing is found.
TokenizerFile find_tokenizer_file(const TokenizerRef& ref, const EnvLookup& env);

/// Loads a found file with the backend of its format, under `id`. Throws as the backend's
/// loader does (invalid_configuration naming the file).
std::shared_ptr<const Tokenizer> load_tokenizer(const TokenizerFile& file, std::string id);

/// find_tokenizer_file + load_tokenizer; when nothing is on disk, downloads from the Hugging Face
/// Hub with the options of `env` (HubOptions::from_environment, <tinker/tokenizer_hub.hpp>).
std::shared_ptr<const Tokenizer> load_tokenizer(const TokenizerRef& ref, const EnvLookup& env);

// ---- Cache ----------------------------------------------------------------------------------

class HubOptions;  // <tinker/tokenizer_hub.hpp>

/// Loaded tokenizers by resolved id and revision. The first successful load of a key is kept for
/// the cache's lifetime (later environment changes do not replace it, as Python's cached
/// get_tokenizer); a failed load is not remembered, so the next call tries again. When many
/// threads ask for the same key at once, exactly one loads it and all get the same pointer;
/// different keys load in parallel.
class TokenizerCache {
 public:
  /// Loads the tokenizer of a resolved id (the cache calls it at most once per key at a time).
  using Loader = std::function<std::shared_ptr<const Tokenizer>(const TokenizerRef&, const EnvLookup&)>;

  /// Uses `load_tokenizer(ref, env, hub)` (<tinker/tokenizer_hub.hpp>): downloads what is not on
  /// disk, with the hub options of `env` unless `get` is given others.
  TokenizerCache();
  /// Uses `loader` (tests count loads with it).
  explicit TokenizerCache(Loader loader);
  /// Drops the cached tokenizers (holders of a pointer keep theirs).
  ~TokenizerCache();
  /// Not copyable.
  TokenizerCache(const TokenizerCache&) = delete;
  /// Not copyable.
  TokenizerCache& operator=(const TokenizerCache&) = delete;

  /// The process-wide cache used by `get_tokenizer_for`.
  static TokenizerCache& global();

  /// The tokenizer of `ref`: the cached one, or loaded now (with the hub options of `env`).
  /// Thread-safe; a failed load throws the loader's tinker::error and is not remembered.
  std::shared_ptr<const Tokenizer> get(const TokenizerRef& ref, const EnvLookup& env);
  /// The same, downloading with `hub` when nothing is on disk (the default loader; a loader
  /// given to the constructor is called with `ref` and `env` only).
  std::shared_ptr<const Tokenizer> get(const TokenizerRef& ref, const EnvLookup& env, const HubOptions& hub);
  /// resolve_tokenizer_id + get.
  std::shared_ptr<const Tokenizer> get(std::string_view model_name, std::optional<std::string_view> tokenizer_id,
                                       const EnvLookup& env);

  /// Number of loaded tokenizers.
  std::size_t size() const;

 private:
  class Slot;
  std::shared_ptr<const Tokenizer> load_once(const TokenizerRef& ref, const EnvLookup& env, const HubOptions* hub);
  using HubLoader =
      std::function<std::shared_ptr<const Tokenizer>(const TokenizerRef&, const EnvLookup&, const HubOptions*)>;
  HubLoader loader_;
  mutable std::mutex mutex_;  // guards slots_ only; loading happens under the slot's own mutex
  std::unordered_map<std::string, std::shared_ptr<Slot>> slots_;
};

/// The tokenizer of a model (`doc/tokenizers.md`), from the process-wide cache; thread-safe.
/// Throws tinker::error as resolve_tokenizer_id and load_tokenizer do. `tokenizer_id` is
/// `get_info`'s `model_data.tokenizer_id` (nullopt for a SamplingClient).
std::shared_ptr<const Tokenizer> get_tokenizer_for(std::string_view model_name,
                                                   std::optional<std::string_view> tokenizer_id,
                                                   const EnvLookup& env = process_environment());

}  // namespace tinker
