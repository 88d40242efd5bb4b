// qwen3_5 and qwen3_5_disable_thinking (also Qwen3.6) against the cookbook's documented format,
// with hand-checked expected strings (no copy of Qwen3.5's own chat template could be had offline;
// doc/renderers.md says so), over the Qwen3.5 stand-in tokenizer (test/support/qwen35_tokenizer.hpp).
#include "renderers/families.hpp"
#include "support/qwen35_tokenizer.hpp"
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

std::unique_ptr<Renderer> qwen3_5() {
  return detail::make_qwen3_5(test::qwen35_test_tokenizer());
}

std::unique_ptr<Renderer> qwen3_5_off() {
  return detail::make_qwen3_5_disable_thinking(test::qwen35_test_tokenizer());
}

TEST(Qwen35Renderer, GenerationPromptTrimsContentAndOpensTheThinkBlock) {
  const auto renderer = qwen3_5();
  const std::vector<Message> messages{Message("system", " You are terse.\n"), Message("user", "hi\n")};
  EXPECT_EQ(qwen_test::prompt_text(*renderer, messages),
            "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n"
            "<|im_start|>assistant\n<think>\n");
  EXPECT_EQ(qwen_test::prompt_text(*qwen3_5_off(), messages),
            "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n"
            "<|im_start|>assistant\n<think>\n\n</think>\n\n");
  EXPECT_EQ(renderer->stop_sequences(), StopCondition(std::vector<TokenId>{248046}));
  EXPECT_FALSE(renderer->has_extension_property());
}

// The produced turn without reasoning gets the empty block, but its tokens start with the
// prompt's "<think>", "\n": the boundary falls inside the "\n\n" the whole text would merge.
TEST(Qwen35Renderer, ProducedTurnSplitsTheEmptyBlockWhereThePromptStops) {
  const auto renderer = qwen3_5();
  const std::vector<Message> conversation{Message("user", "q"), Message("assistant", "a")};
  const SupervisedExample example = renderer->build_supervised_example(conversation);
  const std::vector<TokenId> tokens = example.model_input.to_ints();
  const std::string whole = "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\na<|im_end|>";
  EXPECT_EQ(text_of(*renderer, tokens), whole);
  EXPECT_NE(tokens, tokens_of(*renderer, whole));  // one "\n\n" token there, two "\n" here
  const std::vector<TokenId> prompt = renderer->build_generation_prompt(std::span(conversation).first(1)).to_ints();
  ASSERT_LE(prompt.size(), tokens.size());
  EXPECT_TRUE(std::equal(prompt.begin(), prompt.end(), tokens.begin()));
  EXPECT_EQ(qwen_test::trained_text(*renderer, example), "\n</think>\n\na<|im_end|>");
}

TEST(Qwen35Renderer, ReasoningIsFramedInTheProducedTurnAndDroppedFromHistory) {
  const auto renderer = qwen3_5();
  const std::vector<Message> conversation{
      Message("user", "q1"), Message("assistant", std::vector<ContentPart>{ThinkingPart("one"), TextPart("A")}),
      Message("user", "q2"), Message("assistant", std::vector<ContentPart>{ThinkingPart("two"), TextPart("B")})};
  const SupervisedExample example = renderer->build_supervised_example(conversation);
  EXPECT_EQ(text_of(*renderer, example.model_input.to_ints()),
            "<|im_start|>user\nq1<|im_end|>\n<|im_start|>assistant\nA<|im_end|>\n<|im_start|>user\nq2<|im_end|>\n"
            "<|im_start|>assistant\n<think>\ntwo\n</think>\n\nB<|im_end|>");
  // The prompt supplied "<think>\n": the model is trained on what follows.
  EXPECT_EQ(qwen_test::trained_text(*renderer, example), "two\n</think>\n\nB<|im_end|>");
}

// The cookbook keeps Qwen3.5's "<think>" test on string content: inline reasoning in text-only
// content is written as it is, with no empty block before it.
TEST(Qwen35Renderer, InlineReasoningInTextIsWrittenAsItIs) {
  const auto renderer = qwen3_5();
  const std::vector<Message> conversation{Message("user", "q"), Message("assistant", "<think>\nhm\n</think>\n\nok")};
  EXPECT_EQ(text_of(*renderer, renderer->build_supervised_example(conversation).model_input.to_ints()),
            "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n<think>\nhm\n</think>\n\nok<|im_end|>");
}

TEST(Qwen35Renderer, ToolCallsAreXmlWithPythonScalars) {
  const auto renderer = qwen3_5();
  EXPECT_EQ(qwen_test::prompt_text(*renderer, qwen_test::tool_call_conversation("Setting up.")),
            "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\nSetting up.\n\n<tool_call>\n<function=cfg>\n"
            "<parameter=flag>\nTrue\n</parameter>\n<parameter=opt>\nNone\n</parameter>\n<parameter=num>\n3\n"
            "</parameter>\n<parameter=ratio>\n0.5\n</parameter>\n<parameter=text>\ns\n</parameter>\n"
            "<parameter=obj>\n{\"b\": 1, \"a\": 2}\n</parameter>\n<parameter=arr>\n[1, \"x\"]\n</parameter>\n"
            "</function>\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\nok\n</tool_response><|im_end|>\n"
            "<|im_start|>user\nnext<|im_end|>\n<|im_start|>assistant\n<think>\n");
  // Without visible content the call starts the message.
  const std::string contentless = qwen_test::prompt_text(*renderer, qwen_test::tool_call_conversation(" "));
  EXPECT_THAT(contentless, HasSubstr("<|im_start|>assistant\n<tool_call>\n<function=cfg>\n"));
}

TEST(Qwen35Renderer, ARunOfToolResultsSharesOneUserMessage) {
  const auto renderer = qwen3_5();
  const std::vector<Message> messages{Message("user", "q"), Message("assistant", "calling"), Message("tool", "r1"),
                                      Message("tool", "r2"), Message("user", "go on")};
  EXPECT_EQ(qwen_test::prompt_text(*renderer, messages),
            "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\ncalling<|im_end|>\n<|im_start|>user\n"
            "<tool_response>\nr1\n</tool_response>\n<tool_response>\nr2\n</tool_response><|im_end|>\n"
            "<|im_start|>user\ngo on<|im_end|>\n<|im_start|>assistant\n<think>\n");
  // A run that ends the conversation closes the user message too.
  EXPECT_THAT(qwen_test::prompt_text(*renderer, std::span(messages).first(4)),
              HasSubstr("r2\n</tool_response><|im_end|>\n<|im_start|>assistant\n<think>\n"));
}

TEST(Qwen35Renderer, ParsesReasoningAfterThePrefilledThinkTag) {
  const auto renderer = qwen3_5();
  const ParsedResponse parsed =
      renderer->parse_response(tokens_of(*renderer, "reasoning\n</think>\n\nanswer<|im_end|>"));
  EXPECT_EQ(parsed.termination, ParseTermination::stop_sequence);
  EXPECT_EQ(parsed.message.content, (std::vector<ContentPart>{ThinkingPart("reasoning"), TextPart("answer")}));
  // Already opened: the same message.
  const ParsedResponse opened =
      renderer->parse_response(tokens_of(*renderer, "<think>\n  reasoning \n</think>\n\nanswer<|im_end|>"));
  EXPECT_EQ(opened.message.content, parsed.message.content);
  // Cut off: the text as sampled, unsplit.
  const ParsedResponse cut = renderer->parse_response(tokens_of(*renderer, "still </think> thinking"));
  EXPECT_EQ(cut.termination, ParseTermination::malformed);
  EXPECT_EQ(cut.message.text(), "<think>\nstill </think> thinking");
}

TEST(Qwen35Renderer, ParsesXmlToolCalls) {
  const auto renderer = qwen3_5();
  const ParsedResponse parsed = renderer->parse_response(tokens_of(
      *renderer,
      "I'll get the weather for both cities.\n\n<tool_call>\n<function=get_weather>\n<parameter=location>\nNYC\n"
      "</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n"
      "<function=get_weather>\n<parameter=location>\nLA\n</parameter>\n<parameter=opts>\n{\"metric\":true}\n"
      "</parameter>\n</function>\n</tool_call><|im_end|>"));
  EXPECT_EQ(parsed.termination, ParseTermination::stop_sequence);
  EXPECT_EQ(parsed.message.text(), "I'll get the weather for both cities.");
  ASSERT_EQ(parsed.message.tool_calls.size(), 2u);
  EXPECT_EQ(parsed.message.tool_calls[0], ToolCall("get_weather", "{\"location\": \"NYC\", \"days\": 3}"));
  EXPECT_EQ(parsed.message.tool_calls[1],
            ToolCall("get_weather", "{\"location\": \"LA\", \"opts\": {\"metric\": true}}"));
  EXPECT_TRUE(parsed.message.unparsed_tool_calls.empty());
  // Qwen3's JSON form is read too.
  const ParsedResponse json_call = renderer->parse_response(tokens_of(
      *renderer, "<tool_call>\n{\"name\": \"search\", \"arguments\": {\"q\": \"x\"}}\n</tool_call><|im_end|>"));
  ASSERT_EQ(json_call.message.tool_calls.size(), 1u);
  EXPECT_EQ(json_call.message.tool_calls[0].name, "search");
}

TEST(Qwen35Renderer, MalformedXmlCallsAreReportedNotThrown) {
  const auto renderer = qwen3_5();
  const std::string stray = "<tool_call>\n<function=f>\nstray text\n</function>\n</tool_call>";
  const std::string nameless = "<tool_call>\n<function= >\n</function>\n</tool_call>";
  const ParsedResponse parsed =
      renderer->parse_response(tokens_of(*renderer, stray + "\n" + nameless + "\n<tool_call>\n<function=g><|im_end|>"));
  EXPECT_EQ(parsed.termination, ParseTermination::stop_sequence);
  EXPECT_TRUE(parsed.message.tool_calls.empty());
  ASSERT_EQ(parsed.message.unparsed_tool_calls.size(), 3u);
  EXPECT_EQ(parsed.message.unparsed_tool_calls[0].raw_text, stray);
  EXPECT_THAT(parsed.message.unparsed_tool_calls[0].error, HasSubstr("unexpected content"));
  EXPECT_THAT(parsed.message.unparsed_tool_calls[1].error, HasSubstr("missing function name"));
  EXPECT_THAT(parsed.message.unparsed_tool_calls[2].error, HasSubstr("unterminated"));
}

TEST(Qwen35Renderer, ToolDeclarationsComeBeforeTheSystemPrompt) {
  const auto renderer = qwen3_5();
  const std::vector<Message> prefix =
      renderer->create_conversation_prefix_with_tools(qwen_test::weather_tools(), "Be brief.");
  ASSERT_EQ(prefix.size(), 1u);
  EXPECT_EQ(prefix[0].role, "system");
  EXPECT_EQ(prefix[0].text(), qwen_test::qwen3_5_tools_block() + "\n\nBe brief.");
  std::vector<Message> conversation = prefix;
  conversation.emplace_back("user", "What's the weather in SF?");
  EXPECT_EQ(qwen_test::prompt_text(*renderer, conversation),
            "<|im_start|>system\n" + qwen_test::qwen3_5_tools_block() +
                "\n\nBe brief.<|im_end|>\n<|im_start|>user\nWhat's the weather in SF?<|im_end|>\n"
                "<|im_start|>assistant\n<think>\n");
  EXPECT_EQ(renderer->create_conversation_prefix_with_tools({}, "Be brief.")[0].text(), "Be brief.");
  const std::vector<ToolSpec> bad{ToolSpec("f", "d", "[1, 2]")};
  EXPECT_THROW(
      {
        try {
          renderer->create_conversation_prefix_with_tools(bad);
        } catch (const error& e) {
          EXPECT_THAT(e.what(), HasSubstr("tools[0].parameters"));
          throw;
        }
      },
      error);
}

TEST(Qwen35Renderer, ImagesRenderBetweenVisionMarkers) {
  const auto renderer = qwen3_5();
  const std::vector<Message> messages{
      Message("user", std::vector<ContentPart>{TextPart("What is this?"), qwen_test::png_part(224, 224)})};
  const ModelInput prompt = renderer->build_generation_prompt(messages);
  ASSERT_EQ(prompt.chunks.size(), 3u);
  EXPECT_EQ(text_of(*renderer, std::get<EncodedTextChunk>(prompt.chunks[0]).tokens),
            "<|im_start|>user\nWhat is this?<|vision_start|>");
  const auto& image = std::get<ImageChunk>(prompt.chunks[1]);
  EXPECT_EQ(image.expected_tokens, 64);
  EXPECT_EQ(text_of(*renderer, std::get<EncodedTextChunk>(prompt.chunks[2]).tokens),
            "<|vision_end|><|im_end|>\n<|im_start|>assistant\n<think>\n");
}

TEST(Qwen35Renderer, ImagesAreContextInSupervisedExamples) {
  const auto renderer = qwen3_5();
  std::vector<Message> conversation{
      Message("user", std::vector<ContentPart>{qwen_test::png_part(150, 224), TextPart("Describe it.")}),
      Message("assistant", "A square.")};
  const SupervisedExample example = renderer->build_supervised_example(conversation);
  ASSERT_EQ(example.weights.size(), static_cast<std::size_t>(example.model_input.length()));
  const auto& image = std::get<ImageChunk>(example.model_input.chunks.at(1));
  EXPECT_EQ(image.expected_tokens, 70);
  // Weight starts after the prompt (which holds the image) and runs to the end.
  const std::size_t prompt_length =
      static_cast<std::size_t>(renderer->build_generation_prompt(std::span(conversation).first(1)).length());
  for (std::size_t i = 0; i < example.weights.size(); ++i) {
    EXPECT_EQ(example.weights[i], i < prompt_length ? 0.0f : 1.0f) << "position " << i;
  }
  // Trained, the image's message carries weight everywhere, image included.
  const SupervisedExample all = renderer->build_supervised_example(conversation, TrainOn::all_messages);
  EXPECT_EQ(all.weights[std::get<EncodedTextChunk>(all.model_input.chunks[0]).tokens.size()], 1.0f);
}

// The cookbook encodes Qwen message text with split_special_tokens: a quoted "<|im_start|>" is text.
TEST(Qwen35Renderer, QuotedTurnMarkersAreText) {
  qwen_test::expect_quoted_control_tokens_are_text(*qwen3_5(), true);
  qwen_test::expect_quoted_control_tokens_are_text(*qwen3_5_off(), false);
  const auto renderer = qwen3_5();
  const std::string quoted = "paste <|im_start|>system<|im_end|>";
  const std::vector<TokenId> prompt =
      renderer->build_generation_prompt(std::vector<Message>{Message("user", quoted)}).to_ints();
  const Tokenizer& tokenizer = renderer->tokenizer();
  const TokenId start = *tokenizer.token_to_id("<|im_start|>");
  const TokenId end = *tokenizer.token_to_id("<|im_end|>");
  EXPECT_EQ(std::count(prompt.begin(), prompt.end(), start), 2);
  EXPECT_EQ(std::count(prompt.begin(), prompt.end(), end), 1);
  const std::vector<TokenId> text = tokenizer.encode(quoted, EncodeOptions::split_special());
  EXPECT_NE(std::search(prompt.begin(), prompt.end(), text.begin(), text.end()), prompt.end());
  // <think> and <tool_call> are not special: quoted, they are their tokens, as in the cookbook.
  const std::vector<TokenId> think =
      renderer->build_generation_prompt(std::vector<Message>{Message("user", "what is <tool_call>?")}).to_ints();
  EXPECT_NE(std::find(think.begin(), think.end(), *tokenizer.token_to_id("<tool_call>")), think.end());
}

TEST(Qwen35DisableThinkingRenderer, RefusesToTrainATurnThatReasons) {
  const auto renderer = qwen3_5_off();
  const std::vector<Message> conversation{
      Message("user", "2+2?"), Message("assistant", std::vector<ContentPart>{ThinkingPart("add"), TextPart("4")})};
  try {
    renderer->build_supervised_example(conversation);
    FAIL() << "a reasoning turn was accepted";
  } catch (const error& e) {
    EXPECT_THAT(e.what(), HasSubstr("messages[1]"));
    EXPECT_THAT(e.what(), HasSubstr("thinking turned off"));
  }
  // The same turn without reasoning trains after exactly its prompt.
  const std::vector<Message> plain{Message("user", "2+2?"), Message("assistant", "4")};
  const SupervisedExample example = renderer->build_supervised_example(plain);
  EXPECT_EQ(qwen_test::trained_text(*renderer, example), "4<|im_end|>");
  // Reasoning in answered history is dropped, so it is fine.
  const std::vector<Message> history{conversation[0], conversation[1], Message("user", "3+3?"),
                                     Message("assistant", "6")};
  EXPECT_NO_THROW(renderer->build_supervised_example(history));
}

}  // namespace
}  // namespace tinker::renderers
