// Hand-written scanners for the GPT-4-style split patterns the served models use, and
// make_matcher, which picks one when the pattern text is exactly one they implement.
//
// Each scanner walks the text once, classifying each code point (ASCII from a table, the rest from
// utf8proc's general categories) and reproducing the regex's leftmost-first alternation,
// including its backtracking, by hand. `\s` is Unicode White_Space, as in Oniguruma and Rust's
// regex (and in make_regex_matcher, which rewrites `\s` to that set). The tests check the scanners
// against make_regex_matcher on a corpus and on random strings.
#include "text/matcher.hpp"
#include "text/patterns.hpp"
#include "text/unicode.hpp"

#include <utf8proc.h>

#include <array>

namespace tinker::tokenizer_detail {

namespace {

// Character classes the patterns use, one bit each.
enum ClassBit : std::uint8_t {
  kUpper = 1,        // Lu, Lt
  kLower = 2,        // Ll
  kOtherLetter = 4,  // Lm, Lo
  kMark = 8,         // Mn, Mc, Me
  kNumber = 16,      // Nd, Nl, No
  kSpace = 32,       // White_Space
  kNewline = 64,     // \r, \n
};
constexpr std::uint8_t kLetter = kUpper | kLower | kOtherLetter;
// o200k's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] and [\p{Ll}\p{Lm}\p{Lo}\p{M}].
constexpr std::uint8_t kUpperish = kUpper | kOtherLetter | kMark;
constexpr std::uint8_t kLowerish = kLower | kOtherLetter | kMark;

std::uint8_t classify_non_ascii(char32_t c) {
  std::uint8_t bits = is_white_space(c) ? kSpace : 0;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LT: bits |= kUpper; break;
    case UTF8PROC_CATEGORY_LL: bits |= kLower; break;
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO: bits |= kOtherLetter; break;
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME: bits |= kMark; break;
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO: bits |= kNumber; break;
    default: break;
  }
  return bits;
}

class AsciiClasses {
 public:
  AsciiClasses() {
    for (char32_t c = 0; c < 128; ++c) {
      std::uint8_t bits = 0;
      if (c >= 'A' && c <= 'Z') bits = kUpper;
      if (c >= 'a' && c <= 'z') bits = kLower;
      if (c >= '0' && c <= '9') bits = kNumber;
      if (is_white_space(c)) bits = kSpace;
      if (c == '\r' || c == '\n') bits = kSpace | kNewline;
      table[c] = bits;
    }
  }
  std::array<std::uint8_t, 128> table{};
};

const AsciiClasses kAscii;

// The text as code points with their classes and byte offsets (offsets has one more entry: the
// end). Per thread, so scanning allocates only when a longer text comes.
class Decoded {
 public:
  void decode(std::string_view text) {
    cps.clear();
    classes.clear();
    offsets.clear();
    for (std::size_t pos = 0; pos < text.size();) {
      const auto byte = static_cast<unsigned char>(text[pos]);
      offsets.push_back(static_cast<std::uint32_t>(pos));
      if (byte < 0x80) {
        cps.push_back(byte);
        classes.push_back(kAscii.table[byte]);
        ++pos;
        continue;
      }
      const auto [c, length] = decode_utf8_at(text, pos);
      cps.push_back(c);
      classes.push_back(classify_non_ascii(c));
      pos += length;
    }
    offsets.push_back(static_cast<std::uint32_t>(text.size()));
  }
  std::size_t size() const noexcept { return cps.size(); }

  std::vector<char32_t> cps;
  std::vector<std::uint8_t> classes;
  std::vector<std::uint32_t> offsets;
};

// The scanning state shared by the patterns: the decoded text and the run helpers.
class Scan {
 public:
  explicit Scan(const Decoded& d) : cps(d.cps), classes(d.classes), n(d.size()) {}

  bool has(std::size_t i, std::uint8_t bits) const noexcept { return i < n && (classes[i] & bits) != 0; }
  // [^\s\p{L}\p{N}]
  bool is_other(std::size_t i) const noexcept { return i < n && (classes[i] & (kSpace | kLetter | kNumber)) == 0; }
  // [^\r\n\p{L}\p{N}]
  bool is_prefix(std::size_t i) const noexcept { return i < n && (classes[i] & (kNewline | kLetter | kNumber)) == 0; }

  std::size_t run(std::size_t i, std::uint8_t bits) const noexcept {
    while (has(i, bits)) ++i;
    return i;
  }
  std::size_t other_run(std::size_t i) const noexcept {
    while (is_other(i)) ++i;
    return i;
  }

  // (?i:'s|'t|'re|'ve|'m|'ll|'d) at i: its length, or 0. Case-insensitive matching is Unicode's:
  // 's' also matches U+017F LATIN SMALL LETTER LONG S.
  std::size_t contraction(std::size_t i) const noexcept {
    if (i + 1 >= n || cps[i] != '\'') return 0;
    const auto lower = [&](std::size_t j) -> char32_t {
      if (j >= n) return 0;
      const char32_t c = cps[j];
      if (c >= 'A' && c <= 'Z') return c - 'A' + 'a';
      return c == 0x17F ? U's' : c;
    };
    switch (lower(i + 1)) {
      case 's':
      case 't':
      case 'm':
      case 'd': return 2;
      case 'r':
      case 'v': return lower(i + 2) == 'e' ? 3 : 0;
      case 'l': return lower(i + 2) == 'l' ? 3 : 0;
      default: return 0;
    }
  }

  // \s*[\r\n]+ | \s+(?!\S) | \s+ at a whitespace character i: the end of the match.
  std::size_t whitespace(std::size_t i) const noexcept {
    const std::size_t end = run(i, kSpace);
    for (std::size_t j = end; j > i; --j) {
      if (has(j - 1, kNewline)) return j;  // \s*[\r\n]+ backs off to the last line break
    }
    if (end == n || end - i == 1) return end;  // \s+(?!\S) at the end, or \s+
    return end - 1;                            // \s+(?!\S) leaves the last space to the next word
  }

  const std::vector<char32_t>& cps;
  const std::vector<std::uint8_t>& classes;
  std::size_t n;
};

// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,max_digits}| ?[^\s\p{L}\p{N}]+[\r\n]*|
// \s*[\r\n]+|\s+(?!\S)|\s+   (Qwen3 with max_digits 1; cl100k_base and Llama 3 with 3)
std::size_t cl100k_next(const Scan& s, std::size_t i, std::size_t max_digits) {
  if (const std::size_t length = s.contraction(i)) return i + length;
  if (s.has(i, kLetter)) return s.run(i, kLetter);
  if (s.is_prefix(i) && s.has(i + 1, kLetter)) return s.run(i + 1, kLetter);
  if (s.has(i, kNumber)) {
    std::size_t end = i + 1;
    while (end - i < max_digits && s.has(end, kNumber)) ++end;
    return end;
  }
  const std::size_t start = s.cps[i] == ' ' && s.is_other(i + 1) ? i + 1 : i;
  if (s.is_other(start)) return s.run(s.other_run(start), kNewline);
  return s.whitespace(i);
}

// o200k_base / gpt-oss:
// [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:contractions)?|
// [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:contractions)?|
// \p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
class O200k {
 public:
  explicit O200k(const Scan& scan) : s(scan) {}

  std::size_t next(std::size_t i) const {
    // The optional prefix is tried first; without it the words may start at i only when i is a
    // mark (a mark is both a possible prefix and part of the words).
    const bool prefix = s.is_prefix(i);
    const bool bare = !prefix || s.has(i, kMark);
    if (prefix) {
      if (const std::size_t end = upper_then_lower(i + 1)) return end;
    }
    if (bare) {
      if (const std::size_t end = upper_then_lower(i)) return end;
    }
    if (prefix) {
      if (const std::size_t end = upper_first(i + 1)) return end;
    }
    if (bare) {
      if (const std::size_t end = upper_first(i)) return end;
    }
    if (s.has(i, kNumber)) {
      std::size_t end = i + 1;
      while (end - i < 3 && s.has(end, kNumber)) ++end;
      return end;
    }
    const std::size_t start = s.cps[i] == ' ' && s.is_other(i + 1) ? i + 1 : i;
    if (s.is_other(start)) {
      std::size_t end = s.other_run(start);
      while (end < s.n && (s.has(end, kNewline) || s.cps[end] == '/')) ++end;
      return end;
    }
    return s.whitespace(i);
  }

 private:
  // [upper-ish]*[lower-ish]+ then an optional contraction, from `from`; 0 when it does not match.
  std::size_t upper_then_lower(std::size_t from) const {
    const std::size_t uppers = s.run(from, kUpperish);
    std::size_t end = 0;
    if (s.has(uppers, kLowerish)) {
      end = s.run(uppers, kLowerish);
    } else {
      // Backtracking: the last upper-ish character that is also lower-ish ends the match.
      for (std::size_t j = uppers; j > from; --j) {
        if (s.has(j - 1, kLowerish)) {
          end = j;
          break;
        }
      }
      if (end == 0) return 0;
    }
    return end + s.contraction(end);
  }

  // [upper-ish]+[lower-ish]* then an optional contraction, from `from`; 0 when it does not match.
  std::size_t upper_first(std::size_t from) const {
    const std::size_t uppers = s.run(from, kUpperish);
    if (uppers == from) return 0;
    const std::size_t end = s.run(uppers, kLowerish);
    return end + s.contraction(end);
  }

  const Scan& s;
};

enum class ScannerKind { qwen3, cl100k, o200k };

class ScannerMatcher final : public Matcher {
 public:
  explicit ScannerMatcher(ScannerKind kind) : kind_(kind) {}

  void find_all(std::string_view text, std::vector<MatchRange>& matches) const override {
    thread_local Decoded decoded;
    decoded.decode(text);
    const Scan scan(decoded);
    const O200k o200k(scan);
    for (std::size_t i = 0; i < scan.n;) {
      std::size_t end = 0;
      switch (kind_) {
        case ScannerKind::qwen3: end = cl100k_next(scan, i, 1); break;
        case ScannerKind::cl100k: end = cl100k_next(scan, i, 3); break;
        case ScannerKind::o200k: end = o200k.next(i); break;
      }
      matches.emplace_back(decoded.offsets[i], decoded.offsets[end]);
      i = end;
    }
  }

  std::string_view engine() const noexcept override {
    switch (kind_) {
      case ScannerKind::qwen3: return "scanner:qwen3";
      case ScannerKind::cl100k: return "scanner:cl100k";
      case ScannerKind::o200k: return "scanner:o200k";
    }
    return "scanner";
  }

 private:
  ScannerKind kind_;
};

}  // namespace

std::unique_ptr<Matcher> make_matcher(std::string_view pattern) {
  if (pattern == patterns::qwen3) return std::make_unique<ScannerMatcher>(ScannerKind::qwen3);
  if (pattern == patterns::cl100k) return std::make_unique<ScannerMatcher>(ScannerKind::cl100k);
  if (pattern == patterns::o200k) return std::make_unique<ScannerMatcher>(ScannerKind::o200k);
  return make_regex_matcher(pattern);
}

}  // namespace tinker::tokenizer_detail
