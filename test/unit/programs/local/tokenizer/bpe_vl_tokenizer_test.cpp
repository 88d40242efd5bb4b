// The vision model's tokenizer (tinker-local/tiny-bpe-vl): the byte-level BPE of tiny-lm with the
// rest of Qwen's added tokens, so Qwen3.5's chat, thinking, vision and tool markup are one token
// each, and text encodes exactly as with tiny-bpe-1k.
#include "programs/local/tokenizer/bpe_training.hpp"

#include "programs/local/tokenizer/tokenizer_store.hpp"
#include "unit/programs/local/tokenizer/tokenizer_test_support.hpp"

#include <tinker/error.hpp>
#include <tinker/local/server.hpp>
#include <tinker/tokenizer.hpp>

#include <gtest/gtest.h>
#include <boost/json.hpp>

namespace tinker::local {
namespace {

using test::read_bytes;
using test::TempDir;

class TinyVisionTokenizer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    hub_ = new TempDir();
    vision_ = ensure_tiny_tokenizer(hub_->path(), TinyTokenizer::byte_level_bpe_vl);
    text_ = ensure_tiny_tokenizer(hub_->path(), TinyTokenizer::byte_level_bpe);
    sdk_ = tinker::load_tokenizer_json(vision_->model_file(), std::string(tiny_vl_tokenizer_id));
  }
  static void TearDownTestSuite() {
    sdk_.reset();
    vision_.reset();
    text_.reset();
    delete hub_;
  }
  static const tinker::Tokenizer& sdk() { return *sdk_; }
  static const LocalTokenizer& vision() { return *vision_; }
  static const LocalTokenizer& text() { return *text_; }

 private:
  static inline TempDir* hub_ = nullptr;
  static inline std::shared_ptr<const LocalTokenizer> vision_;
  static inline std::shared_ptr<const LocalTokenizer> text_;
  static inline std::shared_ptr<const tinker::Tokenizer> sdk_;
};

TEST_F(TinyVisionTokenizer, IsInstalledUnderItsOwnIdWithQwensAddedTokensInQwensOrder) {
  EXPECT_EQ(vision().id(), "tinker-local/tiny-bpe-vl");
  EXPECT_EQ(vision().kind(), TinyTokenizer::byte_level_bpe_vl);
  EXPECT_EQ(vision().vocab_size(), 1047);
  EXPECT_EQ(sdk().vocab_size(), 1047);
  // Qwen's order from <|endoftext|> (151643 there) on: the same offsets here from 1021.
  const std::vector<std::pair<std::string, TokenId>> expected{
      {"<|endoftext|>", 1021},   {"<|im_start|>", 1022},     {"<|im_end|>", 1023},  {"<|vision_start|>", 1030},
      {"<|vision_end|>", 1031},  {"<|image_pad|>", 1033},    {"<tool_call>", 1035}, {"</tool_call>", 1036},
      {"<tool_response>", 1043}, {"</tool_response>", 1044}, {"<think>", 1045},     {"</think>", 1046}};
  for (const auto& [token, id] : expected) {
    EXPECT_EQ(sdk().token_to_id(token), id) << token;
    EXPECT_EQ(vision().encode(token), std::vector<TokenId>{id}) << token;  // what a renderer's require_token checks
  }
}

TEST_F(TinyVisionTokenizer, MarksSpecialTokensAsQwenDoes) {
  const auto json = boost::json::parse(read_bytes(vision().model_file())).as_object();
  const auto& added = json.at("added_tokens").as_array();
  ASSERT_EQ(added.size(), 26u);
  for (const auto& token : added) {
    const std::string content(token.at("content").as_string());
    const bool qwen_special = content.starts_with("<|") && !content.starts_with("<|fim_") &&
                              content != "<|repo_name|>" && content != "<|file_sep|>";
    EXPECT_EQ(token.at("special").as_bool(), qwen_special) << content;
  }
  EXPECT_TRUE(sdk().is_special(1031));   // <|vision_end|>
  EXPECT_FALSE(sdk().is_special(1045));  // <think>: kept by a decode that skips special tokens
  EXPECT_EQ(sdk().decode(vision().encode("<|im_start|>a<think>b</think><|im_end|>"), true), "a<think>b</think>");
  EXPECT_EQ(sdk().eos_id(), TokenId{1023});
  ASSERT_TRUE(sdk().chat_template().has_value());
  EXPECT_NE(sdk().chat_template()->find("<think>"), std::string::npos);
}

TEST_F(TinyVisionTokenizer, TextEncodesAsWithTheTextModelsTokenizer) {
  for (const std::string line : {"We the People of the United States, in Order to form a more perfect Union,",
                                 "What colour is this image?", "  spaces\tand\nlines "}) {
    EXPECT_EQ(vision().encode(line), text().encode(line)) << line;
    EXPECT_EQ(vision().decode(vision().encode(line)), line);
  }
}

TEST_F(TinyVisionTokenizer, ItsFilesHaveTheirOwnFingerprint) {
  EXPECT_NE(detail::tiny_bpe_vl_training_fingerprint(), detail::tiny_bpe_training_fingerprint());
  EXPECT_NE(vision().model_file().parent_path(), text().model_file().parent_path());
}

TEST(TinyVisionTokenizerOptions, ItsIdMustDifferFromTheOthers) {
  for (const bool same_as_bpe : {true, false}) {
    ServerOptions options;
    options.vl_tokenizer_id = same_as_bpe ? options.bpe_tokenizer_id : options.sp_tokenizer_id;
    Server server(std::move(options));
    try {
      server.start();
      ADD_FAILURE() << "no exception";
    } catch (const tinker::error& e) {
      EXPECT_EQ(e.code(), errc::invalid_configuration);
      EXPECT_NE(std::string(e.what()).find("vl_tokenizer_id must differ"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace tinker::local
