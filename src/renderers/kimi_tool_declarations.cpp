// The Kimi families' tool declarations (renderers/kimi_common.hpp): Kimi K2's JSON and Kimi
// K2.5's TypeScript-style text.
//
// Both start as the model's tokenizer does (tokenization_kimi.py's apply_chat_template): the tools
// in OpenAI's shape with every object's keys sorted. K2's template writes them with
// tojson(separators=(",", ":")); K2.5's and K2.6's write what the model repository's
// tool_declaration_ts.py (vendored by the cookbook as kimi_k2_5_tool_declaration_ts.py) makes of
// them, with Python's formatting of values (python_format.hpp).
#include "renderers/kimi_common.hpp"
#include "renderers/python_format.hpp"

#include <tinker/error.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tinker::renderers::detail {
namespace {

namespace json = boost::json;

[[noreturn]] void kimi_tools_error(const std::string& where, const std::string& what) {
  throw error(errc::invalid_argument, where + ": " + what);
}

// The tool as its tokenizer passes it on: {"description", "name", "parameters"} with sorted keys.
json::object kimi_function_object(const ToolSpec& tool, std::size_t index) {
  const std::string where = "tools[" + std::to_string(index) + "].parameters";
  json::value parameters;
  try {
    parameters = json::parse(tool.parameters);
  } catch (const std::exception& e) {
    kimi_tools_error(where, std::string("not JSON (") + e.what() + ")");
  }
  if (!parameters.is_object()) kimi_tools_error(where, "not a JSON object (a JSON Schema of the arguments)");
  json::object function;
  function["description"] = tool.description;
  function["name"] = tool.name;
  function["parameters"] = python::deep_sorted(parameters);
  return function;
}

}  // namespace

std::string kimi_json_tool_declarations(std::span<const ToolSpec> tools) {
  json::array declared;
  for (std::size_t i = 0; i < tools.size(); ++i) {
    json::object tool;
    tool["function"] = kimi_function_object(tools[i], i);
    tool["type"] = "function";
    declared.push_back(std::move(tool));
  }
  std::string out;
  python::append_json(out, declared, true);
  return out;
}

// ---- TypeScript-style declarations (K2.5, K2.6) ---------------------------------------------
//
// A JSON Schema is read into a TsType tree first, in the order the Python reads it, because
// reading has effects the writing depends on: "$defs" are collected (and "$ref"s resolved against
// what has been collected so far) and a "#" reference makes the root an interface of its own.

namespace {

constexpr std::string_view kTsIndent = "  ";

class TsParameter;

// One type of a schema, as tool_declaration_ts.py's _ParameterType* classes hold it.
class TsType {
 public:
  enum class Kind { scalar, object, array, enumeration, any_of, union_of, reference };
  enum class Extra { absent, any, never, typed, invalid };  // an object's additionalProperties

  Kind kind = Kind::scalar;
  std::string description;
  std::vector<std::pair<std::string, const json::value*>> constraints;  // the allowed keys present
  std::string name;                        // scalar: the JSON type; reference: the interface named
  std::vector<TsParameter> properties;     // object, in the schema's order
  Extra extra = Extra::absent;             // object
  std::vector<TsType> members;             // array: its item; any_of: the alternatives; object: typed extra
  std::vector<std::string> union_names;    // union_of: the TypeScript names of the types
  std::vector<const json::value*> values;  // enumeration
};

class TsParameter {
 public:
  std::string name;
  TsType type;
  bool optional = true;
  const json::value* default_value = nullptr;  // null when absent (or JSON null)
};

std::string ts_join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += separator;
    out += parts[i];
  }
  return out;
}

// Each line of `description` as a "// " comment at `indent`; empty lines stay empty.
std::string ts_comment(std::string_view description, std::string_view indent = {}) {
  std::string out;
  for (std::size_t start = 0;;) {
    const std::size_t end = description.find('\n', start);
    const std::string_view line = description.substr(start, end == std::string_view::npos ? end : end - start);
    if (!line.empty()) out.append(indent).append("// ").append(line);
    if (end == std::string_view::npos) return out;
    out += '\n';
    start = end + 1;
  }
}

class TsReader {
 public:
  TsType read(const json::value& schema, const std::string& path) {
    if (schema.is_bool()) return scalar(schema.get_bool() ? "any" : "null");
    if (!schema.is_object()) fail(path, "not a JSON Schema (an object or a boolean)");
    const json::object& object = schema.get_object();
    if (object.contains("$ref")) return reference(object, path);
    if (object.contains("anyOf")) return any_of(object, path);
    if (object.contains("enum")) return enumeration(object, path);
    if (const json::value* type = object.if_contains("type")) {
      if (type->is_array()) return union_of(object, path);
      if (type->is_string() && type->get_string() == "object") return read_object(object, path);
      if (type->is_string() && type->get_string() == "array") return array(object, path);
      if (!type->is_string()) fail(path + ".type", "not a string or a list of strings");
      TsType result = scalar(std::string(type->get_string()));
      describe(result, object, path);
      const std::string_view name = result.name;
      if (name == "string") constrain(result, object, {"maxLength", "minLength", "pattern"});
      if (name == "number" || name == "integer") constrain(result, object, {"maximum", "minimum"});
      return result;
    }
    if (object.empty()) return scalar("any");
    fail(path, "a JSON Schema needs \"$ref\", \"anyOf\", \"enum\" or \"type\"");
  }

  TsType read_object(const json::object& object, const std::string& path) {
    TsType result;
    result.kind = TsType::Kind::object;
    describe(result, object, path);
    if (object.empty()) return result;
    if (const json::value* defs = object.if_contains("$defs"); defs && python::truthy(*defs)) {
      if (!defs->is_object()) fail(path + ".$defs", "not an object");
      for (const auto& [name, definition] : defs->get_object()) define(std::string(name), &definition);
    }
    if (const json::value* extra = object.if_contains("additionalProperties")) {
      if (extra->is_object()) {
        result.extra = TsType::Extra::typed;
        result.members.push_back(read(*extra, path + ".additionalProperties"));
      } else if (extra->is_bool()) {
        result.extra = extra->get_bool() ? TsType::Extra::any : TsType::Extra::never;
      } else if (!extra->is_null()) {
        result.extra = TsType::Extra::invalid;
      }
    }
    const json::value* properties = object.if_contains("properties");
    if (properties == nullptr) return result;
    if (!properties->is_object()) fail(path + ".properties", "not an object");
    std::vector<std::string> required;
    if (const json::value* listed = object.if_contains("required")) {
      if (!listed->is_array()) fail(path + ".required", "not a list");
      for (const json::value& name : listed->get_array()) {
        if (name.is_string()) required.emplace_back(name.get_string());
      }
    }
    for (const auto& [name, schema] : properties->get_object()) {
      TsParameter parameter;
      parameter.name = name;
      parameter.type = read(schema, path + ".properties." + std::string(name));
      parameter.optional = std::find(required.begin(), required.end(), std::string_view(name)) == required.end();
      if (schema.is_object()) {
        const json::value* default_value = schema.get_object().if_contains("default");
        if (default_value != nullptr && !default_value->is_null()) parameter.default_value = default_value;
      }
      result.properties.push_back(std::move(parameter));
    }
    return result;
  }

  bool has_self_reference() const noexcept { return self_reference_; }
  /// The definitions collected so far, in the order first seen.
  std::vector<std::pair<std::string, const json::value*>> definitions() const { return definitions_; }

  [[noreturn]] void fail(const std::string& path, const std::string& what) const { kimi_tools_error(path, what); }

 private:
  static TsType scalar(std::string name) {
    TsType result;
    result.name = std::move(name);
    return result;
  }

  void describe(TsType& type, const json::object& object, const std::string& path) const {
    const json::value* description = object.if_contains("description");
    if (description == nullptr || !python::truthy(*description)) return;
    if (!description->is_string()) fail(path + ".description", "not a string");
    type.description = description->get_string();
  }

  static void constrain(TsType& type, const json::object& object, std::initializer_list<std::string_view> keys) {
    for (const auto& [key, value] : object) {
      if (std::find(keys.begin(), keys.end(), std::string_view(key)) != keys.end()) {
        type.constraints.emplace_back(std::string(key), &value);
      }
    }
    std::sort(type.constraints.begin(), type.constraints.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
  }

  void define(std::string name, const json::value* schema) {
    const auto known = std::find_if(definitions_.begin(), definitions_.end(),
                                    [&](const auto& definition) { return definition.first == name; });
    if (known != definitions_.end()) {
      known->second = schema;
    } else {
      definitions_.emplace_back(std::move(name), schema);
    }
  }

  TsType array(const json::object& object, const std::string& path) {
    TsType result;
    result.kind = TsType::Kind::array;
    describe(result, object, path);
    constrain(result, object, {"minItems", "maxItems"});
    const json::value* items = object.if_contains("items");
    result.members.push_back(items && python::truthy(*items) ? read(*items, path + ".items") : scalar("any"));
    return result;
  }

  TsType enumeration(const json::object& object, const std::string& path) {
    TsType result;
    result.kind = TsType::Kind::enumeration;
    describe(result, object, path);
    const json::value& values = object.at("enum");
    if (!values.is_array()) fail(path + ".enum", "not a list");
    const std::string type = enumeration_type(object, path);
    for (const json::value& value : values.get_array()) {
      // As Python's isinstance: a bool is an int, an int is not a float's only form.
      const bool is_integer = value.is_int64() || value.is_uint64() || value.is_bool();
      const bool fits = value.is_null() || (type == "string" && value.is_string()) ||
                        (type == "number" && (is_integer || value.is_double())) || (type == "integer" && is_integer) ||
                        (type == "boolean" && value.is_bool()) ||
                        (type != "string" && type != "number" && type != "integer" && type != "boolean");
      if (!fits) fail(path + ".enum", "the value " + python::str(value) + " is not a " + type);
      result.values.push_back(&value);
    }
    return result;
  }

  // The type an enum's values must have: its "type", a one-type list, or a type and "null".
  std::string enumeration_type(const json::object& object, const std::string& path) const {
    const json::value* type = object.if_contains("type");
    if (type == nullptr) return {};
    if (type->is_string()) return std::string(type->get_string());
    if (!type->is_array()) return {};
    const json::array& types = type->get_array();
    const auto name_at = [&](std::size_t i) { return types[i].is_string() ? std::string(types[i].get_string()) : ""; };
    if (types.size() == 1) return name_at(0);
    if (types.size() == 2 && (name_at(0) == "null" || name_at(1) == "null")) {
      return name_at(0) != "null" ? name_at(0) : name_at(1);
    }
    fail(path + ".type", "an enum's type must be one type, or one type and \"null\"");
  }

  TsType any_of(const json::object& object, const std::string& path) {
    TsType result;
    result.kind = TsType::Kind::any_of;
    describe(result, object, path);
    const json::value& alternatives = object.at("anyOf");
    if (!alternatives.is_array()) fail(path + ".anyOf", "not a list");
    for (std::size_t i = 0; i < alternatives.get_array().size(); ++i) {
      result.members.push_back(read(alternatives.get_array()[i], path + ".anyOf[" + std::to_string(i) + "]"));
    }
    return result;
  }

  TsType union_of(const json::object& object, const std::string& path) const {
    static constexpr std::pair<std::string_view, std::string_view> names[] = {
        {"string", "string"}, {"number", "number"}, {"integer", "number"},  {"boolean", "boolean"},
        {"null", "null"},     {"object", "{}"},     {"array", "Array<any>"}};
    TsType result;
    result.kind = TsType::Kind::union_of;
    describe(result, object, path);
    for (const json::value& type : object.at("type").get_array()) {
      const auto found = std::find_if(std::begin(names), std::end(names), [&](const auto& name) {
        return type.is_string() && name.first == std::string_view(type.get_string());
      });
      if (found == std::end(names)) fail(path + ".type", "unknown type " + python::str(type));
      result.union_names.emplace_back(found->second);
    }
    return result;
  }

  TsType reference(const json::object& object, const std::string& path) {
    TsType result;
    result.kind = TsType::Kind::reference;
    describe(result, object, path);
    const json::value& target = object.at("$ref");
    if (!target.is_string()) fail(path + ".$ref", "not a string");
    const std::string_view ref = target.get_string();
    if (ref == "#") {
      self_reference_ = true;
      result.name = "parameters";
      return result;
    }
    if (!ref.starts_with("#/$defs/")) fail(path + ".$ref", "unsupported reference \"" + std::string(ref) + "\"");
    result.name = ref.substr(ref.rfind('/') + 1);
    const bool defined = std::any_of(definitions_.begin(), definitions_.end(),
                                     [&](const auto& definition) { return definition.first == result.name; });
    if (!defined) fail(path + ".$ref", "reference not found: \"" + std::string(ref) + "\"");
    return result;
  }

  std::vector<std::pair<std::string, const json::value*>> definitions_;
  bool self_reference_ = false;
};

std::string ts_of(const TsType& type, const std::string& indent);

// The comment lines above a type: its description, then its constraints sorted by name.
std::string ts_docstring(const TsType& type, const std::string& indent) {
  std::string out;
  if (!type.description.empty()) out += ts_comment(type.description, indent) + "\n";
  if (!type.constraints.empty()) {
    std::vector<std::string> constraints;
    for (const auto& [key, value] : type.constraints) constraints.push_back(key + ": " + python::str(*value));
    out += indent + "// " + ts_join(constraints, ", ") + "\n";
  }
  return out;
}

std::string ts_parameter(const TsParameter& parameter, const std::string& indent) {
  std::string out = ts_docstring(parameter.type, indent);
  if (const json::value* value = parameter.default_value) {
    // repr() for numbers and booleans, json.dumps for the rest.
    std::string written;
    if (value->is_number() || value->is_bool()) {
      python::append_repr(written, *value);
    } else {
      python::append_json(written, *value, false);
    }
    out += indent + "// Default: " + written + "\n";
  }
  return out + indent + parameter.name + (parameter.optional ? "?" : "") + ": " + ts_of(parameter.type, indent);
}

// An object's fields: the required ones by name, then the optional ones by name.
std::string ts_object(const TsType& type, const std::string& indent) {
  std::vector<const TsParameter*> ordered;
  for (const bool optional : {false, true}) {
    const std::size_t first = ordered.size();
    for (const TsParameter& parameter : type.properties) {
      if (parameter.optional == optional) ordered.push_back(&parameter);
    }
    std::stable_sort(ordered.begin() + static_cast<std::ptrdiff_t>(first), ordered.end(),
                     [](const TsParameter* a, const TsParameter* b) { return a->name < b->name; });
  }
  const std::string inner = indent + std::string(kTsIndent);
  std::vector<std::string> fields;
  for (const TsParameter* parameter : ordered) fields.push_back(ts_parameter(*parameter, inner));
  switch (type.extra) {
    case TsType::Extra::absent: break;
    case TsType::Extra::any: fields.push_back(inner + "[k: string]: any"); break;
    case TsType::Extra::never: fields.push_back(inner + "[k: string]: never"); break;
    case TsType::Extra::typed: fields.push_back(inner + "[k: string]: " + ts_of(type.members.front(), inner)); break;
    case TsType::Extra::invalid:
      throw error(errc::invalid_argument, "additionalProperties must be a boolean or a JSON Schema");
  }
  if (fields.empty()) return "{}";
  return "{\n" + ts_join(fields, ",\n") + "\n" + indent + "}";
}

std::string ts_of(const TsType& type, const std::string& indent) {
  switch (type.kind) {
    case TsType::Kind::scalar: return type.name == "integer" ? "number" : type.name;
    case TsType::Kind::object: return ts_object(type, indent);
    case TsType::Kind::array: {
      const TsType& item = type.members.front();
      const std::string inner = indent + std::string(kTsIndent);
      const std::string item_doc = ts_docstring(item, inner);
      if (item_doc.empty()) return "Array<" + ts_of(item, indent) + ">";
      return "Array<\n" + item_doc + inner + ts_of(item, inner) + "\n" + indent + ">";
    }
    case TsType::Kind::enumeration: {
      std::vector<std::string> values;
      for (const json::value* value : type.values) {
        values.push_back(value->is_string() ? "\"" + std::string(value->get_string()) + "\"" : python::str(*value));
      }
      return ts_join(values, " | ");
    }
    case TsType::Kind::any_of: {
      std::vector<std::string> alternatives;
      for (const TsType& member : type.members) alternatives.push_back(ts_of(member, indent));
      return ts_join(alternatives, " | ");
    }
    case TsType::Kind::union_of: return ts_join(type.union_names, " | ");
    case TsType::Kind::reference: return type.name;
  }
  return {};
}

// One function's declaration: its interfaces ($defs, and the arguments themselves when the
// schema refers to itself), its description as comments, then "type NAME = (_: ARGS) => any;".
std::string ts_function(const json::object& function, std::size_t index) {
  const std::string where = "tools[" + std::to_string(index) + "].parameters";
  TsReader reader;
  const TsType arguments = reader.read_object(function.at("parameters").get_object(), where);
  std::vector<std::string> interfaces;
  if (reader.has_self_reference()) {
    std::vector<std::string> fields;
    for (const TsParameter& parameter : arguments.properties) fields.push_back(ts_parameter(parameter, "  "));
    const std::string body = fields.empty() ? "" : "\n" + ts_join(fields, ",\n") + "\n";
    interfaces.push_back("interface parameters {" + body + "}");
  }
  for (const auto& [name, schema] : reader.definitions()) {
    const TsType defined = reader.read(*schema, where + ".$defs." + name);
    std::string description;
    if (schema->is_object()) {
      const json::value* text = schema->get_object().if_contains("description");
      if (text != nullptr && text->is_string() && !text->get_string().empty()) {
        description = ts_comment(text->get_string()) + "\n";
      }
    }
    interfaces.push_back(description + "interface " + name + " " + ts_of(defined, ""));
  }
  const std::string name(function.at("name").get_string());
  const std::string argument_type = reader.has_self_reference() ? "parameters" : ts_of(arguments, "");
  std::vector<std::string> parts;
  for (std::string part : {ts_join(interfaces, "\n"), ts_comment(function.at("description").get_string()),
                           "type " + name + " = (_: " + argument_type + ") => any;"}) {
    if (!part.empty()) parts.push_back(std::move(part));
  }
  return ts_join(parts, "\n");
}

}  // namespace

std::string kimi_typescript_tool_declarations(std::span<const ToolSpec> tools) {
  if (tools.empty()) return {};
  std::vector<std::string> functions;
  for (std::size_t i = 0; i < tools.size(); ++i) {
    try {
      functions.push_back(ts_function(kimi_function_object(tools[i], i), i));
    } catch (const error& e) {
      // Errors from writing (not reading) a schema name the tool only.
      const std::string message = e.diag().message;
      if (message.starts_with("tools[")) throw;
      kimi_tools_error("tools[" + std::to_string(i) + "].parameters", message);
    }
  }
  return "# Tools\n\n## functions\nnamespace functions {\n" + ts_join(functions, "\n") + "\n}\n";
}

}  // namespace tinker::renderers::detail
