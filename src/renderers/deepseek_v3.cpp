// DeepSeek V3.1's chat format, in its non-thinking (`deepseekv3`) and thinking
// (`deepseekv3_thinking`) modes:
//
//   <｜begin▁of▁sentence｜>{system}<｜User｜>{user}<｜Assistant｜></think>{answer}<｜end▁of▁sentence｜>
//
// A system message has no role token and may only open the conversation. Non-thinking mode writes
// "</think>" right after <｜Assistant｜> and drops reasoning; thinking mode ends the generation
// prompt with "<think>", writes earlier answers as "</think>{answer}" (their reasoning dropped,
// unless the message called a tool) and the final one as "<think>{reasoning}</think>{answer}".
// Tool calls follow the text as
//   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>{name}<｜tool▁sep｜>{arguments}<｜tool▁call▁end｜>...<｜tool▁calls▁end｜>
// and a tool result is <｜tool▁output▁begin｜>{result}<｜tool▁output▁end｜>; the assistant message
// after a tool result has no role token (and no "</think>"). These are the V3.1 model's own
// template's strings (its chat_template.jinja) and the Tinker cookbook's deepseek_v3.py.
// `deepseekv3_disable_thinking` is the cookbook's other name for `deepseekv3`.
//
// Tools are declared in the system message, after the system prompt, as the model card's
// ToolCall section describes: "## Tools", a "### {name}" block per tool with its description and
// its parameters' JSON Schema, and the call format.
#include "renderers/families.hpp"
#include "renderers/family_support.hpp"
#include "renderers/parsing.hpp"
#include "renderers/qwen_common.hpp"

#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <string>
#include <system_error>
#include <variant>

namespace tinker::renderers {
namespace {

constexpr std::string_view kUser = "<｜User｜>";
constexpr std::string_view kAssistant = "<｜Assistant｜>";
constexpr std::string_view kBegin = "<｜begin▁of▁sentence｜>";
constexpr std::string_view kEndOfSentence = "<｜end▁of▁sentence｜>";
constexpr std::string_view kCallsBegin = "<｜tool▁calls▁begin｜>";
constexpr std::string_view kCallsEnd = "<｜tool▁calls▁end｜>";
constexpr std::string_view kToolCallBegin = "<｜tool▁call▁begin｜>";
constexpr std::string_view kToolCallEnd = "<｜tool▁call▁end｜>";
constexpr std::string_view kSep = "<｜tool▁sep｜>";
constexpr std::string_view kOutputBegin = "<｜tool▁output▁begin｜>";
constexpr std::string_view kOutputEnd = "<｜tool▁output▁end｜>";

std::string tool_calls_text(const std::vector<ToolCall>& calls) {
  if (calls.empty()) return {};
  std::string text(kCallsBegin);
  for (const ToolCall& call : calls) {
    text.append(kToolCallBegin).append(call.name).append(kSep).append(call.arguments).append(kToolCallEnd);
  }
  return text.append(kCallsEnd);
}

// The tool declarations that follow the system prompt: the parameters as Python's json.dumps
// writes them (as the cookbook does).
std::string deepseek_tools_text(std::span<const ToolSpec> tools) {
  if (tools.empty()) return {};
  std::string blocks;
  for (std::size_t i = 0; i < tools.size(); ++i) {
    std::error_code ec;
    const boost::json::value parameters = boost::json::parse(tools[i].parameters, ec);
    if (ec || !parameters.is_object()) {
      throw error(errc::invalid_argument, "tools[" + std::to_string(i) +
                                              "].parameters: expected a JSON object's text (a JSON Schema), got: " +
                                              tools[i].parameters.substr(0, 80));
    }
    if (i > 0) blocks += '\n';
    blocks += "### " + tools[i].name + "\nDescription: " + tools[i].description +
              "\n\nParameters: " + detail::qwen::python_json(parameters);
  }
  return "\n\n## Tools\nYou have access to the following tools:\n\n" + blocks +
         "\n\nIMPORTANT: ALWAYS adhere to this exact format for tool use:\n" + std::string(kCallsBegin) +
         std::string(kToolCallBegin) + "tool_call_name" + std::string(kSep) + "tool_call_arguments" +
         std::string(kToolCallEnd) + std::string(kCallsEnd) +
         "\n\nWhere:\n- `tool_call_name` must be an exact match to one of the available tools\n"
         "- `tool_call_arguments` must be valid JSON that strictly follows the tool's Parameters Schema\n"
         "- For multiple tool calls, chain them directly without separators or spaces";
}

// Reads the calls of the first tool-calls section; `text` loses the section (and the whitespace
// before it).
void take_tool_calls(std::string& text, Message& message) {
  if (auto dangling = detail::unclosed_block(text, kCallsBegin, kCallsEnd)) {
    message.unparsed_tool_calls.push_back(std::move(*dangling));
  }
  const std::size_t begin = text.find(kCallsBegin);
  const std::size_t end = begin == std::string::npos ? begin : text.find(kCallsEnd, begin);
  if (end == std::string::npos) return;
  const std::string_view section =
      std::string_view(text).substr(begin + kCallsBegin.size(), end - begin - kCallsBegin.size());
  if (auto dangling = detail::unclosed_block(section, kToolCallBegin, kToolCallEnd)) {
    message.unparsed_tool_calls.push_back(std::move(*dangling));
  }
  for (std::size_t at = section.find(kToolCallBegin); at != std::string_view::npos;
       at = section.find(kToolCallBegin, at + kToolCallBegin.size())) {
    const std::size_t call_end = section.find(kToolCallEnd, at);
    if (call_end == std::string_view::npos) break;
    const std::string_view raw = section.substr(at, call_end + kToolCallEnd.size() - at);
    const std::string_view body = section.substr(at + kToolCallBegin.size(), call_end - at - kToolCallBegin.size());
    const std::size_t sep = body.find(kSep);
    const std::string_view name =
        sep == std::string_view::npos ? std::string_view() : detail::trim_whitespace(body.substr(0, sep));
    if (name.empty()) {
      message.unparsed_tool_calls.emplace_back(std::string(raw), "no function name before <｜tool▁sep｜>");
      continue;
    }
    const std::string_view arguments = detail::trim_whitespace(body.substr(sep + kSep.size()));
    if (auto why = detail::json_object_error(arguments)) {
      message.unparsed_tool_calls.emplace_back(std::string(raw), std::move(*why));
    } else {
      message.tool_calls.emplace_back(std::string(name), std::string(arguments));
    }
  }
  std::size_t cut = begin;
  while (cut > 0 && std::string_view(" \t\n\r").find(text[cut - 1]) != std::string_view::npos) --cut;
  text.erase(cut, end + kCallsEnd.size() - cut);
  text = std::string(detail::trim_whitespace(text));
}

class DeepSeekV3Renderer : public Renderer {
 public:
  DeepSeekV3Renderer(detail::TokenizerPtr tokenizer, bool thinking, std::string_view name)
      : Renderer(std::move(tokenizer)),
        thinking_(thinking),
        name_(name),
        begin_(detail::require_token(this->tokenizer(), kBegin, family())),
        end_(detail::require_token(this->tokenizer(), kEndOfSentence, family())),
        user_(detail::require_token(this->tokenizer(), kUser, family())),
        assistant_(detail::require_token(this->tokenizer(), kAssistant, family())) {
    for (const std::string_view marker :
         {kCallsBegin, kCallsEnd, kToolCallBegin, kToolCallEnd, kSep, kOutputBegin, kOutputEnd}) {
      detail::require_token(this->tokenizer(), marker, family());
    }
  }

  std::string_view name() const noexcept override { return family(); }

  StopCondition stop_sequences() const override { return std::vector<TokenId>{end_}; }

  bool has_extension_property() const noexcept override { return !thinking_; }

  // One system message: the system prompt, then the tools (both modes; the model card documents
  // tool calls in non-thinking mode).
  std::vector<Message> create_conversation_prefix_with_tools(std::span<const ToolSpec> tools,
                                                             std::string_view system_prompt) const override {
    return {Message("system", std::string(system_prompt) + deepseek_tools_text(tools))};
  }

  ParsedResponse parse_response(std::span<const TokenId> tokens) const override {
    ParsedResponse parsed;
    parsed.message.role = "assistant";
    const detail::StopSplit split = detail::split_at_stop_token(tokens, end_, std::nullopt);
    detail::DecodedText decoded = detail::decode_sampled(tokenizer(), split.body);
    std::string& text = decoded.text;
    // The thinking prompt ends with "<think>", so a sampled answer starts inside the block.
    if (thinking_ && text.find("</think>") != std::string::npos && !text.starts_with("<think>")) {
      text.insert(0, "<think>");
    }
    take_tool_calls(text, parsed.message);
    parsed.message.content = detail::parts_with_thinking(text);
    parsed.termination = decoded.all_ids_valid ? split.termination : ParseTermination::malformed;
    return parsed;
  }

 protected:
  std::vector<TokenId> bos_tokens() const override { return {begin_}; }

  RenderedMessage render_message(const Message& message, const RenderContext& context) const override {
    if (message.role == "system") return render_system(message, context);
    if (message.role == "user") {
      detail::require_text_parts(message, context.index, family(), false);
      return RenderedMessage{{user_}, {EncodedTextChunk(encode(message.text()))}, {}};
    }
    if (message.role == "tool") {
      detail::require_text_parts(message, context.index, family(), false);
      return RenderedMessage{
          encode(kOutputBegin), {EncodedTextChunk(encode(message.text() + std::string(kOutputEnd)))}, {}};
    }
    detail::require_role(message, context.index, {"system", "user", "assistant", "tool"}, family());
    return render_assistant(message, context);
  }

  std::vector<TokenId> generation_header(std::string_view role, const RenderContext& context) const override {
    std::vector<TokenId> header = Renderer::generation_header(role, context);
    // Thinking mode opens the reasoning block for the model; after a tool result V3.1 answers
    // without thinking.
    if (thinking_ && role == "assistant" && !follows_tool(context)) {
      const std::vector<TokenId> open = encode("<think>");
      header.insert(header.end(), open.begin(), open.end());
    }
    return header;
  }

 private:
  std::string_view family() const noexcept { return name_; }

  static bool follows_tool(const RenderContext& context) {
    return context.previous != nullptr && context.previous->role == "tool";
  }

  RenderedMessage render_system(const Message& message, const RenderContext& context) const {
    detail::require_text_parts(message, context.index, family(), false);
    if (context.index != 0) {
      throw error(errc::invalid_argument, "messages[" + std::to_string(context.index) + "]" + ": the " +
                                              std::string(family()) +
                                              " renderer renders a system message only as the first message");
    }
    return RenderedMessage{{}, {EncodedTextChunk(encode(message.text()))}, {}};
  }

  // The reasoning and answer as the mode writes them.
  std::string assistant_body(const Message& message, const RenderContext& context) const {
    const bool keep_thinking = thinking_ && (context.is_last || !message.tool_calls.empty());
    std::string body;
    bool has_thinking = false;
    for (const ContentPart& part : message.content) {
      if (const auto* text = std::get_if<TextPart>(&part)) {
        body += text->text;
      } else if (const auto* thought = std::get_if<ThinkingPart>(&part)) {
        has_thinking = true;
        if (keep_thinking) body += "<think>" + thought->thinking + "</think>";
      }
    }
    // The final message of thinking mode answers a prompt that opened "<think>": one without
    // reasoning closes the block at once.
    if (thinking_ && context.is_last && !follows_tool(context) && !has_thinking) body.insert(0, "<think></think>");
    return body;
  }

  RenderedMessage render_assistant(const Message& message, const RenderContext& context) const {
    detail::require_text_parts(message, context.index, family(), true);
    RenderedMessage rendered;
    if (!follows_tool(context)) {
      rendered.header.push_back(assistant_);
      // "</think>" marks an answer given without (or past) reasoning: always in non-thinking
      // mode, for earlier answers in thinking mode.
      if (!thinking_ || !context.is_last) {
        const std::vector<TokenId> close = encode("</think>");
        rendered.header.insert(rendered.header.end(), close.begin(), close.end());
      }
    }
    std::vector<TokenId> output = encode(assistant_body(message, context) + tool_calls_text(message.tool_calls));
    output.push_back(end_);
    rendered.output.emplace_back(EncodedTextChunk(std::move(output)));
    return rendered;
  }

  bool thinking_;
  std::string_view name_;  ///< the name it was made under (deepseekv3_disable_thinking is deepseekv3)
  TokenId begin_;
  TokenId end_;
  TokenId user_;
  TokenId assistant_;
};

}  // namespace

std::unique_ptr<Renderer> detail::make_deepseekv3(TokenizerPtr tokenizer) {
  return std::make_unique<DeepSeekV3Renderer>(std::move(tokenizer), false, "deepseekv3");
}

// The cookbook's other name for deepseekv3: the same non-thinking renderer.
std::unique_ptr<Renderer> detail::make_deepseekv3_disable_thinking(TokenizerPtr tokenizer) {
  return std::make_unique<DeepSeekV3Renderer>(std::move(tokenizer), false, "deepseekv3_disable_thinking");
}

std::unique_ptr<Renderer> detail::make_deepseekv3_thinking(TokenizerPtr tokenizer) {
  return std::make_unique<DeepSeekV3Renderer>(std::move(tokenizer), true, "deepseekv3_thinking");
}

}  // namespace tinker::renderers
