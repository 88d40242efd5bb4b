// See tiktoken_ranks.hpp.
#include "text/tiktoken_ranks.hpp"

#include <tinker/error.hpp>

#include <algorithm>
#include <bit>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>

namespace tinker::tokenizer_detail::tiktoken {
namespace {

constexpr TokenId no_rank = std::numeric_limits<TokenId>::max();

// Pieces up to this many bytes merge by tiktoken's own scan for the lowest pair (quadratic, but
// on a few dozen bytes in registers); longer ones through a priority queue, O(n log n).
constexpr std::size_t short_piece_limit = 64;

[[noreturn]] void fail(const std::filesystem::path& file, const std::string& message) {
  throw error(errc::invalid_configuration, "tiktoken file " + file.string() + ": " + message);
}

std::string read_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(file, "cannot be read");
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) fail(file, "cannot be read");
  return std::move(content).str();
}

// Standard base64 (RFC 4648, with '=' padding) appended to `out`; false (with `out` as it was)
// when `text` is not valid base64.
bool append_base64_decoded(std::string_view text, std::string& out) {
  static const std::array<int, 256> values = [] {
    std::array<int, 256> table{};
    table.fill(-1);
    const std::string_view alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (std::size_t i = 0; i < alphabet.size(); ++i)
      table[static_cast<unsigned char>(alphabet[i])] = static_cast<int>(i);
    return table;
  }();
  if (text.empty() || text.size() % 4 != 0) return false;
  std::size_t padding = 0;
  while (padding < 2 && text[text.size() - 1 - padding] == '=') ++padding;
  const std::size_t before = out.size();
  std::uint32_t bits = 0;
  int count = 0;
  for (std::size_t i = 0; i < text.size() - padding; ++i) {
    const int value = values[static_cast<unsigned char>(text[i])];
    if (value < 0) {
      out.resize(before);
      return false;
    }
    bits = (bits << 6) | static_cast<std::uint32_t>(value);
    if (++count == 4) {
      out += static_cast<char>(bits >> 16);
      out += static_cast<char>((bits >> 8) & 0xFF);
      out += static_cast<char>(bits & 0xFF);
      bits = 0;
      count = 0;
    }
  }
  if (count == 1) {
    out.resize(before);
    return false;
  }
  if (count == 2) out += static_cast<char>(bits >> 4);
  if (count == 3) {
    out += static_cast<char>(bits >> 10);
    out += static_cast<char>((bits >> 2) & 0xFF);
  }
  return true;
}

TokenId parse_rank(std::string_view text) {
  if (text.empty() || text.size() > 10) return -1;
  std::uint64_t rank = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return -1;
    rank = rank * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (rank >= static_cast<std::uint64_t>(no_rank)) return -2;
  return static_cast<TokenId>(rank);
}

}  // namespace

RankTable RankTable::load(const std::filesystem::path& file) {
  const std::string content = read_file(file);
  const auto lines = static_cast<std::size_t>(std::count(content.begin(), content.end(), '\n')) + 1;
  RankTable table;
  table.byte_ranks_.fill(-1);
  table.pair_ranks_.assign(1 << 16, -1);
  table.arena_.reserve(content.size() * 3 / 4);
  table.slots_.assign(std::bit_ceil(std::max<std::size_t>(16, lines * 2)), Slot{});
  table.mask_ = table.slots_.size() - 1;
  table.spans_.reserve(lines);
  std::size_t line_number = 0;
  for (std::size_t pos = 0; pos < content.size();) {
    std::size_t end = content.find('\n', pos);
    if (end == std::string::npos) end = content.size();
    std::string_view line(content.data() + pos, end - pos);
    pos = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    const auto where = [&] { return "line " + std::to_string(line_number) + ": "; };
    const std::size_t space = line.find(' ');
    if (space == std::string_view::npos) fail(file, where() + "expected \"<base64 token> <rank>\", found no rank");
    const std::size_t offset = table.arena_.size();
    if (!append_base64_decoded(line.substr(0, space), table.arena_))
      fail(file, where() + "the token is not valid base64");
    const std::string_view rank_text = line.substr(space + 1);
    const TokenId rank = parse_rank(rank_text);
    if (rank == -1) fail(file, where() + "the rank is not a number");
    if (rank == -2) fail(file, where() + "the rank is too large");
    if (static_cast<std::size_t>(rank) >= table.spans_.size()) table.spans_.resize(static_cast<std::size_t>(rank) + 1);
    Span& span = table.spans_[static_cast<std::size_t>(rank)];
    if (span.length != 0) fail(file, where() + "rank " + std::string(rank_text) + " appears twice");
    if (table.arena_.size() >= std::numeric_limits<std::uint32_t>::max()) fail(file, "is larger than 4 GiB");
    span = Span{static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(table.arena_.size() - offset)};
    if (!table.insert(table.token(rank), rank)) fail(file, where() + "the token appears twice");
  }
  if (table.count_ == 0) fail(file, "holds no ranks");
  return table;
}

bool RankTable::insert(std::string_view bytes, TokenId rank) {
  if ((count_ + 1) * 2 > slots_.size()) {
    // More lines than counted cannot happen, but keep the table at most half full regardless.
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot& slot : old) {
      if (slot.rank < 0) continue;
      std::size_t i = hash_bytes(token(slot.rank)) & mask_;
      while (slots_[i].rank >= 0) i = (i + 1) & mask_;
      slots_[i] = slot;
    }
  }
  if (find(bytes) >= 0) return false;
  const std::uint64_t hash = hash_bytes(bytes);
  std::size_t i = hash & mask_;
  while (slots_[i].rank >= 0) i = (i + 1) & mask_;
  const std::uint64_t key =
      bytes.size() <= short_key_bytes
          ? short_key_word(bytes.data(), bytes.size())
          : (hash & ~std::uint64_t{0xFFFFFFFF}) | static_cast<std::uint64_t>(bytes.data() - arena_.data());
  slots_[i] = Slot{key, static_cast<std::uint32_t>(bytes.size()), rank};
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(bytes[i]); };
  if (bytes.size() == 1) byte_ranks_[byte(0)] = rank;
  if (bytes.size() == 2) pair_ranks_[(std::size_t{byte(0)} << 8) | byte(1)] = rank;
  ++count_;
  return true;
}

std::string_view RankTable::token(TokenId rank) const noexcept {
  if (rank < 0 || static_cast<std::size_t>(rank) >= spans_.size()) return {};
  const Span span = spans_[static_cast<std::size_t>(rank)];
  return std::string_view(arena_.data() + span.offset, span.length);
}

namespace {

// tiktoken's loop as written: parts[i] is where the i-th current token starts (the last entry is
// the piece's end); `pair` is the rank of that token joined with the next, `token` its own rank.
bool merge_short(const RankTable& ranks, std::string_view piece, std::vector<TokenId>& out) {
  struct Part {
    std::uint32_t start;
    TokenId pair;
    TokenId token;
  };
  std::array<Part, short_piece_limit + 1> parts;
  std::size_t count = piece.size() + 1;
  for (std::size_t i = 0; i < count; ++i) {
    const TokenId byte = i < piece.size() ? ranks.byte_rank(static_cast<unsigned char>(piece[i])) : no_rank;
    parts[i] = Part{static_cast<std::uint32_t>(i), no_rank, byte};
  }
  const auto pair_rank = [&](std::size_t i) {
    if (i + 2 >= count) return no_rank;
    const TokenId rank = ranks.find(piece.substr(parts[i].start, parts[i + 2].start - parts[i].start));
    return rank < 0 ? no_rank : rank;
  };
  for (std::size_t i = 0; i + 2 < count; ++i) {
    const TokenId rank =
        ranks.pair_rank(static_cast<unsigned char>(piece[i]), static_cast<unsigned char>(piece[i + 1]));
    parts[i].pair = rank < 0 ? no_rank : rank;
  }
  for (;;) {
    std::size_t best = 0;
    for (std::size_t i = 1; i + 2 < count; ++i) {
      if (parts[i].pair < parts[best].pair) best = i;
    }
    if (parts[best].pair == no_rank) break;
    parts[best].token = parts[best].pair;
    std::copy(parts.begin() + static_cast<std::ptrdiff_t>(best) + 2, parts.begin() + static_cast<std::ptrdiff_t>(count),
              parts.begin() + static_cast<std::ptrdiff_t>(best) + 1);
    --count;
    parts[best].pair = pair_rank(best);
    if (best > 0) parts[best - 1].pair = pair_rank(best - 1);
  }
  for (std::size_t i = 0; i + 1 < count; ++i) {
    if (parts[i].token < 0) return false;
  }
  for (std::size_t i = 0; i + 1 < count; ++i) out.push_back(parts[i].token);
  return true;
}

// The same merges in O(n log n): the current tokens form a linked list indexed by their first
// byte, and every pair's rank waits in a min-queue ordered by (rank, position), so the pair
// popped is the one tiktoken's scan would pick: the lowest rank, the leftmost of equals. A queued
// pair whose left token has since changed is stale: its token is gone or its pair rank differs
// (a rank names one byte string, so an equal rank at the same start is the same pair).
bool merge_long(const RankTable& ranks, std::string_view piece, std::vector<TokenId>& out) {
  const auto n = static_cast<std::uint32_t>(piece.size());
  thread_local std::vector<std::uint32_t> next, prev;
  thread_local std::vector<TokenId> pair, token;
  thread_local std::vector<std::uint64_t> heap;  // rank << 32 | position: one compare orders both
  next.resize(n + 1);
  prev.resize(n + 1);
  pair.assign(n + 1, no_rank);
  token.resize(n + 1);
  heap.clear();
  for (std::uint32_t i = 0; i <= n; ++i) {
    next[i] = i + 1;
    prev[i] = i - 1;  // prev[0] is never read
    token[i] = i < n ? ranks.byte_rank(static_cast<unsigned char>(piece[i])) : no_rank;
  }
  const auto update = [&](std::uint32_t i) {
    const std::uint32_t j = next[i];
    if (j >= n) {
      pair[i] = no_rank;
      return;
    }
    const TokenId rank =
        next[j] - i == 2 ? ranks.pair_rank(static_cast<unsigned char>(piece[i]), static_cast<unsigned char>(piece[j]))
                         : ranks.find(piece.substr(i, next[j] - i));
    pair[i] = rank < 0 ? no_rank : rank;
    if (rank >= 0) heap.push_back((std::uint64_t(static_cast<std::uint32_t>(rank)) << 32) | i);
  };
  const auto later = std::greater<>();
  for (std::uint32_t i = 0; i < n; ++i) update(i);
  std::make_heap(heap.begin(), heap.end(), later);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const auto rank = static_cast<TokenId>(heap.back() >> 32);
    const auto i = static_cast<std::uint32_t>(heap.back());
    heap.pop_back();
    if (token[i] == no_rank || pair[i] != rank) continue;  // stale
    const std::uint32_t j = next[i];
    token[i] = rank;
    token[j] = no_rank;  // gone
    next[i] = next[j];
    prev[next[j]] = i;
    const std::size_t queued = heap.size();
    update(i);
    if (i > 0) update(prev[i]);
    for (std::size_t k = queued; k < heap.size(); ++k) {
      std::push_heap(heap.begin(), heap.begin() + static_cast<std::ptrdiff_t>(k) + 1, later);
    }
  }
  for (std::uint32_t i = 0; i < n; i = next[i]) {
    if (token[i] < 0) return false;
  }
  for (std::uint32_t i = 0; i < n; i = next[i]) out.push_back(token[i]);
  return true;
}

}  // namespace

bool merge_piece(const RankTable& ranks, std::string_view piece, std::vector<TokenId>& out) {
  if (piece.empty()) return true;
  if (piece.size() <= short_piece_limit) return merge_short(ranks, piece, out);
  return merge_long(ranks, piece, out);
}

}  // namespace tinker::tokenizer_detail::tiktoken
