// Added tokens of tokenizer.json ("added_tokens"): tokens matched in the text before the model
// sees it, as Hugging Face's AddedVocabulary does. Tokens with `normalized: false` are found in
// the raw text (one pass, leftmost-longest); the text between them is normalized, and tokens with
// `normalized: true` are then found (in their normalized form) in each normalized section.
// `single_word`, `lstrip` and `rstrip` apply to a match as in the reference. With `skip_special`
// (Hugging Face's encode_special_tokens, transformers' split_special_tokens) a match of a special
// token is dropped as the reference drops it: its text stays in the plain section around it, and
// the search goes on after it, so no other added token is matched inside it in the same pass.
#pragma once

#include "text/hf/hash_tables.hpp"

#include <tinker/types/common.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::tokenizer_detail {
class Normalizer;
}

namespace tinker::tokenizer_detail::hf {

class BpeModel;

class AddedToken {
 public:
  AddedToken() = default;

  std::string content;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = true;
  bool special = false;
};

/// Literal patterns, each found as the longest one starting at a position (a byte trie). The first
/// byte of every pattern is in a 256-entry table, so positions no pattern starts at cost one load.
class LiteralTrie {
 public:
  void insert(std::string_view pattern, std::uint32_t value);
  bool empty() const noexcept { return nodes_.size() <= 1; }
  bool may_start_with(unsigned char byte) const noexcept { return root_[byte] != 0; }
  /// The longest pattern that starts at text[pos]: its length and value, or false.
  bool longest_at(std::string_view text, std::size_t pos, std::size_t& length, std::uint32_t& value) const noexcept;

 private:
  class Edge {
   public:
    unsigned char byte;
    std::uint32_t child;
  };
  class Node {
   public:
    std::vector<Edge> edges;           // sorted by byte
    std::uint32_t value = UINT32_MAX;  // UINT32_MAX: no pattern ends here
  };
  std::uint32_t child(std::uint32_t node, unsigned char byte) const noexcept;

  std::vector<Node> nodes_ = std::vector<Node>(1);  // node 0 is the root, never a child
  std::array<std::uint32_t, 256> root_{};           // the root's children by byte (0: none)
};

/// A section of text: [begin, end) bytes, and the added token it is (or -1 for plain text).
class Section {
 public:
  Section(std::uint32_t begin_, std::uint32_t end_, TokenId token_) : begin(begin_), end(end_), token(token_) {}
  std::uint32_t begin;
  std::uint32_t end;
  TokenId token;
};

class AddedVocabulary {
 public:
  AddedVocabulary() = default;
  /// Gives each token its id as the reference does (a token already in the model's vocabulary or
  /// given before keeps that id, a new one gets the next free id from the model's vocabulary
  /// size) and builds the matchers, normalizing `normalized` tokens with `normalizer` (may be null).
  AddedVocabulary(std::vector<AddedToken> tokens, const BpeModel& model, const Normalizer* normalizer);

  /// Cuts `text` at the tokens that match in the raw text (`normalized: false`); special tokens
  /// are not matched when `skip_special`.
  void split_raw(std::string_view text, bool skip_special, std::vector<Section>& out) const {
    split(raw_, skip_special && raw_ordinary_ == 0, skip_special, text, out);
  }
  /// Cuts a normalized section at the tokens that match after normalization (not the special
  /// ones when `skip_special`).
  void split_normalized(std::string_view text, bool skip_special, std::vector<Section>& out) const {
    split(normalized_, skip_special && normalized_ordinary_ == 0, skip_special, text, out);
  }
  /// True when some token may match after normalization (a special one only without `skip_special`).
  bool has_normalized_tokens(bool skip_special) const noexcept {
    return skip_special ? normalized_ordinary_ != 0 : !normalized_.empty();
  }

  /// The id of an added token's content, or -1.
  TokenId token_to_id(std::string_view content) const noexcept { return by_content_.find(content); }
  /// The text an added token decodes from (its normalized form when normalization changed it, as
  /// the reference), or nullopt when `id` is not an added token.
  std::optional<std::string_view> decode_text(TokenId id) const noexcept;
  /// True when `text` is the content of a special added token.
  bool is_special_content(std::string_view text) const noexcept { return special_contents_.find(text) >= 0; }
  /// True when `id` is an added token marked special.
  bool is_special_id(TokenId id) const noexcept;
  /// Added tokens whose content is not a model vocabulary entry (they add to the vocabulary size).
  std::size_t new_entries() const noexcept { return new_entries_; }
  /// One more than the largest added id (0 when there are none).
  std::size_t id_bound() const noexcept { return index_by_id_.size(); }

 private:
  class Entry {
   public:
    AddedToken token;
    std::optional<std::string> normalized_form;
  };
  void split(const LiteralTrie& trie, bool nothing_matches, bool skip_special, std::string_view text,
             std::vector<Section>& out) const;
  const Entry* entry(TokenId id) const noexcept {
    if (id < 0 || static_cast<std::size_t>(id) >= index_by_id_.size() || index_by_id_[id] < 0) return nullptr;
    return &entries_[static_cast<std::size_t>(index_by_id_[id])];
  }

  std::vector<Entry> entries_;
  std::vector<std::int32_t> index_by_id_;  // id -> index in entries_, or -1
  StringIdMap by_content_;
  StringIdMap special_contents_;
  LiteralTrie raw_;
  LiteralTrie normalized_;
  std::size_t raw_ordinary_ = 0;         // tokens in raw_ that are not special
  std::size_t normalized_ordinary_ = 0;  // tokens in normalized_ that are not special
  std::size_t new_entries_ = 0;
};

}  // namespace tinker::tokenizer_detail::hf
