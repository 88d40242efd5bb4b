// The BPE model of tokenizer.json: a piece of text (one pre-token) to token ids, with the options
// of Hugging Face's BPE (byte_fallback, ignore_merges, fuse_unk, unk_token,
// continuing_subword_prefix, end_of_word_suffix; no dropout).
//
// Merging follows the reference: the pair of lowest merge rank is merged first, the leftmost of
// equal ones, until no adjacent pair has a merge. Words repeat in real text, so the result of
// each short piece is kept in a bounded per-thread cache.
#pragma once

#include "text/hf/hash_tables.hpp"

#include <tinker/types/common.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tinker::tokenizer_detail::hf {

class BpeOptions {
 public:
  BpeOptions() = default;

  std::optional<std::string> unk_token;
  std::string continuing_subword_prefix;  ///< "" = none
  std::string end_of_word_suffix;         ///< "" = none
  bool fuse_unk = false;
  bool byte_fallback = false;
  bool ignore_merges = false;
};

class BpeModel {
 public:
  /// Appends the ids of `piece` to `out`. In raw-byte mode (see BpeModelBuilder::build) `piece`
  /// is raw bytes, else text in the vocabulary's alphabet.
  void tokenize(std::string_view piece, std::vector<TokenId>& out) const;

  /// The id of a vocabulary entry (as written in the file), or -1.
  TokenId token_to_id(std::string_view token) const noexcept { return vocab_.find(token); }
  /// The entry of an id, or nullopt when no entry has it.
  std::optional<std::string_view> id_to_token(TokenId id) const noexcept;
  /// Number of vocabulary entries (as Hugging Face's get_vocab_size()).
  std::size_t vocab_size() const noexcept { return vocab_.size(); }
  /// One more than the largest id.
  std::size_t id_bound() const noexcept { return tokens_.size(); }
  bool raw_bytes() const noexcept { return raw_bytes_; }
  const BpeOptions& options() const noexcept { return options_; }

 private:
  friend class BpeModelBuilder;
  class Span {
   public:
    std::uint32_t offset = 0;
    std::uint32_t length = UINT32_MAX;  // UINT32_MAX: no token has this id
  };

  BpeModel() = default;
  void tokenize_uncached(std::string_view piece, std::vector<TokenId>& word) const;
  TokenId whole_piece(std::string_view piece, std::uint64_t hash) const;
  void split_into_symbols(std::string_view piece, std::vector<TokenId>& word) const;
  void add_unit(std::string_view unit, bool first, bool last, std::vector<TokenId>& word,
                std::optional<TokenId>& pending_unk) const;
  void merge_short(std::vector<TokenId>& word) const;
  void merge_long(std::vector<TokenId>& word) const;

  BpeOptions options_;
  StringIdMap vocab_;  // entries as written in the file
  MergeMap merges_;
  std::vector<Span> tokens_;             // by id: the entry's place in vocab_'s key arena
  std::array<TokenId, 256> byte_ids_{};  // raw-byte mode: id of each byte's character, or -1
  TokenId unk_id_ = -1;
  bool raw_bytes_ = false;
  std::uint64_t instance_ = 0;  // distinguishes models in the per-thread caches
};

/// Builds a BpeModel from the vocabulary and merges as the loader reads them.
class BpeModelBuilder {
 public:
  BpeModelBuilder();

  void reserve(std::size_t vocab_count, std::size_t vocab_bytes, std::size_t merge_count);
  /// Adds merges[i] = (left_i, right_i) for i in [0, count) in order, as add_merge, looking them up
  /// in batches with prefetching (the tables are far larger than the caches). Stops at the first
  /// merge naming a missing token: returns its index and that token.
  std::optional<std::pair<std::size_t, std::string>> add_merges(
      std::size_t count, const std::function<std::pair<std::string_view, std::string_view>(std::size_t)>& merge);
  /// A vocabulary entry; an entry given twice keeps the last id.
  void add_token(std::string_view token, TokenId id);
  /// The options (before the first add_merge: merges depend on continuing_subword_prefix).
  void set_options(BpeOptions options);
  /// The next merge (its rank is the number of merges added before it). Returns the token it
  /// names that is not in the vocabulary (the merged one included), or nullopt.
  std::optional<std::string> add_merge(std::string_view left, std::string_view right);
  /// The options' unk_token when it is not in the vocabulary, else nullopt.
  std::optional<std::string> missing_unk_token() const;
  /// With `raw_bytes`, pieces given to tokenize() are raw bytes instead of GPT-2 byte-level
  /// characters (for a pre-tokenizer chain ending in ByteLevel): the vocabulary is mapped back to
  /// bytes once here. Ignored when a continuing_subword_prefix or end_of_word_suffix is set.
  std::unique_ptr<BpeModel> build(bool raw_bytes);

 private:
  std::unique_ptr<BpeModel> model_;
  std::uint32_t next_rank_ = 0;
  std::string merged_;  // scratch for the merged token text
};

}  // namespace tinker::tokenizer_detail::hf
