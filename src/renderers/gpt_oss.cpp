// gpt-oss's Harmony format (`gpt_oss_no_sysprompt`, `gpt_oss_low_reasoning`,
// `gpt_oss_medium_reasoning`, `gpt_oss_high_reasoning`):
//
//   <|start|>{role}<|channel|>{channel}<|message|>{content}<|end|>
//
// with no separator between messages. An assistant message writes its reasoning on the analysis
// channel, its answer on the final channel (ending <|return|> when it is the last message, <|end|>
// in history), and a tool call as its own commentary message addressed to the function:
//   <|start|>assistant to=functions.{name}<|channel|>commentary <|constrain|>json<|message|>{arguments}<|call|>
// (text that comes with tool calls is a commentary preamble). A tool result comes from the
// function: <|start|>functions.{name} to=assistant<|channel|>commentary<|message|>{result}<|end|>.
// A user's system message is the developer's "# Instructions"; a "harmony_system" message is
// Harmony's own system message, written as it is. The `gpt_oss_*_reasoning` families open every
// conversation with the Harmony system message (identity, knowledge cutoff, today's date,
// "Reasoning: {low, medium, high}", the valid channels). Tools are declared as the cookbook does
// (gpt_oss_tools.cpp): a "harmony_system" message routing tool calls to the commentary channel,
// and the developer message's "# Tools" section. Strings from OpenAI's Harmony guide, the model's
// chat_template.jinja and the Tinker cookbook's gpt_oss.py.
#include "renderers/gpt_oss.hpp"

#include "renderers/parsing.hpp"

#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

#include <algorithm>
#include <array>
#include <ctime>
#include <string>
#include <variant>

namespace tinker::renderers {
namespace {

constexpr std::string_view kStart = "<|start|>";
constexpr std::string_view kEnd = "<|end|>";
constexpr std::string_view kMessage = "<|message|>";
constexpr std::string_view kChannel = "<|channel|>";
constexpr std::string_view kReturn = "<|return|>";
constexpr std::string_view kCall = "<|call|>";
constexpr std::string_view kConstrain = "<|constrain|>";

std::string today() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  std::array<char, 16> date{};
  const std::size_t length = std::strftime(date.data(), date.size(), "%Y-%m-%d", &local);
  return std::string(date.data(), length);
}

// One Harmony message of sampled text: its header (role, recipient, channel) and its body.
class HarmonyMessage {
 public:
  std::string_view channel;
  std::string_view recipient;
  std::string_view body;
  std::string_view raw;
};

// The value after `key` in a header, up to whitespace or the next marker.
std::string_view header_value(std::string_view header, std::string_view key) {
  const std::size_t at = header.find(key);
  if (at == std::string_view::npos) return {};
  const std::string_view rest = header.substr(at + key.size());
  return rest.substr(0, rest.find_first_of(" \t\n<"));
}

// Splits sampled Harmony text into its messages: each runs from its header (after the previous
// message's end marker, or its own <|start|>) through <|message|> to <|end|>, <|call|>,
// <|return|> or the end of the text.
std::vector<HarmonyMessage> harmony_messages(std::string_view text) {
  std::vector<HarmonyMessage> messages;
  std::size_t at = 0;
  for (std::size_t body_at = text.find(kMessage); body_at != std::string_view::npos;
       body_at = text.find(kMessage, at)) {
    std::size_t header_at = text.rfind(kStart, body_at);
    if (header_at == std::string_view::npos || header_at < at) header_at = at;
    const std::string_view header = text.substr(header_at, body_at - header_at);
    const std::size_t content_at = body_at + kMessage.size();
    std::size_t end = text.size();
    std::size_t end_length = 0;
    for (const std::string_view marker : {kEnd, kCall, kReturn}) {
      const std::size_t found = text.find(marker, content_at);
      if (found < end) {
        end = found;
        end_length = marker.size();
      }
    }
    HarmonyMessage message;
    message.channel = header_value(header, kChannel);
    message.recipient = header_value(header, "to=");
    message.body = text.substr(content_at, end - content_at);
    message.raw = text.substr(header_at, end + end_length - header_at);
    messages.push_back(message);
    at = end + end_length;
  }
  return messages;
}

void read_harmony(std::string_view text, Message& message) {
  std::size_t tool_headers = 0;
  for (std::size_t at = text.find("to=functions."); at != std::string_view::npos;
       at = text.find("to=functions.", at + 1)) {
    ++tool_headers;
  }
  for (const HarmonyMessage& part : harmony_messages(text)) {
    if (part.recipient.starts_with("functions.")) {
      const std::string_view name = part.recipient.substr(std::string_view("functions.").size());
      const std::string_view arguments = detail::trim_whitespace(part.body);
      if (arguments.empty()) continue;  // counted as an unterminated header below
      if (auto why = detail::json_object_error(arguments)) {
        message.unparsed_tool_calls.emplace_back(std::string(part.raw), std::move(*why));
      } else {
        message.tool_calls.emplace_back(std::string(name), std::string(arguments));
      }
    } else if (part.channel == "analysis") {
      if (!part.body.empty()) message.content.emplace_back(ThinkingPart(std::string(part.body)));
    } else if (part.channel == "final" || part.channel == "commentary") {
      if (!part.body.empty()) message.content.emplace_back(TextPart(std::string(part.body)));
    }
  }
  if (tool_headers > message.tool_calls.size() + message.unparsed_tool_calls.size()) {
    const std::size_t start = text.rfind(kStart);
    message.unparsed_tool_calls.emplace_back(std::string(start == std::string_view::npos ? text : text.substr(start)),
                                             "unterminated tool block: a \"to=functions.\" header without arguments");
  }
}

class GptOssRenderer : public Renderer {
 public:
  GptOssRenderer(detail::TokenizerPtr tokenizer, std::optional<std::string> reasoning_effort,
                 std::optional<std::string> current_date)
      : Renderer(std::move(tokenizer)),
        reasoning_effort_(std::move(reasoning_effort)),
        current_date_(std::move(current_date)),
        name_(reasoning_effort_ ? "gpt_oss_" + *reasoning_effort_ + "_reasoning" : "gpt_oss_no_sysprompt"),
        return_(detail::require_token(this->tokenizer(), kReturn, family())),
        call_(detail::require_token(this->tokenizer(), kCall, family())),
        start_(detail::require_token(this->tokenizer(), kStart, family())) {
    for (const std::string_view marker : {kEnd, kMessage, kChannel, kConstrain}) {
      detail::require_token(this->tokenizer(), marker, family());
    }
  }

  std::string_view name() const noexcept override { return family(); }

  StopCondition stop_sequences() const override { return std::vector<TokenId>{return_, call_}; }

  // The routing rule in a system message of its own and the definitions in the developer message,
  // after the user's instructions (the cookbook's form; OpenAI's template instead appends the
  // rule to the reasoning system message).
  std::vector<Message> create_conversation_prefix_with_tools(std::span<const ToolSpec> tools,
                                                             std::string_view system_prompt) const override {
    std::vector<Message> messages;
    if (!tools.empty()) {
      messages.emplace_back("harmony_system", "Calls to these tools must go to the commentary channel: 'functions'.");
    }
    std::string developer = system_prompt.empty() ? std::string() : "# Instructions\n\n" + std::string(system_prompt);
    if (!tools.empty()) developer += (developer.empty() ? "" : "\n\n") + detail::harmony_tools_section(tools);
    if (!developer.empty()) messages.emplace_back("developer", std::move(developer));
    return messages;
  }

  ParsedResponse parse_response(std::span<const TokenId> tokens) const override {
    ParsedResponse parsed;
    parsed.message.role = "assistant";
    const std::array<TokenId, 2> stops{return_, call_};
    auto stop = std::find_first_of(tokens.begin(), tokens.end(), stops.begin(), stops.end());
    // Sampling stops at the first <|call|>; a rendered message with several calls goes on with
    // the next call's <|start|>, and is read whole.
    while (stop != tokens.end() && *stop == call_ && stop + 1 != tokens.end() && *(stop + 1) == start_) {
      const auto next = std::find_first_of(stop + 1, tokens.end(), stops.begin(), stops.end());
      if (next == tokens.end()) break;
      stop = next;
    }
    const detail::DecodedText decoded =
        detail::decode_sampled(tokenizer(), tokens.first(static_cast<std::size_t>(stop - tokens.begin())));
    const std::string& text = decoded.text;
    read_harmony(text, parsed.message);
    // Text without any Harmony message stays as it was sampled; a message with no text (only
    // tool calls, or empty) holds one empty text part, as Message(role, "") does.
    if (parsed.message.content.empty()) {
      const bool unstructured = text.find(kMessage) == std::string::npos && parsed.message.tool_calls.empty();
      parsed.message.content.emplace_back(TextPart(unstructured ? text : std::string()));
    }
    const bool clean = stop != tokens.end() && decoded.all_ids_valid;
    parsed.termination = clean ? ParseTermination::stop_sequence : ParseTermination::malformed;
    return parsed;
  }

 protected:
  // The Harmony system message sits before the conversation like a BOS token: the model is
  // given it and never trained on it.
  std::vector<TokenId> bos_tokens() const override {
    if (!reasoning_effort_) return {};
    return encode(std::string(kStart) + "system" + std::string(kMessage) +
                  "You are ChatGPT, a large language model trained by OpenAI.\n"
                  "Knowledge cutoff: 2024-06\n"
                  "Current date: " +
                  current_date_.value_or(today()) + "\n\nReasoning: " + *reasoning_effort_ +
                  "\n\n# Valid channels: analysis, commentary, final. Channel must be included for every message." +
                  std::string(kEnd));
  }

  RenderedMessage render_message(const Message& message, const RenderContext& context) const override {
    if (message.role == "assistant") return render_assistant(message, context);
    if (message.role == "tool") return render_tool(message, context);
    detail::require_role(message, context.index, {"system", "developer", "user", "assistant", "tool", "harmony_system"},
                         family());
    detail::require_text_parts(message, context.index, family(), false);
    const std::string body = message.role == "system" ? "# Instructions\n\n" + message.text() + "\n\n" : message.text();
    // A user's system message is Harmony's developer message; Harmony's own is "harmony_system".
    const std::string role = message.role == "system"           ? "developer"
                             : message.role == "harmony_system" ? "system"
                                                                : message.role;
    return RenderedMessage{encode(std::string(kStart) + role),
                           {EncodedTextChunk(encode(std::string(kMessage) + body + std::string(kEnd)))},
                           {}};
  }

 private:
  std::string_view family() const noexcept { return name_; }

  RenderedMessage render_tool(const Message& message, const RenderContext& context) const {
    detail::require_text_parts(message, context.index, family(), false);
    const std::string result = message.text();
    if (!message.name || message.name->empty()) {
      throw error(errc::invalid_argument, "messages[" + std::to_string(context.index) + "]" + ".name: the " +
                                              std::string(family()) +
                                              " renderer needs the function's name on a tool result (Harmony "
                                              "addresses it from functions.{name})");
    }
    const std::string function = message.name->starts_with("functions.") ? *message.name : "functions." + *message.name;
    return RenderedMessage{encode(std::string(kStart) + function + " to=assistant"),
                           {EncodedTextChunk(encode(std::string(kChannel) + "commentary" + std::string(kMessage) +
                                                    result + std::string(kEnd)))},
                           {}};
  }

  static std::string tool_calls_text(const std::vector<ToolCall>& calls) {
    std::string text;
    for (std::size_t i = 0; i < calls.size(); ++i) {
      if (i > 0) text += std::string(kStart) + "assistant";
      text += " to=functions." + calls[i].name + std::string(kChannel) + "commentary " + std::string(kConstrain) +
              "json" + std::string(kMessage) + calls[i].arguments + std::string(kCall);
    }
    return text;
  }

  RenderedMessage render_assistant(const Message& message, const RenderContext& context) const {
    detail::require_text_parts(message, context.index, family(), true);
    const std::string next_message = std::string(kEnd) + std::string(kStart) + "assistant";
    const std::string thinking = message.thinking();
    const std::string text = message.text();
    std::string output;
    if (!thinking.empty())
      output += std::string(kChannel) + "analysis" + std::string(kMessage) + thinking + next_message;
    if (!message.tool_calls.empty()) {
      if (!text.empty()) output += std::string(kChannel) + "commentary" + std::string(kMessage) + text + next_message;
      output += tool_calls_text(message.tool_calls);  // each call ends with <|call|>
    } else {
      output += std::string(kChannel) + "final" + std::string(kMessage) + text;
      output += context.is_last ? kReturn : kEnd;
    }
    return RenderedMessage{encode(std::string(kStart) + "assistant"), {EncodedTextChunk(encode(output))}, {}};
  }

  std::optional<std::string> reasoning_effort_;
  std::optional<std::string> current_date_;
  std::string name_;  ///< gpt_oss_no_sysprompt, or gpt_oss_{effort}_reasoning
  TokenId return_;
  TokenId call_;
  TokenId start_;
};

}  // namespace

std::unique_ptr<Renderer> detail::make_gpt_oss(TokenizerPtr tokenizer, std::optional<std::string> reasoning_effort,
                                               std::optional<std::string> current_date) {
  return std::make_unique<GptOssRenderer>(std::move(tokenizer), std::move(reasoning_effort), std::move(current_date));
}

std::unique_ptr<Renderer> detail::make_gpt_oss_no_sysprompt(TokenizerPtr tokenizer) {
  return make_gpt_oss(std::move(tokenizer), std::nullopt);
}

std::unique_ptr<Renderer> detail::make_gpt_oss_low_reasoning(TokenizerPtr tokenizer) {
  return make_gpt_oss(std::move(tokenizer), "low");
}

std::unique_ptr<Renderer> detail::make_gpt_oss_medium_reasoning(TokenizerPtr tokenizer) {
  return make_gpt_oss(std::move(tokenizer), "medium");
}

std::unique_ptr<Renderer> detail::make_gpt_oss_high_reasoning(TokenizerPtr tokenizer) {
  return make_gpt_oss(std::move(tokenizer), "high");
}

}  // namespace tinker::renderers
