// The Kimi families' renderer (renderers/kimi_common.hpp): the conversation as Kimi's template
// sees it, each message's tokens, the assembly of prompts and supervised examples, and parsing.
#include "renderers/kimi_common.hpp"

#include "renderers/family_support.hpp"
#include "renderers/images.hpp"
#include "renderers/model_input_building.hpp"
#include "renderers/parsing.hpp"

#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace tinker::renderers::detail {
namespace {

constexpr std::string_view kKimiDefaultSystem = "You are Kimi, an AI assistant created by Moonshot AI.";
constexpr std::string_view kKimiImEnd = "<|im_end|>";
constexpr std::string_view kKimiMiddle = "<|im_middle|>";
constexpr std::string_view kKimiSectionBegin = "<|tool_calls_section_begin|>";
constexpr std::string_view kKimiSectionEnd = "<|tool_calls_section_end|>";
// Kimi also samples the section markers in the singular.
constexpr std::string_view kKimiSectionBeginSingular = "<|tool_call_section_begin|>";
constexpr std::string_view kKimiSectionEndSingular = "<|tool_call_section_end|>";
constexpr std::string_view kKimiCallBegin = "<|tool_call_begin|>";
constexpr std::string_view kKimiArgumentBegin = "<|tool_call_argument_begin|>";
constexpr std::string_view kKimiCallEnd = "<|tool_call_end|>";
constexpr std::string_view kKimiImagePrefix = "<|media_begin|>image<|media_content|>";
constexpr std::string_view kKimiImageSuffix = "<|media_end|>\n";

// ---- Reading sampled tool calls -------------------------------------------------------------

// The function's name in a call id such as "functions.get_weather:0".
std::string_view kimi_name_of_call_id(std::string_view id) {
  std::string_view name = id.substr(0, id.find(':'));
  if (const std::size_t dot = name.find('.'); dot != std::string_view::npos) name = name.substr(dot + 1);
  return name;
}

// Kimi's parser reads a call only under an id ending in ":{index}".
bool kimi_is_call_id(std::string_view id) {
  const std::size_t colon = id.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == id.size()) return false;
  return id.substr(colon + 1).find_first_not_of("0123456789") == std::string_view::npos;
}

void kimi_read_calls(std::string_view section, Message& message) {
  for (std::size_t at = section.find(kKimiCallBegin); at != std::string_view::npos;
       at = section.find(kKimiCallBegin, at + kKimiCallBegin.size())) {
    const std::size_t end = section.find(kKimiCallEnd, at);
    if (end == std::string_view::npos) break;
    const std::string_view raw = section.substr(at, end + kKimiCallEnd.size() - at);
    const std::string_view body = section.substr(at + kKimiCallBegin.size(), end - at - kKimiCallBegin.size());
    const std::size_t separator = body.find(kKimiArgumentBegin);
    const std::string_view id =
        separator == std::string_view::npos ? std::string_view() : trim_whitespace(body.substr(0, separator));
    if (!kimi_is_call_id(id)) {
      message.unparsed_tool_calls.emplace_back(std::string(raw), "no call id of the form functions.{name}:{index}");
      continue;
    }
    const std::string_view arguments = trim_whitespace(body.substr(separator + kKimiArgumentBegin.size()));
    if (auto why = json_object_error(arguments)) {
      message.unparsed_tool_calls.emplace_back(std::string(raw), std::move(*why));
    } else {
      message.tool_calls.emplace_back(std::string(kimi_name_of_call_id(id)), std::string(arguments), std::string(id));
    }
  }
}

// Reads the first tool-calls section into `message`; returns the text before it.
std::string kimi_take_tool_calls(std::string_view text, Message& message) {
  std::string_view before = text;
  for (const auto& [open, close] :
       {std::pair{kKimiSectionBegin, kKimiSectionEnd}, std::pair{kKimiSectionBeginSingular, kKimiSectionEndSingular}}) {
    const std::size_t begin = text.find(open);
    const std::size_t end = begin == std::string_view::npos ? begin : text.find(close, begin);
    if (end == std::string_view::npos) continue;
    kimi_read_calls(text.substr(begin + open.size(), end - begin - open.size()), message);
    before = text.substr(0, begin);
    break;
  }
  for (const auto& [open, close] :
       {std::pair{kKimiSectionBegin, kKimiSectionEnd}, std::pair{kKimiSectionBeginSingular, kKimiSectionEndSingular},
        std::pair{kKimiCallBegin, kKimiCallEnd}}) {
    if (auto dangling = unclosed_block(text, open, close)) {
      message.unparsed_tool_calls.push_back(std::move(*dangling));
      break;
    }
  }
  return std::string(before);
}

// ---- Writing --------------------------------------------------------------------------------

std::string kimi_tool_calls_text(const std::vector<ToolCall>& calls) {
  if (calls.empty()) return {};
  std::string text(kKimiSectionBegin);
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const std::string id = calls[i].id.value_or("functions." + calls[i].name + ":" + std::to_string(i));
    text.append(kKimiCallBegin).append(id).append(kKimiArgumentBegin).append(calls[i].arguments).append(kKimiCallEnd);
  }
  return text.append(kKimiSectionEnd);
}

}  // namespace

// The conversation as Kimi's template renders it: the default system message added where the
// template adds it (first, or after a leading tool_declare message), each message with the index
// the caller gave it (for errors) and whether it is in the turn whose reasoning is kept.
class KimiRenderer::Conversation {
 public:
  Conversation(std::span<const Message> messages, std::optional<TrainOn> train_on) {
    const bool declares_first = !messages.empty() && messages.front().role == "tool_declare";
    const std::size_t system_at = declares_first ? 1 : 0;
    const bool has_system = system_at < messages.size() && messages[system_at].role == "system";
    if (!has_system) {
      default_system_ = Message("system", std::string(kKimiDefaultSystem));
      // The caller's flags say nothing about a message it did not write: it is context.
      if (train_on == TrainOn::customized) default_system_.trainable = false;
    }
    for (std::size_t i = 0; i < messages.size(); ++i) {
      if (i == system_at && !has_system) add(default_system_, std::nullopt);
      add(messages[i], i);
    }
    if (messages.size() == system_at && !has_system) add(default_system_, std::nullopt);
  }
  Conversation(const Conversation&) = delete;
  Conversation& operator=(const Conversation&) = delete;

  std::size_t size() const noexcept { return messages_.size(); }
  const Message& operator[](std::size_t i) const noexcept { return *messages_[i]; }
  /// The caller's index of message `i`; for the added system message, the index of the message
  /// that follows it (which errors about it never need).
  std::size_t caller_index(std::size_t i) const noexcept { return caller_indices_[i]; }
  bool inserted(std::size_t i) const noexcept { return messages_[i] == &default_system_; }

  /// Where the turn whose reasoning is kept starts among the first `end` messages: after the last
  /// assistant message that made no tool call.
  std::size_t turn_start(std::size_t end) const noexcept {
    for (std::size_t i = end; i > 0; --i) {
      if (messages_[i - 1]->role == "assistant" && messages_[i - 1]->tool_calls.empty()) return i;
    }
    return 0;
  }

  /// The context of message `i` (`i == end` for the message being generated) among the first `end`.
  RenderContext context(std::size_t i, std::size_t end, std::size_t turn_begin) const {
    RenderContext context;
    context.index = i;
    context.is_last = i + 1 >= end;
    context.previous = i > 0 ? messages_[i - 1] : nullptr;
    context.next = i + 1 < end ? messages_[i + 1] : nullptr;
    for (std::size_t j = end; j > 0; --j) {
      if (messages_[j - 1]->role == "user") {
        context.last_user_index = j - 1;
        break;
      }
    }
    context.in_last_assistant_turn = i >= turn_begin;
    return context;
  }

 private:
  void add(const Message& message, std::optional<std::size_t> caller) {
    messages_.push_back(&message);
    caller_indices_.push_back(caller.value_or(caller_indices_.empty() ? 0 : caller_indices_.back() + 1));
  }

  Message default_system_;
  std::vector<const Message*> messages_;
  std::vector<std::size_t> caller_indices_;
};

KimiRenderer::KimiRenderer(TokenizerPtr tokenizer, KimiFamily family)
    : Renderer(std::move(tokenizer)),
      family_(family),
      im_end_(require_token(this->tokenizer(), kKimiImEnd, family_.name)) {
  for (const std::string_view marker :
       {std::string_view("<|im_user|>"), std::string_view("<|im_assistant|>"), std::string_view("<|im_system|>"),
        kKimiMiddle, kKimiSectionBegin, kKimiCallBegin, kKimiArgumentBegin, kKimiCallEnd, kKimiSectionEnd}) {
    require_token(this->tokenizer(), marker, family_.name);
  }
  if (!family_.generation_prefill.empty()) {
    think_open_ = require_token(this->tokenizer(), "<think>", family_.name);
    think_close_ = require_token(this->tokenizer(), "</think>", family_.name);
  }
  if (family_.renders_images) {
    for (const std::string_view marker : {"<|media_begin|>", "<|media_content|>", "<|media_end|>"}) {
      require_token(this->tokenizer(), marker, family_.name);
    }
  }
}

std::vector<Message> KimiRenderer::create_conversation_prefix_with_tools(std::span<const ToolSpec> tools,
                                                                         std::string_view system_prompt) const {
  std::vector<Message> prefix;
  if (!tools.empty()) prefix.emplace_back("tool_declare", family_.declare_tools(tools));
  prefix.emplace_back("system", std::string(system_prompt.empty() ? kKimiDefaultSystem : system_prompt));
  return prefix;
}

// What Kimi writes of each message, checked before anything is rendered so errors name the
// caller's indices: assistant messages hold text and reasoning; the others hold text, and images
// in the families that render them.
void KimiRenderer::check_content(std::span<const Message> messages) const {
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const Message& message = messages[i];
    require_role(message, i, {"system", "developer", "user", "assistant", "tool", "tool_declare"}, family_.name);
    if (message.role != "assistant")
      require_no_tool_calls(message, i, family_.name, "only assistant messages call tools");
    if (message.role == "assistant" || !family_.renders_images) {
      require_text_parts(message, i, family_.name, message.role == "assistant");
      continue;
    }
    for (std::size_t part = 0; part < message.content.size(); ++part) {
      if (std::holds_alternative<ThinkingPart>(message.content[part])) {
        const std::string where = "messages[" + std::to_string(i) + "].content[" + std::to_string(part) + "]";
        throw error(errc::invalid_argument, where + ": " + std::string(family_.name) +
                                                " writes reasoning only in assistant messages, not in a \"" +
                                                message.role + "\" message");
      }
    }
  }
}

// A non-assistant message's content and end marker: runs of text, each image inside Kimi's media
// markers (one chunk per run of text, as the template's text tokenizes).
std::vector<ModelInputChunk> KimiRenderer::content_chunks(const Message& message, std::size_t caller_index) const {
  std::vector<ModelInputChunk> chunks;
  std::string text;
  for (std::size_t part = 0; part < message.content.size(); ++part) {
    if (const auto* text_part = std::get_if<TextPart>(&message.content[part])) {
      text += text_part->text;
    } else if (const auto* image = std::get_if<ImagePart>(&message.content[part])) {
      chunks.emplace_back(EncodedTextChunk(encode(text + std::string(kKimiImagePrefix))));
      chunks.emplace_back(image_chunk(*image, ImageTokenRule::kimi_k25, caller_index, part));
      text = kKimiImageSuffix;
    }
  }
  chunks.emplace_back(EncodedTextChunk(encode(text + std::string(kKimiImEnd))));
  return chunks;
}

Renderer::RenderedMessage KimiRenderer::render_message(const Message& message, const RenderContext& context) const {
  return render_at(message, context, context.index);
}

Renderer::RenderedMessage KimiRenderer::render_at(const Message& message, const RenderContext& context,
                                                  std::size_t caller_index) const {
  std::string header;
  if (message.role == "assistant") {
    header = "<|im_assistant|>assistant";
  } else if (message.role == "user") {
    header = "<|im_user|>user";
  } else if (message.role == "tool") {
    // The template names a tool result's message after the function and puts the call id in
    // front of the result.
    const std::string function = message.name.value_or("");
    header = "<|im_system|>" + (function.empty() ? std::string("tool") : function);
  } else {
    header = "<|im_system|>" + message.role;  // system, developer, tool_declare
  }
  header += kKimiMiddle;
  if (message.role == "tool") header += "## Return of " + message.tool_call_id.value_or("") + "\n";

  RenderedMessage rendered{encode(header), {}, {}};
  if (message.role != "assistant") {
    rendered.output = content_chunks(message, caller_index);
    return rendered;
  }
  const std::string reasoning = message.thinking();
  const bool keeps_reasoning = context.in_last_assistant_turn || family_.keeps_history_reasoning;
  const std::string output = "<think>" + (keeps_reasoning ? reasoning : std::string()) + "</think>" + message.text() +
                             kimi_tool_calls_text(message.tool_calls) + std::string(kKimiImEnd);
  rendered.output.emplace_back(EncodedTextChunk(encode(output)));
  return rendered;
}

// The generation prompt of the first `end` messages of `conversation`.
ModelInput KimiRenderer::prompt_of(const Conversation& conversation, std::size_t end, std::string_view role,
                                   std::optional<std::string_view> prefill) const {
  ModelInput prompt;
  const std::size_t turn_begin = conversation.turn_start(end);
  for (std::size_t i = 0; i < end; ++i) {
    const RenderedMessage rendered =
        render_at(conversation[i], conversation.context(i, end, turn_begin), conversation.caller_index(i));
    append_tokens(prompt, rendered.header);
    for (const ModelInputChunk& chunk : rendered.output) append_chunk(prompt, chunk);
  }
  RenderContext next = conversation.context(end, end, turn_begin);
  next.is_last = true;
  const Message opening{std::string(role), std::string()};
  append_tokens(prompt, render_at(opening, next, end).header);
  // The family's prefill opens (or closes) the think block; the caller's text follows it.
  const std::string written = std::string(family_.generation_prefill) + std::string(prefill.value_or(""));
  if (!written.empty()) append_tokens(prompt, encode(written));
  return prompt;
}

ModelInput KimiRenderer::do_build_generation_prompt(std::span<const Message> messages, std::string_view role,
                                                    std::optional<std::string_view> prefill) const {
  check_content(messages);
  const Conversation conversation(messages, std::nullopt);
  return prompt_of(conversation, conversation.size(), role, prefill);
}

SupervisedExample KimiRenderer::do_build_supervised_example(std::span<const Message> messages, TrainOn train_on) const {
  check_content(messages);
  const Conversation conversation(messages, train_on);
  // The final message is the one being trained: its own reasoning stays, as when it was sampled.
  const std::size_t turn_begin = conversation.turn_start(conversation.size() - 1);
  SupervisedExample example;
  const float header_weight = train_on == TrainOn::all_tokens ? 1.0f : 0.0f;
  for (std::size_t i = 0; i < conversation.size(); ++i) {
    const RenderContext context = conversation.context(i, conversation.size(), turn_begin);
    const RenderedMessage rendered = render_at(conversation[i], context, conversation.caller_index(i));
    const float output_weight = output_is_trained(conversation[i], context, train_on) ? 1.0f : 0.0f;
    append_tokens(example.model_input, rendered.header);
    example.weights.insert(example.weights.end(), rendered.header.size(), header_weight);
    for (const ModelInputChunk& chunk : rendered.output) {
      append_chunk(example.model_input, chunk);
      example.weights.insert(example.weights.end(), static_cast<std::size_t>(chunk_length(chunk)), output_weight);
    }
  }

  // Where sampling would have started: the message after the last user message (or the last
  // message). The prompt up to there ends inside that message when the family prefills its think
  // block; the model is always given those tokens, so they carry no weight.
  std::optional<std::size_t> produced;
  if (train_on == TrainOn::last_assistant_message) {
    produced = conversation.size() - 1;
  } else if (train_on == TrainOn::last_assistant_turn) {
    std::size_t after_user = 0;
    for (std::size_t i = 0; i < conversation.size(); ++i) {
      if (conversation[i].role == "user") after_user = i + 1;
    }
    produced = after_user;
  }
  if (!produced || *produced >= conversation.size() || conversation[*produced].role != "assistant") return example;
  const ModelInput prompt = prompt_of(conversation, *produced, "assistant", std::nullopt);
  if (prefix_positions(prompt, example.model_input)) {
    std::fill_n(example.weights.begin(), prompt.length(), 0.0f);
  } else if (family_.disables_thinking()) {
    throw error(errc::invalid_argument,
                "messages[" + std::to_string(conversation.caller_index(*produced)) + "]: " + std::string(family_.name) +
                    " has thinking turned off (its generation prompt closes the think block), but the produced "
                    "turn has reasoning; use the thinking renderer, or remove the reasoning");
  }
  return example;
}

ParsedResponse KimiRenderer::parse_response(std::span<const TokenId> tokens) const {
  // A thinking family's prompt ends in "<think>", so the sampled reasoning arrives without it.
  std::vector<TokenId> restored;
  if (think_open_ && !tokens.empty() && tokens.front() != *think_open_ &&
      std::find(tokens.begin(), tokens.end(), *think_close_) != tokens.end()) {
    restored.reserve(tokens.size() + 1);
    restored.push_back(*think_open_);
    restored.insert(restored.end(), tokens.begin(), tokens.end());
    tokens = restored;
  }
  ParsedResponse parsed;
  parsed.message.role = "assistant";
  const StopSplit split = split_at_stop_token(tokens, im_end_, tokenizer().eos_id());
  const DecodedText decoded = decode_sampled(tokenizer(), split.body);
  parsed.termination = decoded.all_ids_valid ? split.termination : ParseTermination::malformed;
  parsed.message.content = parts_with_thinking(kimi_take_tool_calls(decoded.text, parsed.message));
  return parsed;
}

}  // namespace tinker::renderers::detail
