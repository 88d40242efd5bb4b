// What the Qwen families share (qwen3.cpp, qwen_vision*.cpp, qwen3_5.cpp, qwen3_vl.cpp): the JSON
// the cookbook writes with Python's json.dumps, the tool declarations, reading a Qwen3.5-style XML
// tool call, and encoding message text so that it cannot write the tokens that delimit turns.
#pragma once

#include <tinker/renderers.hpp>

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace boost::json {
class value;
}

namespace tinker::renderers::detail::qwen {

// ---- Python's json.dumps and str() --------------------------------------------------------

/// `value` as Python's json.dumps writes it by default: ", " and ": " between items, keys in
/// their order, non-ASCII and control characters as lowercase \uXXXX escapes (ensure_ascii),
/// floats as Python's repr ("1.0", "1e+16").
std::string python_json(const boost::json::value& value);

/// python_json of the JSON text `json_text`, or nullopt when it is not valid JSON.
std::optional<std::string> python_json_text(std::string_view json_text);

/// A JSON scalar as Python's str() writes the value json.loads gives: a string as it is,
/// "True" / "False" / "None", numbers as repr. Arrays and objects: python_json.
std::string python_str(const boost::json::value& value);

// ---- Tool declarations --------------------------------------------------------------------

/// Qwen3's (and Qwen3-VL's) "# Tools" block: each tool as {"type": "function", "function":
/// {"name", "description", "parameters"}} on its own line inside <tools>, then the JSON call
/// format. Empty for no tools. Throws tinker::error (invalid_argument) naming tools[i].parameters
/// when they are not a JSON object's text.
std::string qwen3_tools_text(std::span<const ToolSpec> tools);

/// The tools block of the XML-calling formats (Qwen3.5/3.8 and Nemotron 3, which differ only in
/// how each function is declared): `declarations` inside <tools>, then the fixed instructions.
std::string xml_tools_block(std::string_view declarations);

/// Qwen3.5's (and 3.6's, 3.8's) block: each tool as {"name", "description", "parameters"} inside
/// <tools>, then the XML call format and its reminders. Empty for no tools. Throws as above.
std::string qwen3_5_tools_text(std::span<const ToolSpec> tools);

// ---- Tool calls ---------------------------------------------------------------------------

/// Reads a Qwen3.5 XML call, `raw_text` being the whole "<tool_call>...</tool_call>":
/// <function=NAME> holding <parameter=P>VALUE</parameter> blocks and nothing else. A VALUE that is
/// JSON text is that value, any other is a string; `arguments` is the object of them as json.dumps
/// writes it. An UnparsedToolCall saying what is wrong otherwise. Never throws.
std::variant<ToolCall, UnparsedToolCall> read_xml_tool_call(std::string_view raw_text);

/// A Qwen3.5 call block: JSON as Qwen3 writes it when it is, else the XML form (read_xml_tool_call)
/// when it holds "<function=", else the JSON error. `inner` is between the markers, `raw_text` the
/// whole block. Never throws.
std::variant<ToolCall, UnparsedToolCall> read_qwen3_5_tool_call(std::string_view inner, std::string_view raw_text);

// ---- Reading a response -------------------------------------------------------------------

/// Reads one tool-call block: `inner` between the markers, `raw_text` with them.
using ToolCallReader = std::variant<ToolCall, UnparsedToolCall> (*)(std::string_view inner, std::string_view raw_text);

/// How a family frames what parse_response undoes.
class ResponseFormat {
 public:
  /// The reasoning is framed "<think>\n...\n</think>\n\n": strip the "\n"s around it and
  /// after the block.
  bool unframe_thinking = true;
  /// Also strip every kind of whitespace around the reasoning (Qwen3.5's template trims it).
  bool trim_thinking = false;
  /// What separates text from the first call ("\n\n" in Qwen3.5); later calls take "\n".
  std::string_view first_call_separator = "\n";
  ToolCallReader read_call = nullptr;  ///< JSON or XML calls
};

/// Splits the decoded text of an assistant message (its end marker cut off) into thinking and
/// text parts and tool calls in `message`, undoing the framing `format` describes; blocks that
/// cannot be read become `unparsed_tool_calls`. Never throws.
void read_response_text(std::string_view text, const ResponseFormat& format, Message& message);

// ---- Encoding what a message writes -------------------------------------------------------

/// What a Qwen renderer writes: runs of text (message text, and markup that holds no control
/// token) and the control tokens it writes itself ("<|im_start|>", "<|im_end|>", "<|vision_start|>").
/// The text is encoded with EncodeOptions::split_special_tokens, as the cookbook's Qwen3 renderer
/// encodes a message: a control token quoted in a message is characters and cannot open or close a
/// turn, while the tokens that are not special ("<think>", "<tool_call>") are still matched. A
/// control token cuts the text around it when the whole text is encoded at once too, so the ids
/// are those of the template's text wherever the message quotes no control token.
class MarkedText {
 public:
  /// Appends `text` to the current run of text.
  MarkedText& text(std::string_view text);
  /// Appends the control token `token` (its text, e.g. "<|im_end|>"), which ends the run.
  MarkedText& control(std::string_view token);
  /// Appends `other`, its first run of text joining this one's last.
  MarkedText& append(const MarkedText& other);
  bool empty() const noexcept { return segments_.empty(); }
  /// The ids. Throws tinker::error (invalid_argument) when a control token is not a token of
  /// `tokenizer` (the renderers check theirs when they are made).
  std::vector<TokenId> encode(const Tokenizer& tokenizer) const;

 private:
  class Segment {
   public:
    std::string text;
    bool control = false;
  };
  std::vector<Segment> segments_;
};

/// `text` without leading and trailing whitespace, as Python's str.strip() (and Jinja's trim)
/// removes it: ASCII whitespace and the separators U+001C..U+001F, U+0085, U+00A0 and the
/// Unicode spaces.
std::string_view strip_python_whitespace(std::string_view text) noexcept;

}  // namespace tinker::renderers::detail::qwen
