// tools_from_json: the cookbook's and OpenAI's declaration shapes, bare or under "tools", and
// errors that name the JSON path.
#include "support/expect_error.hpp"

#include <tinker/renderers.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tinker::renderers {
namespace {

TEST(ToolsFromJson, ReadsTheCookbookAndOpenAiShapes) {
  const ToolSpec weather("get_weather", "The weather in a city",
                         R"({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]})");
  const std::string parameters =
      R"({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})";
  const std::string cookbook =
      R"([{"name": "get_weather", "description": "The weather in a city", "parameters": )" + parameters + "}]";
  const std::string openai =
      R"([{"type": "function", "function": {"name": "get_weather", "description": "The weather in a city", "parameters": )" +
      parameters + R"(, "strict": true}}])";
  EXPECT_EQ(tools_from_json(cookbook), std::vector<ToolSpec>{weather});
  EXPECT_EQ(tools_from_json(openai), std::vector<ToolSpec>{weather});
  EXPECT_EQ(tools_from_json(R"({"tools": )" + openai + "}"), std::vector<ToolSpec>{weather});
  // Description and parameters may be left out (a function without arguments).
  EXPECT_EQ(
      tools_from_json(R"([{"name": "now"}, {"type": "function", "function": {"name": "today", "parameters": null}}])"),
      (std::vector<ToolSpec>{ToolSpec("now", ""), ToolSpec("today", "")}));
  EXPECT_TRUE(tools_from_json("[]").empty());
}

TEST(ToolsFromJson, ErrorsNameTheJsonPath) {
  const auto error_of = [](std::string_view json, std::string_view text) {
    test::expect_tinker_error(errc::invalid_argument, text, [&] { (void)tools_from_json(json); });
  };
  error_of(R"([{"name": "a"}, {"type": "function", "function": {"description": "x"}}])",
           "tools JSON: [1].function.name: required");
  error_of(R"({"tools": [{"type": "retrieval"}]})", "tools JSON: tools[0].type: unknown tool type \"retrieval\"");
  error_of(R"([{"type": "function"}])", "tools JSON: [0].function: required");
  error_of(R"([{"type": "function", "function": "f"}])", "[0].function: expected an object, got string");
  error_of(R"([{"name": "f", "parameters": ["x"]}])", "[0].parameters: expected a JSON Schema object, got array");
  error_of(R"([{"name": 3}])", "[0].name: expected a string, got integer");
  error_of(R"([{"name": ""}])", "[0].name: empty");
  error_of(R"([{"name": "f", "description": 1}])", "[0].description: expected a string");
  error_of(R"([{"name": "f"}, {"name": "f"}])", "tools JSON: [1]: a second tool named \"f\"");
  error_of(R"({"functions": []})", "tools JSON: tools: required");
  error_of(R"({"tools": {}})", "tools JSON: tools: expected a list of tools");
  error_of("7", "tools JSON: the document: expected a list of tools");
  error_of("[", "tools JSON");
  error_of("[1]", "tools JSON: [0]: expected an object, got integer");
}

}  // namespace
}  // namespace tinker::renderers
