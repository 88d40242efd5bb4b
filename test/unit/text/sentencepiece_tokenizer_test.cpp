// The SentencePiece backend of tinker::Tokenizer, checked against the sentencepiece library
// itself on a model trained in the test.
#include "support/tokenizer_test_support.hpp"

#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

#include <sentencepiece_processor.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
using tinker::load_sentencepiece_tokenizer;
using tinker::SentencePieceOptions;
using tinker::TokenId;
using tinker::Tokenizer;
using tinker::TokenizerFormat;
using tinker::test::TempDir;
using tinker::test::tiny_training_lines;
using tinker::test::tiny_vocab_size;
using tinker::test::write_file;

static_assert(!std::is_aggregate_v<SentencePieceOptions>);

class SentencePieceTokenizer : public ::testing::Test {
 protected:
  void SetUp() override {
    write_file(model_file(), tinker::test::tiny_model_bytes());
    tokenizer = load_sentencepiece_tokenizer(model_file(), "test/tiny");
    ASSERT_TRUE(reference.LoadFromSerializedProto(tinker::test::tiny_model_bytes()).ok());
  }

  fs::path model_file() const { return dir.path() / "tokenizer.model"; }

  std::vector<TokenId> reference_encode(const std::string& text) const {
    std::vector<int> ids;
    EXPECT_TRUE(reference.Encode(text, &ids).ok());
    return {ids.begin(), ids.end()};
  }

  // Expects `action` to throw tinker::error with `code`; returns the message.
  static std::string error_of(const std::function<void()>& action, tinker::errc code) {
    try {
      action();
      ADD_FAILURE() << "no error";
    } catch (const tinker::error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      return e.what();
    }
    return {};
  }

  TempDir dir;
  std::shared_ptr<const Tokenizer> tokenizer;
  sentencepiece::SentencePieceProcessor reference;
};

TEST_F(SentencePieceTokenizer, DescribesItself) {
  EXPECT_EQ(tokenizer->id(), "test/tiny");
  EXPECT_EQ(tokenizer->file(), model_file());
  EXPECT_EQ(tokenizer->format(), TokenizerFormat::sentencepiece);
  EXPECT_STREQ(tinker::to_string(tokenizer->format()), "sentencepiece");
  EXPECT_STREQ(tinker::to_string(TokenizerFormat::tokenizer_json), "tokenizer.json");
  EXPECT_STREQ(tinker::to_string(TokenizerFormat::tiktoken), "tiktoken");
}

TEST_F(SentencePieceTokenizer, VocabularySizeIsTheModels) {
  EXPECT_EQ(tokenizer->vocab_size(), tiny_vocab_size);
  EXPECT_EQ(tokenizer->vocab_size(), reference.GetPieceSize());
}

TEST_F(SentencePieceTokenizer, EncodesAsTheLibraryAndDecodesBack) {
  const auto& lines = tiny_training_lines();
  for (std::size_t i = 0; i < lines.size(); i += 37) {
    const auto ids = tokenizer->encode(lines[i]);
    EXPECT_EQ(ids, reference_encode(lines[i])) << lines[i];
    EXPECT_GT(ids.size(), 3u);
    EXPECT_EQ(tokenizer->decode(ids), lines[i]);
  }
  const std::string unseen = "then the server learns 42 new kotapu stories.";  // unseen, known characters
  EXPECT_EQ(tokenizer->decode(tokenizer->encode(unseen)), unseen);
  EXPECT_TRUE(tokenizer->encode("").empty());
  EXPECT_EQ(tokenizer->decode({}), "");
}

TEST_F(SentencePieceTokenizer, SpecialTokenIdsAreTheModels) {
  EXPECT_EQ(tokenizer->unk_id(), 0);
  EXPECT_EQ(tokenizer->bos_id(), 1);
  EXPECT_EQ(tokenizer->eos_id(), 2);
  EXPECT_EQ(tokenizer->pad_id(), 3);
  for (TokenId id : {0, 1, 2, 3}) EXPECT_TRUE(tokenizer->is_special(id)) << id;
  const auto word = tokenizer->encode("model");
  ASSERT_FALSE(word.empty());
  EXPECT_FALSE(tokenizer->is_special(word.front()));
  EXPECT_FALSE(tokenizer->is_special(-1));
  EXPECT_FALSE(tokenizer->is_special(tiny_vocab_size));
}

TEST_F(SentencePieceTokenizer, MissingMarkersAreNullopt) {
  write_file(dir.path() / "bare.model", tinker::test::tiny_model_without_markers_bytes());
  const auto bare = load_sentencepiece_tokenizer(dir.path() / "bare.model", "test/bare");
  EXPECT_EQ(bare->unk_id(), 0);
  EXPECT_EQ(bare->bos_id(), std::nullopt);
  EXPECT_EQ(bare->eos_id(), std::nullopt);
  EXPECT_EQ(bare->pad_id(), std::nullopt);
  EXPECT_EQ(bare->encode("the model", true), bare->encode("the model", false));  // nothing to add
}

TEST_F(SentencePieceTokenizer, AddSpecialTokensPrependsBosOnlyByDefault) {
  const auto plain = tokenizer->encode("the model reads");
  auto expected = plain;
  expected.insert(expected.begin(), 1);
  EXPECT_EQ(tokenizer->encode("the model reads", true), expected);
}

TEST_F(SentencePieceTokenizer, AddSpecialTokensFollowsTheOptions) {
  SentencePieceOptions options;
  options.add_bos = false;
  options.add_eos = true;
  const auto eos_only = load_sentencepiece_tokenizer(model_file(), "test/eos", options);
  auto expected = tokenizer->encode("the model reads");
  expected.push_back(2);
  EXPECT_EQ(eos_only->encode("the model reads", true), expected);
}

TEST_F(SentencePieceTokenizer, DecodeWritesSpecialTokensUnlessSkipped) {
  const auto text = tokenizer->encode("the model reads");
  std::vector<TokenId> ids{1};
  ids.insert(ids.end(), text.begin(), text.end());
  ids.push_back(2);
  ids.push_back(3);
  EXPECT_EQ(tokenizer->decode(ids), "<s>the model reads</s><pad>");
  EXPECT_EQ(tokenizer->decode(ids, true), "the model reads");
}

TEST_F(SentencePieceTokenizer, UnknownCharactersBecomeTheUnknownToken) {
  const auto ids = tokenizer->encode("the Ω model");
  EXPECT_NE(std::find(ids.begin(), ids.end(), 0), ids.end()) << "Ω is not in the training text";
  EXPECT_EQ(tokenizer->decode(ids, true).find("Ω"), std::string::npos);
  EXPECT_NE(tokenizer->decode(ids).find("<unk>"), std::string::npos) << tokenizer->decode(ids);
  EXPECT_EQ(tokenizer->decode(ids, true), "the model");
}

TEST_F(SentencePieceTokenizer, DecodeRejectsIdsOutsideTheVocabularyNamingTheIndex) {
  const std::vector<TokenId> too_large{5, 6, tiny_vocab_size};
  const auto message = error_of([&] { tokenizer->decode(too_large); }, tinker::errc::invalid_argument);
  EXPECT_NE(message.find("token id 150 at index 2"), std::string::npos) << message;
  EXPECT_NE(message.find("test/tiny"), std::string::npos) << message;
  const std::vector<TokenId> negative{-1};
  error_of([&] { tokenizer->decode(negative, true); }, tinker::errc::invalid_argument);
}

TEST_F(SentencePieceTokenizer, TokensAndIdsConvertBothWays) {
  EXPECT_EQ(tokenizer->token_to_id("<unk>"), 0);
  EXPECT_EQ(tokenizer->token_to_id("<s>"), 1);
  EXPECT_EQ(tokenizer->token_to_id("</s>"), 2);
  EXPECT_EQ(tokenizer->token_to_id("no-such-token"), std::nullopt);
  EXPECT_EQ(tokenizer->id_to_token(1), "<s>");
  EXPECT_EQ(tokenizer->id_to_token(tiny_vocab_size), std::nullopt);
  EXPECT_EQ(tokenizer->id_to_token(-1), std::nullopt);
  for (TokenId id = 0; id < tokenizer->vocab_size(); ++id) {
    const auto token = tokenizer->id_to_token(id);
    ASSERT_TRUE(token) << id;
    EXPECT_EQ(*token, reference.IdToPiece(id));
    EXPECT_EQ(tokenizer->token_to_id(*token), id) << *token;
  }
}

TEST_F(SentencePieceTokenizer, LoadErrorsNameTheFile) {
  using tinker::errc;
  const auto missing = dir.path() / "missing.model";
  auto message = error_of([&] { load_sentencepiece_tokenizer(missing, "x"); }, errc::invalid_configuration);
  EXPECT_NE(message.find(missing.string()), std::string::npos) << message;
  EXPECT_NE(message.find("no such file"), std::string::npos) << message;

  message = error_of([&] { load_sentencepiece_tokenizer(dir.path(), "x"); }, errc::invalid_configuration);
  EXPECT_NE(message.find("directory"), std::string::npos) << message;

  write_file(dir.path() / "empty.model", "");
  message =
      error_of([&] { load_sentencepiece_tokenizer(dir.path() / "empty.model", "x"); }, errc::invalid_configuration);
  EXPECT_NE(message.find("empty.model"), std::string::npos) << message;

  write_file(dir.path() / "garbage.model", "this is not a SentencePiece model at all\n\x01\x02\xff");
  message =
      error_of([&] { load_sentencepiece_tokenizer(dir.path() / "garbage.model", "x"); }, errc::invalid_configuration);
  EXPECT_NE(message.find("garbage.model"), std::string::npos) << message;
  EXPECT_NE(message.find("not a valid SentencePiece model"), std::string::npos) << message;
}

TEST_F(SentencePieceTokenizer, ConstMethodsAreSafeFromManyThreads) {
  const auto& lines = tiny_training_lines();
  std::vector<std::vector<TokenId>> expected;
  for (const auto& line : lines) expected.push_back(tokenizer->encode(line, true));
  std::vector<int> mismatches(8, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t i = static_cast<std::size_t>(t); i < lines.size(); i += 2) {
        if (tokenizer->encode(lines[i], true) != expected[i]) ++mismatches[t];
        if (tokenizer->decode(expected[i], true) != lines[i]) ++mismatches[t];
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(mismatches, std::vector<int>(8, 0));
}

}  // namespace
