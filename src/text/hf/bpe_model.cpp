// See bpe_model.hpp.
#include "text/hf/bpe_model.hpp"

#include "text/piece_cache.hpp"
#include "text/pre_tokenizer.hpp"
#include "text/utf8.hpp"

#include <tinker/error.hpp>

#include <algorithm>
#include <cstdio>
#include <queue>
#include <utility>

namespace tinker::tokenizer_detail::hf {
namespace {

constexpr std::uint32_t no_merge = UINT32_MAX;
// Above this many symbols the quadratic scan for the best pair gives way to a priority queue.
constexpr std::size_t short_word_limit = 96;

std::string byte_fallback_token(unsigned char byte) {
  char text[8];
  std::snprintf(text, sizeof text, "<0x%02X>", byte);
  return text;
}

}  // namespace

std::optional<std::string_view> BpeModel::id_to_token(TokenId id) const noexcept {
  if (id < 0 || static_cast<std::size_t>(id) >= tokens_.size() || tokens_[id].length == UINT32_MAX) return std::nullopt;
  return std::string_view(vocab_.key_arena() + tokens_[id].offset, tokens_[id].length);
}

// The per-thread cache comes first: it also remembers ignore_merges' whole-piece answers.
void BpeModel::tokenize(std::string_view piece, std::vector<TokenId>& out) const {
  if (piece.empty()) return;
  const std::uint64_t hash = hash_bytes(piece);
  PieceCache& cache = thread_piece_cache(instance_);
  if (cache.find(hash, piece, out)) return;
  thread_local std::vector<TokenId> word;
  word.clear();
  if (const TokenId whole = options_.ignore_merges ? whole_piece(piece, hash) : -1; whole >= 0) {
    word.push_back(whole);
  } else {
    tokenize_uncached(piece, word);
  }
  cache.store(hash, piece, word);
  out.insert(out.end(), word.begin(), word.end());
}

// ignore_merges: the id of the whole piece when it is a vocabulary entry, else -1.
TokenId BpeModel::whole_piece(std::string_view piece, std::uint64_t hash) const {
  if (!raw_bytes_) return vocab_.find(piece, hash);
  thread_local std::string mapped;
  mapped.clear();
  for (const char c : piece) mapped += byte_level_char(static_cast<unsigned char>(c));
  return vocab_.find(mapped);
}

void BpeModel::tokenize_uncached(std::string_view piece, std::vector<TokenId>& word) const {
  word.clear();
  split_into_symbols(piece, word);
  if (word.size() <= short_word_limit) {
    merge_short(word);
  } else {
    merge_long(word);
  }
}

void BpeModel::split_into_symbols(std::string_view piece, std::vector<TokenId>& word) const {
  std::optional<TokenId> pending_unk;
  if (raw_bytes_) {
    for (std::size_t i = 0; i < piece.size(); ++i) {
      const auto byte = static_cast<unsigned char>(piece[i]);
      if (byte_ids_[byte] >= 0) {
        if (pending_unk) word.push_back(*std::exchange(pending_unk, std::nullopt));
        word.push_back(byte_ids_[byte]);
      } else {
        add_unit(byte_level_char(byte), i == 0, i + 1 == piece.size(), word, pending_unk);
      }
    }
  } else {
    for (std::size_t i = 0; i < piece.size();) {
      const std::size_t length = std::min(utf8_length_of_lead(static_cast<unsigned char>(piece[i])), piece.size() - i);
      add_unit(piece.substr(i, length), i == 0, i + length == piece.size(), word, pending_unk);
      i += length;
    }
  }
  if (pending_unk) word.push_back(*pending_unk);
}

// One character of a piece, as the reference's merge_word treats it: the continuing-subword
// prefix before every character but the first, the end-of-word suffix after the last; then the
// vocabulary, else its bytes as <0xNN> tokens (byte_fallback), else the unknown token (fused
// with an unknown neighbour when fuse_unk), else nothing. As in the reference, a pending unknown
// token is written only when a vocabulary token or the end of the piece follows it.
void BpeModel::add_unit(std::string_view unit, bool first, bool last, std::vector<TokenId>& word,
                        std::optional<TokenId>& pending_unk) const {
  thread_local std::string decorated;
  std::string_view text = unit;
  const bool prefix = !first && !options_.continuing_subword_prefix.empty();
  const bool suffix = last && !options_.end_of_word_suffix.empty();
  if (prefix || suffix) {
    decorated.clear();
    if (prefix) decorated += options_.continuing_subword_prefix;
    decorated += unit;
    if (suffix) decorated += options_.end_of_word_suffix;
    text = decorated;
  }
  if (const TokenId id = vocab_.find(text); id >= 0) {
    if (pending_unk) word.push_back(*std::exchange(pending_unk, std::nullopt));
    word.push_back(id);
    return;
  }
  if (options_.byte_fallback) {
    const std::size_t before = word.size();
    bool complete = true;
    for (const char c : text) {
      const TokenId id = vocab_.find(byte_fallback_token(static_cast<unsigned char>(c)));
      if (id < 0) {
        complete = false;
        break;
      }
      word.push_back(id);
    }
    if (complete) return;
    word.resize(before);
  }
  if (!options_.unk_token) return;
  if (unk_id_ < 0) {
    throw error(errc::invalid_configuration,
                "the BPE model's unk_token \"" + *options_.unk_token + "\" is not in its vocabulary");
  }
  if (pending_unk && options_.fuse_unk) return;
  if (pending_unk) word.push_back(*pending_unk);
  pending_unk = unk_id_;
}

// Lowest rank first, leftmost among equals: a scan over the pair ranks, which short words make
// cheaper than any queue. Each merge recomputes only the two pairs it changes.
void BpeModel::merge_short(std::vector<TokenId>& word) const {
  if (word.size() < 2) return;
  thread_local std::vector<std::uint32_t> ranks;
  thread_local std::vector<TokenId> merged;
  ranks.clear();
  merged.clear();
  const auto pair_at = [&](std::size_t i) {
    const MergeMap::Merge* merge = merges_.find(word[i], word[i + 1]);
    ranks[i] = merge ? merge->rank : no_merge;
    merged[i] = merge ? merge->merged : -1;
  };
  ranks.resize(word.size() - 1);
  merged.resize(word.size() - 1);
  for (std::size_t i = 0; i + 1 < word.size(); ++i) pair_at(i);
  while (!ranks.empty()) {
    const auto best = std::min_element(ranks.begin(), ranks.end());
    if (*best == no_merge) break;
    const auto i = static_cast<std::size_t>(best - ranks.begin());
    word[i] = merged[i];
    word.erase(word.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    ranks.erase(best);
    merged.erase(merged.begin() + static_cast<std::ptrdiff_t>(i));
    if (i > 0) pair_at(i - 1);
    if (i + 1 < word.size()) pair_at(i);
  }
}

// The reference's algorithm for long words: a queue of candidate merges ordered by (rank,
// position) over a linked list of symbols; an entry whose pair has changed since it was queued is
// dropped when it comes up.
void BpeModel::merge_long(std::vector<TokenId>& word) const {
  class Candidate {
   public:
    std::uint32_t rank;
    std::uint32_t position;
    TokenId merged;
    bool operator>(const Candidate& other) const {
      return rank != other.rank ? rank > other.rank : position > other.position;
    }
  };
  const std::size_t n = word.size();
  std::vector<std::int64_t> prev(n), next(n);
  std::vector<bool> alive(n, true);
  for (std::size_t i = 0; i < n; ++i) {
    prev[i] = static_cast<std::int64_t>(i) - 1;
    next[i] = i + 1 < n ? static_cast<std::int64_t>(i + 1) : -1;
  }
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  const auto push_pair = [&](std::size_t left, std::size_t right) {
    if (const MergeMap::Merge* merge = merges_.find(word[left], word[right])) {
      queue.push(Candidate{merge->rank, static_cast<std::uint32_t>(left), merge->merged});
    }
  };
  for (std::size_t i = 0; i + 1 < n; ++i) push_pair(i, i + 1);
  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    const std::size_t left = top.position;
    if (!alive[left] || next[left] < 0) continue;
    const auto right = static_cast<std::size_t>(next[left]);
    const MergeMap::Merge* current = merges_.find(word[left], word[right]);
    if (current == nullptr || current->merged != top.merged) continue;
    word[left] = top.merged;
    alive[right] = false;
    next[left] = next[right];
    if (next[right] >= 0) prev[static_cast<std::size_t>(next[right])] = static_cast<std::int64_t>(left);
    if (prev[left] >= 0) push_pair(static_cast<std::size_t>(prev[left]), left);
    if (next[left] >= 0) push_pair(left, static_cast<std::size_t>(next[left]));
  }
  std::size_t kept = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (alive[i]) word[kept++] = word[i];
  }
  word.resize(kept);
}

BpeModelBuilder::BpeModelBuilder() : model_(new BpeModel()) {}

void BpeModelBuilder::set_options(BpeOptions options) {
  model_->options_ = std::move(options);
}

void BpeModelBuilder::reserve(std::size_t vocab_count, std::size_t vocab_bytes, std::size_t merge_count) {
  model_->vocab_.reserve(vocab_count, vocab_bytes);
  model_->merges_.reserve(merge_count);
}

void BpeModelBuilder::add_token(std::string_view token, TokenId id) {
  model_->vocab_.insert_or_assign(token, id);
}

std::optional<std::string> BpeModelBuilder::add_merge(std::string_view left, std::string_view right) {
  const TokenId left_id = model_->vocab_.find(left);
  if (left_id < 0) return std::string(left);
  const TokenId right_id = model_->vocab_.find(right);
  if (right_id < 0) return std::string(right);
  // As the reference: the right token's continuing-subword prefix is not part of the merged one.
  const std::size_t prefix = model_->options_.continuing_subword_prefix.size();
  if (right.size() < prefix) return std::string(right);
  merged_.assign(left);
  merged_.append(right.substr(prefix));
  const TokenId merged_id = model_->vocab_.find(merged_);
  if (merged_id < 0) return merged_;
  model_->merges_.insert_or_assign(left_id, right_id, next_rank_++, merged_id);
  return std::nullopt;
}

// Three passes over a batch, so each lookup's cache misses overlap with the others': hash and
// prefetch the slots, prefetch the keys they point at, then look up. The merged text is built
// once per merge into a batch buffer.
std::optional<std::pair<std::size_t, std::string>> BpeModelBuilder::add_merges(
    std::size_t count, const std::function<std::pair<std::string_view, std::string_view>(std::size_t)>& merge) {
  constexpr std::size_t batch = 32;
  const StringIdMap& vocab = model_->vocab_;
  const std::size_t prefix = model_->options_.continuing_subword_prefix.size();
  std::array<std::string_view, batch * 3> texts;
  std::array<std::uint64_t, batch * 3> hashes;
  std::string merged_text;
  model_->merges_.reserve(count);
  for (std::size_t first = 0; first < count; first += batch) {
    const std::size_t n = std::min(batch, count - first);
    merged_text.clear();
    std::array<std::size_t, batch> merged_at;
    for (std::size_t i = 0; i < n; ++i) {
      const auto [left, right] = merge(first + i);
      texts[3 * i] = left;
      texts[3 * i + 1] = right;
      merged_at[i] = merged_text.size();
      merged_text += left;
      if (right.size() >= prefix) merged_text += right.substr(prefix);
    }
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t end = i + 1 < n ? merged_at[i + 1] : merged_text.size();
      texts[3 * i + 2] = std::string_view(merged_text).substr(merged_at[i], end - merged_at[i]);
    }
    for (std::size_t k = 0; k < 3 * n; ++k) {
      hashes[k] = hash_bytes(texts[k]);
      vocab.prefetch(hashes[k]);
    }
    for (std::size_t k = 0; k < 3 * n; ++k) vocab.prefetch_key(hashes[k]);
    for (std::size_t i = 0; i < n; ++i) {
      const TokenId left = vocab.find(texts[3 * i], hashes[3 * i]);
      const TokenId right = vocab.find(texts[3 * i + 1], hashes[3 * i + 1]);
      const bool right_fits = texts[3 * i + 1].size() >= prefix;
      const TokenId merged = right_fits ? vocab.find(texts[3 * i + 2], hashes[3 * i + 2]) : -1;
      if (left < 0) return std::pair{first + i, std::string(texts[3 * i])};
      if (right < 0 || !right_fits) return std::pair{first + i, std::string(texts[3 * i + 1])};
      if (merged < 0) return std::pair{first + i, std::string(texts[3 * i + 2])};
      model_->merges_.insert_or_assign(left, right, next_rank_++, merged);
    }
  }
  return std::nullopt;
}

std::optional<std::string> BpeModelBuilder::missing_unk_token() const {
  const auto& unk = model_->options_.unk_token;
  if (unk && model_->vocab_.find(*unk) < 0) return *unk;
  return std::nullopt;
}

std::unique_ptr<BpeModel> BpeModelBuilder::build(bool raw_bytes) {
  BpeModel& model = *model_;
  std::size_t id_bound = 0;
  model.vocab_.for_each(
      [&](std::string_view, TokenId id) { id_bound = std::max(id_bound, static_cast<std::size_t>(id) + 1); });
  model.tokens_.assign(id_bound, BpeModel::Span{});
  const char* arena = model.vocab_.key_arena();
  model.vocab_.for_each([&](std::string_view token, TokenId id) {
    model.tokens_[id] =
        BpeModel::Span{static_cast<std::uint32_t>(token.data() - arena), static_cast<std::uint32_t>(token.size())};
  });
  if (model.options_.unk_token) model.unk_id_ = model.vocab_.find(*model.options_.unk_token);
  model.raw_bytes_ =
      raw_bytes && model.options_.continuing_subword_prefix.empty() && model.options_.end_of_word_suffix.empty();
  if (model.raw_bytes_) {
    for (unsigned b = 0; b < 256; ++b) {
      model.byte_ids_[b] = model.vocab_.find(byte_level_char(static_cast<unsigned char>(b)));
    }
  }
  model.instance_ = new_piece_cache_owner();
  return std::move(model_);
}

}  // namespace tinker::tokenizer_detail::hf
