// A per-thread memory of the ids recent pieces encoded to, for byte-pair models whose merge costs
// far more than one table probe. Text repeats its words, so most multi-token pieces of a long
// text were seen shortly before.
//
// The cache is direct-mapped (a new piece evicts whatever shared its slot): its size is fixed,
// a lookup is one probe and nothing is ever locked, since each thread has its own. A thread keeps
// the caches of the last few owners (tokenizer instances) it served; owners are numbered by
// new_piece_cache_owner(), never reused, so a destroyed tokenizer's answers cannot serve a new
// one that happens to live at the same address.
#pragma once

#include <tinker/types/common.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace tinker::tokenizer_detail {

class PieceCache {
 public:
  // A word of a script written with 3-byte characters (Thai, Devanagari, CJK) often takes more
  // than 22 bytes, so a slot is two cache lines rather than one.
  static constexpr std::size_t max_piece_bytes = 54;
  static constexpr std::size_t max_ids = 16;
  static constexpr std::size_t slot_count = 1 << 13;  // 1 MiB per owner and thread

  explicit PieceCache(std::uint64_t owner) : owner_(owner), slots_(new Slot[slot_count]) {}

  std::uint64_t owner() const noexcept { return owner_; }

  /// Appends the remembered ids of `piece` (whose hash is `hash`) to `out`; false when unknown.
  bool find(std::uint64_t hash, std::string_view piece, std::vector<TokenId>& out) const {
    const Slot& slot = slots_[hash & (slot_count - 1)];
    if (slot.hash != hash || slot.piece_bytes != piece.size() || slot.id_count == 0 ||
        std::memcmp(slot.piece, piece.data(), piece.size()) != 0) {
      return false;
    }
    out.insert(out.end(), slot.ids, slot.ids + slot.id_count);
    return true;
  }

  /// Remembers the ids of `piece`; pieces or results too long for a slot are not kept.
  void store(std::uint64_t hash, std::string_view piece, std::span<const TokenId> ids) noexcept {
    if (piece.size() > max_piece_bytes || ids.empty() || ids.size() > max_ids) return;
    Slot& slot = slots_[hash & (slot_count - 1)];
    slot.hash = hash;
    slot.piece_bytes = static_cast<std::uint8_t>(piece.size());
    slot.id_count = static_cast<std::uint8_t>(ids.size());
    std::memcpy(slot.piece, piece.data(), piece.size());
    std::copy(ids.begin(), ids.end(), slot.ids);
  }

 private:
  // The hash, the piece and its ids.
  struct Slot {
    std::uint64_t hash = 0;
    std::uint8_t piece_bytes = 0;
    std::uint8_t id_count = 0;  // 0: empty
    char piece[max_piece_bytes] = {};
    TokenId ids[max_ids] = {};
  };
  static_assert(sizeof(Slot) == 128);

  std::uint64_t owner_;
  std::unique_ptr<Slot[]> slots_;
};

/// A number no other owner of piece caches in this process has, for a tokenizer to keep.
inline std::uint64_t new_piece_cache_owner() noexcept {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

/// This thread's cache for `owner`; a thread keeps four, replacing the oldest.
inline PieceCache& thread_piece_cache(std::uint64_t owner) {
  constexpr std::size_t kept = 4;
  thread_local std::vector<std::unique_ptr<PieceCache>> caches;
  thread_local std::size_t oldest = 0;
  for (const auto& cache : caches) {
    if (cache->owner() == owner) return *cache;
  }
  if (caches.size() < kept) return *caches.emplace_back(std::make_unique<PieceCache>(owner));
  auto& victim = caches[oldest];
  oldest = (oldest + 1) % kept;
  victim = std::make_unique<PieceCache>(owner);
  return *victim;
}

}  // namespace tinker::tokenizer_detail
