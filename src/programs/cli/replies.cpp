#include "programs/cli/replies.hpp"

#include <boost/json/array.hpp>

#include <cstdio>
#include <ostream>

namespace tinker::cli {
namespace {

constexpr std::string_view ansi_dim = "\x1b[2m";
constexpr std::string_view ansi_reset = "\x1b[0m";

boost::json::object tool_call_json(const renderers::ToolCall& call) {
  boost::json::object function;
  function["name"] = call.name;
  function["arguments"] = call.arguments;
  boost::json::object object;
  if (call.id) object["id"] = *call.id;
  object["type"] = "function";
  object["function"] = std::move(function);
  return object;
}

// Without the line breaks a model often puts around its reasoning or answer.
std::string_view trim_line_breaks(std::string_view text) {
  while (!text.empty() && (text.front() == '\n' || text.front() == '\r')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
  return text;
}

// The text as written to `style`: made safe for a terminal, as is for a pipe.
std::string styled_text(std::string_view text, ReplyStyle style) {
  return style == ReplyStyle::terminal ? terminal_safe(text) : std::string(text);
}

void print_thinking(std::ostream& out, std::string_view thinking, ReplyStyle style) {
  if (style == ReplyStyle::terminal) {
    out << ansi_dim << terminal_safe(thinking) << ansi_reset << '\n';
  } else {
    out << "[thinking]\n" << thinking << "\n[/thinking]\n";
  }
}

std::string termination_note(const renderers::ParsedResponse& reply, StopReason stop_reason) {
  if (reply.termination != renderers::ParseTermination::malformed) return "";
  if (stop_reason == StopReason::length) return "[cut off at max tokens]";
  return "[malformed reply: it did not end with the format's end of turn, or its structure could not be read]";
}

}  // namespace

boost::json::object reply_json(const renderers::ParsedResponse& reply, StopReason stop_reason) {
  boost::json::object object;
  object["role"] = "assistant";
  object["content"] = reply.message.text();
  object["thinking"] = reply.message.thinking();
  boost::json::array& calls = object["tool_calls"].emplace_array();
  for (const renderers::ToolCall& call : reply.message.tool_calls) calls.push_back(tool_call_json(call));
  if (!reply.message.unparsed_tool_calls.empty()) {
    boost::json::array& unparsed = object["unparsed_tool_calls"].emplace_array();
    for (const renderers::UnparsedToolCall& call : reply.message.unparsed_tool_calls) {
      unparsed.push_back(boost::json::object{{"raw_text", call.raw_text}, {"error", call.error}});
    }
  }
  object["termination"] = renderers::to_string(reply.termination);
  object["stop_reason"] = to_string(stop_reason);
  return object;
}

void print_reply(std::ostream& out, const renderers::ParsedResponse& reply, StopReason stop_reason, ReplyStyle style) {
  const std::string thinking = reply.message.thinking();
  if (!trim_line_breaks(thinking).empty()) print_thinking(out, trim_line_breaks(thinking), style);
  const std::string text = reply.message.text();
  const std::string_view shown = trim_line_breaks(text);
  if (!shown.empty() || reply.message.tool_calls.empty()) out << styled_text(shown, style) << '\n';
  for (const renderers::ToolCall& call : reply.message.tool_calls) {
    out << "[tool call] " << styled_text(call.name, style) << '(' << styled_text(call.arguments, style) << ')';
    if (call.id) out << " id " << styled_text(*call.id, style);
    out << '\n';
  }
  for (const renderers::UnparsedToolCall& call : reply.message.unparsed_tool_calls) {
    out << "[unreadable tool call: " << styled_text(call.error, style) << "] " << styled_text(call.raw_text, style)
        << '\n';
  }
  const std::string note = termination_note(reply, stop_reason);
  if (!note.empty()) out << note << '\n';
}

std::string terminal_safe(std::string_view text) {
  std::string safe;
  safe.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte == '\t' || byte == '\n') {
      safe += static_cast<char>(byte);
    } else if (byte < 0x20) {
      safe += '^';
      safe += static_cast<char>(byte + 0x40);
    } else if (byte == 0x7f) {
      safe += "^?";
    } else if (byte == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      // U+0080..U+009F, the C1 controls (CSI among them), encoded as C2 80..C2 9F.
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(text[i + 1])));
      safe += escaped;
      ++i;
    } else {
      safe += static_cast<char>(byte);
    }
  }
  return safe;
}

}  // namespace tinker::cli
