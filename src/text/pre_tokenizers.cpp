// Pre-tokenizers of the tokenizer.json format, with Hugging Face's semantics: a piece is cut into
// segments (matches of a pattern and the text between them), and a SplitBehavior decides which
// segments become pieces, merged how.
#include <tinker/error.hpp>

#include "text/matcher.hpp"
#include "text/pre_tokenizer.hpp"
#include "text/unicode.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace tinker::tokenizer_detail {

namespace {

// A part of a piece: [begin, end) relative to the piece, and whether the pattern matched it.
class Segment {
 public:
  Segment(std::uint32_t begin_, std::uint32_t end_, bool is_match_) : begin(begin_), end(end_), is_match(is_match_) {}
  std::uint32_t begin;
  std::uint32_t end;
  bool is_match;
};

// The matches and the gaps between them, covering [0, length) (Hugging Face's find_matches).
void segments_of(std::uint32_t length, const std::vector<MatchRange>& matches, bool invert,
                 std::vector<Segment>& segments) {
  segments.clear();
  std::uint32_t previous = 0;
  for (const auto& [begin, end] : matches) {
    if (begin > previous) segments.emplace_back(previous, begin, invert);
    segments.emplace_back(begin, end, !invert);
    previous = end;
  }
  if (previous < length) segments.emplace_back(previous, length, invert);
}

// Applies `behavior` to `segments` in place (Hugging Face's NormalizedString::split). Removed
// segments are dropped.
void apply_behavior(SplitBehavior behavior, std::vector<Segment>& segments) {
  std::vector<Segment> out;
  out.reserve(segments.size());
  bool previous_match = false;
  switch (behavior) {
    case SplitBehavior::isolated: return;
    case SplitBehavior::removed:
      for (const Segment& s : segments) {
        if (!s.is_match) out.push_back(s);
      }
      break;
    case SplitBehavior::contiguous:
      for (const Segment& s : segments) {
        if (s.is_match == previous_match && !out.empty()) {
          out.back().end = s.end;
        } else {
          out.push_back(s);
        }
        previous_match = s.is_match;
      }
      break;
    case SplitBehavior::merged_with_previous:
      for (const Segment& s : segments) {
        if (s.is_match && !previous_match && !out.empty()) {
          out.back().end = s.end;
        } else {
          out.push_back(s);
        }
        previous_match = s.is_match;
      }
      break;
    case SplitBehavior::merged_with_next:
      for (auto it = segments.rbegin(); it != segments.rend(); ++it) {
        if (it->is_match && !previous_match && !out.empty()) {
          out.back().begin = it->begin;
        } else {
          out.push_back(*it);
        }
        previous_match = it->is_match;
      }
      std::reverse(out.begin(), out.end());
      break;
  }
  segments = std::move(out);
}

// Cuts every piece by `matcher` and `behavior`; the scratch vectors are per thread.
void split_pieces(Pieces& pieces, const Matcher& matcher, SplitBehavior behavior, bool invert) {
  thread_local std::vector<MatchRange> matches;
  thread_local std::vector<Segment> segments;
  std::vector<Pieces::Span> out;
  out.reserve(pieces.spans.size() * 4);
  for (const Pieces::Span span : pieces.spans) {
    matches.clear();
    matcher.find_all(pieces.view(span), matches);
    segments_of(span.length, matches, invert, segments);
    apply_behavior(behavior, segments);
    for (const Segment& s : segments) {
      if (s.end > s.begin) out.emplace_back(span.offset + s.begin, s.end - s.begin);
    }
  }
  pieces.spans = std::move(out);
}

// A "pattern" of single characters: every character the predicate accepts is a match.
template <typename Predicate>
class CharMatcher final : public Matcher {
 public:
  explicit CharMatcher(Predicate predicate) : predicate_(predicate) {}
  void find_all(std::string_view text, std::vector<MatchRange>& matches) const override {
    for (std::size_t pos = 0; pos < text.size();) {
      const auto [c, length] = decode_utf8_at(text, pos);
      if (predicate_(c))
        matches.emplace_back(static_cast<std::uint32_t>(pos), static_cast<std::uint32_t>(pos + length));
      pos += length;
    }
  }
  std::string_view engine() const noexcept override { return "char"; }

 private:
  Predicate predicate_;
};

template <typename Predicate>
std::unique_ptr<Matcher> make_char_matcher(Predicate predicate) {
  return std::make_unique<CharMatcher<Predicate>>(predicate);
}

// Any pattern with a behavior: Split, Digits, Punctuation, Whitespace, WhitespaceSplit.
class MatcherSplit final : public PreTokenizer {
 public:
  MatcherSplit(std::unique_ptr<Matcher> matcher, SplitBehavior behavior, bool invert)
      : matcher_(std::move(matcher)), behavior_(behavior), invert_(invert) {}
  void pre_tokenize(Pieces& pieces, SectionContext) const override {
    split_pieces(pieces, *matcher_, behavior_, invert_);
  }

 private:
  std::unique_ptr<Matcher> matcher_;
  SplitBehavior behavior_;
  bool invert_;
};

// Prepends `prefix` to the piece at `index` (the new text goes to the arena).
void prepend_to_piece(Pieces& pieces, std::size_t index, std::string_view prefix) {
  std::string text(prefix);
  text += pieces[index];
  pieces.spans[index] = pieces.append(text);
}

constexpr std::string_view kGpt2Pattern =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

class ByteLevelPreTokenizer final : public PreTokenizer {
 public:
  ByteLevelPreTokenizer(bool add_prefix_space, bool use_regex, bool map_bytes)
      : add_prefix_space_(add_prefix_space), map_bytes_(map_bytes) {
    if (use_regex) matcher_ = make_matcher(kGpt2Pattern);
  }

  void pre_tokenize(Pieces& pieces, SectionContext) const override {
    // As Hugging Face: every piece reaching this step gets the space, not only the first.
    if (add_prefix_space_) {
      for (std::size_t i = 0; i < pieces.size(); ++i) {
        if (pieces[i].empty() || pieces[i].front() != ' ') prepend_to_piece(pieces, i, " ");
      }
    }
    if (matcher_) split_pieces(pieces, *matcher_, SplitBehavior::isolated, false);
    if (map_bytes_) map_bytes(pieces);
  }

 private:
  static void map_bytes(Pieces& pieces) {
    std::string mapped;
    for (Pieces::Span& span : pieces.spans) {
      mapped.clear();
      for (const char byte : pieces.view(span)) mapped += byte_level_char(static_cast<unsigned char>(byte));
      span = pieces.append(mapped);
    }
  }

  bool add_prefix_space_;
  bool map_bytes_;
  std::unique_ptr<Matcher> matcher_;
};

class MetaspacePreTokenizer final : public PreTokenizer {
 public:
  MetaspacePreTokenizer(std::string replacement, PrependScheme scheme, bool split)
      : replacement_(std::move(replacement)),
        scheme_(scheme),
        split_(split),
        matcher_(make_literal_matcher(replacement_)) {
    if (replacement_.empty()) {
      throw error(errc::invalid_configuration, "Metaspace: the replacement is empty");
    }
  }

  void pre_tokenize(Pieces& pieces, SectionContext context) const override {
    std::string text;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      text.clear();
      for (const char c : pieces[i]) {
        if (c == ' ') {
          text += replacement_;
        } else {
          text += c;
        }
      }
      // "first" prepends only to the piece that starts the input: the first piece of the first
      // section (the input is cut at added tokens before pre-tokenizing).
      const bool prepend =
          scheme_ == PrependScheme::always || (scheme_ == PrependScheme::first && i == 0 && context.starts_input);
      if (prepend && !text.empty() && !std::string_view(text).starts_with(replacement_)) text.insert(0, replacement_);
      pieces.spans[i] = pieces.append(text);
    }
    if (split_) split_pieces(pieces, *matcher_, SplitBehavior::merged_with_next, false);
  }

 private:
  std::string replacement_;
  PrependScheme scheme_;
  bool split_;
  std::unique_ptr<Matcher> matcher_;
};

class SequencePreTokenizer final : public PreTokenizer {
 public:
  explicit SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> steps) : steps_(std::move(steps)) {}
  void pre_tokenize(Pieces& pieces, SectionContext context) const override {
    for (const auto& step : steps_) step->pre_tokenize(pieces, context);
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> steps_;
};

// GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves, the other 68 bytes map
// to U+0100 onwards in byte order.
class ByteLevelTables {
 public:
  ByteLevelTables() {
    int next = 0;
    for (int byte = 0; byte < 256; ++byte) {
      const bool printable = (byte >= 0x21 && byte <= 0x7E) || (byte >= 0xA1 && byte <= 0xAC) || byte >= 0xAE;
      const char32_t c = printable ? static_cast<char32_t>(byte) : static_cast<char32_t>(0x100 + next++);
      append_utf8(chars[static_cast<std::size_t>(byte)], c);
      bytes_by_char[c] = byte;
    }
  }
  std::array<std::string, 256> chars;
  std::array<int, 0x144> bytes_by_char{};  // every stand-in is below U+0144
};

const ByteLevelTables& byte_level_tables() {
  static const ByteLevelTables tables;
  return tables;
}

}  // namespace

const std::string& byte_level_char(unsigned char byte) {
  return byte_level_tables().chars[byte];
}

int byte_level_byte(std::string_view utf8_char) {
  if (utf8_char.empty()) return -1;
  const auto [c, length] = decode_utf8_at(utf8_char, 0);
  if (length != utf8_char.size() || c >= 0x144) return -1;
  const ByteLevelTables& tables = byte_level_tables();
  const int byte = tables.bytes_by_char[c];
  return tables.chars[static_cast<std::size_t>(byte)] == utf8_char ? byte : -1;
}

std::unique_ptr<PreTokenizer> make_split_pre_tokenizer(std::string pattern, bool is_regex, SplitBehavior behavior,
                                                       bool invert) {
  auto matcher = is_regex ? make_matcher(pattern) : make_literal_matcher(std::move(pattern));
  return std::make_unique<MatcherSplit>(std::move(matcher), behavior, invert);
}

std::unique_ptr<PreTokenizer> make_byte_level_pre_tokenizer(bool add_prefix_space, bool use_regex, bool map_bytes) {
  return std::make_unique<ByteLevelPreTokenizer>(add_prefix_space, use_regex, map_bytes);
}

std::unique_ptr<PreTokenizer> make_metaspace_pre_tokenizer(std::string replacement, PrependScheme scheme, bool split) {
  return std::make_unique<MetaspacePreTokenizer>(std::move(replacement), scheme, split);
}

std::unique_ptr<PreTokenizer> make_digits_pre_tokenizer(bool individual_digits) {
  return std::make_unique<MatcherSplit>(make_char_matcher(is_number),
                                        individual_digits ? SplitBehavior::isolated : SplitBehavior::contiguous, false);
}

std::unique_ptr<PreTokenizer> make_punctuation_pre_tokenizer(SplitBehavior behavior) {
  return std::make_unique<MatcherSplit>(make_char_matcher(is_hf_punctuation), behavior, false);
}

std::unique_ptr<PreTokenizer> make_whitespace_pre_tokenizer() {
  // The matches are the pieces; the whitespace between them is dropped.
  return std::make_unique<MatcherSplit>(make_matcher("\\w+|[^\\w\\s]+"), SplitBehavior::removed, true);
}

std::unique_ptr<PreTokenizer> make_whitespace_split_pre_tokenizer() {
  return std::make_unique<MatcherSplit>(make_char_matcher(is_white_space), SplitBehavior::removed, false);
}

std::unique_ptr<PreTokenizer> make_sequence_pre_tokenizer(std::vector<std::unique_ptr<PreTokenizer>> steps) {
  return std::make_unique<SequencePreTokenizer>(std::move(steps));
}

}  // namespace tinker::tokenizer_detail
