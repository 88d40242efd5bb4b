// Nemotron 3's tool declarations and tool-call XML (renderers/nemotron3_tools.hpp), written as the
// Tinker cookbook's nemotron3.py writes them, which follows the model's chat template: values the
// template passes through `tojson` are JSON as Python's json.dumps writes it, the others Python's
// str() of the value.
#include "renderers/nemotron3_tools.hpp"

#include "renderers/python_format.hpp"
#include "renderers/qwen_common.hpp"

#include <tinker/error.hpp>

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <array>
#include <cstdio>
#include <initializer_list>
#include <string_view>
#include <system_error>
#include <vector>

namespace tinker::renderers::detail {
namespace {
namespace nemotron_tools {

namespace json = boost::json;

[[noreturn]] void invalid_tool(const std::string& path, std::string_view what) {
  throw error(errc::invalid_argument, path + ": " + std::string(what));
}

// <key>value</key> for each member of `object` not in `handled`: containers as JSON, scalars as
// str() (the template's render_extra_keys).
void append_extra_keys(std::vector<std::string>& lines, const json::object& object,
                       std::initializer_list<std::string_view> handled) {
  for (const auto& member : object) {
    bool is_handled = false;
    for (const std::string_view key : handled) is_handled = is_handled || member.key() == key;
    if (is_handled) continue;
    const std::string key(member.key());
    lines.push_back("<" + key + ">" + qwen::python_str(member.value()) + "</" + key + ">");
  }
}

void append_parameter(std::vector<std::string>& lines, std::string_view name, const json::value& fields,
                      const std::string& path) {
  if (!fields.is_object()) invalid_tool(path, "expected a JSON Schema object");
  const json::object& schema = fields.get_object();
  lines.push_back("<parameter>");
  lines.push_back("<name>" + std::string(name) + "</name>");
  if (const json::value* type = schema.if_contains("type")) lines.push_back("<type>" + python::str(*type) + "</type>");
  if (const json::value* description = schema.if_contains("description")) {
    lines.push_back("<description>" + std::string(qwen::strip_python_whitespace(python::str(*description))) +
                    "</description>");
  }
  if (const json::value* values = schema.if_contains("enum")) {
    lines.push_back("<enum>" + qwen::python_json(*values) + "</enum>");
  }
  append_extra_keys(lines, schema, {"name", "type", "description", "enum"});
  lines.push_back("</parameter>");
}

std::string tool_declaration(const ToolSpec& tool, std::size_t index) {
  const std::string path = "tools[" + std::to_string(index) + "].parameters";
  std::error_code ec;
  const json::value parameters = json::parse(tool.parameters, ec);
  if (ec || !parameters.is_object()) {
    invalid_tool(path, "expected a JSON object's text (a JSON Schema), got: " + tool.parameters.substr(0, 80));
  }
  const json::object& schema = parameters.get_object();
  std::vector<std::string> lines{"<function>", "<name>" + tool.name + "</name>"};
  const std::string_view description = qwen::strip_python_whitespace(tool.description);
  // The cookbook leaves out an empty description, where the template writes an empty element.
  if (!description.empty()) lines.push_back("<description>" + std::string(description) + "</description>");
  lines.push_back("<parameters>");
  if (const json::value* properties = schema.if_contains("properties")) {
    if (!properties->is_object()) invalid_tool(path + ".properties", "expected an object");
    for (const auto& member : properties->get_object()) {
      append_parameter(lines, member.key(), member.value(), path + ".properties." + std::string(member.key()));
    }
  }
  append_extra_keys(lines, schema, {"type", "properties", "required"});
  if (const json::value* required = schema.if_contains("required")) {
    lines.push_back("<required>" + qwen::python_json(*required) + "</required>");
  }
  lines.push_back("</parameters>");
  lines.push_back("</function>");
  std::string joined;
  for (const std::string& line : lines) joined += (joined.empty() ? "" : "\n") + line;
  return joined;
}

}  // namespace nemotron_tools
}  // namespace

std::string nemotron3_tools_text(std::span<const ToolSpec> tools) {
  if (tools.empty()) return {};
  std::string declarations;
  for (std::size_t i = 0; i < tools.size(); ++i) {
    declarations += (i > 0 ? "\n" : "") + nemotron_tools::tool_declaration(tools[i], i);
  }
  return qwen::xml_tools_block(declarations);
}

std::string nemotron3_tool_call_xml(const ToolCall& call, std::size_t message, std::size_t index) {
  boost::json::object arguments;
  if (!call.arguments.empty()) {
    std::error_code ec;
    boost::json::value parsed = boost::json::parse(call.arguments, ec);
    if (ec || !parsed.is_object()) {
      throw error(errc::invalid_argument,
                  "messages[" + std::to_string(message) + "].tool_calls[" + std::to_string(index) +
                      "].arguments: expected a JSON object's text, got: " + call.arguments.substr(0, 80));
    }
    arguments = std::move(parsed.get_object());
  }
  std::string out = "<tool_call>\n<function=" + call.name + ">";
  for (const auto& member : arguments) {
    out += "\n<parameter=" + std::string(member.key()) + ">\n" + qwen::python_str(member.value()) + "\n</parameter>";
  }
  return out + "\n</function>\n</tool_call>";
}

}  // namespace tinker::renderers::detail
