// See added_vocabulary.hpp.
#include "text/hf/added_vocabulary.hpp"

#include "text/hf/bpe_model.hpp"
#include "text/pre_tokenizer.hpp"

#include <utf8proc.h>

#include <algorithm>

namespace tinker::tokenizer_detail::hf {
namespace {

// ---- The character classes the reference's regexes use (Rust regex, Unicode mode) ----------

// `\s`: the White_Space property.
bool is_whitespace(std::int32_t c) noexcept {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

// `\w`: Alphabetic, marks, decimal digits, connector punctuation, joiners. Alphabetic is the
// letters, letter numbers and Other_Alphabetic, whose members outside the marks are the circled
// and squared Latin letters.
bool is_word_character(std::int32_t c) noexcept {
  switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_PC: return true;
    default: break;
  }
  return c == 0x200C || c == 0x200D || (c >= 0x24B6 && c <= 0x24E9) || (c >= 0x1F130 && c <= 0x1F149) ||
         (c >= 0x1F150 && c <= 0x1F169) || (c >= 0x1F170 && c <= 0x1F189);
}

// The code point starting at text[pos] and its length (text is valid UTF-8).
std::int32_t decode_at(std::string_view text, std::size_t pos, std::size_t& length) noexcept {
  utf8proc_int32_t c = 0;
  const auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data() + pos),
                                  static_cast<utf8proc_ssize_t>(text.size() - pos), &c);
  length = n > 0 ? static_cast<std::size_t>(n) : 1;
  return n > 0 ? c : -1;
}

// The start of the character that ends at `end`.
std::size_t previous_start(std::string_view text, std::size_t end) noexcept {
  std::size_t pos = end - 1;
  while (pos > 0 && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80) --pos;
  return pos;
}

bool ends_with_word(std::string_view text) noexcept {
  if (text.empty()) return false;
  std::size_t length = 0;
  return is_word_character(decode_at(text, previous_start(text, text.size()), length));
}

bool starts_with_word(std::string_view text) noexcept {
  std::size_t length = 0;
  return !text.empty() && is_word_character(decode_at(text, 0, length));
}

// Where the whitespace that ends `text` starts (`\s*$`).
std::size_t trailing_space_start(std::string_view text) noexcept {
  std::size_t end = text.size();
  while (end > 0) {
    const std::size_t start = previous_start(text, end);
    std::size_t length = 0;
    if (!is_whitespace(decode_at(text, start, length))) break;
    end = start;
  }
  return end;
}

// Length of the whitespace that starts `text` (`^\s*`).
std::size_t leading_space_length(std::string_view text) noexcept {
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t length = 0;
    if (!is_whitespace(decode_at(text, pos, length))) break;
    pos += length;
  }
  return pos;
}

}  // namespace

// ---- LiteralTrie -----------------------------------------------------------------------------

std::uint32_t LiteralTrie::child(std::uint32_t node, unsigned char byte) const noexcept {
  if (node == 0) return root_[byte];
  const auto& edges = nodes_[node].edges;
  const auto it = std::lower_bound(edges.begin(), edges.end(), byte,
                                   [](const Edge& edge, unsigned char b) { return edge.byte < b; });
  return it != edges.end() && it->byte == byte ? it->child : 0;
}

void LiteralTrie::insert(std::string_view pattern, std::uint32_t value) {
  if (pattern.empty()) return;
  std::uint32_t node = 0;
  for (const char c : pattern) {
    const auto byte = static_cast<unsigned char>(c);
    std::uint32_t next = child(node, byte);
    if (next == 0) {
      next = static_cast<std::uint32_t>(nodes_.size());
      nodes_.emplace_back();
      if (node == 0) {
        root_[byte] = next;
      } else {
        auto& edges = nodes_[node].edges;
        const auto at = std::lower_bound(edges.begin(), edges.end(), byte,
                                         [](const Edge& edge, unsigned char b) { return edge.byte < b; });
        edges.insert(at, Edge{byte, next});
      }
    }
    node = next;
  }
  nodes_[node].value = value;
}

bool LiteralTrie::longest_at(std::string_view text, std::size_t pos, std::size_t& length,
                             std::uint32_t& value) const noexcept {
  bool found = false;
  std::uint32_t node = 0;
  for (std::size_t i = pos; i < text.size(); ++i) {
    node = child(node, static_cast<unsigned char>(text[i]));
    if (node == 0) break;
    if (nodes_[node].value != UINT32_MAX) {
      found = true;
      length = i + 1 - pos;
      value = nodes_[node].value;
    }
  }
  return found;
}

// ---- AddedVocabulary -------------------------------------------------------------------------

AddedVocabulary::AddedVocabulary(std::vector<AddedToken> tokens, const BpeModel& model, const Normalizer* normalizer) {
  auto next_id = static_cast<TokenId>(model.vocab_size());
  for (auto& token : tokens) {
    if (token.content.empty()) continue;
    TokenId id = by_content_.find(token.content);
    if (id < 0) id = model.token_to_id(token.content);
    if (id < 0) id = next_id++;
    if (static_cast<std::size_t>(id) >= index_by_id_.size()) index_by_id_.resize(static_cast<std::size_t>(id) + 1, -1);
    if (index_by_id_[id] < 0) {
      index_by_id_[id] = static_cast<std::int32_t>(entries_.size());
      entries_.emplace_back();
    }
    Entry& entry = entries_[static_cast<std::size_t>(index_by_id_[id])];
    if (token.normalized && normalizer != nullptr) {
      std::string normalized = token.content;
      normalizer->normalize(normalized);
      if (normalized != token.content) entry.normalized_form = std::move(normalized);
    }
    by_content_.insert_or_assign(token.content, id);
    if (token.special) special_contents_.insert_or_assign(token.content, id);
    entry.token = std::move(token);
  }
  by_content_.for_each([&](std::string_view content, TokenId) {
    if (model.token_to_id(content) < 0) ++new_entries_;
  });
  for (std::size_t id = 0; id < index_by_id_.size(); ++id) {
    if (index_by_id_[id] < 0) continue;
    const Entry& entry = entries_[static_cast<std::size_t>(index_by_id_[id])];
    if (entry.token.normalized) {
      normalized_.insert(entry.normalized_form ? *entry.normalized_form : entry.token.content,
                         static_cast<std::uint32_t>(id));
      if (!is_special_content(entry.token.content)) ++normalized_ordinary_;
    } else {
      raw_.insert(entry.token.content, static_cast<std::uint32_t>(id));
      if (!is_special_content(entry.token.content)) ++raw_ordinary_;
    }
  }
}

std::optional<std::string_view> AddedVocabulary::decode_text(TokenId id) const noexcept {
  const Entry* found = entry(id);
  if (found == nullptr) return std::nullopt;
  if (found->normalized_form) return std::string_view(*found->normalized_form);
  return std::string_view(found->token.content);
}

bool AddedVocabulary::is_special_id(TokenId id) const noexcept {
  const Entry* found = entry(id);
  return found != nullptr && found->token.special;
}

// The reference's find_matches: matches are found left to right, longest first at each position,
// and the search resumes after a match even when single_word or skip_special then discards it.
// lstrip/rstrip widen the match over neighbouring whitespace (never back over an earlier match).
// `nothing_matches`: every token of the trie is special and skipped, so the text is one section.
void AddedVocabulary::split(const LiteralTrie& trie, bool nothing_matches, bool skip_special, std::string_view text,
                            std::vector<Section>& out) const {
  const auto n = static_cast<std::uint32_t>(text.size());
  std::uint32_t done = 0;
  if (!trie.empty() && !nothing_matches) {
    for (std::size_t pos = 0; pos < text.size();) {
      if (!trie.may_start_with(static_cast<unsigned char>(text[pos]))) {
        ++pos;
        continue;
      }
      std::size_t length = 0;
      std::uint32_t id = 0;
      if (!trie.longest_at(text, pos, length, id)) {
        ++pos;
        continue;
      }
      auto start = static_cast<std::uint32_t>(pos);
      auto stop = static_cast<std::uint32_t>(pos + length);
      pos += length;
      const AddedToken& token = entry(static_cast<TokenId>(id))->token;
      // By content, as the reference's special_tokens_set.
      if (skip_special && is_special_content(token.content)) continue;
      if (token.single_word) {
        const bool space_before = start == 0 || !ends_with_word(text.substr(0, start));
        const bool space_after = stop == n || !starts_with_word(text.substr(stop));
        if (!space_before || !space_after) continue;
      }
      if (token.lstrip) {
        start = std::max(static_cast<std::uint32_t>(trailing_space_start(text.substr(0, start))), done);
      }
      if (token.rstrip) stop += static_cast<std::uint32_t>(leading_space_length(text.substr(stop)));
      if (done < start) out.emplace_back(done, start, -1);
      out.emplace_back(start, stop, static_cast<TokenId>(id));
      done = stop;
    }
  }
  if (done != n) out.emplace_back(done, n, -1);
}

}  // namespace tinker::tokenizer_detail::hf
