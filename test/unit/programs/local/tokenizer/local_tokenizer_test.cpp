// Training determinism of the tiny SentencePiece tokenizer and LocalTokenizer's encode/decode of it.
#include "programs/local/tokenizer/tokenizer_store.hpp"

#include "programs/local/tokenizer/tokenizer_training.hpp"
#include "unit/programs/local/tokenizer/tokenizer_test_support.hpp"

#include <tinker/error.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace tinker::local {
namespace {

using test::corpus_lines;
using test::TempDir;

// One install shared by the tests of this file (installing is tested in tokenizer_store_test).
class LocalTokenizerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    hub_ = new TempDir();
    tokenizer_ = ensure_tiny_tokenizer(hub_->path(), TinyTokenizer::sentencepiece);
  }
  static void TearDownTestSuite() {
    tokenizer_.reset();
    delete hub_;
  }
  static const LocalTokenizer& tokenizer() { return *tokenizer_; }

 private:
  static inline TempDir* hub_ = nullptr;
  static inline std::shared_ptr<const LocalTokenizer> tokenizer_;
};

TEST(TinyTokenizerTraining, TrainingTwiceGivesByteIdenticalModels) {
  const auto start = std::chrono::steady_clock::now();
  const std::string first = detail::train_tiny_sentencepiece_model();
  const auto elapsed = std::chrono::steady_clock::now() - start;
  const std::string second = detail::train_tiny_sentencepiece_model();
  EXPECT_GT(first.size(), 1000u);
  EXPECT_TRUE(first == second) << "sizes " << first.size() << " and " << second.size();
  std::cout << "[ training ] " << std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count()
            << " ms, model " << first.size() << " bytes\n";
}

TEST(TinyTokenizerTraining, CorpusHoldsEveryBundledWorkAsPlainText) {
  const std::string_view corpus = bundled_corpus();
  EXPECT_GT(corpus.size(), 80'000u);
  EXPECT_LT(corpus.size(), 120'000u);
  for (const char* passage : {
           "We hold these truths to be self-evident",                                    // Declaration
           "We the People of the United States, in Order to form a more perfect Union",  // Constitution
           "until an election of Representatives shall have intervened.",                // Amendment XXVII
           "shall not perish from the earth.",                                           // Gettysburg
           "With malice toward none, with charity for all",                              // Second Inaugural
           "Slow but steady wins the race.",                                             // Aesop
           "So long lives this, and this gives life to thee.",                           // Sonnet 18
           "Hope is the thing with feathers",                                            // Dickinson
       }) {
    EXPECT_NE(corpus.find(passage), std::string_view::npos) << passage;
  }
  for (const char c : corpus) ASSERT_TRUE(c == '\n' || (c >= ' ' && c <= '~')) << int(c);  // printable ASCII lines
  EXPECT_EQ(corpus.find("\n\n\n"), std::string_view::npos);
  EXPECT_EQ(corpus.back(), '\n');
}

TEST_F(LocalTokenizerTest, HasTheAdvertisedVocabularyAndSpecialTokens) {
  EXPECT_EQ(tokenizer().vocab_size(), 1024);
  EXPECT_EQ(tokenizer().decode(std::vector<TokenId>{1, 2}), "");  // <s>, </s> are control tokens
  EXPECT_TRUE(tokenizer().encode("").empty());
  EXPECT_EQ(tokenizer().decode({}), "");
}

TEST_F(LocalTokenizerTest, RoundTripsEveryCorpusLineAndTheWholeCorpus) {
  for (const std::string& line : corpus_lines()) {
    EXPECT_EQ(tokenizer().decode(tokenizer().encode(line)), line);
  }
  const std::string corpus(bundled_corpus());
  const auto tokens = tokenizer().encode(corpus);
  EXPECT_EQ(tokenizer().decode(tokens), corpus);
  // It learned the corpus: more than two bytes per token (byte pieces alone give one).
  EXPECT_LT(tokens.size() * 2, corpus.size()) << tokens.size() << " tokens";
}

TEST_F(LocalTokenizerTest, RoundTripsArbitraryUtf8ThroughByteFallback) {
  const std::vector<std::string> texts{
      "Gr\xC3\xBC\xC3\x9F"
      "e, \xE6\x9D\xB1\xE4\xBA\xAC! \xF0\x9F\x99\x82 na\xC3\xAFve caf\xC3\xA9",
      "  leading spaces, trailing  double  spaces  ",
      "tabs\tand\nnewlines\r\n and control \x01\x7F bytes",
      " \xE2\x80\x94 em dash, 12345 digits, {\"json\": [1, 2]}",
      std::string("embedded\0NUL", 12),
  };
  for (const std::string& text : texts) EXPECT_EQ(tokenizer().decode(tokenizer().encode(text)), text);

  // A character the corpus never showed is spelled in byte pieces (ids 3..258), one per byte.
  const auto tokens = tokenizer().encode("\xE6\x9D\xB1");
  ASSERT_EQ(tokens.size(), 3u);
  for (const TokenId token : tokens) {
    EXPECT_GE(token, 3);
    EXPECT_LT(token, 3 + 256);
  }
}

// True if `text` is well-formed UTF-8 (no overlongs, surrogates or code points past U+10FFFF).
bool is_valid_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    std::size_t length = 0;
    std::uint32_t code_point = 0;
    if (lead < 0x80) {
      ++i;
      continue;
    } else if ((lead & 0xE0) == 0xC0) {
      length = 2;
      code_point = lead & 0x1Fu;
    } else if ((lead & 0xF0) == 0xE0) {
      length = 3;
      code_point = lead & 0x0Fu;
    } else if ((lead & 0xF8) == 0xF0) {
      length = 4;
      code_point = lead & 0x07u;
    } else {
      return false;
    }
    if (i + length > text.size()) return false;
    for (std::size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      code_point = (code_point << 6) | (next & 0x3Fu);
    }
    static constexpr std::uint32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code_point < smallest[length] || code_point > 0x10FFFF || (code_point >= 0xD800 && code_point <= 0xDFFF)) {
      return false;
    }
    i += length;
  }
  return true;
}

TEST_F(LocalTokenizerTest, DecodesAnyTokenSequenceToValidUtf8) {
  // Sampled tokens can split a character's bytes: decoding must still give valid UTF-8 (JSON needs it).
  for (TokenId id = 0; id < tokenizer().vocab_size(); ++id) {
    const std::vector<TokenId> one{id};
    ASSERT_TRUE(is_valid_utf8(tokenizer().decode(one))) << "token " << id;
  }
  const auto bytes = tokenizer().encode("\xE6\x9D\xB1");  // three byte pieces
  ASSERT_EQ(bytes.size(), 3u);
  const std::vector<TokenId> truncated{bytes[0], bytes[1]};
  const std::vector<TokenId> reordered{bytes[2], bytes[0], bytes[1], 300, 3 + 0xFF};
  EXPECT_TRUE(is_valid_utf8(tokenizer().decode(truncated)));
  EXPECT_TRUE(is_valid_utf8(tokenizer().decode(reordered)));
  EXPECT_FALSE(is_valid_utf8("\xE6\x9D"));  // the checker itself rejects a truncated character
}

TEST_F(LocalTokenizerTest, TokensOfConsecutiveChunksConcatenate) {
  // No dummy prefix: "Liberty" encodes the same at the start of a text as after other tokens.
  const auto whole = tokenizer().encode("Liberty and Justice");
  auto pieces = tokenizer().encode("Liberty");
  const auto rest = tokenizer().encode(" and Justice");
  pieces.insert(pieces.end(), rest.begin(), rest.end());
  EXPECT_EQ(tokenizer().decode(pieces), "Liberty and Justice");
  EXPECT_EQ(whole, pieces);
}

TEST_F(LocalTokenizerTest, DecodeRefusesIdsOutsideTheVocabularyNamingThePosition) {
  const std::vector<TokenId> bad{5, 1024};
  try {
    tokenizer().decode(bad);
    ADD_FAILURE() << "no error";
  } catch (const tinker::error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
    EXPECT_NE(std::string(e.what()).find("tokens[1] = 1024"), std::string::npos) << e.what();
  }
  EXPECT_THROW(tokenizer().decode(std::vector<TokenId>{-1}), tinker::error);
}

TEST_F(LocalTokenizerTest, EncodesAndDecodesFromManyThreadsAtOnce) {
  const std::vector<std::string> lines = corpus_lines();
  std::vector<std::vector<TokenId>> expected;
  for (const auto& line : lines) expected.push_back(tokenizer().encode(line));

  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t i = static_cast<std::size_t>(t); i < lines.size(); i += 2) {
        if (tokenizer().encode(lines[i]) != expected[i]) ++mismatches[t];
        if (tokenizer().decode(expected[i]) != lines[i]) ++mismatches[t];
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

}  // namespace
}  // namespace tinker::local
