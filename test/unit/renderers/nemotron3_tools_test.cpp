// Nemotron 3's tools: the structured-XML declarations of create_conversation_prefix_with_tools and
// the XML tool calls, against Nemotron 3 Nano's template (@huggingface/jinja) where it renders
// them as Python's Jinja does, and otherwise against the text Python's Jinja (as transformers
// runs it) and the cookbook's nemotron3.py write, checked by hand and written out here
// (@huggingface/jinja writes true/false/null and lists differently from Python's `| string`);
// parse_response of what the model writes. The tokenizer is Qwen3's, standing in for Nemotron's
// (nemotron3_test.cpp says why).
#include "renderers/families.hpp"
#include "support/render_reference.hpp"
#include "support/temp_files.hpp"
#include "unit/renderers/nemotron3_test_support.hpp"

#include <tinker/error.hpp>
#include <tinker/renderers.hpp>
#include <tinker/tokenizer.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tinker::renderers {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using nemotron_test::nano_template;
using nemotron_test::stand_in_tokenizer;
using nemotron_test::text_of;
using nemotron_test::tokens_of;

std::string nemotron_nano_prompt(std::span<const Message> messages, const std::string& variables = "{}") {
  const std::vector<test::TemplateCase> cases{test::TemplateCase{{messages.begin(), messages.end()}, true, variables}};
  return test::render_chat_template(nano_template(), cases, test::ToolArgumentsAs::object).at(0);
}

ToolSpec nemotron_weather_spec() {
  return ToolSpec("get_weather", "Get the current weather for a location",
                  R"({"type": "object", "properties": {"location": {"type": "string", "description": "The city and )"
                  R"(state, e.g. San Francisco, CA"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], )"
                  R"("description": "Temperature unit"}}, "required": ["location"]})");
}

// The cookbook's get_rich_tool_spec: JSON Schema keys beyond name, type, description and enum.
ToolSpec nemotron_search_spec() {
  return ToolSpec("search", "Search for items",
                  R"({"type": "object", "properties": {"query": {"type": "string", "description": "Search query", )"
                  R"("default": "*"}, "max_results": {"type": "integer", "description": "Maximum number of results", )"
                  R"("minimum": 1, "maximum": 100}, "tags": {"type": "array", "description": "Filter tags", "items": )"
                  R"({"type": "string"}}}, "required": ["query"], "additionalProperties": false})");
}

// What follows the declarations in the "# Tools" block (the template's text).
const std::string nemotron_call_format =
    "\n</tools>\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n"
    "<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n"
    "<parameter=example_parameter_2>\nThis is the value for the second parameter\nthat can span\nmultiple lines\n"
    "</parameter>\n</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n- Function calls MUST follow the specified "
    "format: an inner <function=...></function> block must be nested within <tool_call></tool_call> XML tags\n- "
    "Required parameters MUST be specified\n- You may provide optional reasoning for your function call in natural "
    "language BEFORE the function call, but NOT after\n- If there is no function call available, answer the question "
    "like normal with your current knowledge and do not tell the user about function calls\n</IMPORTANT>";

const std::string nemotron_tools_intro = "# Tools\n\nYou have access to the following functions:\n\n<tools>\n";

TEST(Nemotron3Tools, DeclarationsAreStructuredXmlAfterTheSystemPrompt) {
  const auto renderer = detail::make_nemotron3(stand_in_tokenizer());
  const std::vector<ToolSpec> tools{nemotron_weather_spec()};
  const std::vector<Message> prefix =
      renderer->create_conversation_prefix_with_tools(tools, "You are a helpful assistant.");
  ASSERT_EQ(prefix.size(), 1U);
  EXPECT_EQ(prefix[0].role, "system");
  EXPECT_EQ(
      prefix[0].text(),
      "You are a helpful assistant.\n\n" + nemotron_tools_intro +
          "<function>\n<name>get_weather</name>\n<description>Get the current weather for a location</description>\n"
          "<parameters>\n<parameter>\n<name>location</name>\n<type>string</type>\n<description>The city and state, "
          "e.g. San Francisco, CA</description>\n</parameter>\n<parameter>\n<name>unit</name>\n<type>string</type>\n"
          "<description>Temperature unit</description>\n<enum>[\"celsius\", \"fahrenheit\"]</enum>\n</parameter>\n"
          "<required>[\"location\"]</required>\n</parameters>\n</function>" +
          nemotron_call_format);
  EXPECT_EQ(renderer->create_conversation_prefix_with_tools(tools)[0].text().substr(0, nemotron_tools_intro.size()),
            nemotron_tools_intro);
  EXPECT_EQ(renderer->create_conversation_prefix_with_tools({}, "You are helpful.")[0].text(), "You are helpful.");
}

TEST(Nemotron3Tools, PromptsWithToolsEqualTheNanoTemplate) {
  const std::vector<ToolSpec> tools{nemotron_weather_spec(), ToolSpec("ping", "Check the service.")};
  const std::string variables = test::with_tools("{}", tools);
  const std::vector<Message> question{Message("user", "What's the weather in NYC?")};
  for (const std::string_view system_prompt : {"You are a helpful assistant.", ""}) {
    const auto renderer = detail::make_nemotron3(stand_in_tokenizer());
    std::vector<Message> messages = renderer->create_conversation_prefix_with_tools(tools, system_prompt);
    messages.insert(messages.end(), question.begin(), question.end());
    std::vector<Message> template_messages = question;
    if (!system_prompt.empty())
      template_messages.insert(template_messages.begin(), Message("system", std::string(system_prompt)));
    const std::string expected = nemotron_nano_prompt(template_messages, variables);
    EXPECT_EQ(text_of(renderer->build_generation_prompt(messages).to_ints()), expected);
    EXPECT_EQ(renderer->build_generation_prompt(messages).to_ints(), tokens_of(expected));
  }
}

// Python's Jinja (what transformers runs) writes the template's `| string` of false as "False" and
// of a list as its repr; the cookbook writes the same.
TEST(Nemotron3Tools, SchemaKeysBeyondTheCoreOnesAreElements) {
  const auto renderer = detail::make_nemotron3(stand_in_tokenizer());
  const std::vector<ToolSpec> rich{nemotron_search_spec()};
  EXPECT_EQ(
      renderer->create_conversation_prefix_with_tools(rich)[0].text(),
      nemotron_tools_intro +
          "<function>\n<name>search</name>\n<description>Search for items</description>\n<parameters>\n<parameter>\n"
          "<name>query</name>\n<type>string</type>\n<description>Search query</description>\n<default>*</default>\n"
          "</parameter>\n<parameter>\n<name>max_results</name>\n<type>integer</type>\n<description>Maximum number "
          "of results</description>\n<minimum>1</minimum>\n<maximum>100</maximum>\n</parameter>\n<parameter>\n"
          "<name>tags</name>\n<type>array</type>\n<description>Filter tags</description>\n<items>{\"type\": "
          "\"string\"}</items>\n</parameter>\n<additionalProperties>False</additionalProperties>\n<required>"
          "[\"query\"]</required>\n</parameters>\n</function>" +
          nemotron_call_format);
  const std::vector<ToolSpec> nullable{
      ToolSpec("lookup", "  Look up.  ",
               R"({"type": "object", "properties": {"id": {"type": ["string", "null"], "description": " The id "}}})")};
  EXPECT_EQ(
      renderer->create_conversation_prefix_with_tools(nullable)[0].text(),
      nemotron_tools_intro +
          "<function>\n<name>lookup</name>\n<description>Look up.</description>\n<parameters>\n<parameter>\n<name>id"
          "</name>\n<type>['string', 'null']</type>\n<description>The id</description>\n</parameter>\n"
          "</parameters>\n</function>" +
          nemotron_call_format);
  // The cookbook leaves out an empty description, where the template writes an empty element.
  const std::vector<ToolSpec> minimal{ToolSpec("ping", "", "{}")};
  EXPECT_EQ(renderer->create_conversation_prefix_with_tools(minimal)[0].text(),
            nemotron_tools_intro + "<function>\n<name>ping</name>\n<parameters>\n</parameters>\n</function>" +
                nemotron_call_format);
}

TEST(Nemotron3Tools, BadDeclarationsAreErrorsNamingTheTool) {
  const auto renderer = detail::make_nemotron3(stand_in_tokenizer());
  const std::vector<std::pair<std::string, std::string>> cases{
      {"[1, 2]", "tools[1].parameters"},
      {"{\"type\": \"object\", \"properties\": []}", "tools[1].parameters.properties"},
      {"{\"type\": \"object\", \"properties\": {\"x\": 3}}", "tools[1].parameters.properties.x"},
      {"not json", "tools[1].parameters"},
  };
  for (const auto& [parameters, path] : cases) {
    const std::vector<ToolSpec> tools{nemotron_weather_spec(), ToolSpec("bad", "Bad.", parameters)};
    try {
      renderer->create_conversation_prefix_with_tools(tools);
      ADD_FAILURE() << "accepted parameters " << parameters;
    } catch (const error& e) {
      EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
      EXPECT_THAT(e.what(), HasSubstr(path + ": "));
    }
  }
}

Message nemotron_call_message(std::string text, std::vector<ToolCall> calls, std::string thinking = {}) {
  std::vector<ContentPart> parts;
  if (!thinking.empty()) parts.emplace_back(ThinkingPart(std::move(thinking)));
  parts.emplace_back(TextPart(std::move(text)));
  Message message("assistant", std::move(parts));
  message.tool_calls = std::move(calls);
  return message;
}

// The cookbook's test_tool_argument_value_serialization_matches_hf: JSON for objects and arrays,
// Python's str() for the other values (True, None), in the order written.
TEST(Nemotron3Tools, ArgumentsAreWrittenAsTheTemplateWritesThem) {
  const auto renderer = detail::make_nemotron3(stand_in_tokenizer());
  const std::vector<Message> messages{
      Message("user", "q"),
      nemotron_call_message("Setting up.",
                            {ToolCall("cfg", R"({"flag": true, "opt": null, "num": 3, "ratio": 0.5, "text": "s", )"
                                             R"("obj": {"b": 1, "a": 2}, "arr": [1, "x"]})")}),
      Message("tool", "ok"), Message("user", "next")};
  EXPECT_EQ(
      text_of(renderer->build_generation_prompt(messages).to_ints()),
      "<|im_start|>system\n<|im_end|>\n<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n<think></think>"
      "Setting up.\n<tool_call>\n<function=cfg>\n<parameter=flag>\nTrue\n</parameter>\n<parameter=opt>\nNone\n"
      "</parameter>\n<parameter=num>\n3\n</parameter>\n<parameter=ratio>\n0.5\n</parameter>\n<parameter=text>\ns\n"
      "</parameter>\n<parameter=obj>\n{\"b\": 1, \"a\": 2}\n</parameter>\n<parameter=arr>\n[1, \"x\"]\n"
      "</parameter>\n</function>\n</tool_call>\n<|im_end|>\n<|im_start|>user\n<tool_response>\nok\n"
      "</tool_response>\n<|im_end|>\n<|im_start|>user\nnext<|im_end|>\n<|im_start|>assistant\n<think>\n");
  const std::vector<Message> bad{Message("user", "q"), nemotron_call_message("", {ToolCall("cfg", "[1]")})};
  try {
    renderer->build_supervised_example(bad);
    ADD_FAILURE() << "rendered arguments that are not an object";
  } catch (const error& e) {
    EXPECT_THAT(e.what(), HasSubstr("messages[1].tool_calls[0].arguments"));
  }
}

// The cookbook's contentless-call and consecutive-result conversations, and a call whose message
// only reasoned, made history by a later user message (the template writes "<think></think>\n"
// before the call there; the cookbook's renderer leaves out that "\n", which we follow the
// template in).
TEST(Nemotron3Tools, CallsAndResultsEqualTheNanoTemplate) {
  const std::vector<std::vector<Message>> conversations{
      {Message("user", "q"), nemotron_call_message("", {ToolCall("search", R"({"query": "x"})")}),
       Message("tool", "res"), Message("user", "next")},
      {Message("user", "q"), Message("assistant", "calling"), Message("tool", "r1"), Message("tool", "r2")},
      {Message("user", "q"), Message("assistant", "calling"), Message("tool", "r1"), Message("tool", "r2"),
       Message("user", "go on")},
      {Message("user", "q"), nemotron_call_message("", {ToolCall("search", R"({"query": "x"})")}, "R"),
       Message("tool", "res"), Message("assistant", "done"), Message("user", "next")},
      {Message("user", "q"),
       nemotron_call_message("Both.",
                             {ToolCall("search", R"({"query": "x"})"), ToolCall("search", R"({"query": "y"})")}, "R"),
       Message("tool", "r1"), Message("tool", "r2")},
  };
  for (const auto make : {&detail::make_nemotron3, &detail::make_nemotron3_preserve_thinking}) {
    const auto renderer = make(stand_in_tokenizer());
    const std::string variables = renderer->has_extension_property() ? R"({"truncate_history_thinking": false})" : "{}";
    for (const std::vector<Message>& messages : conversations) {
      const std::string expected = nemotron_nano_prompt(messages, variables);
      EXPECT_EQ(text_of(renderer->build_generation_prompt(messages).to_ints()), expected);
      EXPECT_EQ(renderer->build_generation_prompt(messages).to_ints(), tokens_of(expected));
    }
  }
  const auto renderer = detail::make_nemotron3(stand_in_tokenizer());
  EXPECT_THAT(text_of(renderer->build_generation_prompt(conversations[3]).to_ints()),
              HasSubstr("<|im_start|>assistant\n<think></think>\n<tool_call>\n<function=search>"));
}

ParsedResponse parse_nemotron_text(const Renderer& renderer, std::string_view text) {
  return renderer.parse_response(tokens_of(text));
}

// The cookbook's parse tests (nemotron3_test.py, tool_calling_test.py).
TEST(Nemotron3Tools, ParsesReasoningAndXmlToolCalls) {
  const auto renderer = detail::make_nemotron3(stand_in_tokenizer());
  ParsedResponse plain = parse_nemotron_text(*renderer, "The answer is 42.<|im_end|>");
  EXPECT_EQ(plain.termination, ParseTermination::stop_sequence);
  EXPECT_EQ(plain.message, Message("assistant", "The answer is 42."));

  // Sampled after the prompt's "<think>\n".
  ParsedResponse reasoned =
      parse_nemotron_text(*renderer, "I should reason carefully.\n</think>\nThe answer is 42.<|im_end|>");
  EXPECT_EQ(reasoned.termination, ParseTermination::stop_sequence);
  EXPECT_EQ(reasoned.message.content,
            (std::vector<ContentPart>{ThinkingPart("I should reason carefully."), TextPart("The answer is 42.")}));

  ParsedResponse call =
      parse_nemotron_text(*renderer,
                          "\n</think>\n<tool_call>\n<function=get_weather>\n<parameter=location>\nNew York, NY\n"
                          "</parameter>\n</function>\n</tool_call><|im_end|>");
  EXPECT_EQ(call.termination, ParseTermination::stop_sequence);
  EXPECT_THAT(call.message.tool_calls, ElementsAre(ToolCall("get_weather", R"({"location": "New York, NY"})")));
  EXPECT_EQ(call.message.text(), "");
  EXPECT_EQ(call.message.thinking(), "");

  ParsedResponse two =
      parse_nemotron_text(*renderer,
                          "I'll get the weather for both cities.\n<tool_call>\n<function=get_weather>\n"
                          "<parameter=location>\nNYC\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n"
                          "<function=get_weather>\n<parameter=location>\nLA\n</parameter>\n</function>\n"
                          "</tool_call>\n<|im_end|>");
  EXPECT_EQ(two.message.text(), "I'll get the weather for both cities.");
  EXPECT_THAT(two.message.tool_calls, ElementsAre(ToolCall("get_weather", R"({"location": "NYC"})"),
                                                  ToolCall("get_weather", R"({"location": "LA"})")));
  // A value that is JSON is read as JSON; anything else is a string.
  ParsedResponse typed = parse_nemotron_text(
      *renderer,
      "<tool_call>\n<function=cfg>\n<parameter=n>\n3\n</parameter>\n<parameter=flag>\ntrue\n</parameter>\n"
      "<parameter=obj>\n{\"a\": [1]}\n</parameter>\n<parameter=s>\nhello world\n</parameter>\n</function>\n"
      "</tool_call>\n<|im_end|>");
  EXPECT_THAT(typed.message.tool_calls,
              ElementsAre(ToolCall("cfg", R"({"n": 3, "flag": true, "obj": {"a": [1]}, "s": "hello world"})")));
}

TEST(Nemotron3Tools, ParseReportsWhatItCouldNotRead) {
  const auto renderer = detail::make_nemotron3(stand_in_tokenizer());
  ParsedResponse cut = parse_nemotron_text(*renderer, "Thinking about it");
  EXPECT_EQ(cut.termination, ParseTermination::malformed);
  EXPECT_EQ(cut.message.text(), "Thinking about it");

  ParsedResponse unclosed = parse_nemotron_text(*renderer, "Let me call.\n<tool_call>\n<function=search>\n<|im_end|>");
  EXPECT_EQ(unclosed.termination, ParseTermination::stop_sequence);
  EXPECT_THAT(unclosed.message.tool_calls, IsEmpty());
  ASSERT_EQ(unclosed.message.unparsed_tool_calls.size(), 1U);
  EXPECT_THAT(unclosed.message.unparsed_tool_calls[0].raw_text, HasSubstr("<tool_call>\n<function=search>"));

  ParsedResponse stray = parse_nemotron_text(
      *renderer,
      "<tool_call>\n<function=search>\nstray\n<parameter=q>\nx\n</parameter>\n</function>\n</tool_call><|im_end|>");
  EXPECT_THAT(stray.message.tool_calls, IsEmpty());
  ASSERT_EQ(stray.message.unparsed_tool_calls.size(), 1U);
  EXPECT_EQ(stray.message.unparsed_tool_calls[0].raw_text,
            "<tool_call>\n<function=search>\nstray\n<parameter=q>\nx\n</parameter>\n</function>\n</tool_call>");

  const std::vector<TokenId> twice = tokens_of("a<|im_end|>b<|im_end|>");
  EXPECT_EQ(renderer->parse_response(twice).termination, ParseTermination::malformed);
}

// What a renderer writes, parse_response reads back, for each format.
TEST(Nemotron3Tools, ARenderedCallParsesBack) {
  const Message turn = nemotron_call_message(
      "Checking.",
      {ToolCall("get_weather", R"({"location": "Paris"})"), ToolCall("get_weather", R"({"location": "Rome"})")},
      "Two cities.");
  for (const auto make : {&detail::make_nemotron3, &detail::make_nemotron3_ultra}) {
    const auto renderer = make(stand_in_tokenizer());
    for (const Message& message : {turn, nemotron_call_message("", turn.tool_calls, "Two cities."),
                                   nemotron_call_message("", turn.tool_calls)}) {
      const std::vector<Message> messages{Message("user", "Weather?"), message};
      const SupervisedExample example = renderer->build_supervised_example(messages);
      const std::vector<TokenId> tokens = example.model_input.to_ints();
      const auto first = std::find(example.weights.begin(), example.weights.end(), 1.0f) - example.weights.begin();
      const ParsedResponse parsed =
          renderer->parse_response(std::span(tokens).subspan(static_cast<std::size_t>(first)));
      EXPECT_EQ(parsed.termination, ParseTermination::stop_sequence) << renderer->name();
      EXPECT_EQ(parsed.message.text(), message.text()) << renderer->name();
      EXPECT_EQ(parsed.message.thinking(), message.thinking()) << renderer->name();
      EXPECT_EQ(parsed.message.tool_calls, message.tool_calls) << renderer->name();
    }
  }
}

}  // namespace
}  // namespace tinker::renderers
