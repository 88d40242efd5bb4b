// The tiktoken backend: a rank file ("<base64 token> <rank>" per line), a split pattern and
// special tokens. Encoding follows tiktoken: special token text anywhere in the input is matched
// first (tiktoken's allowed_special="all"; none with split_special_tokens, its encode_ordinary),
// the rest is split by the pattern, and each piece is merged byte pair by byte pair, lowest rank
// first.
#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

#include "text/matcher.hpp"
#include "text/patterns.hpp"
#include "text/piece_cache.hpp"
#include "text/tiktoken_ranks.hpp"
#include "text/utf8.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <fstream>
#include <limits>
#include <sstream>
#include <unordered_map>

namespace tinker {

namespace {

using tokenizer_detail::Matcher;
using tokenizer_detail::MatchRange;

using tokenizer_detail::tiktoken::RankTable;

std::string read_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw error(errc::invalid_configuration, "tokenizer config " + file.string() + ": cannot be read");
  std::ostringstream content;
  content << in.rdbuf();
  return std::move(content).str();
}

class StringHash {
 public:
  using is_transparent = void;
  std::size_t operator()(std::string_view text) const noexcept { return std::hash<std::string_view>{}(text); }
};

// The special tokens of tokenizer_config.json's "added_tokens_decoder": {"<id>": {"content": ...}}.
std::vector<std::pair<std::string, TokenId>> read_added_tokens(const std::filesystem::path& file) {
  boost::system::error_code ec;
  const boost::json::value root = boost::json::parse(read_file(file), ec);
  const auto bad = [&](const std::string& path, const std::string& message) {
    throw error(errc::invalid_configuration, file.string() + ": " + path + ": " + message);
  };
  if (ec) bad("$", "not valid JSON: " + ec.message());
  if (!root.is_object()) bad("$", "expected an object");
  const auto* decoder = root.as_object().if_contains("added_tokens_decoder");
  std::vector<std::pair<std::string, TokenId>> out;
  if (decoder == nullptr || decoder->is_null()) return out;
  if (!decoder->is_object()) bad("$.added_tokens_decoder", "expected an object");
  for (const auto& [key, entry] : decoder->as_object()) {
    const std::string path = "$.added_tokens_decoder[\"" + std::string(key) + "\"]";
    TokenId id = 0;
    const auto [end, parse_error] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (parse_error != std::errc() || end != key.data() + key.size() || id < 0) bad(path, "the key is not an id");
    const auto* content = entry.is_object() ? entry.as_object().if_contains("content") : nullptr;
    if (content == nullptr || !content->is_string()) bad(path, "expected an object with a string \"content\"");
    out.emplace_back(std::string(content->as_string()), id);
  }
  return out;
}

class TiktokenTokenizer final : public Tokenizer {
 public:
  TiktokenTokenizer(std::string id, std::filesystem::path file, TokenizerConfig config, RankTable ranks,
                    std::vector<std::pair<std::string, TokenId>> specials, std::unique_ptr<Matcher> matcher)
      : Tokenizer(std::move(id), std::move(file), TokenizerFormat::tiktoken, std::move(config)),
        ranks_(std::move(ranks)),
        matcher_(std::move(matcher)) {
    for (auto& [text, special_id] : specials) add_special(std::move(text), special_id);
    vocab_size_ = static_cast<int>(ranks_.rank_limit());
    for (const auto& [text, special_id] : special_ids_) vocab_size_ = std::max(vocab_size_, special_id + 1);
    // Longest first, so that of two specials starting at the same place the longer wins.
    std::sort(specials_by_length_.begin(), specials_by_length_.end(),
              [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
    for (const std::string& text : specials_by_length_) {
      special_first_bytes_[static_cast<unsigned char>(text[0])] = true;
    }
    bos_ = lookup(this->config().bos_token);
    eos_ = lookup(this->config().eos_token);
    pad_ = lookup(this->config().pad_token);
    unk_ = lookup(this->config().unk_token);
  }

 protected:
  // add_special_tokens adds nothing: tiktoken has no post-processor.
  std::vector<TokenId> do_encode(std::string_view text, const EncodeOptions& options) const override {
    std::vector<TokenId> ids;
    ids.reserve(text.size() / 3 + 1);
    if (options.split_special_tokens) {
      encode_ordinary(text, ids);
      return ids;
    }
    std::size_t pos = 0;
    while (pos < text.size()) {
      const auto [at, special] = next_special(text, pos);
      encode_ordinary(text.substr(pos, at - pos), ids);
      if (special == nullptr) break;
      ids.push_back(special_ids_.find(*special)->second);
      pos = at + special->size();
    }
    return ids;
  }

  std::string do_decode_ordinary(std::span<const TokenId> tokens) const override {
    std::string bytes;
    for (const TokenId id : tokens) bytes += ranks_.token(id);
    std::string out;
    tokenizer_detail::append_utf8_lossy(out, bytes);
    return out;
  }

  int do_vocab_size() const noexcept override { return vocab_size_; }
  std::optional<TokenId> do_bos_id() const noexcept override { return bos_; }
  std::optional<TokenId> do_eos_id() const noexcept override { return eos_; }
  std::optional<TokenId> do_pad_id() const noexcept override { return pad_; }
  std::optional<TokenId> do_unk_id() const noexcept override { return unk_; }

  std::optional<TokenId> do_token_to_id(std::string_view token) const override {
    if (const auto it = special_ids_.find(token); it != special_ids_.end()) return it->second;
    if (const TokenId rank = ranks_.find(token); rank >= 0) return rank;
    return std::nullopt;
  }

  /// The token's bytes (tiktoken tokens are bytes, not always UTF-8), or a special token's text.
  /// An id that neither the ranks nor the specials name is written "<|reserved_token_{id}|>".
  std::string do_id_to_token(TokenId id) const override {
    if (const auto it = special_texts_.find(id); it != special_texts_.end()) return it->second;
    if (const std::string_view token = ranks_.token(id); !token.empty()) return std::string(token);
    return "<|reserved_token_" + std::to_string(id) + "|>";
  }

  bool do_is_special(TokenId id) const override { return special_texts_.count(id) != 0; }

 private:
  void add_special(std::string text, TokenId id) {
    if (text.empty()) return;
    if (special_ids_.count(text) != 0) return;  // the first naming wins (options before the config)
    special_texts_.emplace(id, text);
    specials_by_length_.push_back(text);
    special_ids_.emplace(std::move(text), id);
  }

  std::optional<TokenId> lookup(const std::optional<std::string>& token) const {
    if (!token) return std::nullopt;
    return do_token_to_id(*token);
  }

  // The leftmost special token at or after `pos` (the longest if several start there). Text
  // without a special token's first byte costs one table look per byte.
  std::pair<std::size_t, const std::string*> next_special(std::string_view text, std::size_t pos) const {
    if (specials_by_length_.empty()) return {text.size(), nullptr};
    for (std::size_t at = pos; at < text.size(); ++at) {
      if (!special_first_bytes_[static_cast<unsigned char>(text[at])]) continue;
      for (const std::string& special : specials_by_length_) {
        if (text.substr(at).starts_with(special)) return {at, &special};
      }
    }
    return {text.size(), nullptr};
  }

  void encode_ordinary(std::string_view text, std::vector<TokenId>& ids) const {
    if (text.empty()) return;
    thread_local std::vector<MatchRange> pieces;
    pieces.clear();
    matcher_->find_all(text, pieces);
    tokenizer_detail::PieceCache& cache = tokenizer_detail::thread_piece_cache(cache_owner_);
    for (const auto& [begin, end] : pieces) encode_piece(text.substr(begin, end - begin), cache, ids);
  }

  // A piece that is a token (most are) costs one lookup; a piece seen lately, one more; the
  // others go through the merge.
  void encode_piece(std::string_view piece, tokenizer_detail::PieceCache& cache, std::vector<TokenId>& ids) const {
    const std::uint64_t hash = tokenizer_detail::tiktoken::hash_bytes(piece);
    if (const TokenId whole = ranks_.find(piece, hash); whole >= 0) {
      ids.push_back(whole);
      return;
    }
    if (cache.find(hash, piece, ids)) return;
    const std::size_t before = ids.size();
    // Every single byte has a rank in a complete file; a file lacking one cannot encode this text.
    if (!tokenizer_detail::tiktoken::merge_piece(ranks_, piece, ids)) {
      throw error(errc::invalid_argument, "tokenizer " + id() + ": the tiktoken file " + file().string() +
                                              " has no rank for a byte of the text");
    }
    cache.store(hash, piece, std::span<const TokenId>(ids).subspan(before));
  }

  RankTable ranks_;
  std::unique_ptr<Matcher> matcher_;
  std::uint64_t cache_owner_ = tokenizer_detail::new_piece_cache_owner();
  std::unordered_map<std::string, TokenId, StringHash, std::equal_to<>> special_ids_;
  std::unordered_map<TokenId, std::string> special_texts_;
  std::vector<std::string> specials_by_length_;
  std::array<bool, 256> special_first_bytes_{};
  int vocab_size_ = 0;
  std::optional<TokenId> bos_, eos_, pad_, unk_;
};

// Kimi K2's pattern (tokenization_kimi.py) uses class intersections, [X&&[^\p{Han}]], which PCRE2
// does not have; each is written (?:(?!\p{sc:Han})[X]), which matches the same single characters.
// \p{sc:Han} is the Script property, as \p{Han} is for tiktoken's engine (Rust's regex); PCRE2's
// plain \p{Han} means Script_Extensions, which adds punctuation such as "。" and "、".
constexpr std::string_view kKimiK2Pattern =
    R"([\p{sc:Han}]+|)"
    R"([^\r\n\p{L}\p{N}]?(?:(?!\p{sc:Han})[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}])*(?:(?!\p{sc:Han})[\p{Ll}\p{Lm}\p{Lo}\p{M}])+)"
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)?|)"
    R"([^\r\n\p{L}\p{N}]?(?:(?!\p{sc:Han})[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}])+(?:(?!\p{sc:Han})[\p{Ll}\p{Lm}\p{Lo}\p{M}])*)"
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)?|)"
    R"(\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

}  // namespace

TiktokenOptions TiktokenOptions::kimi_k2() {
  TiktokenOptions options;
  options.pattern = kKimiK2Pattern;
  options.num_reserved_special_tokens = 256;
  return options;
}

TiktokenOptions TiktokenOptions::cl100k_base() {
  TiktokenOptions options;
  options.pattern = tokenizer_detail::patterns::cl100k;
  options.special_tokens = {{"<|endoftext|>", 100257},
                            {"<|fim_prefix|>", 100258},
                            {"<|fim_middle|>", 100259},
                            {"<|fim_suffix|>", 100260},
                            {"<|endofprompt|>", 100276}};
  return options;
}

TiktokenOptions TiktokenOptions::o200k_base() {
  TiktokenOptions options;
  options.pattern = tokenizer_detail::patterns::o200k;
  options.special_tokens = {{"<|endoftext|>", 199999}, {"<|endofprompt|>", 200018}};
  return options;
}

std::shared_ptr<const Tokenizer> load_tiktoken_tokenizer(const std::filesystem::path& file, std::string id,
                                                         TiktokenOptions options) {
  RankTable ranks = RankTable::load(file);
  auto specials = std::move(options.special_tokens);
  TokenizerConfig config;
  const std::filesystem::path config_file = file.parent_path() / "tokenizer_config.json";
  if (options.read_config && std::filesystem::exists(config_file)) {
    config = read_tokenizer_config(config_file);
    const auto added = read_added_tokens(config_file);
    specials.insert(specials.end(), added.begin(), added.end());
  }
  // As Kimi's tokenizer: the ids right after the ranks are special, named by the config or
  // "<|reserved_token_{id}|>".
  const auto base = static_cast<TokenId>(ranks.size());
  for (TokenId reserved = base; reserved < base + options.num_reserved_special_tokens; ++reserved) {
    const bool named =
        std::any_of(specials.begin(), specials.end(), [&](const auto& s) { return s.second == reserved; });
    if (!named) specials.emplace_back("<|reserved_token_" + std::to_string(reserved) + "|>", reserved);
  }
  auto matcher = tokenizer_detail::make_matcher(options.pattern);
  return std::make_shared<TiktokenTokenizer>(std::move(id), file, std::move(config), std::move(ranks),
                                             std::move(specials), std::move(matcher));
}

}  // namespace tinker
