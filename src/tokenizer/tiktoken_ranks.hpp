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

/// A 64-bit hash of a short byte string: words read in place (the last one overlapping the one
/// before, strings under 8 bytes as two overlapping halves), multiply-xorshift mixing.
inline std::uint64_t hash_bytes(std::string_view bytes) noexcept {
  constexpr std::uint64_t k0 = 0x9E3779B97F4A7C15ULL, k1 = 0xBF58476D1CE4E5B9ULL, k2 = 0x94D049BB133111EBULL;
  const char* p = bytes.data();
  std::size_t n = bytes.size();
  std::uint64_t h = k0 ^ (n * k2);
  if (n <= 8) {
    std::uint64_t word = 0;
    if (n >= 4) {
      std::uint32_t head, tail;
      std::memcpy(&head, p, 4);
      std::memcpy(&tail, p + n - 4, 4);
      word = (std::uint64_t{head} << 32) | tail;
    } else if (n > 0) {
      const auto byte = [&](std::size_t i) { return std::uint64_t{static_cast<unsigned char>(p[i])}; };
      word = (byte(0) << 16) | (byte(n / 2) << 8) | byte(n - 1);
    }
    h = (h ^ word) * k1;
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
  TokenId find(std::string_view bytes, std::uint64_t hash) const noexcept;
  /// The rank of the one-byte token `byte`, or -1.
  TokenId byte_rank(unsigned char byte) const noexcept { return byte_ranks_[byte]; }
  /// The bytes of the token of `rank` (empty when no token has that rank).
  std::string_view token(TokenId rank) const noexcept;
  /// How many tokens the file has, and one more than its highest rank.
  std::size_t size() const noexcept { return count_; }
  std::size_t rank_limit() const noexcept { return spans_.size(); }

 private:
  struct Slot {
    std::uint32_t tag = 0;  // the hash's high half, so most mismatches skip the key compare
    std::uint32_t offset = 0;
    std::uint32_t length = 0;
    TokenId rank = -1;  // -1: empty
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
};

/// Appends the ranks tiktoken's byte-pair merge gives `piece`: starting from single bytes, the
/// neighbours whose concatenation has the lowest rank merge first (the leftmost of equals).
/// Returns false, having appended nothing, when a byte left unmerged has no rank of its own.
bool merge_piece(const RankTable& ranks, std::string_view piece, std::vector<TokenId>& out);

}  // namespace tinker::tokenizer_detail::tiktoken
