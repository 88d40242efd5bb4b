// The tiktoken rank file ("<base64 token> <rank>" per line) as a lookup table, and tiktoken's
// byte-pair merge over it. The merge asks the table for the rank of many short byte strings, so
// the table is open-addressing over one arena of token bytes: a lookup hashes the bytes in place
// and touches a slot and a key, with no allocation.
#pragma once

#include <tinker/types/common.hpp>

#include <array>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::tokenizer_detail::tiktoken {

/// Up to 8 bytes as one word, different for different strings of the same length: two
/// overlapping 4-byte halves, or for 1-3 bytes the first, middle and last byte.
inline std::uint64_t short_key_word(const char* p, std::size_t n) noexcept {
  if (n >= 4) {
    std::uint32_t head, tail;
    std::memcpy(&head, p, 4);
    std::memcpy(&tail, p + n - 4, 4);
    return (std::uint64_t{head} << 32) | tail;
  }
  if (n == 0) return 0;
  const auto byte = [&](std::size_t i) { return std::uint64_t{static_cast<unsigned char>(p[i])}; };
  return (byte(0) << 16) | (byte(n / 2) << 8) | byte(n - 1);
}

/// A 64-bit hash of a short byte string: short_key_word up to 8 bytes, else 8-byte words read in
/// place (the last one overlapping the one before); multiply-xorshift mixing.
inline std::uint64_t hash_bytes(std::string_view bytes) noexcept {
  constexpr std::uint64_t k0 = 0x9E3779B97F4A7C15ULL, k1 = 0xBF58476D1CE4E5B9ULL, k2 = 0x94D049BB133111EBULL;
  const char* p = bytes.data();
  std::size_t n = bytes.size();
  std::uint64_t h = k0 ^ (n * k2);
  if (n <= 8) {
    h = (h ^ short_key_word(p, n)) * k1;
  } else {
    std::uint64_t word;
    for (; n > 8; p += 8, n -= 8) {
      std::memcpy(&word, p, 8);
      h = (h ^ word) * k1;
      h ^= h >> 31;
    }
    std::memcpy(&word, p + n - 8, 8);
    h = (h ^ word) * k2;
  }
  h ^= h >> 32;
  h *= k2;
  h ^= h >> 29;
  return h;
}

class RankTable {
 public:
  /// Reads a rank file; a malformed one fails with errc::invalid_configuration naming the file
  /// and the line. Empty lines are skipped, as tiktoken does.
  static RankTable load(const std::filesystem::path& file);

  /// The rank of `bytes`, or -1.
  TokenId find(std::string_view bytes) const noexcept { return find(bytes, hash_bytes(bytes)); }
  TokenId find(std::string_view bytes, std::uint64_t hash) const noexcept {
    const std::size_t n = bytes.size();
    if (n <= short_key_bytes) {
      const std::uint64_t word = short_key_word(bytes.data(), n);
      for (std::size_t i = hash & mask_;; i = (i + 1) & mask_) {
        const Slot& slot = slots_[i];
        if (slot.length == n && slot.key == word) return slot.rank;
        if (slot.rank < 0) return -1;
      }
    }
    const std::uint64_t tag = hash & ~std::uint64_t{0xFFFFFFFF};
    for (std::size_t i = hash & mask_;; i = (i + 1) & mask_) {
      const Slot& slot = slots_[i];
      if (slot.length == n && (slot.key & ~std::uint64_t{0xFFFFFFFF}) == tag &&
          std::memcmp(arena_.data() + static_cast<std::uint32_t>(slot.key), bytes.data(), n) == 0) {
        return slot.rank;
      }
      if (slot.rank < 0) return -1;
    }
  }
  /// The rank of the one-byte token `byte`, or -1.
  TokenId byte_rank(unsigned char byte) const noexcept { return byte_ranks_[byte]; }
  /// The rank of the two-byte token `first second`, or -1 (a merge starts with one such lookup
  /// per byte, so these have a direct table).
  TokenId pair_rank(unsigned char first, unsigned char second) const noexcept {
    return pair_ranks_[(std::size_t{first} << 8) | second];
  }
  /// The bytes of the token of `rank` (empty when no token has that rank).
  std::string_view token(TokenId rank) const noexcept;
  /// How many tokens the file has, and one more than its highest rank.
  std::size_t size() const noexcept { return count_; }
  std::size_t rank_limit() const noexcept { return spans_.size(); }

 private:
  // Keys of up to 8 bytes live in their slot (short_key_word), so looking one up reads nothing
  // else; a longer key's slot holds the hash's high half (most mismatches stop there) and the
  // key's offset in the arena. An empty slot has length 0 and rank -1.
  static constexpr std::size_t short_key_bytes = 8;
  struct Slot {
    std::uint64_t key = 0;
    std::uint32_t length = 0;
    TokenId rank = -1;
  };
  struct Span {
    std::uint32_t offset = 0;
    std::uint32_t length = 0;
  };

  // false when `bytes` is already in the table.
  bool insert(std::string_view bytes, TokenId rank);

  std::string arena_;
  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t count_ = 0;
  std::vector<Span> spans_;  // by rank
  std::array<TokenId, 256> byte_ranks_{};
  std::vector<TokenId> pair_ranks_;  // 65536 entries
};

/// Appends the ranks tiktoken's byte-pair merge gives `piece`: starting from single bytes, the
/// neighbours whose concatenation has the lowest rank merge first (the leftmost of equals).
/// Returns false, having appended nothing, when a byte left unmerged has no rank of its own.
bool merge_piece(const RankTable& ranks, std::string_view piece, std::vector<TokenId>& out);

}  // namespace tinker::tokenizer_detail::tiktoken
