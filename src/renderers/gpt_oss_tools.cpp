// gpt-oss's tool declarations (renderers/gpt_oss.hpp): JSON Schemas as the TypeScript-like types
// of Harmony's `namespace functions`, written exactly as the Tinker cookbook's gpt_oss.py writes
// them (JSON values as Python's json.dumps writes them, Python's truthiness where it tests one).
#include "renderers/gpt_oss.hpp"
#include "renderers/qwen_common.hpp"

#include <tinker/error.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <string_view>
#include <system_error>
#include <vector>

namespace tinker::renderers::detail {
namespace {
namespace harmony {

namespace json = boost::json;

// The member `key` of `schema` when it is an object that has it.
const json::value* member(const json::value& schema, std::string_view key) {
  return schema.is_object() ? schema.get_object().if_contains(key) : nullptr;
}

// Python's truth value of what json.loads gives for `value` (absent is false).
bool truthy(const json::value* value) {
  if (value == nullptr) return false;
  switch (value->kind()) {
    case json::kind::null: return false;
    case json::kind::bool_: return value->get_bool();
    case json::kind::int64: return value->get_int64() != 0;
    case json::kind::uint64: return value->get_uint64() != 0;
    case json::kind::double_: return value->get_double() != 0.0;
    case json::kind::string: return !value->get_string().empty();
    case json::kind::array: return !value->get_array().empty();
    case json::kind::object: return !value->get_object().empty();
  }
  return false;
}

bool is_string(const json::value* value, std::string_view text) {
  return value != nullptr && value->is_string() && value->get_string() == text;
}

// The items of an array member (none when it is absent or not an array).
std::vector<const json::value*> items_of(const json::value* value) {
  std::vector<const json::value*> items;
  if (value != nullptr && value->is_array()) {
    for (const json::value& item : value->get_array()) items.push_back(&item);
  }
  return items;
}

bool is_required(const json::value& schema, std::string_view name) {
  for (const json::value* item : items_of(member(schema, "required"))) {
    if (is_string(item, name)) return true;
  }
  return false;
}

std::string joined(const std::vector<std::string>& pieces, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < pieces.size(); ++i) out += (i > 0 ? std::string(separator) : "") + pieces[i];
  return out;
}

std::string typescript_type(const json::value& schema);

// An object schema inline: "{ name: type, optional?: type }".
std::string object_type(const json::value& schema) {
  if (!is_string(member(schema, "type"), "object")) return "any";
  std::vector<std::string> fields;
  if (const json::value* properties = member(schema, "properties"); properties != nullptr && properties->is_object()) {
    for (const auto& property : properties->get_object()) {
      fields.push_back(std::string(property.key()) + (is_required(schema, property.key()) ? "" : "?") + ": " +
                       typescript_type(property.value()));
    }
  }
  return "{ " + joined(fields, ", ") + " }";
}

// A union of the alternatives in `variants`.
std::string union_of(const std::vector<const json::value*>& variants) {
  std::vector<std::string> types;
  for (const json::value* variant : variants) types.push_back(typescript_type(*variant));
  return joined(types, " | ");
}

std::string base_type(const json::value& schema, const json::value* type) {
  if (is_string(type, "string")) return "string";
  if (is_string(type, "number") || is_string(type, "integer")) return "number";
  if (is_string(type, "boolean")) return "boolean";
  if (is_string(type, "array")) {
    const json::value* items = member(schema, "items");
    return (items != nullptr ? typescript_type(*items) : std::string("any")) + "[]";
  }
  if (is_string(type, "object")) return object_type(schema);
  return "any";
}

// One schema's type: oneOf / anyOf as unions, a list of types as a union, string enums as their
// JSON literals, "| null" for a nullable one.
std::string typescript_type(const json::value& schema) {
  if (const json::value* one_of = member(schema, "oneOf")) return union_of(items_of(one_of));
  if (const json::value* any_of = member(schema, "anyOf")) return union_of(items_of(any_of));
  const json::value* type = member(schema, "type");
  if (type != nullptr && type->is_array()) {
    std::vector<std::string> types;
    for (const json::value* each : items_of(type)) {
      json::object single;
      single["type"] = *each;
      types.push_back(typescript_type(single));
    }
    return joined(types, " | ");
  }
  if (is_string(type, "string")) {
    if (const json::value* values = member(schema, "enum")) {
      std::vector<std::string> literals;
      for (const json::value* value : items_of(values)) literals.push_back(qwen::python_json(*value));
      return joined(literals, " | ");
    }
  }
  const std::string base = base_type(schema, type);
  return truthy(member(schema, "nullable")) ? base + " | null" : base;
}

// The comment lines before a parameter: its title (and a blank comment), description, examples.
std::vector<std::string> schema_comments(const json::value& schema) {
  std::vector<std::string> comments;
  if (const json::value* title = member(schema, "title"); truthy(title)) {
    comments.push_back(qwen::python_str(*title));
    comments.emplace_back();
  }
  if (const json::value* description = member(schema, "description"); truthy(description)) {
    comments.push_back(qwen::python_str(*description));
  }
  if (const json::value* examples = member(schema, "examples"); truthy(examples)) {
    comments.emplace_back("Examples:");
    for (const json::value* example : items_of(examples)) comments.push_back("- " + qwen::python_json(*example));
  }
  return comments;
}

std::string parameters_block(const json::value& schema) {
  const json::value* properties = member(schema, "properties");
  if (!is_string(member(schema, "type"), "object") || !truthy(properties) || !properties->is_object()) return "()";
  std::vector<std::string> lines;
  const json::value* description = member(schema, "description");
  lines.push_back(truthy(description) ? "(_: // " + qwen::python_str(*description) : std::string("(_:"));
  lines.emplace_back("{");
  for (const auto& property : properties->get_object()) {
    for (const std::string& comment : schema_comments(property.value())) lines.push_back("// " + comment);
    const json::value* fallback = member(property.value(), "default");
    lines.push_back(std::string(property.key()) + (is_required(schema, property.key()) ? "" : "?") + ": " +
                    typescript_type(property.value()) + "," +
                    (fallback != nullptr ? " // default: " + qwen::python_json(*fallback) : std::string()));
  }
  lines.emplace_back("})");
  return joined(lines, "\n");
}

std::string tool_definition(const ToolSpec& tool, std::size_t index) {
  std::error_code ec;
  const json::value parameters = json::parse(tool.parameters, ec);
  if (ec || !parameters.is_object()) {
    throw error(errc::invalid_argument, "tools[" + std::to_string(index) +
                                            "].parameters: expected a JSON object's text (a JSON Schema), got: " +
                                            tool.parameters.substr(0, 80));
  }
  std::string out = tool.description.empty() ? std::string() : "// " + tool.description + "\n";
  return out + "type " + tool.name + " = " + parameters_block(parameters) + " => any;";
}

}  // namespace harmony
}  // namespace

std::string harmony_tools_section(std::span<const ToolSpec> tools) {
  std::vector<std::string> definitions;
  for (std::size_t i = 0; i < tools.size(); ++i) definitions.push_back(harmony::tool_definition(tools[i], i));
  return "# Tools\n\n## functions\n\nnamespace functions {\n\n" + harmony::joined(definitions, "\n\n") +
         "\n\n} // namespace functions";
}

}  // namespace tinker::renderers::detail
