// The qwen3_8_* families against the cookbook's documented format (qwen3_8.py and its tests),
// with hand-checked expected strings, over the Qwen3.5 stand-in tokenizer (Qwen3.8 shares
// Qwen3.5's tokenizer).
#include "renderers/families.hpp"
#include "support/qwen35_tokenizer.hpp"
#include "unit/renderers/family_properties.hpp"
#include "unit/renderers/qwen_test_support.hpp"

#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tinker::renderers {
namespace {

using test_support::text_of;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string xhigh_sentence =
    "Reasoning effort is set to xhigh. Please think carefully through the task, validate key assumptions, consider "
    "plausible alternatives, and prioritize correctness, consistency, and clarity in the final answer.";
const std::string low_sentence =
    "Reasoning effort is set to low. Keep your thinking brief and focused, moving directly to the conclusion without "
    "unnecessary elaboration.";

std::unique_ptr<Renderer> make_qwen38(std::unique_ptr<Renderer> (*factory)(detail::TokenizerPtr)) {
  return factory(test::qwen35_test_tokenizer());
}

TEST(Qwen38Renderer, EffortSentenceBecomesTheSystemMessage) {
  const std::vector<Message> hi{Message("user", "hi")};
  EXPECT_EQ(qwen_test::prompt_text(*make_qwen38(detail::make_qwen3_8_xhigh_reasoning), hi),
            "<|im_start|>system\n" + xhigh_sentence +
                "<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n");
  EXPECT_THAT(qwen_test::prompt_text(*make_qwen38(detail::make_qwen3_8_low_reasoning), hi),
              StartsWith("<|im_start|>system\n" + low_sentence + "<|im_end|>\n<|im_start|>user\n"));
  EXPECT_EQ(qwen_test::prompt_text(*make_qwen38(detail::make_qwen3_8_medium_reasoning), hi),
            "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n");
  EXPECT_EQ(qwen_test::prompt_text(*make_qwen38(detail::make_qwen3_8_disable_thinking), hi),
            "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
  // With no messages at all, the sentence still opens the prompt.
  EXPECT_EQ(qwen_test::prompt_text(*make_qwen38(detail::make_qwen3_8_xhigh_reasoning), {}),
            "<|im_start|>system\n" + xhigh_sentence + "<|im_end|>\n<|im_start|>assistant\n<think>\n");
}

TEST(Qwen38Renderer, EffortSentenceLeadsAnExistingSystemMessage) {
  const auto renderer = make_qwen38(detail::make_qwen3_8_xhigh_reasoning);
  EXPECT_THAT(
      qwen_test::prompt_text(*renderer, std::vector<Message>{Message("system", "Be terse."), Message("user", "hi")}),
      StartsWith("<|im_start|>system\n" + xhigh_sentence + "\n\nBe terse.<|im_end|>\n<|im_start|>user\nhi"));
  // Already there (the cookbook's normalisation ran first): not written twice.
  EXPECT_THAT(
      qwen_test::prompt_text(
          *renderer, std::vector<Message>{Message("system", xhigh_sentence + "\n\nBe terse."), Message("user", "hi")}),
      StartsWith("<|im_start|>system\n" + xhigh_sentence + "\n\nBe terse.<|im_end|>\n"));
  // Empty or whitespace: just the sentence; without one, nothing at all.
  const std::vector<Message> blank{Message("system", std::vector<ContentPart>{TextPart("  ")}), Message("user", "hi")};
  EXPECT_THAT(qwen_test::prompt_text(*renderer, blank),
              StartsWith("<|im_start|>system\n" + xhigh_sentence + "<|im_end|>\n"));
  EXPECT_THAT(qwen_test::prompt_text(*make_qwen38(detail::make_qwen3_8_medium_reasoning), blank),
              StartsWith("<|im_start|>user\nhi<|im_end|>\n"));
  const std::vector<Message> padded{Message("system", std::vector<ContentPart>{TextPart("  sys  ")}),
                                    Message("user", "hi")};
  EXPECT_THAT(qwen_test::prompt_text(*make_qwen38(detail::make_qwen3_8_medium_reasoning), padded),
              StartsWith("<|im_start|>system\nsys<|im_end|>\n"));
}

TEST(Qwen38Renderer, EffortSentenceComesBeforeToolDeclarations) {
  const auto renderer = make_qwen38(detail::make_qwen3_8_xhigh_reasoning);
  std::vector<Message> conversation =
      renderer->create_conversation_prefix_with_tools(qwen_test::weather_tools(), "Be terse.");
  conversation.emplace_back("user", "hi");
  EXPECT_THAT(qwen_test::prompt_text(*renderer, conversation),
              StartsWith("<|im_start|>system\n" + xhigh_sentence + "\n\n" + qwen_test::qwen3_5_tools_block() +
                         "\n\nBe terse.<|im_end|>\n<|im_start|>user\nhi"));
}

TEST(Qwen38Renderer, EveryAssistantMessageKeepsItsThinkBlock) {
  const auto renderer = make_qwen38(detail::make_qwen3_8_medium_reasoning);
  const std::vector<Message> messages{
      Message("user", "q1"),
      Message("assistant", std::vector<ContentPart>{ThinkingPart("first turn reasoning"), TextPart("a1")}),
      Message("user", "q2"), Message("assistant", "a2"), Message("user", "q3")};
  EXPECT_EQ(qwen_test::prompt_text(*renderer, messages),
            "<|im_start|>user\nq1<|im_end|>\n<|im_start|>assistant\n<think>\nfirst turn reasoning\n</think>\n\na1"
            "<|im_end|>\n<|im_start|>user\nq2<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\na2<|im_end|>\n"
            "<|im_start|>user\nq3<|im_end|>\n<|im_start|>assistant\n<think>\n");
}

// Qwen3.8's template reads reasoning only from reasoning_content: inline tags are content, after
// the empty block.
TEST(Qwen38Renderer, InlineThinkTagsAreContent) {
  const auto renderer = make_qwen38(detail::make_qwen3_8_medium_reasoning);
  const std::vector<Message> messages{Message("user", "q"), Message("assistant", "<think>hidden</think>ans"),
                                      Message("user", "q2")};
  EXPECT_THAT(qwen_test::prompt_text(*renderer, messages),
              HasSubstr("<|im_start|>assistant\n<think>\n\n</think>\n\n<think>hidden</think>ans<|im_end|>"));
}

TEST(Qwen38Renderer, ToolArgumentsThatAreNotStringsAreJson) {
  const auto renderer = make_qwen38(detail::make_qwen3_8_medium_reasoning);
  EXPECT_THAT(
      qwen_test::prompt_text(*renderer, qwen_test::tool_call_conversation("Setting up.")),
      HasSubstr("<|im_start|>assistant\n<think>\n\n</think>\n\nSetting up.\n\n<tool_call>\n<function=cfg>\n"
                "<parameter=flag>\ntrue\n</parameter>\n<parameter=opt>\nnull\n</parameter>\n<parameter=num>\n3\n"
                "</parameter>\n<parameter=ratio>\n0.5\n</parameter>\n<parameter=text>\ns\n</parameter>\n"
                "<parameter=obj>\n{\"b\": 1, \"a\": 2}\n</parameter>\n<parameter=arr>\n[1, \"x\"]\n</parameter>\n"
                "</function>\n</tool_call><|im_end|>"));
}

TEST(Qwen38Renderer, AReasoningTurnExtendsIntoTheNextPromptAndAPlainOneDoesNot) {
  const auto renderer = make_qwen38(detail::make_qwen3_8_medium_reasoning);
  const std::vector<Message> reasoning{
      Message("user", "q1"),
      Message("assistant", std::vector<ContentPart>{ThinkingPart("some reasoning"), TextPart("a1")}),
      Message("user", "q2")};
  const auto extends = [&renderer](std::span<const Message> messages) {
    const std::vector<TokenId> done = renderer->build_supervised_example(messages.first(2)).model_input.to_ints();
    const std::vector<TokenId> next = renderer->build_generation_prompt(messages).to_ints();
    return done.size() <= next.size() && std::equal(done.begin(), done.end(), next.begin());
  };
  EXPECT_TRUE(extends(reasoning));
  const std::vector<Message> plain{Message("user", "q1"), Message("assistant", "a1"), Message("user", "q2")};
  EXPECT_FALSE(extends(plain));  // sampled "<think>", "\n", "\n"... but history merges "\n\n"
  EXPECT_FALSE(renderer->has_extension_property());
}

TEST(Qwen38Renderer, CustomizedTrainingWorksWithTheInjectedSentence) {
  const auto renderer = make_qwen38(detail::make_qwen3_8_xhigh_reasoning);
  for (const bool with_system : {false, true}) {
    std::vector<Message> messages{Message("user", "q"), Message("assistant", "a")};
    if (with_system) messages.insert(messages.begin(), Message("system", "sys"));
    for (Message& message : messages) message.trainable = message.role == "assistant";
    const SupervisedExample example = renderer->build_supervised_example(messages, TrainOn::customized);
    EXPECT_EQ(example.weights.size(), example.model_input.to_ints().size());
    EXPECT_EQ(qwen_test::trained_text(*renderer, example), "\n</think>\n\na<|im_end|>");
  }
}

TEST(Qwen38Renderer, ErrorsNameTheCallersMessageIndex) {
  const auto renderer = make_qwen38(detail::make_qwen3_8_xhigh_reasoning);
  Message call("assistant", "x");
  call.tool_calls.emplace_back("f", "not json");
  const std::vector<Message> messages{Message("user", "q"), call};
  try {
    renderer->build_generation_prompt(messages);
    FAIL() << "bad arguments rendered";
  } catch (const error& e) {
    EXPECT_THAT(e.what(), HasSubstr("messages[1].tool_calls[0].arguments"));
  }
}

TEST(Qwen38DisableThinkingRenderer, RefusesATurnThatReasonsAndKeepsHistoryBlocks) {
  const auto renderer = make_qwen38(detail::make_qwen3_8_disable_thinking);
  const std::vector<Message> reasoning{
      Message("user", "q"), Message("assistant", std::vector<ContentPart>{ThinkingPart("r"), TextPart("a")})};
  EXPECT_THROW(renderer->build_supervised_example(reasoning), error);
  const std::vector<Message> plain{Message("user", "q1"), Message("assistant", "a1"), Message("user", "q2"),
                                   Message("assistant", "a2")};
  const SupervisedExample example = renderer->build_supervised_example(plain);
  EXPECT_EQ(text_of(*renderer, example.model_input.to_ints()),
            "<|im_start|>user\nq1<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\na1<|im_end|>\n"
            "<|im_start|>user\nq2<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\na2<|im_end|>");
  EXPECT_EQ(qwen_test::trained_text(*renderer, example), "a2<|im_end|>");
}

// Qwen3.8 encodes message text as Qwen3.5 does, with split_special_tokens: quoted markers are
// text, also in the system message after the effort sentence.
TEST(Qwen38Renderer, QuotedControlTokensAreText) {
  qwen_test::expect_quoted_control_tokens_are_text(*make_qwen38(detail::make_qwen3_8_xhigh_reasoning), true);
  qwen_test::expect_quoted_control_tokens_are_text(*make_qwen38(detail::make_qwen3_8_medium_reasoning), true);
  qwen_test::expect_quoted_control_tokens_are_text(*make_qwen38(detail::make_qwen3_8_disable_thinking), false);
}

}  // namespace
}  // namespace tinker::renderers
