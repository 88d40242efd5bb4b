// kimi_k2 against Kimi K2 Thinking's own chat template
// (test/data/renderers/templates/kimi_k2_thinking.jinja) rendered by @huggingface/jinja, over the
// shipped conversations; parse_response; the properties; bad input.
//
// The tokenizer is Kimi-shaped (support/kimi_tokenizer.hpp).
#include "renderers/families.hpp"
#include "support/kimi_tokenizer.hpp"
#include "support/render_reference.hpp"
#include "unit/renderers/family_properties.hpp"

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

using test::kimi_shaped_tokenizer;

constexpr TokenId kBase = test::kimi_shaped_base;

std::filesystem::path kimi_template() {
  return std::filesystem::path(TINKER_TEST_DATA_DIR) / "renderers" / "templates" / "kimi_k2_thinking.jinja";
}

std::vector<TokenId> kimi_tokens(std::string_view text) {
  return kimi_shaped_tokenizer()->encode(text, false);
}
std::string kimi_text(std::span<const TokenId> tokens) {
  return kimi_shaped_tokenizer()->decode(tokens, false);
}

TEST(KimiK2Renderer, TheTokenizerHasKimisMarkers) {
  EXPECT_EQ(kimi_tokens("<|im_end|>"), std::vector<TokenId>{kBase + 2});
  EXPECT_EQ(kimi_tokens("<|im_middle|>"), std::vector<TokenId>{kBase + 17});
  EXPECT_EQ(kimi_shaped_tokenizer()->eos_id(), kBase + 1);
}

TEST(KimiK2Renderer, GenerationPromptsEqualTheTemplate) {
  const auto renderer = detail::make_kimi_k2(kimi_shaped_tokenizer());
  const test::TemplateComparison comparison =
      test::compare_generation_prompts(*renderer, kimi_template(), conversations());
  EXPECT_GT(comparison.compared, 10U);
  EXPECT_THAT(comparison.failures, ::testing::IsEmpty());
}

TEST(KimiK2Renderer, DefaultSystemMessageAndReasoningOnlyAfterTheLastAnswer) {
  const auto renderer = detail::make_kimi_k2(kimi_shaped_tokenizer());
  Message call("assistant", {ThinkingPart("Need data."), TextPart("Checking.")});
  call.tool_calls = {ToolCall("get_weather", "{\"city\": \"Oslo\"}")};
  Message result("tool", "rain");
  result.name = "get_weather";
  result.tool_call_id = "functions.get_weather:0";
  const std::vector<Message> messages{Message("user", "Hi"),
                                      Message("assistant", {ThinkingPart("greet"), TextPart("Hello")}),
                                      Message("user", "Weather in Oslo?"), call, result};
  EXPECT_EQ(kimi_text(renderer->build_generation_prompt(messages).to_ints()),
            "<|im_system|>system<|im_middle|>You are Kimi, an AI assistant created by Moonshot AI.<|im_end|>"
            "<|im_user|>user<|im_middle|>Hi<|im_end|>"
            "<|im_assistant|>assistant<|im_middle|><think></think>Hello<|im_end|>"
            "<|im_user|>user<|im_middle|>Weather in Oslo?<|im_end|>"
            "<|im_assistant|>assistant<|im_middle|><think>Need data.</think>Checking.<|tool_calls_section_begin|>"
            "<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Oslo\"}"
            "<|tool_call_end|><|tool_calls_section_end|><|im_end|>"
            "<|im_system|>get_weather<|im_middle|>## Return of functions.get_weather:0\nrain<|im_end|>"
            "<|im_assistant|>assistant<|im_middle|>");
  EXPECT_EQ(std::get<std::vector<TokenId>>(renderer->stop_sequences()), kimi_tokens("<|im_end|>"));
  EXPECT_FALSE(renderer->has_extension_property());
}

TEST(KimiK2Renderer, ObservationIsThePromptAndTheActionParsesBack) {
  test_support::expect_observation_and_action(*detail::make_kimi_k2(kimi_shaped_tokenizer()), conversations());
}

TEST(KimiK2Renderer, SupervisedWeightsWithTheInsertedSystemMessage) {
  const auto renderer = detail::make_kimi_k2(kimi_shaped_tokenizer());
  std::vector<Message> messages{Message("user", "Hi"), Message("assistant", "Hello")};
  messages[0].trainable = false;
  messages[1].trainable = true;
  const SupervisedExample example = renderer->build_supervised_example(messages, TrainOn::customized);
  const std::vector<TokenId> tokens = example.model_input.to_ints();
  std::vector<TokenId> trained;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (example.weights[i] == 1.0f) trained.push_back(tokens[i]);
  }
  EXPECT_EQ(kimi_text(trained), "<think></think>Hello<|im_end|>");
}

TEST(KimiK2Renderer, ParsesReasoningAndToolCalls) {
  const auto renderer = detail::make_kimi_k2(kimi_shaped_tokenizer());
  ParsedResponse parsed = renderer->parse_response(
      kimi_tokens("<think>Look it up.</think>Checking.<|tool_calls_section_begin|><|tool_call_begin|> "
                  "functions.get_weather:0 <|tool_call_argument_begin|>{\"city\": \"Oslo\"}<|tool_call_end|>"
                  "<|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>{}<|tool_call_end|>"
                  "<|tool_calls_section_end|><|im_end|>"));
  EXPECT_EQ(parsed.termination, ParseTermination::stop_sequence);
  EXPECT_THAT(parsed.message.content,
              ElementsAre(ContentPart(ThinkingPart("Look it up.")), ContentPart(TextPart("Checking."))));
  EXPECT_THAT(parsed.message.tool_calls,
              ElementsAre(ToolCall("get_weather", "{\"city\": \"Oslo\"}", "functions.get_weather:0"),
                          ToolCall("get_time", "{}", "functions.get_time:1")));
  // The tokenizer's EOS ends a message too, reported as such.
  parsed = renderer->parse_response(kimi_tokens("<think></think>Done.[EOS]"));
  EXPECT_EQ(parsed.termination, ParseTermination::eos);
  EXPECT_THAT(parsed.message.content, ElementsAre(ContentPart(TextPart("Done."))));
}

TEST(KimiK2Renderer, BadToolCallsAreReportedNotThrown) {
  const auto renderer = detail::make_kimi_k2(kimi_shaped_tokenizer());
  ParsedResponse parsed = renderer->parse_response(
      kimi_tokens("<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{oops"
                  "<|tool_call_end|><|tool_calls_section_end|><|im_end|>"));
  EXPECT_EQ(parsed.termination, ParseTermination::stop_sequence);
  ASSERT_EQ(parsed.message.unparsed_tool_calls.size(), 1U);
  EXPECT_THAT(parsed.message.unparsed_tool_calls[0].error, HasSubstr("JSON"));

  parsed = renderer->parse_response(
      kimi_tokens("Sure.<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|im_end|>"));
  ASSERT_EQ(parsed.message.unparsed_tool_calls.size(), 1U);
  EXPECT_THAT(parsed.message.unparsed_tool_calls[0].error, HasSubstr("unterminated"));

  parsed = renderer->parse_response(kimi_tokens("<think>cut off"));
  EXPECT_EQ(parsed.termination, ParseTermination::malformed);
  for (const auto& tokens :
       {std::vector<TokenId>{}, std::vector<TokenId>{-3, kBase + 300, 1 << 30},
        kimi_tokens("<|tool_call_end|><|tool_calls_section_end|><|tool_call_begin|>:<|im_end|>")}) {
    EXPECT_NO_THROW(renderer->parse_response(tokens));
  }
}

TEST(KimiK2Renderer, RefusesWhatItCannotRenderNamingTheCallersIndex) {
  const auto renderer = detail::make_kimi_k2(kimi_shaped_tokenizer());
  // The default system message the renderer adds does not shift the index in the error.
  const std::vector<Message> image{Message("user", "Hi"),
                                   Message("user", {TextPart("see"), ImagePart({1}, ImageFormat::jpeg)})};
  EXPECT_THAT([&] { renderer->build_generation_prompt(image); },
              ::testing::ThrowsMessage<error>(HasSubstr("messages[1].content[1]")));
  const std::vector<Message> thinking_user{Message("user", {ThinkingPart("hmm")})};
  EXPECT_THAT([&] { renderer->build_supervised_example(thinking_user, TrainOn::all_messages); },
              ::testing::ThrowsMessage<error>(HasSubstr("messages[0].content[0]")));
}

// The cookbook's kimi_k2_tool_declaration_test.py: the tool_declare message before the system
// message, the tools as compact JSON with every object's keys sorted.
TEST(KimiK2Renderer, DeclaresToolsAsSortedCompactJsonBeforeTheSystemMessage) {
  const auto renderer = detail::make_kimi_k2(kimi_shaped_tokenizer());
  const std::vector<ToolSpec> test_tool{ToolSpec("test", "Test tool", R"({"type": "object", "properties": {}})")};
  std::vector<Message> messages = renderer->create_conversation_prefix_with_tools(test_tool);
  ASSERT_EQ(messages.size(), 2U);
  EXPECT_EQ(messages[0].role, "tool_declare");
  EXPECT_EQ(messages[1], Message("system", "You are Kimi, an AI assistant created by Moonshot AI."));
  messages.emplace_back("user", "Test");
  // As the cookbook's test_tool_declaration_string_matches_hf has it: one system message.
  EXPECT_EQ(kimi_text(renderer->build_generation_prompt(messages).to_ints()),
            "<|im_system|>tool_declare<|im_middle|>[{\"function\":{\"description\":\"Test tool\",\"name\":\"test\","
            "\"parameters\":{\"properties\":{},\"type\":\"object\"}},\"type\":\"function\"}]<|im_end|>"
            "<|im_system|>system<|im_middle|>You are Kimi, an AI assistant created by Moonshot AI.<|im_end|>"
            "<|im_user|>user<|im_middle|>Test<|im_end|><|im_assistant|>assistant<|im_middle|>");

  // Keys sorted at every level; lists keep their order; a custom system prompt is kept.
  const std::vector<ToolSpec> weather{
      ToolSpec("get_weather", "Get weather",
               R"({"type": "object", "properties": {"unit": {"type": "string", "description": "Temperature unit"},)"
               R"( "location": {"type": "string", "description": "City name", "maximum": 1.0, "enum": ["C", "°F"]}},)"
               R"( "required": ["location", "unit"]})")};
  messages = renderer->create_conversation_prefix_with_tools(weather, "You are a weather bot.");
  ASSERT_EQ(messages.size(), 2U);
  EXPECT_EQ(messages[0].text(),
            "[{\"function\":{\"description\":\"Get weather\",\"name\":\"get_weather\",\"parameters\":{\"properties\":"
            "{\"location\":{\"description\":\"City name\",\"enum\":[\"C\",\"°F\"],\"maximum\":1.0,\"type\":\"string\"},"
            "\"unit\":{\"description\":\"Temperature unit\",\"type\":\"string\"}},\"required\":[\"location\",\"unit\"],"
            "\"type\":\"object\"}},\"type\":\"function\"}]");
  EXPECT_EQ(messages[1], Message("system", "You are a weather bot."));

  // No tools: the system message alone.
  messages = renderer->create_conversation_prefix_with_tools({});
  ASSERT_EQ(messages.size(), 1U);
  EXPECT_EQ(messages[0].role, "system");
}

TEST(KimiK2Renderer, AToolDeclarationFirstGetsTheDefaultSystemMessageAfterIt) {
  const auto renderer = detail::make_kimi_k2(kimi_shaped_tokenizer());
  const std::vector<Message> messages{Message("tool_declare", "[]"), Message("user", "Hi")};
  EXPECT_EQ(kimi_text(renderer->build_generation_prompt(messages).to_ints()),
            "<|im_system|>tool_declare<|im_middle|>[]<|im_end|>"
            "<|im_system|>system<|im_middle|>You are Kimi, an AI assistant created by Moonshot AI.<|im_end|>"
            "<|im_user|>user<|im_middle|>Hi<|im_end|><|im_assistant|>assistant<|im_middle|>");
  const std::vector<ToolSpec> bad{ToolSpec("f", "", "[1, 2]")};
  EXPECT_THAT([&] { renderer->create_conversation_prefix_with_tools(bad); },
              ::testing::ThrowsMessage<error>(HasSubstr("tools[0].parameters")));
}

}  // namespace
}  // namespace tinker::renderers
