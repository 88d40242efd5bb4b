// The Qwen3 families, following the chat template of Qwen/Qwen3-8B's tokenizer_config.json:
//   <|im_start|>system\n{text}<|im_end|>\n<|im_start|>user\n{text}<|im_end|>\n
//   <|im_start|>assistant\n<think>\n{reasoning}\n</think>\n\n{text}<|im_end|>
//
// qwen3: reasoning is written only on the turn being produced (the assistant messages after the
// last user message), in a block the template writes on the last message even when it is empty;
// the template drops it from earlier assistant messages. qwen3_disable_thinking: the template with
// enable_thinking=false, whose generation prompt ends with the empty block "<think>\n\n</think>\n\n".
// qwen3_instruct: the 2507 Instruct models, which have no think block at all.
//
// Tool calls are <tool_call>\n{"name": ..., "arguments": ...}\n</tool_call> after the text; tool
// results are <tool_response> blocks in a user message, consecutive results sharing one.
// Messages are separated by the "\n" after <|im_end|>, which is written as the start of the next
// message's header so that the last message ends on <|im_end|>, where sampling stops. What a
// message writes is encoded with split_special_tokens, as the cookbook does (qwen::MarkedText): a
// quoted "<|im_end|>" is text there, not the end of the turn.
#include "renderers/families.hpp"
#include "renderers/parsing.hpp"
#include "renderers/qwen_common.hpp"

#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

#include <algorithm>
#include <array>
#include <optional>
#include <variant>

namespace tinker::renderers::detail {
namespace {

enum class ThinkingMode {
  enabled,   ///< qwen3
  disabled,  ///< qwen3_disable_thinking
  absent,    ///< qwen3_instruct
};

constexpr std::string_view think_open = "<think>";
constexpr std::string_view think_close = "</think>";
constexpr std::string_view empty_think_block = "<think>\n\n</think>\n\n";

// An assistant message as the template sees it: `reasoning_content` (from the thinking parts) and
// `content`, or, without thinking parts, reasoning written inline as "<think>...</think>" in the
// text, which the template splits off the same way.
class AssistantTurn {
 public:
  std::string reasoning;
  std::string content;
};

AssistantTurn assistant_turn(const Message& message) {
  const bool has_thinking_part =
      std::any_of(message.content.begin(), message.content.end(),
                  [](const ContentPart& part) { return std::holds_alternative<ThinkingPart>(part); });
  AssistantTurn turn{message.thinking(), message.text()};
  const std::size_t close = turn.content.find(think_close);
  if (has_thinking_part || close == std::string::npos) return turn;
  // The template: reasoning is what precedes the first "</think>" (after the last "<think>"
  // there), content what follows the last one.
  const std::string_view text = turn.content;
  const std::string_view before = rstrip_newlines(text.substr(0, close));
  const std::size_t open = before.rfind(think_open);
  const std::string_view reasoning = open == std::string_view::npos ? before : before.substr(open + think_open.size());
  const std::string_view after = text.substr(text.rfind(think_close) + think_close.size());
  return AssistantTurn{std::string(lstrip_newlines(reasoning)), std::string(lstrip_newlines(after))};
}

std::string framed_reasoning(std::string_view reasoning) {
  return "<think>\n" + std::string(strip_newlines(reasoning)) + "\n</think>\n\n";
}

// The calls after the text: a "\n" before the first only when there is text, and between calls.
// The arguments are written as given, so they must be a JSON object's text.
std::string tool_calls_text(const std::vector<ToolCall>& calls, bool has_text, std::size_t index) {
  std::string out;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    if (const auto problem = json_object_error(calls[i].arguments)) {
      throw error(errc::invalid_argument, "messages[" + std::to_string(index) + "].tool_calls[" + std::to_string(i) +
                                              "].arguments: expected a JSON object's text (" + *problem + ")");
    }
    if (i > 0 || has_text) out += '\n';
    out +=
        "<tool_call>\n{\"name\": \"" + calls[i].name + "\", \"arguments\": " + calls[i].arguments + "}\n</tool_call>";
  }
  return out;
}

class Qwen3Renderer final : public Renderer {
 public:
  Qwen3Renderer(TokenizerPtr tokenizer, ThinkingMode mode, std::string_view name)
      : Renderer(std::move(tokenizer)), mode_(mode), name_(name) {
    require_token(this->tokenizer(), "<|im_start|>", name_);
    end_of_turn_ = require_token(this->tokenizer(), "<|im_end|>", name_);
    for (std::size_t role = 0; role < header_roles.size(); ++role) {
      for (const bool first : {true, false}) {
        RenderContext context;
        context.index = first ? 0 : 1;
        header_ids_[header_slot(role, first)] = header_text(header_roles[role], context).encode(this->tokenizer());
      }
    }
  }

  std::string_view name() const noexcept override { return name_; }

  StopCondition stop_sequences() const override { return std::vector<TokenId>{end_of_turn_}; }

  // Reasoning leaves the history once a new user message arrives, so only the instruct models
  // (which never write it) extend their earlier prompts.
  bool has_extension_property() const noexcept override { return mode_ == ThinkingMode::absent; }

  ParsedResponse parse_response(std::span<const TokenId> tokens) const override;
  std::vector<Message> create_conversation_prefix_with_tools(std::span<const ToolSpec> tools,
                                                             std::string_view system_prompt) const override;

 protected:
  RenderedMessage render_message(const Message& message, const RenderContext& context) const override;
  std::vector<TokenId> generation_header(std::string_view role, const RenderContext& context) const override;
  SupervisedExample do_build_supervised_example(std::span<const Message> messages, TrainOn train_on) const override;

 private:
  RenderedMessage encoded_together(std::optional<std::string_view> header_role, const RenderContext& context,
                                   const qwen::MarkedText& output) const;
  RenderedMessage render_tool_result(const Message& message, const RenderContext& context) const;
  RenderedMessage render_assistant(const Message& message, const RenderContext& context) const;
  static qwen::MarkedText header_text(std::string_view role, const RenderContext& context) {
    qwen::MarkedText header;
    header.text(context.index > 0 ? "\n" : "").control("<|im_start|>").text(std::string(role) + "\n");
    return header;
  }
  // Whether the template frames this assistant message's reasoning: it is after the last user
  // message (with no user message, nothing is).
  bool frames(const RenderContext& context) const {
    return mode_ != ThinkingMode::absent && context.last_user_index && context.index > *context.last_user_index;
  }
  void check_no_reasoning_in_produced_turn(std::span<const Message> messages) const;

  // The few headers there are, encoded once: rendering encodes each message's header alone to
  // find where it ends in the message's tokens, which would otherwise cost an encode per message.
  static constexpr std::array<std::string_view, 3> header_roles{"system", "user", "assistant"};
  static std::size_t header_slot(std::size_t role, bool first) { return role * 2 + (first ? 0 : 1); }
  const std::vector<TokenId>& header_ids(std::string_view role, const RenderContext& context) const {
    const std::size_t role_index =
        static_cast<std::size_t>(std::find(header_roles.begin(), header_roles.end(), role) - header_roles.begin());
    return header_ids_.at(header_slot(role_index, context.index == 0));
  }

  ThinkingMode mode_;
  std::string_view name_;
  TokenId end_of_turn_ = 0;
  std::array<std::vector<TokenId>, header_roles.size() * 2> header_ids_;
};

Renderer::RenderedMessage Qwen3Renderer::render_message(const Message& message, const RenderContext& context) const {
  require_role(message, context.index, {"system", "user", "assistant", "tool"}, name_);
  require_text_parts(message, context.index, name_, /*thinking_allowed=*/message.role == "assistant");
  if (message.role == "assistant") return render_assistant(message, context);
  require_no_tool_calls(message, context.index, name_, "only assistant messages make them");
  if (message.role == "tool") return render_tool_result(message, context);
  return encoded_together(message.role, context, qwen::MarkedText().text(message.text()).control("<|im_end|>"));
}

// A message the model does not write, encoded as one text as the template's output is, so text
// that starts with whitespace tokenizes as it does there (the "\n" ending the header can merge
// with it); the header is the tokens up to where they stop matching the header alone. An
// assistant message is encoded in two pieces instead: its header must be the generation
// prompt's last tokens, after which the model writes.
Renderer::RenderedMessage Qwen3Renderer::encoded_together(std::optional<std::string_view> header_role,
                                                          const RenderContext& context,
                                                          const qwen::MarkedText& output) const {
  static const std::vector<TokenId> no_header;
  const qwen::MarkedText header = header_role ? header_text(*header_role, context) : qwen::MarkedText();
  const std::vector<TokenId> tokens = qwen::MarkedText(header).append(output).encode(tokenizer());
  const std::vector<TokenId>& header_alone = header_role ? header_ids(*header_role, context) : no_header;
  const auto split = std::mismatch(tokens.begin(), tokens.end(), header_alone.begin(), header_alone.end()).first;
  RenderedMessage rendered;
  rendered.header.assign(tokens.begin(), split);
  rendered.output.emplace_back(EncodedTextChunk(std::vector<TokenId>(split, tokens.end())));
  return rendered;
}

// A run of consecutive tool results shares one user message: the first opens it, the last
// closes it, and a "\n" separates the blocks (written at the end of the earlier block, where the
// template's text tokenizes it together with the ">").
Renderer::RenderedMessage Qwen3Renderer::render_tool_result(const Message& message,
                                                            const RenderContext& context) const {
  const bool continues_run = context.previous != nullptr && context.previous->role == "tool";
  const bool run_goes_on = context.next != nullptr && context.next->role == "tool";
  qwen::MarkedText block;
  block.text("<tool_response>\n" + message.text() + "\n</tool_response>");
  if (run_goes_on) {
    block.text("\n");
  } else {
    block.control("<|im_end|>");
  }
  return encoded_together(continues_run ? std::nullopt : std::optional<std::string_view>("user"), context, block);
}

Renderer::RenderedMessage Qwen3Renderer::render_assistant(const Message& message, const RenderContext& context) const {
  const AssistantTurn turn = assistant_turn(message);
  bool header_has_empty_block = false;
  std::string body;
  if (frames(context) && (context.is_last || !turn.reasoning.empty())) {
    if (mode_ == ThinkingMode::disabled && turn.reasoning.empty()) {
      // The generation prompt already wrote the empty block: it belongs to the header.
      header_has_empty_block = true;
    } else {
      body = framed_reasoning(turn.reasoning);
    }
    body += lstrip_newlines(turn.content);
  } else if (mode_ == ThinkingMode::absent && context.in_last_assistant_turn && !turn.reasoning.empty()) {
    // The instruct models have no block of their own; reasoning given anyway is written inline.
    body = "<think>" + turn.reasoning + "</think>" + turn.content;
  } else {
    body = turn.content;
  }
  body += tool_calls_text(message.tool_calls, !turn.content.empty(), context.index);
  RenderedMessage rendered;
  rendered.header = header_has_empty_block
                        ? header_text("assistant", context).text(empty_think_block).encode(tokenizer())
                        : header_ids("assistant", context);
  rendered.output.emplace_back(
      EncodedTextChunk(qwen::MarkedText().text(body).control("<|im_end|>").encode(tokenizer())));
  return rendered;
}

std::vector<TokenId> Qwen3Renderer::generation_header(std::string_view role, const RenderContext& context) const {
  const bool cached = std::find(header_roles.begin(), header_roles.end(), role) != header_roles.end();
  if (mode_ == ThinkingMode::disabled && role == "assistant") {
    return header_text(role, context).text(empty_think_block).encode(tokenizer());
  }
  return cached ? header_ids(role, context) : header_text(role, context).encode(tokenizer());
}

// With thinking disabled the prompt closes the think block, which tells the model not to reason:
// a produced turn that reasons anyway would teach it to reason after being told not to.
void Qwen3Renderer::check_no_reasoning_in_produced_turn(std::span<const Message> messages) const {
  std::optional<std::size_t> last_user;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (messages[i].role == "user") last_user = i;
  }
  if (!last_user && messages.back().role == "assistant") {
    throw error(errc::invalid_argument,
                "messages[" + std::to_string(messages.size() - 1) + "]: " + std::string(name_) +
                    " cannot train a turn in a conversation without a user message: the template writes no empty "
                    "think block there, but the generation prompt always does. Add a user message or use qwen3");
  }
  for (std::size_t i = last_user ? *last_user + 1 : 0; i < messages.size(); ++i) {
    if (messages[i].role != "assistant" || assistant_turn(messages[i]).reasoning.empty()) continue;
    throw error(errc::invalid_argument,
                "messages[" + std::to_string(i) + "]: " + std::string(name_) +
                    " has thinking turned off (its generation prompt closes the think block), but this produced "
                    "turn has reasoning; use the qwen3 renderer, or remove the reasoning");
  }
}

SupervisedExample Qwen3Renderer::do_build_supervised_example(std::span<const Message> messages,
                                                             TrainOn train_on) const {
  if (mode_ == ThinkingMode::disabled) check_no_reasoning_in_produced_turn(messages);
  return Renderer::do_build_supervised_example(messages, train_on);
}

// Cuts at <|im_end|>, then splits reasoning and tool calls out of the text, undoing the
// framing: the "\n"s around the reasoning and after the block, the "\n" before each call.
ParsedResponse Qwen3Renderer::parse_response(std::span<const TokenId> tokens) const {
  const StopSplit split = split_at_stop_token(tokens, end_of_turn_, tokenizer().eos_id());
  const DecodedText decoded = decode_sampled(tokenizer(), split.body);
  ParsedResponse parsed;
  parsed.termination = decoded.all_ids_valid ? split.termination : ParseTermination::malformed;
  parsed.message.role = "assistant";
  qwen::ResponseFormat format;
  format.unframe_thinking = mode_ != ThinkingMode::absent;
  format.read_call = &read_tool_call_json;
  qwen::read_response_text(decoded.text, format, parsed.message);
  return parsed;
}

// A system message holding the "# Tools" block, after the system prompt (Qwen3's template writes
// them in that order).
std::vector<Message> Qwen3Renderer::create_conversation_prefix_with_tools(std::span<const ToolSpec> tools,
                                                                          std::string_view system_prompt) const {
  const std::string tools_text = qwen::qwen3_tools_text(tools);
  std::string content = system_prompt.empty() ? tools_text : std::string(system_prompt) + "\n\n" + tools_text;
  return {Message("system", std::move(content))};
}

}  // namespace

std::unique_ptr<Renderer> make_qwen3(TokenizerPtr tokenizer) {
  return std::make_unique<Qwen3Renderer>(std::move(tokenizer), ThinkingMode::enabled, "qwen3");
}

std::unique_ptr<Renderer> make_qwen3_disable_thinking(TokenizerPtr tokenizer) {
  return std::make_unique<Qwen3Renderer>(std::move(tokenizer), ThinkingMode::disabled, "qwen3_disable_thinking");
}

std::unique_ptr<Renderer> make_qwen3_instruct(TokenizerPtr tokenizer) {
  return std::make_unique<Qwen3Renderer>(std::move(tokenizer), ThinkingMode::absent, "qwen3_instruct");
}

}  // namespace tinker::renderers::detail
