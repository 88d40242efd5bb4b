// Kimi K2's chat format (`kimi_k2`, for Kimi K2 Thinking):
//
//   <|im_system|>system<|im_middle|>You are Kimi, an AI assistant created by Moonshot AI.<|im_end|>
//   <|im_user|>user<|im_middle|>{user}<|im_end|>
//   <|im_assistant|>assistant<|im_middle|><think>{reasoning}</think>{answer}<|im_end|>
//
// A conversation that does not open with a system message gets that default one. Reasoning is
// kept only after the last assistant message that did not call a tool; earlier assistant
// messages are written with an empty <think></think>. Tool calls follow the answer as
//   <|tool_calls_section_begin|><|tool_call_begin|>{id}<|tool_call_argument_begin|>{arguments}<|tool_call_end|>...<|tool_calls_section_end|>
// with the call's id (or "functions.{name}:{index}"), and a tool result is a system-token message
// named after the function: <|im_system|>{name}<|im_middle|>## Return of {id}\n{result}<|im_end|>.
// Strings from the model's chat_template.jinja (moonshotai/Kimi-K2-Thinking) and the Tinker
// cookbook's kimi_k2.py.
#include "renderers/families.hpp"
#include "renderers/family_support.hpp"
#include "renderers/parsing.hpp"

#include <tinker/tokenizer.hpp>

#include <array>
#include <string>
#include <variant>

namespace tinker::renderers {
namespace {

constexpr std::string_view kFamily = "kimi_k2";
constexpr std::string_view kDefaultSystem = "You are Kimi, an AI assistant created by Moonshot AI.";
constexpr std::string_view kImEnd = "<|im_end|>";
constexpr std::string_view kMiddle = "<|im_middle|>";
constexpr std::string_view kSectionBegin = "<|tool_calls_section_begin|>";
constexpr std::string_view kSectionEnd = "<|tool_calls_section_end|>";
// Kimi also samples the section markers in the singular.
constexpr std::string_view kSectionBeginSingular = "<|tool_call_section_begin|>";
constexpr std::string_view kSectionEndSingular = "<|tool_call_section_end|>";
constexpr std::string_view kCallBegin = "<|tool_call_begin|>";
constexpr std::string_view kArgumentBegin = "<|tool_call_argument_begin|>";
constexpr std::string_view kCallEnd = "<|tool_call_end|>";

// Where the template's "suffix" starts: after the last assistant message that made no tool call.
// Messages before it are history, written without their reasoning.
std::size_t suffix_start(std::span<const Message> messages) {
  for (std::size_t i = messages.size(); i > 0; --i) {
    if (messages[i - 1].role == "assistant" && messages[i - 1].tool_calls.empty()) return i;
  }
  return 0;
}

// The function's name in a call id such as "functions.get_weather:0".
std::string_view name_of_call_id(std::string_view id) {
  std::string_view name = id.substr(0, id.find(':'));
  if (const std::size_t dot = name.find('.'); dot != std::string_view::npos) name = name.substr(dot + 1);
  return name;
}

bool is_call_id(std::string_view id) {
  const std::size_t colon = id.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == id.size()) return false;
  return id.substr(colon + 1).find_first_not_of("0123456789") == std::string_view::npos;
}

void read_calls(std::string_view section, Message& message) {
  for (std::size_t at = section.find(kCallBegin); at != std::string_view::npos;
       at = section.find(kCallBegin, at + kCallBegin.size())) {
    const std::size_t end = section.find(kCallEnd, at);
    if (end == std::string_view::npos) break;
    const std::string_view raw = section.substr(at, end + kCallEnd.size() - at);
    const std::string_view body = section.substr(at + kCallBegin.size(), end - at - kCallBegin.size());
    const std::size_t separator = body.find(kArgumentBegin);
    const std::string_view id =
        separator == std::string_view::npos ? std::string_view() : detail::trim_whitespace(body.substr(0, separator));
    if (!is_call_id(id)) {
      message.unparsed_tool_calls.emplace_back(std::string(raw), "no call id of the form functions.{name}:{index}");
      continue;
    }
    const std::string_view arguments = detail::trim_whitespace(body.substr(separator + kArgumentBegin.size()));
    if (auto why = detail::json_object_error(arguments)) {
      message.unparsed_tool_calls.emplace_back(std::string(raw), std::move(*why));
    } else {
      message.tool_calls.emplace_back(std::string(name_of_call_id(id)), std::string(arguments), std::string(id));
    }
  }
}

// Reads the first tool-calls section into `message`; returns the text before it.
std::string take_tool_calls(std::string_view text, Message& message) {
  std::string_view before = text;
  for (const auto& [open, close] :
       {std::pair{kSectionBegin, kSectionEnd}, std::pair{kSectionBeginSingular, kSectionEndSingular}}) {
    const std::size_t begin = text.find(open);
    const std::size_t end = begin == std::string_view::npos ? begin : text.find(close, begin);
    if (end == std::string_view::npos) continue;
    read_calls(text.substr(begin + open.size(), end - begin - open.size()), message);
    before = text.substr(0, begin);
    break;
  }
  for (const auto& [open, close] :
       {std::pair{kSectionBegin, kSectionEnd}, std::pair{kSectionBeginSingular, kSectionEndSingular},
        std::pair{kCallBegin, kCallEnd}}) {
    if (auto dangling = detail::unclosed_block(text, open, close)) {
      message.unparsed_tool_calls.push_back(std::move(*dangling));
      break;
    }
  }
  return std::string(before);
}

class KimiK2Renderer : public Renderer {
 public:
  explicit KimiK2Renderer(detail::TokenizerPtr tokenizer)
      : Renderer(std::move(tokenizer)), im_end_(detail::require_token(this->tokenizer(), kImEnd, kFamily)) {
    for (const std::string_view marker :
         {"<|im_user|>", "<|im_assistant|>", "<|im_system|>", kMiddle.data(), kSectionBegin.data(), kCallBegin.data(),
          kArgumentBegin.data(), kCallEnd.data(), kSectionEnd.data()}) {
      detail::require_token(this->tokenizer(), marker, kFamily);
    }
  }

  std::string_view name() const noexcept override { return kFamily; }

  StopCondition stop_sequences() const override { return std::vector<TokenId>{im_end_}; }

  ParsedResponse parse_response(std::span<const TokenId> tokens) const override {
    ParsedResponse parsed;
    parsed.message.role = "assistant";
    const detail::StopSplit split = detail::split_at_stop_token(tokens, im_end_, tokenizer().eos_id());
    const detail::DecodedText decoded = detail::decode_sampled(tokenizer(), split.body);
    parsed.termination = decoded.all_ids_valid ? split.termination : ParseTermination::malformed;
    parsed.message.content = detail::parts_with_thinking(take_tool_calls(decoded.text, parsed.message));
    return parsed;
  }

 protected:
  // Content was checked by as_template_sees, against the caller's message indices.
  RenderedMessage render_message(const Message& message, const RenderContext& /*context*/) const override {
    std::string header;
    std::string output;
    if (message.role == "assistant") {
      header = "<|im_assistant|>assistant";
      output = "<think>" + message.thinking() + "</think>" + message.text() + tool_calls_text(message.tool_calls);
    } else if (message.role == "user") {
      header = "<|im_user|>user";
      output = message.text();
    } else if (message.role == "tool") {
      // The template names a tool result's message after the function and puts the call id in
      // front of the result.
      header = "<|im_system|>" + message.name.value_or("tool") + std::string(kMiddle) + "## Return of " +
               message.tool_call_id.value_or("") + "\n";
      output = message.text();
    } else {
      header = "<|im_system|>" + message.role;  // system and developer
      output = message.text();
    }
    if (message.role != "tool") header += kMiddle;
    return RenderedMessage{encode(header), {EncodedTextChunk(encode(output + std::string(kImEnd)))}, {}};
  }

  ModelInput do_build_generation_prompt(std::span<const Message> messages, std::string_view role,
                                        std::optional<std::string_view> prefill) const override {
    const std::vector<Message> shaped = as_template_sees(messages, suffix_start(messages), std::nullopt);
    return Renderer::do_build_generation_prompt(shaped, role, prefill);
  }

  SupervisedExample do_build_supervised_example(std::span<const Message> messages, TrainOn train_on) const override {
    // The final message is the one being trained: its own reasoning stays, as when it was sampled.
    const std::size_t history_end = messages.empty() ? 0 : suffix_start(messages.first(messages.size() - 1));
    const std::vector<Message> shaped = as_template_sees(messages, history_end, train_on);
    return Renderer::do_build_supervised_example(shaped, train_on);
  }

 private:
  static std::string tool_calls_text(const std::vector<ToolCall>& calls) {
    if (calls.empty()) return {};
    std::string text(kSectionBegin);
    for (std::size_t i = 0; i < calls.size(); ++i) {
      const std::string id = calls[i].id.value_or("functions." + calls[i].name + ":" + std::to_string(i));
      text.append(kCallBegin).append(id).append(kArgumentBegin).append(calls[i].arguments).append(kCallEnd);
    }
    return text.append(kSectionEnd);
  }

  // The conversation as the template renders it: the default system message in front when the
  // conversation does not open with one, and the reasoning of messages before `history_end`
  // removed. Content is checked first, so errors name the caller's indices.
  std::vector<Message> as_template_sees(std::span<const Message> messages, std::size_t history_end,
                                        std::optional<TrainOn> train_on) const {
    for (std::size_t i = 0; i < messages.size(); ++i) {
      detail::require_role(messages[i], i, {"system", "developer", "user", "assistant", "tool"}, kFamily);
      detail::require_text_parts(messages[i], i, kFamily, messages[i].role == "assistant");
    }
    std::vector<Message> shaped;
    shaped.reserve(messages.size() + 1);
    if (messages.empty() || messages.front().role != "system") {
      Message system("system", std::string(kDefaultSystem));
      if (train_on == TrainOn::customized) system.trainable = false;
      shaped.push_back(std::move(system));
    }
    for (std::size_t i = 0; i < messages.size(); ++i) {
      Message message = messages[i];
      if (i < history_end && message.role == "assistant")
        std::erase_if(message.content,
                      [](const ContentPart& part) { return std::holds_alternative<ThinkingPart>(part); });
      shaped.push_back(std::move(message));
    }
    return shaped;
  }

  TokenId im_end_;
};

}  // namespace

std::unique_ptr<Renderer> detail::make_kimi_k2(TokenizerPtr tokenizer) {
  return std::make_unique<KimiK2Renderer>(std::move(tokenizer));
}

}  // namespace tinker::renderers
