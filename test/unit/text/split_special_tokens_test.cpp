// EncodeOptions::split_special_tokens on the tiktoken and SentencePiece backends (the
// tokenizer.json backend: test/unit/text/hf/hf_split_special_test.cpp). tiktoken: no special token
// is matched, as tiktoken's encode_ordinary (npm `tiktoken`, run at test time). SentencePiece:
// nothing changes, as SentencePiece never matches a control piece written in the text.
#include <tinker/tokenizer.hpp>

#include "support/tokenizer_reference.hpp"
#include "support/tokenizer_test_support.hpp"

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace tinker {
namespace {

std::vector<std::vector<TokenId>> split_special_tiktoken_ids(const std::vector<std::string>& args) {
  std::vector<std::vector<TokenId>> out;
  for (const std::string& line : test::run_node_script(test::reference_script("tiktoken_reference.js"), args)) {
    const boost::json::value parsed = boost::json::parse(line);
    std::vector<TokenId> ids;
    for (const auto& id : parsed.as_array()) {
      ids.push_back(static_cast<TokenId>(id.to_number<std::int64_t>()));
    }
    out.push_back(std::move(ids));
  }
  return out;
}

// cl100k's special tokens alone, inside words, twice in a row, cut short, and the corpus.
std::vector<std::string> split_special_tiktoken_cases() {
  std::vector<std::string> cases;
  const TiktokenOptions options = TiktokenOptions::cl100k_base();
  for (const auto& named : options.special_tokens) {
    const std::string& special = named.first;
    cases.push_back(special);
    cases.push_back("a" + special + "b");
    cases.push_back(" " + special + special + "\n");
    cases.push_back(special.substr(0, special.size() - 2) + " " + special);
  }
  const auto corpus = test::read_corpus(test::corpus_file("corpus.txt"));
  cases.insert(cases.end(), corpus.begin(), corpus.end());
  return cases;
}

TEST(SplitSpecialTokens, TiktokenEncodesSpecialTokenTextAsOrdinaryText) {
  test::TempDir dir;
  const auto ranks = dir.path() / "cl100k_base.tiktoken";
  test::run_node_script(test::reference_script("tiktoken_reference.js"), {"ranks", "cl100k_base", ranks.string()});
  const auto tokenizer = load_tiktoken_tokenizer(ranks, "cl100k_base", TiktokenOptions::cl100k_base());
  const auto cases = split_special_tiktoken_cases();
  const test::CasesFile cases_file(cases);
  const auto ordinary = split_special_tiktoken_ids({"encode_ordinary", "cl100k_base", cases_file.path().string()});
  const auto all_special = split_special_tiktoken_ids({"encode", "cl100k_base", cases_file.path().string()});
  ASSERT_EQ(ordinary.size(), cases.size());
  ASSERT_EQ(all_special.size(), cases.size());
  std::size_t differing = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto split = tokenizer->encode(cases[i], EncodeOptions::split_special());
    EXPECT_EQ(split, ordinary[i]) << "case " << i << ": " << cases[i];
    EXPECT_EQ(tokenizer->encode(cases[i]), all_special[i]) << "case " << i << ": " << cases[i];
    EXPECT_EQ(tokenizer->decode(split), cases[i]) << "case " << i;
    if (ordinary[i] != all_special[i]) ++differing;
  }
  EXPECT_GE(differing, 20U);  // every case written with a special token
  const auto batch = tokenizer->encode_batch(cases, EncodeOptions::split_special(), 2);
  ASSERT_EQ(batch.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(batch[i], ordinary[i]) << "batch item " << i;
}

// The tiny model's control pieces (<s> 1, </s> 2, <pad> 3) written in the text are characters
// whatever the option says; with add_special_tokens the BOS is still added.
TEST(SplitSpecialTokens, SentencePieceIsUnchanged) {
  test::TempDir dir;
  const auto file = dir.path() / "tokenizer.model";
  test::write_file(file, test::tiny_model_bytes());
  const auto tokenizer = load_sentencepiece_tokenizer(file, "test/tiny");
  for (const std::string text : {"<s>the model reads</s>", "a <pad> b <unk>", "the model reads"}) {
    const auto plain = tokenizer->encode(text);
    EXPECT_EQ(tokenizer->encode(text, EncodeOptions::split_special()), plain) << text;
    for (const TokenId id : plain) EXPECT_FALSE(id >= 1 && id <= 3) << text << ": id " << id;
    EncodeOptions with_bos = EncodeOptions::split_special();
    with_bos.add_special_tokens = true;
    EXPECT_EQ(tokenizer->encode(text, with_bos), tokenizer->encode(text, true)) << text;
  }
}

}  // namespace
}  // namespace tinker
