// The byte-level BPE trainer (determinism, tie-breaking, merges reusing a token) and the
// tokenizer.json it writes: installed in the hub layout, loaded by the SDK's tokenizer.json
// backend, it round-trips the corpus and any UTF-8, and its special tokens are special.
#include "programs/local/tokenizer/bpe_training.hpp"

#include "programs/local/tokenizer/tokenizer_store.hpp"
#include "programs/local/tokenizer/tokenizer_training.hpp"
#include "unit/programs/local/tokenizer/tokenizer_test_support.hpp"

#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include <chrono>
#include <iostream>
#include <map>

namespace tinker::local {
namespace {

namespace fs = std::filesystem;
using test::corpus_lines;
using test::read_bytes;
using test::TempDir;

using Merge = std::pair<std::string, std::string>;

TEST(ByteLevelBpeTrainer, TrainingTwiceGivesByteIdenticalFiles) {
  const std::vector<std::string> specials{"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
  const auto start = std::chrono::steady_clock::now();
  const detail::ByteLevelBpe first = detail::train_byte_level_bpe(bundled_corpus(), 1024, specials);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  const detail::ByteLevelBpe second = detail::train_byte_level_bpe(bundled_corpus(), 1024, specials);
  EXPECT_EQ(first.vocab_size(), 1024);
  EXPECT_EQ(first.tokens.size(), 1021u);
  EXPECT_EQ(first.merges, second.merges);
  EXPECT_TRUE(detail::bpe_tokenizer_json(first) == detail::bpe_tokenizer_json(second));
  EXPECT_TRUE(detail::bpe_tokenizer_config_json(first, "f") == detail::bpe_tokenizer_config_json(second, "f"));
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count();
  std::cout << "[ training ] " << ms << " ms, " << first.merges.size() << " merges\n";
}

TEST(ByteLevelBpeTrainer, StartsFromTheBytesInGpt2OrderAndGrowsByMerges) {
  const detail::ByteLevelBpe& bpe = detail::tiny_byte_level_bpe();
  EXPECT_EQ(bpe.tokens[0], "!");
  EXPECT_EQ(bpe.tokens[93], "~");
  EXPECT_EQ(bpe.tokens[94], "\xA1");
  EXPECT_EQ(bpe.tokens[188], std::string(1, '\0'));
  EXPECT_EQ(bpe.tokens[188 + 32], " ");
  for (std::size_t id = 0; id < 256; ++id) EXPECT_EQ(bpe.tokens[id].size(), 1u) << id;
  for (std::size_t id = 256; id < bpe.tokens.size(); ++id) EXPECT_GT(bpe.tokens[id].size(), 1u) << id;
  // Every learned token is the text of a merge, the merges in the order the tokens appeared.
  std::size_t next = 256;
  for (const auto& [left, right] : bpe.merges) {
    if (next < bpe.tokens.size() && bpe.tokens[next] == left + right) ++next;
  }
  EXPECT_EQ(next, bpe.tokens.size());
  EXPECT_EQ(bpe.special_tokens, (std::vector<std::string>{"<|endoftext|>", "<|im_start|>", "<|im_end|>"}));
}

TEST(ByteLevelBpeTrainer, MergesTheMostFrequentPairAndBreaksTiesByTheTokensBytes) {
  // Pieces "ab", " ab" (x2), " cd": pairs (a,b)=3, ( ,a)=2, ( ,c)=1, (c,d)=1. After (a,b),
  // ( ,ab)=2 leads; then ( ,c) and (c,d) tie and " " sorts before "c".
  const detail::ByteLevelBpe bpe = detail::train_byte_level_bpe("ab ab cd ab", 256 + 3, {});
  ASSERT_EQ(bpe.merges.size(), 3u);
  EXPECT_EQ(bpe.merges[0], Merge("a", "b"));
  EXPECT_EQ(bpe.merges[1], Merge(" ", "ab"));
  EXPECT_EQ(bpe.merges[2], Merge(" ", "c"));
  EXPECT_EQ(bpe.tokens.back(), " c");
  // Reversed tie: the same counts with the letters swapped pick the pair sorting first again.
  const detail::ByteLevelBpe swapped = detail::train_byte_level_bpe("dc", 256 + 1, {});
  EXPECT_EQ(swapped.merges, std::vector<Merge>{Merge("d", "c")});
}

TEST(ByteLevelBpeTrainer, StopsWhenNoPairIsLeft) {
  const detail::ByteLevelBpe bpe = detail::train_byte_level_bpe("ab ab", 1024, std::vector<std::string>{"<s>"});
  EXPECT_EQ(bpe.merges, (std::vector<Merge>{Merge("a", "b"), Merge(" ", "ab")}));
  EXPECT_EQ(bpe.tokens.size(), 258u);
  EXPECT_EQ(bpe.vocab_size(), 259);
}

TEST(ByteLevelBpeTrainer, RefusesAVocabularyWithoutRoomForTheBytes) {
  EXPECT_THROW(detail::train_byte_level_bpe("abc", 258, std::vector<std::string>{"<a>", "<b>", "<c>"}), tinker::error);
}

TEST(ByteLevelBpeTrainer, JsonStringsEscapeQuotesBackslashesAndControls) {
  EXPECT_EQ(detail::json_string("a\"b\\c\n\t\r\x01\xC4\xA0"), "\"a\\\"b\\\\c\\n\\t\\r\\u0001\xC4\xA0\"");
}

// One install shared by the tests below (installing itself is tested in tokenizer_store_test).
class TinyBpeTokenizer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    hub_ = new TempDir();
    local_ = ensure_tiny_tokenizer(hub_->path(), TinyTokenizer::byte_level_bpe);
    sdk_ = tinker::load_tokenizer_json(local_->model_file(), "tinker-local/tiny-bpe-1k");
  }
  static void TearDownTestSuite() {
    sdk_.reset();
    local_.reset();
    delete hub_;
  }
  static const tinker::Tokenizer& sdk() { return *sdk_; }
  static const LocalTokenizer& local() { return *local_; }

 private:
  static inline TempDir* hub_ = nullptr;
  static inline std::shared_ptr<const LocalTokenizer> local_;
  static inline std::shared_ptr<const tinker::Tokenizer> sdk_;
};

TEST_F(TinyBpeTokenizer, IsAQwenShapedTokenizerJson) {
  const auto json = boost::json::parse(read_bytes(local().model_file())).as_object();
  EXPECT_EQ(json.at("normalizer").at("type").as_string(), "NFC");
  const auto& steps = json.at("pre_tokenizer").at("pretokenizers").as_array();
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].at("pattern").at("Regex").as_string(), detail::bpe_split_pattern);
  EXPECT_EQ(steps[0].at("behavior").as_string(), "Isolated");
  EXPECT_EQ(steps[1].at("type").as_string(), "ByteLevel");
  EXPECT_FALSE(steps[1].at("use_regex").as_bool());
  EXPECT_EQ(json.at("decoder").at("type").as_string(), "ByteLevel");
  EXPECT_EQ(json.at("post_processor").at("type").as_string(), "ByteLevel");
  const auto& model = json.at("model").as_object();
  EXPECT_EQ(model.at("type").as_string(), "BPE");
  EXPECT_EQ(model.at("vocab").as_object().size(), 1021u);
  EXPECT_EQ(model.at("vocab").at("\xC4\xA0").as_int64(), 188 + 32);  // "Ġ" stands for the space
  const auto& merges = model.at("merges").as_array();
  ASSERT_FALSE(merges.empty());
  EXPECT_EQ(merges[0].as_array().size(), 2u);  // the ["a", "b"] form
  const auto& added = json.at("added_tokens").as_array();
  ASSERT_EQ(added.size(), 3u);
  EXPECT_EQ(added[2].at("content").as_string(), "<|im_end|>");
  EXPECT_EQ(added[2].at("id").as_int64(), 1023);
  EXPECT_TRUE(added[2].at("special").as_bool());
}

TEST_F(TinyBpeTokenizer, LoadsInTheSdkWithItsConfig) {
  EXPECT_EQ(sdk().format(), TokenizerFormat::tokenizer_json);
  EXPECT_EQ(sdk().vocab_size(), 1024);
  EXPECT_EQ(local().vocab_size(), 1024);
  EXPECT_EQ(local().kind(), TinyTokenizer::byte_level_bpe);
  EXPECT_EQ(sdk().token_to_id("<|endoftext|>"), TokenId{1021});
  EXPECT_EQ(sdk().token_to_id("<|im_start|>"), TokenId{1022});
  EXPECT_EQ(sdk().token_to_id("<|im_end|>"), TokenId{1023});
  for (TokenId id : {1021, 1022, 1023}) EXPECT_TRUE(sdk().is_special(id)) << id;
  EXPECT_FALSE(sdk().is_special(300));
  EXPECT_EQ(sdk().eos_id(), TokenId{1023});
  EXPECT_EQ(sdk().pad_id(), TokenId{1021});
  EXPECT_FALSE(sdk().bos_id().has_value());
  ASSERT_TRUE(sdk().chat_template().has_value());
  EXPECT_NE(sdk().chat_template()->find("<|im_start|>"), std::string::npos);
}

TEST_F(TinyBpeTokenizer, RoundTripsEveryCorpusLineAndTheWholeCorpusWithIdsInTheVocabulary) {
  for (const std::string& line : corpus_lines()) {
    const std::vector<TokenId> ids = sdk().encode(line);
    for (const TokenId id : ids) ASSERT_TRUE(id >= 0 && id < 1021) << id << " in " << line;
    EXPECT_EQ(sdk().decode(ids), line);
    EXPECT_EQ(local().encode(line), ids);
  }
  const std::string corpus(bundled_corpus());
  const auto ids = sdk().encode(corpus);
  EXPECT_EQ(sdk().decode(ids), corpus);
  EXPECT_EQ(local().decode(ids), corpus);
  // It learned the corpus: more than two bytes per token (bytes alone give one).
  EXPECT_LT(ids.size() * 2, corpus.size()) << ids.size() << " tokens";
}

TEST_F(TinyBpeTokenizer, RoundTripsAnyUtf8ThroughTheByteAlphabet) {
  const std::vector<std::string> texts{
      "Gr\xC3\xBC\xC3\x9F"
      "e, \xE6\x9D\xB1\xE4\xBA\xAC! \xF0\x9F\x99\x82 na\xC3\xAFve caf\xC3\xA9",
      "  leading spaces, trailing  double  spaces  ",
      "tabs\tand\nnewlines\r\n and control \x01\x7F bytes",
      std::string("embedded\0NUL", 12),
  };
  for (const std::string& text : texts) EXPECT_EQ(local().decode(local().encode(text)), text);
  EXPECT_EQ(local().encode("\xE6\x9D\xB1").size(), 3u);  // an unseen character: one token per byte
}

TEST_F(TinyBpeTokenizer, SpecialTokensInTextAreSpecialAndDecodeAsTheirText) {
  const std::vector<TokenId> ids = local().encode("<|im_start|>user\nHi<|im_end|>");
  ASSERT_GE(ids.size(), 3u);
  EXPECT_EQ(ids.front(), 1022);
  EXPECT_EQ(ids.back(), 1023);
  EXPECT_EQ(local().decode(ids), "<|im_start|>user\nHi<|im_end|>");
  EXPECT_EQ(sdk().decode(ids, true), "user\nHi");
  EXPECT_EQ(sdk().encode("x", true), sdk().encode("x", false));  // ByteLevel post-processor adds nothing
}

TEST_F(TinyBpeTokenizer, DecodeRefusesIdsOutsideTheVocabularyNamingThePosition) {
  try {
    local().decode(std::vector<TokenId>{5, 1024});
    ADD_FAILURE() << "no error";
  } catch (const tinker::error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
    EXPECT_NE(std::string(e.what()).find("tokens[1] = 1024"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tinker::local
