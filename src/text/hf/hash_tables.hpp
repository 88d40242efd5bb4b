// Open-addressing hash tables for the BPE model's hot lookups: token text -> id and
// (left id, right id) -> merge. Built once at load, read-only afterwards (safe from many threads).
// std::unordered_map would allocate a node per entry (hundreds of thousands of them) and chase a
// pointer per probe; these keep every key in one arena and probe a flat array.
#pragma once

#include <tinker/types/common.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::tokenizer_detail::hf {

/// A fast 64-bit hash of bytes (8 bytes per step, multiply-xorshift mixing).
inline std::uint64_t hash_bytes(std::string_view bytes) noexcept {
  std::uint64_t h = 0x9E3779B97F4A7C15ULL ^ (bytes.size() * 0xff51afd7ed558ccdULL);
  const char* p = bytes.data();
  std::size_t n = bytes.size();
  while (n >= 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    h = (h ^ word) * 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 31;
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    std::uint64_t word = 0;
    std::memcpy(&word, p, n);
    h = (h ^ word) * 0x94d049bb133111ebULL;
    h ^= h >> 29;
  }
  h *= 0xd6e8feb86659fd93ULL;
  h ^= h >> 32;
  return h;
}

/// Strings -> token ids. A key inserted twice keeps the last id (as a JSON object read into a map).
/// A slot holds the key's place in the arena and its id, so a lookup touches the slot and the key.
class StringIdMap {
 public:
  void reserve(std::size_t count, std::size_t key_bytes);
  void insert_or_assign(std::string_view key, TokenId id);
  /// The id of `key`, or -1.
  TokenId find(std::string_view key) const noexcept { return find(key, hash_bytes(key)); }
  TokenId find(std::string_view key, std::uint64_t hash) const noexcept;
  std::size_t size() const noexcept { return count_; }
  std::size_t memory_bytes() const noexcept { return keys_.capacity() + slots_.capacity() * sizeof(Slot); }
  /// Hints the processor to load the slot `hash` starts probing at (for batched lookups).
  void prefetch(std::uint64_t hash) const noexcept {
    if (!slots_.empty()) __builtin_prefetch(&slots_[static_cast<std::size_t>(hash) & mask_]);
  }
  /// Hints the processor to load the key in the slot `hash` starts probing at.
  void prefetch_key(std::uint64_t hash) const noexcept {
    if (slots_.empty()) return;
    const Slot& slot = slots_[static_cast<std::size_t>(hash) & mask_];
    if (slot.length != empty) __builtin_prefetch(keys_.data() + slot.offset);
  }
  /// The arena every key lives in (keys handed to for_each point into it; stable once built).
  const char* key_arena() const noexcept { return keys_.data(); }
  /// Calls `visit(key, id)` for every entry (in no particular order).
  template <class Visit>
  void for_each(Visit&& visit) const {
    for (const Slot& slot : slots_) {
      if (slot.length != empty) visit(key_of(slot), slot.id);
    }
  }

 private:
  static constexpr std::uint32_t empty = UINT32_MAX;
  class Slot {
   public:
    std::uint32_t tag = 0;  // high bits of the hash, to skip most key compares
    std::uint32_t offset = 0;
    std::uint32_t length = empty;
    TokenId id = -1;
  };

  void rehash(std::size_t slot_count);
  std::string_view key_of(const Slot& slot) const noexcept {
    return std::string_view(keys_.data() + slot.offset, slot.length);
  }

  std::string keys_;
  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t count_ = 0;
};

/// (left id, right id) -> (rank, merged id). A pair inserted twice keeps the last one.
class MergeMap {
 public:
  class Merge {
   public:
    std::uint64_t key;
    std::uint32_t rank;
    TokenId merged;
  };

  void reserve(std::size_t count);
  void insert_or_assign(TokenId left, TokenId right, std::uint32_t rank, TokenId merged);
  /// The merge of the pair, or nullptr.
  const Merge* find(TokenId left, TokenId right) const noexcept {
    if (slots_.empty()) return nullptr;
    const std::uint64_t key = pack(left, right);
    for (std::size_t i = slot_of(key);; i = (i + 1) & mask_) {
      const Merge& slot = slots_[i];
      if (slot.key == key) return &slot;
      if (slot.key == empty_key) return nullptr;
    }
  }
  std::size_t size() const noexcept { return count_; }
  std::size_t memory_bytes() const noexcept { return slots_.capacity() * sizeof(Merge); }

 private:
  static constexpr std::uint64_t empty_key = ~std::uint64_t{0};
  static std::uint64_t pack(TokenId left, TokenId right) noexcept {
    return (std::uint64_t{static_cast<std::uint32_t>(left)} << 32) | static_cast<std::uint32_t>(right);
  }
  std::size_t slot_of(std::uint64_t key) const noexcept {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> shift_);
  }
  void rehash(std::size_t slot_count);

  std::vector<Merge> slots_;
  std::size_t mask_ = 0;
  unsigned shift_ = 63;
  std::size_t count_ = 0;
};

}  // namespace tinker::tokenizer_detail::hf
