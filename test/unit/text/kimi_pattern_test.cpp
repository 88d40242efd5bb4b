// Kimi's split pattern: the PCRE2 rewrite tinker runs (TiktokenOptions::kimi_k2(), the class
// intersections as lookaheads) against the model's own pattern run by V8's RegExp, which has class
// intersection (test/tokenizer_reference/kimi_pattern_reference.js), piece for piece, on the
// tokenizer corpus and on the text the intersections are about: Han next to other letters, Han
// punctuation and marks (some Common or Inherited, some Han), combining marks, digit runs and
// contractions. (tiktoken_tokenizer_test.cpp compares the ids against tiktoken's own engine.)
#include "support/kimi_tokenizer.hpp"
#include "support/tokenizer_reference.hpp"
#include "support/tokenizer_test_support.hpp"
#include "text/matcher.hpp"

#include <tinker/tokenizer.hpp>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include <string>
#include <vector>

namespace tinker::tokenizer_detail {
namespace {

using KimiPieces = std::vector<std::string>;

KimiPieces kimi_pieces(const Matcher& matcher, std::string_view text) {
  std::vector<MatchRange> matches;
  matcher.find_all(text, matches);
  KimiPieces pieces;
  for (const auto& [begin, end] : matches) pieces.emplace_back(text.substr(begin, end - begin));
  return pieces;
}

// What the reference splits each case into.
std::vector<KimiPieces> kimi_reference_pieces(const std::vector<std::string>& cases) {
  const test::TempDir dir;
  test::write_file(dir.path() / "kimi_pattern.txt", test::kimi_original_pattern());
  const test::CasesFile cases_file(cases);
  std::vector<KimiPieces> out;
  for (const std::string& line :
       test::run_node_script(test::reference_script("kimi_pattern_reference.js"),
                             {(dir.path() / "kimi_pattern.txt").string(), cases_file.path().string()})) {
    const boost::json::value parsed = boost::json::parse(line);
    KimiPieces pieces;
    for (const auto& piece : parsed.as_array()) pieces.emplace_back(piece.as_string());
    out.push_back(std::move(pieces));
  }
  return out;
}

// Text where the intersections decide the pieces.
const std::vector<std::string> kimi_pattern_cases = {
    // Han next to Latin, Cyrillic, Greek, kana and Hangul (letters that are not Han).
    "Hello世界World",
    "中文English混合text测试",
    "Привет世界мир",
    "αβγ漢字δ",
    "日本語のテキストとカタカナ",
    "한국어漢字텍스트",
    "GPT4模型v2",
    "iPhone手机HTTPServer",
    "「引用」と『書名』",
    " 漢字 漢字  漢字\n漢字",
    // Han punctuation: Common, though its Script_Extensions include Han (PCRE2's \p{Han}).
    "我爱北京。你好，世界！",
    "一、二、三：四；五？",
    "（括号）【方括号】《书名》",
    "漢字……漢字——漢字",
    // Han that is not a letter (U+3007 a number, U+2E80 and U+2F00 symbols), Han letters of
    // category Lm (U+3005, U+303B), Common U+3006 and U+30FC, and Han beyond the BMP.
    "々〆〇〻",
    "人々は〇〇へ",
    "⺀⼀漢",
    "ラーメン漢字ー",
    "𠀀𠀁𪚥字",
    // Combining marks: Inherited script, so letters here, after Latin and after Han.
    "e\u0301cole cafe\u0301 nai\u0308ve",
    "漢\u0301字",
    "\u0301start",
    "a\u0300\u0301\u0302b",
    "Ǆǅǆ ǅungla",
    // Digits: runs of at most three, in any script.
    "12345678",
    "٠١٢٣٤٥",
    "１２３４",
    "v1.2.3 2024年12月31日",
    "一二三四五六七",
    // Contractions, in any case, and the long s that folds to "s".
    "I'm don't WE'LL she'd THEY'RE you've 'S",
    "it'ſ O'Neil rock'n'roll",
    "漢字's 中文'LL",
    // Spaces and line breaks between scripts.
    "漢字\u3000漢字\u00a0ok\u0085x",
    "行一\n\n  行二\r\n",
    "word  \t漢字   ",
};

TEST(KimiPattern, TheRewriteSplitsAsTheModelsPattern) {
  const auto matcher = make_matcher(TiktokenOptions::kimi_k2().pattern);
  std::vector<std::string> cases = test::read_corpus(test::corpus_file("corpus.txt"));
  const auto multiline = test::read_escaped_corpus(test::corpus_file("corpus_multiline.txt"));
  cases.insert(cases.end(), multiline.begin(), multiline.end());
  cases.insert(cases.end(), kimi_pattern_cases.begin(), kimi_pattern_cases.end());
  const std::vector<KimiPieces> expected = kimi_reference_pieces(cases);
  ASSERT_EQ(expected.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(kimi_pieces(*matcher, cases[i]), expected[i]) << "case " << i << ": " << cases[i];
  }
}

// A few splits written out, so what the pattern does is readable here.
TEST(KimiPattern, HanIsAPieceOfItsOwn) {
  const auto matcher = make_matcher(TiktokenOptions::kimi_k2().pattern);
  EXPECT_EQ(kimi_pieces(*matcher, "Hello世界World"), (KimiPieces{"Hello", "世界", "World"}));
  EXPECT_EQ(kimi_pieces(*matcher, "我爱北京。你好！"), (KimiPieces{"我爱北京", "。", "你好", "！"}));
  EXPECT_EQ(kimi_pieces(*matcher, "e\u0301cole 漢\u0301字"), (KimiPieces{"e\u0301cole", " ", "漢", "\u0301", "字"}));
  EXPECT_EQ(kimi_pieces(*matcher, "I'LL 12345"), (KimiPieces{"I'LL", " ", "123", "45"}));
}

}  // namespace
}  // namespace tinker::tokenizer_detail
