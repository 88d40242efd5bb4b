// Nemotron 3's tool markup (nemotron3.cpp): the structured-XML tool declarations of its system
// message, and a tool call written as <function=NAME> with one <parameter=KEY> block per argument.
#pragma once

#include <tinker/renderers.hpp>

#include <cstddef>
#include <span>
#include <string>

namespace tinker::renderers::detail {

/// The "# Tools" block of Nemotron 3's system message: each tool as a <function> element with
/// <name>, <description> (left out when empty), <parameters> (one <parameter> per property, the
/// schema's other keys as <key>value</key>, then <required>), inside <tools>, followed by the
/// call format and its reminders. Empty for no tools. Throws tinker::error (invalid_argument)
/// naming tools[i].parameters (and the property) when they are not a JSON Schema object.
std::string nemotron3_tools_text(std::span<const ToolSpec> tools);

/// `call` as "<tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n...</function>\n
/// </tool_call>": a string argument as it is, an object or array as JSON, other scalars as Python
/// writes them (True, None, 3, 0.5), as the model's template does. Throws tinker::error
/// (invalid_argument) naming messages[message].tool_calls[index].arguments when they are not a
/// JSON object's text.
std::string nemotron3_tool_call_xml(const ToolCall& call, std::size_t message, std::size_t index);

}  // namespace tinker::renderers::detail
