// Checks the DeepSeek V3.1, gpt-oss and Kimi K2 renderer tests share: the properties the
// cookbook's renderer guide names, over the shipped conversations.
#pragma once

#include "support/render_reference.hpp"

#include <tinker/renderers.hpp>
#include <tinker/tokenizer.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::renderers::test_support {

/// The final assistant message as parse_response should give it back (families drop what they do
/// not write, e.g. reasoning in non-thinking mode).
using ExpectedMessage = std::function<Message(const Message&)>;

/// The shared test conversations (test/data), loaded once per process.
inline const std::vector<test::TestConversation>& conversations() {
  static const std::vector<test::TestConversation> loaded = test::load_test_conversations();
  return loaded;
}

/// `text` in the renderer's tokenizer, without special-token handling, and back.
inline std::vector<TokenId> tokens_of(const Renderer& renderer, std::string_view text) {
  return renderer.tokenizer().encode(text, false);
}
inline std::string text_of(const Renderer& renderer, std::span<const TokenId> tokens) {
  return renderer.tokenizer().decode(tokens, false);
}

/// The failures of a template comparison, one per line, for a test's failure message.
inline std::string joined(const std::vector<std::string>& failures) {
  std::string text;
  for (const std::string& failure : failures) text += failure + "\n";
  return text;
}

inline Message as_is(const Message& message) {
  return message;
}

/// For every conversation ending on an assistant message: the supervised example's tokens start
/// with the generation prompt of the conversation before that message (the observation), carry
/// no weight there and weight 1 after it (the action), and parse_response of the action gives
/// back the message, cleanly terminated.
inline void expect_observation_and_action(const Renderer& renderer,
                                          const std::vector<test::TestConversation>& conversations,
                                          const ExpectedMessage& expected = as_is) {
  std::size_t checked = 0;
  for (const test::TestConversation& conversation : conversations) {
    const std::vector<Message>& messages = conversation.messages;
    if (messages.empty() || messages.back().role != "assistant") continue;
    ++checked;
    SCOPED_TRACE(conversation.name);
    const SupervisedExample example = renderer.build_supervised_example(messages);
    const std::vector<TokenId> tokens = example.model_input.to_ints();
    const std::vector<TokenId> prompt =
        renderer.build_generation_prompt(std::span(messages).first(messages.size() - 1)).to_ints();
    ASSERT_LE(prompt.size(), tokens.size());
    ASSERT_TRUE(std::equal(prompt.begin(), prompt.end(), tokens.begin()))
        << test::token_difference(renderer.tokenizer(), prompt, std::span(tokens).first(prompt.size()));
    ASSERT_EQ(example.weights.size(), tokens.size());
    EXPECT_TRUE(std::all_of(example.weights.begin(),
                            example.weights.begin() + static_cast<std::ptrdiff_t>(prompt.size()),
                            [](float weight) { return weight == 0.0f; }));
    EXPECT_TRUE(std::all_of(example.weights.begin() + static_cast<std::ptrdiff_t>(prompt.size()), example.weights.end(),
                            [](float weight) { return weight == 1.0f; }));
    const std::span<const TokenId> action = std::span(tokens).subspan(prompt.size());
    const ParsedResponse parsed = renderer.parse_response(action);
    EXPECT_EQ(parsed.termination, ParseTermination::stop_sequence);
    EXPECT_EQ(parsed.message, expected(messages.back())) << renderer.tokenizer().decode(action);
  }
  EXPECT_GT(checked, 5U);
}

/// The extension property: the tokens of each prompt before an assistant message are a prefix of
/// the whole conversation's tokens (so a multi-turn trajectory trains as one sequence).
inline void expect_extension(const Renderer& renderer, const std::vector<test::TestConversation>& conversations) {
  for (const test::TestConversation& conversation : conversations) {
    SCOPED_TRACE(conversation.name);
    const std::vector<TokenId> whole =
        renderer.build_supervised_example(conversation.messages, TrainOn::all_assistant_messages).model_input.to_ints();
    for (const auto& prompt : test::prompts_before_assistant_messages(conversation.messages)) {
      const std::vector<TokenId> tokens = renderer.build_generation_prompt(prompt).to_ints();
      ASSERT_LE(tokens.size(), whole.size());
      EXPECT_TRUE(std::equal(tokens.begin(), tokens.end(), whole.begin()))
          << test::token_difference(renderer.tokenizer(), tokens, std::span(whole).first(tokens.size()));
    }
  }
}

/// Labels of the failed comparisons ("name (prompt of N messages)"), for asserting exactly which
/// renderings differ from a template on purpose.
inline std::vector<std::string> failed_labels(const test::TemplateComparison& comparison) {
  std::vector<std::string> labels;
  for (const std::string& failure : comparison.failures) labels.push_back(failure.substr(0, failure.find(':')));
  return labels;
}

/// A message's content without its thinking parts.
inline Message without_thinking(const Message& message) {
  Message copy = message;
  std::erase_if(copy.content, [](const ContentPart& part) { return std::holds_alternative<ThinkingPart>(part); });
  if (copy.content.empty()) copy.content.emplace_back(TextPart());
  return copy;
}

}  // namespace tinker::renderers::test_support
