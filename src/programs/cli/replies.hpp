// A sampled reply as `tinker chat` and `tinker sample` show it: for a person (reasoning dimmed on
// a terminal, tool calls, how the reply ended) or as JSON.
#pragma once

#include <tinker/renderers.hpp>
#include <tinker/types/sampling.hpp>

#include <boost/json/object.hpp>

#include <iosfwd>
#include <string>
#include <string_view>

namespace tinker::cli {

/// The parsed reply as {"role": "assistant", "content": text, "thinking": reasoning, "tool_calls":
/// [{"id", "type": "function", "function": {"name", "arguments"}}], "termination":
/// "stop_sequence"|"eos"|"malformed", "stop_reason": "stop"|"length"}, plus "unparsed_tool_calls":
/// [{"raw_text", "error"}] when some could not be read. Appended to the conversation's
/// "messages", it reads back as the assistant's message (conversation_from_json takes "role",
/// "content" and "tool_calls"; the reasoning is dropped, as most formats drop it from history).
boost::json::object reply_json(const renderers::ParsedResponse& reply, StopReason stop_reason);

/// How a reply is written: with ANSI styles and control characters made visible (a terminal), or
/// as plain text (a pipe or file).
enum class ReplyStyle { terminal, plain };

/// Writes the reply: its reasoning (dim on a terminal; between "[thinking]" and "[/thinking]"
/// lines otherwise), its text, one "[tool call] name(arguments)" line per call, and
/// "[cut off at max tokens]" (or "[malformed reply: ...]") when parsing found no proper end.
void print_reply(std::ostream& out, const renderers::ParsedResponse& reply, StopReason stop_reason, ReplyStyle style);

/// `text` with control characters other than tab and line feed shown in caret notation ("^[" for
/// ESC) and C1 controls as "\u009b", so sampled bytes cannot drive the terminal.
std::string terminal_safe(std::string_view text);

}  // namespace tinker::cli
