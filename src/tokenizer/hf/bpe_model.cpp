// See bpe_model.hpp.
#include "tokenizer/hf/bpe_model.hpp"

#include "tokenizer/text/pre_tokenizer.hpp"

#include <tinker/error.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <queue>
#include <utility>

namespace tinker::tokenizer_detail::hf {
namespace {

constexpr std::uint32_t no_merge = UINT32_MAX;
// Above this many symbols the quadratic scan for the best pair gives way to a priority queue.
constexpr std::size_t short_word_limit = 96;

std::atomic<std::uint64_t> next_instance{1};

std::size_t utf8_length(unsigned char lead) noexcept {
  if (lead < 0x80) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

// The results of recent short pieces, per thread and per model: a direct-mapped table (a new
// piece evicts whatever shared its slot), so its size is fixed and lookups cost one probe.
class PieceCache {
 public:
  static constexpr std::size_t max_key = 22;
  static constexpr std::size_t max_ids = 8;
  static constexpr std::size_t slot_count = 16384;

  class Slot {
   public:
    std::uint64_t hash = 0;
    std::uint8_t key_length = 0;
    std::uint8_t id_count = 0;  // 0: empty
    char key[max_key] = {};
    TokenId ids[max_ids] = {};
  };
  static_assert(sizeof(Slot) == 64);

  explicit PieceCache(std::uint64_t owner_) : owner(owner_), slots(new Slot[slot_count]) {}

  bool find(std::uint64_t hash, std::string_view piece, std::vector<TokenId>& out) const {
    const Slot& slot = slots[hash & (slot_count - 1)];
    if (slot.id_count == 0 || slot.hash != hash || slot.key_length != piece.size() ||
        std::memcmp(slot.key, piece.data(), piece.size()) != 0) {
      return false;
    }
    out.insert(out.end(), slot.ids, slot.ids + slot.id_count);
    return true;
  }

  void store(std::uint64_t hash, std::string_view piece, const std::vector<TokenId>& ids) {
    if (piece.size() > max_key || ids.empty() || ids.size() > max_ids) return;
    Slot& slot = slots[hash & (slot_count - 1)];
    slot.hash = hash;
    slot.key_length = static_cast<std::uint8_t>(piece.size());
    slot.id_count = static_cast<std::uint8_t>(ids.size());
    std::memcpy(slot.key, piece.data(), piece.size());
    std::copy(ids.begin(), ids.end(), slot.ids);
  }

  std::uint64_t owner;
  std::unique_ptr<Slot[]> slots;
};

// A thread keeps the caches of the last few models it used (a program alternating between two
// tokenizers keeps both warm); models are told apart by an instance number, never reused, so a
// freed model's cache cannot serve a new one at the same address.
PieceCache& thread_cache(std::uint64_t instance) {
  constexpr std::size_t kept = 4;
  thread_local std::vector<std::unique_ptr<PieceCache>> caches;
  thread_local std::size_t next_victim = 0;
  for (auto& cache : caches) {
    if (cache->owner == instance) return *cache;
  }
  if (caches.size() < kept) return *caches.emplace_back(std::make_unique<PieceCache>(instance));
  auto& victim = caches[next_victim];
  next_victim = (next_victim + 1) % kept;
  victim = std::make_unique<PieceCache>(instance);
  return *victim;
}

std::string byte_fallback_token(unsigned char byte) {
  char text[8];
  std::snprintf(text, sizeof text, "<0x%02X>", byte);
  return text;
}

}  // namespace

std::optional<std::string_view> BpeModel::id_to_token(TokenId id) const noexcept {
  if (id < 0 || static_cast<std::size_t>(id) >= tokens_.size() || tokens_[id].length == UINT32_MAX) return std::nullopt;
  return std::string_view(token_text_).substr(tokens_[id].offset, tokens_[id].length);
}

std::optional<std::string_view> BpeModel::raw_bytes_of(TokenId id) const noexcept {
  if (id < 0 || static_cast<std::size_t>(id) >= raw_tokens_.size() || raw_tokens_[id].length == UINT32_MAX) {
    return std::nullopt;
  }
  return std::string_view(raw_text_).substr(raw_tokens_[id].offset, raw_tokens_[id].length);
}

void BpeModel::tokenize(std::string_view piece, std::vector<TokenId>& out) const {
  if (piece.empty()) return;
  const std::uint64_t hash = hash_bytes(piece);
  if (options_.ignore_merges) {
    const TokenId whole = raw_bytes_ ? raw_vocab_.find(piece, hash) : vocab_.find(piece, hash);
    if (whole >= 0) {
      out.push_back(whole);
      return;
    }
  }
  PieceCache& cache = thread_cache(instance_);
  if (cache.find(hash, piece, out)) return;
  thread_local std::vector<TokenId> word;
  tokenize_uncached(piece, word);
  cache.store(hash, piece, word);
  out.insert(out.end(), word.begin(), word.end());
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
      const std::size_t length = std::min(utf8_length(static_cast<unsigned char>(piece[i])), piece.size() - i);
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

BpeModelBuilder::BpeModelBuilder(BpeOptions options) : model_(new BpeModel()) {
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

std::optional<std::string> BpeModelBuilder::missing_unk_token() const {
  const auto& unk = model_->options_.unk_token;
  if (unk && model_->vocab_.find(*unk) < 0) return *unk;
  return std::nullopt;
}

namespace {

// The bytes a byte-level token stands for, or nullopt when one of its characters is not a
// byte-level stand-in.
std::optional<std::string> byte_level_bytes(std::string_view token) {
  std::string bytes;
  bytes.reserve(token.size());
  for (std::size_t i = 0; i < token.size();) {
    const std::size_t length = std::min(utf8_length(static_cast<unsigned char>(token[i])), token.size() - i);
    const int byte = byte_level_byte(token.substr(i, length));
    if (byte < 0) return std::nullopt;
    bytes.push_back(static_cast<char>(byte));
    i += length;
  }
  return bytes;
}

}  // namespace

std::unique_ptr<BpeModel> BpeModelBuilder::build(bool raw_bytes) {
  BpeModel& model = *model_;
  std::size_t id_bound = 0;
  std::size_t text_bytes = 0;
  model.vocab_.for_each([&](std::string_view token, TokenId id) {
    id_bound = std::max(id_bound, static_cast<std::size_t>(id) + 1);
    text_bytes += token.size();
  });
  model.tokens_.assign(id_bound, BpeModel::Span{});
  model.token_text_.reserve(text_bytes);
  model.vocab_.for_each([&](std::string_view token, TokenId id) {
    model.tokens_[id] =
        BpeModel::Span{static_cast<std::uint32_t>(model.token_text_.size()), static_cast<std::uint32_t>(token.size())};
    model.token_text_.append(token);
  });
  if (model.options_.unk_token) model.unk_id_ = model.vocab_.find(*model.options_.unk_token);
  model.raw_bytes_ =
      raw_bytes && model.options_.continuing_subword_prefix.empty() && model.options_.end_of_word_suffix.empty();
  if (model.raw_bytes_) {
    model.raw_tokens_.assign(id_bound, BpeModel::Span{});
    model.raw_text_.reserve(text_bytes / 2);
    model.raw_vocab_.reserve(model.vocab_.size(), text_bytes / 2);
    model.vocab_.for_each([&](std::string_view token, TokenId id) {
      const auto bytes = byte_level_bytes(token);
      if (!bytes) return;
      model.raw_vocab_.insert_or_assign(*bytes, id);
      model.raw_tokens_[id] =
          BpeModel::Span{static_cast<std::uint32_t>(model.raw_text_.size()), static_cast<std::uint32_t>(bytes->size())};
      model.raw_text_.append(*bytes);
    });
    for (unsigned b = 0; b < 256; ++b) {
      model.byte_ids_[b] = model.vocab_.find(byte_level_char(static_cast<unsigned char>(b)));
    }
  }
  model.instance_ = next_instance++;
  return std::move(model_);
}

}  // namespace tinker::tokenizer_detail::hf
