#include "support/render_reference.hpp"

#include "support/temp_files.hpp"
#include "support/test_certs.hpp"
#include "support/tokenizer_reference.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <variant>

namespace tinker::test {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using renderers::Message;

[[noreturn]] void fail_rendering(const std::string& message) {
  throw std::runtime_error(message);
}

json::value tool_call_json(const renderers::ToolCall& call, ToolArgumentsAs arguments) {
  json::object function{{"name", call.name}};
  if (arguments == ToolArgumentsAs::object) {
    function["arguments"] = json::parse(call.arguments);
  } else {
    function["arguments"] = call.arguments;
  }
  json::object out{{"type", "function"}, {"function", std::move(function)}};
  if (call.id) out["id"] = *call.id;
  return out;
}

json::value message_json(const Message& message, std::size_t index, ToolArgumentsAs arguments) {
  for (const renderers::ContentPart& part : message.content) {
    if (std::holds_alternative<renderers::ImagePart>(part)) {
      fail_rendering("template_messages_json: messages[" + std::to_string(index) + "] has an image part");
    }
  }
  json::object out{{"role", message.role}, {"content", message.text()}};
  const bool has_thinking = std::any_of(message.content.begin(), message.content.end(), [](const auto& part) {
    return std::holds_alternative<renderers::ThinkingPart>(part);
  });
  if (has_thinking) out["reasoning_content"] = message.thinking();
  if (!message.tool_calls.empty()) {
    json::array calls;
    for (const renderers::ToolCall& call : message.tool_calls) calls.push_back(tool_call_json(call, arguments));
    out["tool_calls"] = std::move(calls);
  }
  if (message.name) out["name"] = *message.name;
  if (message.tool_call_id) out["tool_call_id"] = *message.tool_call_id;
  return out;
}

json::array messages_array(std::span<const Message> messages, ToolArgumentsAs arguments) {
  json::array out;
  for (std::size_t i = 0; i < messages.size(); ++i) out.push_back(message_json(messages[i], i, arguments));
  return out;
}

}  // namespace

std::vector<TestConversation> load_test_conversations() {
  const fs::path file = fs::path(TINKER_TEST_DATA_DIR) / "renderers" / "conversations.json";
  const json::value document = json::parse(read_file(file));
  std::vector<TestConversation> conversations;
  for (const json::value& entry : document.at("conversations").as_array()) {
    const json::object& object = entry.as_object();
    TestConversation conversation;
    conversation.name = std::string(object.at("name").as_string());
    conversation.messages = renderers::conversation_from_json(json::serialize(object.at("messages")));
    conversations.push_back(std::move(conversation));
  }
  if (conversations.empty()) fail_rendering(file.string() + " has no conversations");
  return conversations;
}

std::string template_messages_json(std::span<const Message> messages, ToolArgumentsAs arguments) {
  return json::serialize(messages_array(messages, arguments));
}

std::string with_tools(std::string_view variables_json, std::span<const renderers::ToolSpec> tools) {
  json::value variables = json::parse(variables_json);
  if (!variables.is_object()) fail_rendering("with_tools: the template variables are not a JSON object");
  json::array list;
  for (const renderers::ToolSpec& tool : tools) {
    json::object function{{"name", tool.name}, {"description", tool.description}};
    function["parameters"] = json::parse(tool.parameters);
    list.push_back(json::object{{"type", "function"}, {"function", std::move(function)}});
  }
  variables.get_object()["tools"] = std::move(list);
  return json::serialize(variables);
}

std::vector<std::string> render_chat_template(const fs::path& template_file, std::span<const TemplateCase> cases,
                                              ToolArgumentsAs arguments) {
  json::array input;
  for (const TemplateCase& entry : cases) {
    input.push_back(json::object{{"messages", messages_array(entry.messages, arguments)},
                                 {"add_generation_prompt", entry.add_generation_prompt},
                                 {"variables", json::parse(entry.variables_json)}});
  }
  const TempFile cases_file(json::serialize(input), ".json");
  const fs::path script = reference_script("chat_template_reference.js");
  const std::vector<std::string> lines =
      run_node_script(script, {template_file.string(), cases_file.path(), npm_node_modules().string()});
  if (lines.size() != cases.size()) {
    fail_rendering(script.string() + " printed " + std::to_string(lines.size()) + " lines for " +
                   std::to_string(cases.size()) + " cases of " + template_file.string());
  }
  std::vector<std::string> rendered;
  for (const std::string& line : lines) {
    const json::value value = json::parse(line);
    if (!value.is_string()) fail_rendering(script.string() + " printed a line that is not a JSON string: " + line);
    rendered.emplace_back(value.get_string());
  }
  return rendered;
}

std::vector<std::vector<Message>> prompts_before_assistant_messages(std::span<const Message> messages) {
  std::vector<std::vector<Message>> prompts;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (messages[i].role == "assistant") prompts.emplace_back(messages.begin(), messages.begin() + i);
  }
  return prompts;
}

std::string token_difference(const Tokenizer& tokenizer, std::span<const TokenId> expected,
                             std::span<const TokenId> actual) {
  if (std::equal(expected.begin(), expected.end(), actual.begin(), actual.end())) return {};
  const auto [left, right] = std::mismatch(expected.begin(), expected.end(), actual.begin(), actual.end());
  const auto at = static_cast<std::size_t>(left - expected.begin());
  const auto quoted = [&tokenizer](std::span<const TokenId> tokens) {
    return json::serialize(json::string(tokenizer.decode(tokens)));
  };
  return "tokens differ from index " + std::to_string(at) + " (expected " + std::to_string(expected.size()) +
         " tokens, got " + std::to_string(actual.size()) + ")\n  expected text: " + quoted(expected) +
         "\n  actual text:   " + quoted(actual) + "\n  expected from there: " + quoted(expected.subspan(at)) +
         "\n  actual from there:   " + quoted(actual.subspan(at));
}

TemplateComparison compare_generation_prompts(const renderers::Renderer& renderer, const fs::path& template_file,
                                              std::span<const TestConversation> conversations,
                                              const std::string& variables_json, ToolArgumentsAs arguments) {
  std::vector<TemplateCase> cases;
  std::vector<std::string> labels;
  for (const TestConversation& conversation : conversations) {
    for (auto& prompt : prompts_before_assistant_messages(conversation.messages)) {
      labels.push_back(conversation.name + " (prompt of " + std::to_string(prompt.size()) + " messages)");
      cases.push_back(TemplateCase{std::move(prompt), true, variables_json});
    }
  }
  const std::vector<std::string> rendered = render_chat_template(template_file, cases, arguments);
  TemplateComparison comparison;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::vector<TokenId> expected = renderer.tokenizer().encode(rendered[i], false);
    const std::vector<TokenId> actual = renderer.build_generation_prompt(cases[i].messages).to_ints();
    ++comparison.compared;
    std::string difference = token_difference(renderer.tokenizer(), expected, actual);
    if (!difference.empty()) comparison.failures.push_back(labels[i] + ": " + difference);
  }
  return comparison;
}

TemplateComparison compare_whole_conversations(const renderers::Renderer& renderer, const fs::path& template_file,
                                               std::span<const TestConversation> conversations,
                                               std::string_view template_trailer, const std::string& variables_json,
                                               ToolArgumentsAs arguments) {
  std::vector<TemplateCase> cases;
  for (const TestConversation& conversation : conversations) {
    cases.push_back(TemplateCase{conversation.messages, false, variables_json});
  }
  const std::vector<std::string> rendered = render_chat_template(template_file, cases, arguments);
  TemplateComparison comparison;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    ++comparison.compared;
    std::string_view text = rendered[i];
    if (!text.ends_with(template_trailer)) {
      comparison.failures.push_back(conversations[i].name + ": the template's text does not end with the trailer " +
                                    json::serialize(json::string(template_trailer)) + ": " +
                                    json::serialize(json::string(text)));
      continue;
    }
    text.remove_suffix(template_trailer.size());
    const std::vector<TokenId> expected = renderer.tokenizer().encode(text, false);
    const std::vector<TokenId> actual = renderer.build_supervised_example(cases[i].messages).model_input.to_ints();
    std::string difference = token_difference(renderer.tokenizer(), expected, actual);
    if (!difference.empty()) comparison.failures.push_back(conversations[i].name + ": " + difference);
  }
  return comparison;
}

std::shared_ptr<const Tokenizer> npm_tokenizer(std::string_view package) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const Tokenizer>, std::less<>> loaded;
  const std::lock_guard lock(mutex);
  if (const auto found = loaded.find(package); found != loaded.end()) return found->second;
  const std::string name(package);
  auto tokenizer = load_tokenizer_json(npm_package_file(name + "/models/tokenizer.json"), name);
  loaded.emplace(name, tokenizer);
  return tokenizer;
}

}  // namespace tinker::test
