// The scanners against PCRE2 (make_regex_matcher) on the shared corpus and on random strings, and
// PCRE2's own behaviour on the served patterns.
#include <utf8proc.h>

#include "support/tokenizer_reference.hpp"
#include "text/matcher.hpp"
#include "text/patterns.hpp"
#include "text/unicode.hpp"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

namespace tinker::tokenizer_detail {
namespace {

const std::string kQwen3(patterns::qwen3);
const std::string kCl100k(patterns::cl100k);
const std::string kO200k(patterns::o200k);

std::vector<std::string> pieces(const Matcher& matcher, std::string_view text) {
  std::vector<MatchRange> matches;
  matcher.find_all(text, matches);
  std::vector<std::string> out;
  for (const auto& [begin, end] : matches) out.emplace_back(text.substr(begin, end - begin));
  return out;
}

using Strings = std::vector<std::string>;

TEST(TextMatcher, MakeMatcherPicksTheScannersOnlyForTheirExactPatterns) {
  EXPECT_EQ(make_matcher(kQwen3)->engine(), "scanner:qwen3");
  EXPECT_EQ(make_matcher(kCl100k)->engine(), "scanner:cl100k");
  EXPECT_EQ(make_matcher(kO200k)->engine(), "scanner:o200k");
  EXPECT_EQ(make_matcher(kQwen3 + "|x")->engine(), "pcre2");
  EXPECT_EQ(make_regex_matcher(kQwen3)->engine(), "pcre2");
}

TEST(TextMatcher, RegexSemanticsOfTheServedPatterns) {
  const auto qwen3 = make_regex_matcher(kQwen3);
  EXPECT_EQ(pieces(*qwen3, "Hello world's 1234!!\n\n  x"),
            (Strings{"Hello", " world", "'s", " ", "1", "2", "3", "4", "!!\n\n", " ", " x"}));
  EXPECT_EQ(pieces(*qwen3, "I'LL 'Sam \xC5\xBFx"), (Strings{"I", "'LL", " '", "Sam", " \xC5\xBFx"}));
  EXPECT_EQ(pieces(*qwen3, "a  \n\n  b\t"), (Strings{"a", "  \n\n", " ", " b", "\t"}));
  // \s is Unicode White_Space as in Oniguruma: U+180E is not a space, U+3000 is.
  EXPECT_EQ(pieces(*qwen3,
                   "a\xE1\xA0\x8E"
                   "b"),
            (Strings{"a",
                     "\xE1\xA0\x8E"
                     "b"}));
  EXPECT_EQ(pieces(*qwen3,
                   "a\xE3\x80\x80\xE3\x80\x80"
                   "b"),
            (Strings{"a", "\xE3\x80\x80",
                     "\xE3\x80\x80"
                     "b"}));
  const auto cl100k = make_regex_matcher(kCl100k);
  EXPECT_EQ(pieces(*cl100k, "12345 x"), (Strings{"123", "45", " x"}));
  const auto o200k = make_regex_matcher(kO200k);
  EXPECT_EQ(pieces(*o200k, "HelloWorld ABCdef they're //x\n"),
            (Strings{"Hello", "World", " ABCdef", " they're", " //", "x", "\n"}));
  // DeepSeek V3: literal CJK ranges and a class holding raw CR and LF.
  const auto cjk = make_regex_matcher("[一-龥぀-ゟ゠-ヿ]+");
  EXPECT_EQ(pieces(*cjk, "ab日本語cdカタカナ"), (Strings{"日本語", "カタカナ"}));
  const auto deepseek = make_regex_matcher("[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*");
  EXPECT_EQ(pieces(*deepseek, " word!!\n"), (Strings{" word", "!!\n"}));
}

TEST(TextMatcher, EmptyMatchesAreSkippedAndLiteralsFound) {
  EXPECT_EQ(pieces(*make_regex_matcher("x*"), "axxbx"), (Strings{"xx", "x"}));
  EXPECT_EQ(pieces(*make_literal_matcher("ab"), "abababa"), (Strings{"ab", "ab", "ab"}));
  EXPECT_TRUE(pieces(*make_literal_matcher(""), "abc").empty());
}

TEST(TextMatcher, BadPatternAndMatchLimitFailCleanly) {
  EXPECT_THROW(make_regex_matcher("[a-"), std::exception);
  // Catastrophic backtracking hits PCRE2's match limit: an error, not a hang or a crash.
  const auto matcher = make_regex_matcher("(a+)+$");
  std::vector<MatchRange> matches;
  EXPECT_THROW(matcher->find_all(std::string(40, 'a') + "b", matches), std::exception);
}

// Code points where PCRE2 and utf8proc disagree on a class the scanners use. PCRE2 10.42 has
// Unicode 14 data, utf8proc 2.8 Unicode 15: every difference must be a code point PCRE2 still
// calls unassigned.
bool utf8proc_in_class(std::string_view cls, char32_t c) {
  const int category = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  if (cls == "\\p{L}") return category >= UTF8PROC_CATEGORY_LU && category <= UTF8PROC_CATEGORY_LO;
  if (cls == "\\p{N}") return category >= UTF8PROC_CATEGORY_ND && category <= UTF8PROC_CATEGORY_NO;
  if (cls == "\\p{Lu}\\p{Lt}") return category == UTF8PROC_CATEGORY_LU || category == UTF8PROC_CATEGORY_LT;
  if (cls == "\\p{Ll}") return category == UTF8PROC_CATEGORY_LL;
  if (cls == "\\p{Lm}\\p{Lo}") return category == UTF8PROC_CATEGORY_LM || category == UTF8PROC_CATEGORY_LO;
  if (cls == "\\p{M}") return category >= UTF8PROC_CATEGORY_MN && category <= UTF8PROC_CATEGORY_ME;
  return is_white_space(c);  // "\\s"
}

// Every code point once, in order, as one text; PCRE2 finds a class's members in one pass.
std::set<char32_t> class_disagreements() {
  std::string all;
  std::vector<char32_t> at_offset(0x110000 * 4 + 1, 0);
  for (char32_t c = 0; c < 0x110000; ++c) {
    if (c >= 0xD800 && c < 0xE000) continue;
    at_offset[all.size()] = c;
    append_utf8(all, c);
  }
  std::set<char32_t> differing;
  for (const std::string_view cls :
       {"\\p{L}", "\\p{N}", "\\p{Lu}\\p{Lt}", "\\p{Ll}", "\\p{Lm}\\p{Lo}", "\\p{M}", "\\s"}) {
    std::vector<MatchRange> matches;
    make_regex_matcher("[" + std::string(cls) + "]")->find_all(all, matches);
    std::vector<bool> in_pcre2(0x110000, false);
    for (const auto& match : matches) in_pcre2[at_offset[match.first]] = true;
    for (char32_t c = 0; c < 0x110000; ++c) {
      if (c >= 0xD800 && c < 0xE000) continue;
      if (utf8proc_in_class(cls, c) != in_pcre2[c]) differing.insert(c);
    }
  }
  return differing;
}

const std::set<char32_t>& disagreements() {
  static const std::set<char32_t> set = class_disagreements();
  return set;
}

TEST(TextMatcher, UnicodeClassesDifferOnlyOnCodePointsNewerThanPcre2) {
  const auto unassigned = make_regex_matcher("\\p{Cn}");
  for (const char32_t c : disagreements()) {
    std::string text;
    append_utf8(text, c);
    std::vector<MatchRange> matches;
    unassigned->find_all(text, matches);
    EXPECT_EQ(matches.size(), 1U) << "U+" << std::hex << static_cast<unsigned>(c)
                                  << " is assigned in PCRE2 but classified differently by utf8proc";
  }
  EXPECT_LT(disagreements().size(), 5000U);  // Unicode 15.0 added 4,489 characters
}

void expect_same_matches(const Matcher& scanner, const Matcher& regex, const std::string& text) {
  std::vector<MatchRange> expected, actual;
  regex.find_all(text, expected);
  scanner.find_all(text, actual);
  ASSERT_EQ(actual, expected) << scanner.engine() << " on \"" << text << "\"";
}

std::vector<std::string> all_corpus_cases() {
  auto cases = test::read_corpus(test::corpus_file("corpus.txt"));
  const auto multiline = test::read_escaped_corpus(test::corpus_file("corpus_multiline.txt"));
  cases.insert(cases.end(), multiline.begin(), multiline.end());
  return cases;
}

TEST(TextMatcher, ScannersEqualPcre2OnTheCorpus) {
  const auto cases = all_corpus_cases();
  ASSERT_GT(cases.size(), 300U);
  for (const std::string& pattern : {kQwen3, kCl100k, kO200k}) {
    const auto scanner = make_matcher(pattern);
    const auto regex = make_regex_matcher(pattern);
    ASSERT_NE(scanner->engine(), "pcre2");
    for (const std::string& text : cases) expect_same_matches(*scanner, *regex, text);
  }
}

// Random strings mixing every class the patterns distinguish, with the pieces that make the
// alternatives and their backtracking interact (contractions, spaces before punctuation, marks
// after letters, runs of line breaks).
class RandomText {
 public:
  explicit RandomText(std::uint32_t seed) : random_(seed) {}

  std::string next() {
    std::string text;
    const int length = std::uniform_int_distribution<int>(0, 24)(random_);
    for (int i = 0; i < length; ++i) append_one(text);
    return text;
  }

 private:
  void append_one(std::string& text) {
    static const std::vector<std::string> atoms = {"a",
                                                   "Z",
                                                   "s",
                                                   "S",
                                                   "t",
                                                   "re",
                                                   "VE",
                                                   "m",
                                                   "ll",
                                                   "D",
                                                   "'",
                                                   "'",
                                                   " ",
                                                   " ",
                                                   "  ",
                                                   "\t",
                                                   "\r",
                                                   "\n",
                                                   "\r\n",
                                                   "\n\n",
                                                   "0",
                                                   "7",
                                                   "!",
                                                   "/",
                                                   "-",
                                                   ".",
                                                   "\"",
                                                   "\xC5\xBF" /* ſ */,
                                                   "\xC3\xA9",
                                                   "\xC3\x89",
                                                   "\xCC\x81" /* mark */,
                                                   "\xE0\xA4\x95" /* क */,
                                                   "\xE0\xA4\xBF" /* Mc */,
                                                   "\xC7\x85" /* Lt */,
                                                   "\xCA\xB0" /* Lm */,
                                                   "\xCE\xA3",
                                                   "\xCF\x83",
                                                   "\xE6\x97\xA5",
                                                   "\xE3\x81\x82",
                                                   "\xD9\xA3" /* Arabic 3 */,
                                                   "\xC2\xBD",
                                                   "\xE2\x85\xA3",
                                                   "\xC2\xA0",
                                                   "\xE3\x80\x80",
                                                   "\xE2\x80\xA8",
                                                   "\xC2\x85",
                                                   "\xE1\xA0\x8E" /* U+180E */,
                                                   "\xE2\x80\x8D" /* ZWJ */,
                                                   "\xF0\x9F\x91\x8D",
                                                   "\xF0\x9F\x8F\xBD",
                                                   "\xF0\x9D\x90\x80" /* math bold A */,
                                                   "\xC2\xAB",
                                                   "\xE2\x82\xAC"};
    if (std::uniform_int_distribution<int>(0, 9)(random_) < 8) {
      text += atoms[std::uniform_int_distribution<std::size_t>(0, atoms.size() - 1)(random_)];
      return;
    }
    // Any code point both libraries classify the same way (see the test above).
    for (;;) {
      const auto c = static_cast<char32_t>(std::uniform_int_distribution<std::uint32_t>(0, 0x10FFFF)(random_));
      if ((c >= 0xD800 && c < 0xE000) || disagreements().count(c) != 0) continue;
      append_utf8(text, c);
      return;
    }
  }

  std::mt19937 random_;
};

TEST(TextMatcher, ScannersEqualPcre2OnRandomStrings) {
  for (const std::string& pattern : {kQwen3, kCl100k, kO200k}) {
    const auto scanner = make_matcher(pattern);
    const auto regex = make_regex_matcher(pattern);
    RandomText random(12345);
    for (int i = 0; i < 100000; ++i) {
      expect_same_matches(*scanner, *regex, random.next());
      if (HasFatalFailure()) return;
    }
  }
}

}  // namespace
}  // namespace tinker::tokenizer_detail
