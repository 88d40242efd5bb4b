// Shared pieces of the Qwen families (renderers/qwen_common.hpp).
#include "renderers/qwen_common.hpp"

#include "renderers/parsing.hpp"
#include "renderers/python_format.hpp"

#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <system_error>
#include <vector>

namespace tinker::renderers::detail::qwen {
namespace {

namespace json = boost::json;

// ---- json.dumps -----------------------------------------------------------------------------

void py_append_unicode_escape(std::string& out, std::uint32_t unit) {
  std::array<char, 16> buffer{};
  std::snprintf(buffer.data(), buffer.size(), "\\u%04x", static_cast<unsigned>(unit));
  out += buffer.data();
}

// The code point starting at text[i] (advancing i past it); invalid UTF-8 cannot occur here as
// Boost.JSON validated the text, but a stray byte is passed through as its own code point.
std::uint32_t py_next_code_point(std::string_view text, std::size_t& i) {
  const auto byte = static_cast<unsigned char>(text[i]);
  const int length = byte < 0x80 ? 1 : byte < 0xe0 ? 2 : byte < 0xf0 ? 3 : 4;
  if (i + static_cast<std::size_t>(length) > text.size()) return text[i++];
  std::uint32_t code = length == 1 ? byte : length == 2 ? byte & 0x1f : length == 3 ? byte & 0x0f : byte & 0x07;
  for (int k = 1; k < length; ++k) code = (code << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3f);
  i += static_cast<std::size_t>(length);
  return code;
}

// A JSON string as json.dumps(ensure_ascii=True) writes it.
void py_append_string(std::string& out, std::string_view text) {
  out += '"';
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    switch (c) {
      case '"':
        out += "\\\"";
        ++i;
        continue;
      case '\\':
        out += "\\\\";
        ++i;
        continue;
      case '\n':
        out += "\\n";
        ++i;
        continue;
      case '\r':
        out += "\\r";
        ++i;
        continue;
      case '\t':
        out += "\\t";
        ++i;
        continue;
      case '\b':
        out += "\\b";
        ++i;
        continue;
      case '\f':
        out += "\\f";
        ++i;
        continue;
      default: break;
    }
    if (c >= 0x20 && c < 0x7f) {
      out += c;
      ++i;
      continue;
    }
    const std::uint32_t code = py_next_code_point(text, i);
    if (code >= 0x10000) {
      const std::uint32_t offset = code - 0x10000;
      py_append_unicode_escape(out, 0xd800 + (offset >> 10));
      py_append_unicode_escape(out, 0xdc00 + (offset & 0x3ff));
    } else {
      py_append_unicode_escape(out, code);
    }
  }
  out += '"';
}

void py_append_json(std::string& out, const json::value& value) {
  switch (value.kind()) {
    case json::kind::null: out += "null"; return;
    case json::kind::bool_: out += value.get_bool() ? "true" : "false"; return;
    case json::kind::int64: out += std::to_string(value.get_int64()); return;
    case json::kind::uint64: out += std::to_string(value.get_uint64()); return;
    case json::kind::double_: out += python::float_repr(value.get_double()); return;
    case json::kind::string: py_append_string(out, value.get_string()); return;
    case json::kind::array: {
      out += '[';
      bool first = true;
      for (const json::value& item : value.get_array()) {
        if (!first) out += ", ";
        first = false;
        py_append_json(out, item);
      }
      out += ']';
      return;
    }
    case json::kind::object: {
      out += '{';
      bool first = true;
      for (const auto& member : value.get_object()) {
        if (!first) out += ", ";
        first = false;
        py_append_string(out, member.key());
        out += ": ";
        py_append_json(out, member.value());
      }
      out += '}';
      return;
    }
  }
}

std::optional<json::value> py_parse_json(std::string_view text) {
  std::error_code ec;
  json::value value = json::parse(text, ec);
  if (ec) return std::nullopt;
  return value;
}

// ---- Tool declarations ----------------------------------------------------------------------

// {"name": ..., "description": ..., "parameters": ...} as json.dumps writes the ToolSpec dict.
std::string py_tool_spec_json(const ToolSpec& tool, std::size_t index) {
  const std::optional<json::value> parameters = py_parse_json(tool.parameters);
  if (!parameters || !parameters->is_object()) {
    throw error(errc::invalid_argument, "tools[" + std::to_string(index) + "].parameters: expected a JSON object's " +
                                            "text (a JSON Schema), got: " + tool.parameters.substr(0, 80));
  }
  std::string out = "{\"name\": ";
  py_append_string(out, tool.name);
  out += ", \"description\": ";
  py_append_string(out, tool.description);
  out += ", \"parameters\": ";
  py_append_json(out, *parameters);
  return out + "}";
}

// ---- XML tool calls -------------------------------------------------------------------------

bool py_is_regex_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

std::string_view py_trim_regex_space(std::string_view text) noexcept {
  while (!text.empty() && py_is_regex_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && py_is_regex_space(text.back())) text.remove_suffix(1);
  return text;
}

// "<tag=NAME>" at the start of `text`: NAME (no '>' or newline in it, not empty) and the length of
// the whole tag; nullopt when `text` does not start with such a tag.
std::optional<std::pair<std::string_view, std::size_t>> xml_named_tag(std::string_view text, std::string_view tag) {
  if (!text.starts_with(tag)) return std::nullopt;
  const std::size_t close = text.find_first_of(">\n", tag.size());
  if (close == std::string_view::npos || text[close] != '>' || close == tag.size()) return std::nullopt;
  return std::pair{text.substr(tag.size(), close - tag.size()), close + 1};
}

// The <parameter=...> blocks of a function body, as a JSON object; an error otherwise.
std::variant<json::object, std::string> xml_read_parameters(std::string_view body) {
  json::object arguments;
  constexpr std::string_view close = "</parameter>";
  while (true) {
    body = py_trim_regex_space(body);
    if (body.empty()) return arguments;
    const auto tag = xml_named_tag(body, "<parameter=");
    const std::size_t end = tag ? body.find(close, tag->second) : std::string_view::npos;
    if (!tag || end == std::string_view::npos) {
      return std::string("unexpected content inside the <function> block (expected <parameter=NAME> blocks)");
    }
    const std::string_view name = py_trim_regex_space(tag->first);
    if (name.empty()) return std::string("empty parameter name");
    const std::string_view value = py_trim_regex_space(body.substr(tag->second, end - tag->second));
    std::optional<json::value> parsed = py_parse_json(value);
    arguments[name] = parsed ? std::move(*parsed) : json::value(json::string(value));
    body.remove_prefix(end + close.size());
  }
}

// Python's str.strip() whitespace beyond ASCII, by its UTF-8 bytes.
constexpr std::array<std::string_view, 19> py_unicode_spaces{
    "\xc2\x85",     "\xc2\xa0",     "\xe1\x9a\x80", "\xe2\x80\x80", "\xe2\x80\x81", "\xe2\x80\x82", "\xe2\x80\x83",
    "\xe2\x80\x84", "\xe2\x80\x85", "\xe2\x80\x86", "\xe2\x80\x87", "\xe2\x80\x88", "\xe2\x80\x89", "\xe2\x80\x8a",
    "\xe2\x80\xa8", "\xe2\x80\xa9", "\xe2\x80\xaf", "\xe2\x81\x9f", "\xe3\x80\x80",
};

bool py_is_space_byte(char c) noexcept {
  return py_is_regex_space(c) || (c >= '\x1c' && c <= '\x1f');
}

std::size_t py_leading_space(std::string_view text) noexcept {
  if (text.empty()) return 0;
  if (py_is_space_byte(text.front())) return 1;
  for (std::string_view space : py_unicode_spaces) {
    if (text.starts_with(space)) return space.size();
  }
  return 0;
}

std::size_t py_trailing_space(std::string_view text) noexcept {
  if (text.empty()) return 0;
  if (py_is_space_byte(text.back())) return 1;
  for (std::string_view space : py_unicode_spaces) {
    if (text.ends_with(space)) return space.size();
  }
  return 0;
}

}  // namespace

std::string python_json(const json::value& value) {
  std::string out;
  py_append_json(out, value);
  return out;
}

std::optional<std::string> python_json_text(std::string_view json_text) {
  const std::optional<json::value> value = py_parse_json(json_text);
  if (!value) return std::nullopt;
  return python_json(*value);
}

std::string python_str(const json::value& value) {
  switch (value.kind()) {
    case json::kind::string: return std::string(value.get_string());
    case json::kind::bool_: return value.get_bool() ? "True" : "False";
    case json::kind::null: return "None";
    default: return python_json(value);
  }
}

std::string qwen3_tools_text(std::span<const ToolSpec> tools) {
  if (tools.empty()) return {};
  std::string lines;
  for (std::size_t i = 0; i < tools.size(); ++i) {
    if (i > 0) lines += '\n';
    lines += "{\"type\": \"function\", \"function\": " + py_tool_spec_json(tools[i], i) + "}";
  }
  return "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
         "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n" +
         lines +
         "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
         "<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": "
         "<args-json-object>}\n</tool_call>";
}

std::string xml_tools_block(std::string_view declarations) {
  return "# Tools\n\nYou have access to the following functions:\n\n<tools>\n" + std::string(declarations) +
         "\n</tools>\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n"
         "<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n"
         "<parameter=example_parameter_2>\nThis is the value for the second parameter\nthat can span\nmultiple "
         "lines\n</parameter>\n</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n- Function calls MUST follow "
         "the specified format: an inner <function=...></function> block must be nested within "
         "<tool_call></tool_call> XML tags\n- Required parameters MUST be specified\n- You may provide optional "
         "reasoning for your function call in natural language BEFORE the function call, but NOT after\n- If "
         "there is no function call available, answer the question like normal with your current knowledge and "
         "do not tell the user about function calls\n</IMPORTANT>";
}

std::string qwen3_5_tools_text(std::span<const ToolSpec> tools) {
  if (tools.empty()) return {};
  std::string lines;
  for (std::size_t i = 0; i < tools.size(); ++i) {
    if (i > 0) lines += '\n';
    lines += py_tool_spec_json(tools[i], i);
  }
  return xml_tools_block(lines);
}

std::variant<ToolCall, UnparsedToolCall> read_xml_tool_call(std::string_view raw_text) {
  const auto unparsed = [raw_text](std::string why) { return UnparsedToolCall(std::string(raw_text), std::move(why)); };
  constexpr std::string_view open = "<tool_call>";
  constexpr std::string_view close = "</tool_call>";
  constexpr std::string_view function_close = "</function>";
  std::string_view text = py_trim_regex_space(raw_text);
  if (!text.starts_with(open) || !text.ends_with(close)) return unparsed("malformed Qwen3.5 tool call XML");
  text = py_trim_regex_space(text.substr(open.size(), text.size() - open.size() - close.size()));
  const auto function = xml_named_tag(text, "<function=");
  if (!function || !text.ends_with(function_close) || function->second + function_close.size() > text.size()) {
    return unparsed("malformed Qwen3.5 tool call XML");
  }
  const std::string_view name = py_trim_regex_space(function->first);
  if (name.empty()) return unparsed("missing function name");
  const std::string_view body = text.substr(function->second, text.size() - function->second - function_close.size());
  auto parameters = xml_read_parameters(body);
  if (auto* problem = std::get_if<std::string>(&parameters)) return unparsed(std::move(*problem));
  return ToolCall(std::string(name), python_json(json::value(std::move(std::get<json::object>(parameters)))));
}

std::variant<ToolCall, UnparsedToolCall> read_qwen3_5_tool_call(std::string_view inner, std::string_view raw_text) {
  auto json_call = read_tool_call_json(inner, raw_text);
  if (std::holds_alternative<ToolCall>(json_call) || inner.find("<function=") == std::string_view::npos) {
    return json_call;
  }
  return read_xml_tool_call(raw_text);
}

void read_response_text(std::string_view text, const ResponseFormat& format, Message& message) {
  static constexpr std::array<BlockMarkers, 2> markers{{
      {"<think>", "</think>", BlockKind::thinking},
      {"<tool_call>", "</tool_call>", BlockKind::tool_call},
  }};
  const std::vector<TextBlock> blocks = split_blocks(text, markers);
  bool after_think_block = false;
  bool seen_call = false;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const TextBlock& block = blocks[i];
    if (block.kind == BlockKind::thinking) {
      std::string_view reasoning = format.unframe_thinking ? strip_newlines(block.inner) : block.inner;
      if (format.trim_thinking) reasoning = strip_python_whitespace(reasoning);
      if (!reasoning.empty()) message.content.emplace_back(ThinkingPart(std::string(reasoning)));
      after_think_block = format.unframe_thinking;
      continue;
    }
    if (block.kind == BlockKind::tool_call) {
      add_tool_call(message, format.read_call(block.inner, block.raw));
      after_think_block = false;
      seen_call = true;
      continue;
    }
    // Plain text: undo the block's padding after it, and the separator the renderer wrote
    // before a call (the text between two calls is only that separator).
    std::string_view piece = after_think_block ? lstrip_newlines(block.inner) : block.inner;
    after_think_block = false;
    const bool before_call = i + 1 < blocks.size() && blocks[i + 1].kind == BlockKind::tool_call;
    const std::string_view separator = seen_call ? std::string_view("\n") : format.first_call_separator;
    if (before_call && piece.ends_with(separator)) piece.remove_suffix(separator.size());
    const bool after_call = i > 0 && blocks[i - 1].kind == BlockKind::tool_call;
    if (after_call && piece == "\n") continue;
    if (block.unterminated == BlockKind::tool_call) {
      message.unparsed_tool_calls.push_back(unterminated_tool_call(block.raw, "<tool_call>", "</tool_call>"));
    }
    if (!piece.empty()) message.content.emplace_back(TextPart(std::string(piece)));
  }
}

MarkedText& MarkedText::text(std::string_view text) {
  if (text.empty()) return *this;
  if (segments_.empty() || segments_.back().control) segments_.emplace_back();
  segments_.back().text += text;
  return *this;
}

MarkedText& MarkedText::control(std::string_view token) {
  segments_.push_back(Segment{std::string(token), true});
  return *this;
}

MarkedText& MarkedText::append(const MarkedText& other) {
  for (const Segment& segment : other.segments_) {
    if (segment.control) {
      control(segment.text);
    } else {
      text(segment.text);
    }
  }
  return *this;
}

std::vector<TokenId> MarkedText::encode(const Tokenizer& tokenizer) const {
  std::vector<TokenId> ids;
  for (const Segment& segment : segments_) {
    if (!segment.control) {
      const std::vector<TokenId> run = tokenizer.encode(segment.text, EncodeOptions::split_special());
      ids.insert(ids.end(), run.begin(), run.end());
      continue;
    }
    const std::optional<TokenId> id = tokenizer.token_to_id(segment.text);
    if (!id) {
      throw error(errc::invalid_argument,
                  "tokenizer " + tokenizer.id() + " has no token \"" + segment.text + "\" for the Qwen format");
    }
    ids.push_back(*id);
  }
  return ids;
}

std::string_view strip_python_whitespace(std::string_view text) noexcept {
  while (const std::size_t n = py_leading_space(text)) text.remove_prefix(n);
  while (const std::size_t n = py_trailing_space(text)) text.remove_suffix(n);
  return text;
}

}  // namespace tinker::renderers::detail::qwen
