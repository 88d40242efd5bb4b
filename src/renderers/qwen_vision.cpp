// Rendering of the Qwen vision families (renderers/qwen_vision.hpp).
//
// What the three generations do differently, all from the cookbook's renderers:
//   - Qwen3-VL writes reasoning as "<think>...</think>" and its tool calls as JSON, each tool
//     result in a user message of its own.
//   - Qwen3.5 (and 3.6) frames reasoning as "<think>\n...\n</think>\n\n", writes the empty block
//     "<think>\n\n</think>\n\n" on assistant messages after the last user message that did not
//     reason, strips text-only content, writes XML tool calls, and puts a run of tool results in
//     one user message. Its prompt ends with "<think>\n" (or the closed empty block with thinking
//     off).
//   - Qwen3.8 is 3.5 that keeps reasoning (or the empty block) on every assistant message, writes
//     non-string tool arguments as JSON, puts the reasoning-effort sentence first in the system
//     message (making one when there is none) and renders an empty system message as nothing.
// Both 3.5 and 3.8 drop reasoning from history the way the cookbook does (3.5 from every assistant
// message but the last, 3.8 never).
#include "renderers/qwen_vision.hpp"

#include "renderers/images.hpp"
#include "renderers/parsing.hpp"
#include "renderers/qwen_common.hpp"

#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <system_error>
#include <variant>

namespace tinker::renderers::detail {
namespace {

constexpr std::string_view qwen_empty_think_block = "<think>\n\n</think>\n\n";

bool qwen_text_only(const Message& message) {
  return std::all_of(message.content.begin(), message.content.end(),
                     [](const ContentPart& part) { return std::holds_alternative<TextPart>(part); });
}

bool qwen_has_thinking_part(const Message& message) {
  return std::any_of(message.content.begin(), message.content.end(),
                     [](const ContentPart& part) { return std::holds_alternative<ThinkingPart>(part); });
}

[[noreturn]] void qwen_invalid_message(std::size_t index, const std::string& what) {
  throw error(errc::invalid_argument, "messages[" + std::to_string(index) + "]" + what);
}

// Text and images as chunks: each run of text is encoded as one string (as the template's text
// would be) with split_special_tokens, as qwen::MarkedText does, the control tokens the renderer
// writes as their ids; an image breaks the run.
class QwenChunkBuilder {
 public:
  explicit QwenChunkBuilder(const Tokenizer& tokenizer) : tokenizer_(tokenizer) {}
  void text(std::string_view text) { pending_.text(text); }
  void control(std::string_view token) { pending_.control(token); }
  void image(ImageChunk chunk) {
    flush();
    chunks_.emplace_back(std::move(chunk));
  }
  std::vector<ModelInputChunk> finish() && {
    flush();
    return std::move(chunks_);
  }

 private:
  void flush() {
    if (pending_.empty()) return;
    chunks_.emplace_back(EncodedTextChunk(pending_.encode(tokenizer_)));
    pending_ = qwen::MarkedText();
  }
  const Tokenizer& tokenizer_;
  qwen::MarkedText pending_;
  std::vector<ModelInputChunk> chunks_;
};

// The arguments of a call as a JSON object (the cookbook's json.loads; no text at all is {}).
boost::json::object qwen_call_arguments(const ToolCall& call, std::size_t index, std::size_t call_index) {
  if (trim_whitespace(call.arguments).empty()) return {};
  std::error_code ec;
  boost::json::value value = boost::json::parse(call.arguments, ec);
  if (ec || !value.is_object()) {
    qwen_invalid_message(index, ".tool_calls[" + std::to_string(call_index) +
                                    "].arguments: expected a JSON object's text" +
                                    (ec ? " (" + ec.message() + ")" : std::string(" (not an object)")));
  }
  return std::move(value.get_object());
}

}  // namespace

QwenVisionRenderer::QwenVisionRenderer(TokenizerPtr tokenizer, QwenVisionFormat format)
    : Renderer(std::move(tokenizer)), format_(format) {
  require_token(this->tokenizer(), "<|im_start|>", format_.name);
  end_of_turn_ = require_token(this->tokenizer(), "<|im_end|>", format_.name);
  require_token(this->tokenizer(), "<|vision_start|>", format_.name);
  require_token(this->tokenizer(), "<|vision_end|>", format_.name);
  think_close_ = require_token(this->tokenizer(), "</think>", format_.name);
  require_token(this->tokenizer(), "<think>", format_.name);
  think_prefix_ = encode("<think>\n");
}

// ---- Headers --------------------------------------------------------------------------------

// Qwen3.8 with an effort sentence and no system message: the system message the template makes
// for the sentence, written before the first message (as its header, so never trained).
std::string QwenVisionRenderer::preamble(const Message& message, const RenderContext& context) const {
  if (!is_3_8() || format_.reasoning_instructions.empty() || context.index != 0 || message.role == "system") {
    return {};
  }
  return "<|im_start|>system\n" + std::string(format_.reasoning_instructions) + "<|im_end|>";
}

bool QwenVisionRenderer::writes_newline_before(const Message& message, const RenderContext& context) const {
  if (context.index == 0) return !preamble(message, context).empty();
  // An empty Qwen3.8 system message renders nothing, so the message after it starts the text.
  return !(context.index == 1 && context.previous != nullptr && renders_nothing(*context.previous, 0));
}

std::string QwenVisionRenderer::header_text(const Message& message, const RenderContext& context) const {
  const bool is_tool = message.role == "tool";
  // A run of tool results shares one user message (3.5, 3.8): a later result only starts a line.
  if (!is_vl() && is_tool && context.previous != nullptr && context.previous->role == "tool") return "\n";
  std::string header = preamble(message, context) + (writes_newline_before(message, context) ? "\n" : "") +
                       "<|im_start|>" + (is_tool ? "user" : message.role) + "\n";
  if (message.role == "assistant") header += assistant_header_suffix(message, context);
  return header;
}

// The empty block the template writes on an assistant message that did not reason: 3.5 after the
// last user message (its string content counts an inline "<think>" as reasoning), 3.8 everywhere.
std::string QwenVisionRenderer::assistant_header_suffix(const Message& message, const RenderContext& context) const {
  if (is_vl()) return {};
  if (is_3_8()) return qwen_has_thinking_part(message) ? std::string() : std::string(qwen_empty_think_block);
  if (context.last_user_index && context.index <= *context.last_user_index) return {};
  const bool reasons = qwen_has_thinking_part(message) ||
                       (qwen_text_only(message) && message.text().find("<think>") != std::string::npos);
  return reasons ? std::string() : std::string(qwen_empty_think_block);
}

std::string QwenVisionRenderer::generation_suffix(std::string_view role, const RenderContext& context) const {
  const Message generated{std::string(role), std::string()};
  const std::string start = preamble(generated, context) + (writes_newline_before(generated, context) ? "\n" : "");
  if (is_vl()) return start + "<|im_start|>" + (role == "tool" ? "user" : std::string(role)) + "\n";
  return start + "<|im_start|>" + std::string(role) + "\n" +
         (format_.disables_thinking ? std::string(qwen_empty_think_block) : std::string("<think>\n"));
}

std::vector<TokenId> QwenVisionRenderer::generation_header(std::string_view role, const RenderContext& context) const {
  return encode(generation_suffix(role, context));
}

// ---- Content --------------------------------------------------------------------------------

bool QwenVisionRenderer::strips_thinking(const Message& message, const RenderContext& context) const {
  return !is_3_8() && message.role == "assistant" && !context.is_last;
}

// Qwen3.8's first system message: trimmed, after the effort sentence (unless it already starts
// with it, so rendering stays the same when the cookbook's normalisation ran before).
std::string QwenVisionRenderer::system_text(const Message& message) const {
  const std::string content(qwen::strip_python_whitespace(message.text()));
  const std::string instructions(format_.reasoning_instructions);
  if (instructions.empty() || content == instructions || content.starts_with(instructions + "\n\n")) return content;
  return content.empty() ? instructions : instructions + "\n\n" + content;
}

bool QwenVisionRenderer::renders_nothing(const Message& message, std::size_t index) const {
  return is_3_8() && index == 0 && message.role == "system" && qwen_text_only(message) && system_text(message).empty();
}

std::string QwenVisionRenderer::json_tool_call(const ToolCall& call, std::size_t index, std::size_t call_index) const {
  const boost::json::object arguments = qwen_call_arguments(call, index, call_index);
  return "<tool_call>\n{\"name\": " + qwen::python_json(boost::json::value(call.name)) +
         ", \"arguments\": " + qwen::python_json(boost::json::value(arguments)) + "}\n</tool_call>";
}

// <function=NAME> with one <parameter=P> per argument, in order: strings as they are, objects and
// arrays as JSON, other values as Python's str() (3.5's template) or JSON (3.8's).
std::string QwenVisionRenderer::xml_tool_call(const ToolCall& call, std::size_t index, std::size_t call_index) const {
  std::string out = "<tool_call>\n<function=" + call.name + ">";
  for (const auto& [key, value] : qwen_call_arguments(call, index, call_index)) {
    const bool structured = value.is_object() || value.is_array();
    std::string text;
    if (value.is_string()) {
      text = value.get_string();
    } else {
      text = structured || is_3_8() ? qwen::python_json(value) : qwen::python_str(value);
    }
    out += "\n<parameter=" + std::string(key) + ">\n" + text + "\n</parameter>";
  }
  return out + "\n</function>\n</tool_call>";
}

// The calls after the content. Qwen3-VL: "\n" before each. 3.5 and 3.8: a blank line before the
// first only when there is visible content (text that is not whitespace, or an image).
std::string QwenVisionRenderer::tool_calls_text(const Message& message, std::size_t index) const {
  std::string out;
  for (std::size_t k = 0; k < message.tool_calls.size(); ++k) {
    if (is_vl()) {
      out += "\n" + json_tool_call(message.tool_calls[k], index, k);
    } else {
      out += (k > 0 ? "\n" : "") + xml_tool_call(message.tool_calls[k], index, k);
    }
  }
  if (is_vl() || out.empty()) return out;
  const bool visible = std::any_of(message.content.begin(), message.content.end(), [](const ContentPart& part) {
    if (std::holds_alternative<ImagePart>(part)) return true;
    const auto* text = std::get_if<TextPart>(&part);
    return text != nullptr && !qwen::strip_python_whitespace(text->text).empty();
  });
  return (visible ? "\n\n" : "") + out;
}

std::vector<ModelInputChunk> QwenVisionRenderer::output_chunks(const Message& message,
                                                               const RenderContext& context) const {
  QwenChunkBuilder out(tokenizer());
  const bool is_tool = message.role == "tool";
  const bool first_system_3_8 = is_3_8() && context.index == 0 && message.role == "system";
  if (is_tool) out.text("<tool_response>\n");
  if (first_system_3_8 && qwen_text_only(message)) {
    out.text(system_text(message));
  } else if (!is_vl() && qwen_text_only(message)) {
    // Text-only content is the cookbook's string content, which 3.5 strips.
    out.text(qwen::strip_python_whitespace(message.text()));
  } else {
    const std::string instructions(format_.reasoning_instructions);
    if (first_system_3_8 && !instructions.empty()) {
      const auto* first = message.content.empty() ? nullptr : std::get_if<TextPart>(&message.content.front());
      if (first == nullptr || !first->text.starts_with(instructions)) out.text(instructions + "\n\n");
    }
    const bool strip = strips_thinking(message, context);
    for (std::size_t j = 0; j < message.content.size(); ++j) {
      const ContentPart& part = message.content[j];
      if (const auto* text = std::get_if<TextPart>(&part)) {
        out.text(text->text);
      } else if (const auto* thinking = std::get_if<ThinkingPart>(&part)) {
        if (strip) continue;
        out.text(is_vl() ? "<think>" + thinking->thinking + "</think>"
                         : "<think>\n" + thinking->thinking + "\n</think>\n\n");
      } else {
        out.control("<|vision_start|>");
        out.image(image_chunk(std::get<ImagePart>(part), ImageTokenRule::qwen_vl, context.index, j));
        out.control("<|vision_end|>");
      }
    }
  }
  if (is_tool) out.text("\n</tool_response>");
  out.text(tool_calls_text(message, context.index));
  // In a run of tool results (3.5, 3.8) only the last closes the shared user message.
  const bool run_goes_on = !is_vl() && is_tool && context.next != nullptr && context.next->role == "tool";
  if (!run_goes_on) out.control("<|im_end|>");
  return std::move(out).finish();
}

Renderer::RenderedMessage QwenVisionRenderer::render_message(const Message& message,
                                                             const RenderContext& context) const {
  require_role(message, context.index, {"system", "user", "assistant", "tool"}, format_.name);
  for (std::size_t j = 0; j < message.content.size(); ++j) {
    if (message.role != "assistant" && std::holds_alternative<ThinkingPart>(message.content[j])) {
      qwen_invalid_message(context.index, ".content[" + std::to_string(j) + "]: the " + std::string(format_.name) +
                                              " renderer cannot render a thinking part in a \"" + message.role +
                                              "\" message");
    }
  }
  if (message.role != "assistant") {
    require_no_tool_calls(message, context.index, format_.name, "only assistant messages make them");
  }
  if (renders_nothing(message, context.index)) return {};

  std::string header = header_text(message, context);
  std::vector<ModelInputChunk> output = output_chunks(message, context);
  // The produced turn's header can run past where the generation prompt stops (3.5's "<think>\n"
  // inside the empty block): the rest is encoded on its own, so the prompt's tokens start the
  // example even where the whole text would merge "\n" + "\n" into one token.
  if (!is_vl() && message.role == "assistant" && context.is_last) {
    const std::string prompt_end = generation_suffix("assistant", context);
    if (header.starts_with(prompt_end)) {
      const std::string rest = header.substr(prompt_end.size());
      if (!rest.empty()) output.insert(output.begin(), EncodedTextChunk(encode(rest)));
      header = prompt_end;
    }
  }
  RenderedMessage rendered;
  rendered.header = encode(header);
  rendered.output = std::move(output);
  return rendered;
}

}  // namespace tinker::renderers::detail
