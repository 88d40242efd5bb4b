// tools_from_json: tool declarations in the cookbook's shape ({"name", "description",
// "parameters"}) or OpenAI's ({"type": "function", "function": {...}}), as a list or under "tools".
#include "core/wire/json_reader.hpp"

#include <tinker/error.hpp>
#include <tinker/renderers.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

namespace tinker::renderers {
namespace {

namespace json = boost::json;
using wire::Path;

[[noreturn]] void tools_fail(const Path& path, std::string_view what) {
  const std::string where = path.str();
  throw error(errc::invalid_argument,
              "tools JSON: " + (where.empty() ? std::string("the document") : where) + ": " + std::string(what));
}

const json::object& tools_object(const json::value& value, const Path& path) {
  if (!value.is_object()) tools_fail(path, std::string("expected an object, got ") + wire::json_kind(value));
  return value.get_object();
}

// `key` of `object` as a string; empty when absent or null and not `required`.
std::string tools_string(const json::object& object, std::string_view key, const Path& path, bool required) {
  const json::value* value = object.if_contains(key);
  const Path field(path, key);
  if (value == nullptr || value->is_null()) {
    if (required) tools_fail(field, "required");
    return {};
  }
  if (!value->is_string()) tools_fail(field, std::string("expected a string, got ") + wire::json_kind(*value));
  return std::string(value->get_string());
}

ToolSpec read_tool(const json::value& value, const Path& path) {
  const json::object& outer = tools_object(value, path);
  // OpenAI wraps the declaration: {"type": "function", "function": {...}}.
  const json::object* declaration = &outer;
  const Path function_path(path, "function");
  const Path* where = &path;
  if (const json::value* type = outer.if_contains("type"); type != nullptr && !type->is_null()) {
    const std::string kind = tools_string(outer, "type", path, true);
    if (kind != "function") tools_fail(Path(path, "type"), "unknown tool type \"" + kind + "\" (known: function)");
    const json::value* function = outer.if_contains("function");
    if (function == nullptr || function->is_null()) tools_fail(function_path, "required");
    declaration = &tools_object(*function, function_path);
    where = &function_path;
  }
  ToolSpec tool(tools_string(*declaration, "name", *where, true),
                tools_string(*declaration, "description", *where, false));
  if (tool.name.empty()) tools_fail(Path(*where, "name"), "empty");
  if (const json::value* parameters = declaration->if_contains("parameters");
      parameters != nullptr && !parameters->is_null()) {
    if (!parameters->is_object()) {
      tools_fail(Path(*where, "parameters"),
                 std::string("expected a JSON Schema object, got ") + wire::json_kind(*parameters));
    }
    tool.parameters.clear();
    wire::write_value(*parameters, tool.parameters);
  }
  return tool;
}

}  // namespace

std::vector<ToolSpec> tools_from_json(std::string_view text) {
  json::value document;
  try {
    document = wire::parse_json(text);
  } catch (const error& e) {
    throw error(errc::invalid_argument, std::string("tools JSON: ") + e.what());
  }
  const Path root;
  const Path tools_path(root, "tools");
  const json::value* tools = &document;
  if (document.is_object()) {
    tools = document.get_object().if_contains("tools");
    if (tools == nullptr) tools_fail(tools_path, "required (or give the list of tools itself)");
  }
  if (!tools->is_array()) {
    tools_fail(document.is_object() ? tools_path : root, "expected a list of tools or {\"tools\": [...]}");
  }
  const Path& list_path = document.is_object() ? tools_path : root;
  std::vector<ToolSpec> specs;
  const json::array& array = tools->get_array();
  for (std::size_t i = 0; i < array.size(); ++i) {
    const Path tool_path(list_path, i);
    specs.push_back(read_tool(array[i], tool_path));
    for (std::size_t j = 0; j < i; ++j) {
      // A call names its function: two declarations of one name leave the model no way to choose.
      if (specs[j].name == specs[i].name) tools_fail(tool_path, "a second tool named \"" + specs[i].name + "\"");
    }
  }
  return specs;
}

}  // namespace tinker::renderers
