// The Nemotron 3 families: Nano and Super (`nemotron3`, `nemotron3_disable_thinking`,
// `nemotron3_preserve_thinking`, `nemotron3_low_thinking`) and the Ultra format that Ultra and
// Nemotron 3.5 Lightning share (`nemotron3_ultra`, `nemotron3_ultra_disable_thinking`,
// `nemotron3_ultra_medium_thinking`, `nemotron3_ultra_preserve_thinking`), as the Tinker
// cookbook's nemotron3.py writes them, which follows the models' chat templates:
//
//   <|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{text}<|im_end|>\n
//   <|im_start|>assistant\n<think>\n{reasoning}\n</think>\n{text}<|im_end|>
//
// The format is Qwen3.5's with these differences:
// - The conversation always opens with a system block, empty when there is no system message.
// - An assistant message whose reasoning is not written starts "<think></think>" (history whose
//   reasoning is dropped included); the generation prompt ends "<think>\n", or "<think></think>"
//   with reasoning off.
// - Reasoning is "<think>\n{r}\n</think>\n" on Nano/Super and "<think>\n{r}</think>" on Ultra.
//   Reasoning before the last user message is dropped, except by the *_preserve_thinking families.
// - Tool calls are <tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n</function>
//   \n</tool_call>, each followed by "\n", after a "\n"; tool results are <tool_response> blocks in
//   a user message, each followed by "\n", consecutive results sharing the message.
// - Super's low effort appends "\n\n{reasoning effort: low}" to the last user message, Ultra's
//   medium effort "\n\n{reasoning effort: efficient}".
// - Tools are declared in structured XML after the system prompt (nemotron3_tools.cpp).
// Messages are separated by the "\n" after <|im_end|>, written as the start of the next header.
#include "renderers/families.hpp"
#include "renderers/nemotron3_tools.hpp"
#include "renderers/parsing.hpp"
#include "renderers/qwen_common.hpp"

#include <tinker/error.hpp>
#include <tinker/tokenizer.hpp>

#include <algorithm>
#include <array>
#include <variant>

namespace tinker::renderers::detail {
namespace {
namespace nemotron {

enum class Format {
  nano,   ///< Nano and Super
  ultra,  ///< Ultra and 3.5 Lightning
};

class Options {
 public:
  std::string_view name;
  Format format = Format::nano;
  bool thinking = true;            ///< false: the generation prompt closes the think block
  bool strip_history = true;       ///< drop reasoning before the last user message
  std::string_view effort_marker;  ///< appended to the last user message
};

constexpr std::string_view think_open = "<think>";
constexpr std::string_view think_close = "</think>";
constexpr std::string_view empty_think_block = "<think></think>";
constexpr std::string_view tool_call_open = "<tool_call>";
constexpr std::string_view tool_call_close = "</tool_call>";
constexpr std::string_view end_of_turn = "<|im_end|>";

constexpr std::array<BlockMarkers, 2> response_markers{{
    {think_open, think_close, BlockKind::thinking},
    {tool_call_open, tool_call_close, BlockKind::tool_call},
}};

bool has_thinking_part(const Message& message) {
  return std::any_of(message.content.begin(), message.content.end(),
                     [](const ContentPart& part) { return std::holds_alternative<ThinkingPart>(part); });
}

bool has_nonempty_text(const Message& message) {
  return std::any_of(message.content.begin(), message.content.end(), [](const ContentPart& part) {
    const auto* text = std::get_if<TextPart>(&part);
    return text != nullptr && !text->text.empty();
  });
}

}  // namespace nemotron

class Nemotron3Renderer final : public Renderer {
 public:
  Nemotron3Renderer(TokenizerPtr tokenizer, nemotron::Options options)
      : Renderer(std::move(tokenizer)), options_(options) {
    require_token(this->tokenizer(), "<|im_start|>", options_.name);
    end_of_turn_ = require_token(this->tokenizer(), nemotron::end_of_turn, options_.name);
    require_token(this->tokenizer(), nemotron::think_close, options_.name);
    injected_system_end_ = encode("<|im_start|>system\n").size();
  }

  std::string_view name() const noexcept override { return options_.name; }

  StopCondition stop_sequences() const override { return std::vector<TokenId>{end_of_turn_}; }

  // Dropping reasoning from history rewrites earlier turns (and an effort marker moves to the new
  // last user message), so only the families that keep history extend their earlier prompts.
  bool has_extension_property() const noexcept override {
    return !options_.strip_history && options_.effort_marker.empty();
  }

  ParsedResponse parse_response(std::span<const TokenId> tokens) const override;

  std::vector<Message> create_conversation_prefix_with_tools(std::span<const ToolSpec> tools,
                                                             std::string_view system_prompt) const override {
    const std::string tools_text = nemotron3_tools_text(tools);
    std::string content(system_prompt);
    // The system prompt comes before the tools (Qwen3.5 puts it after them).
    if (!tools_text.empty()) content = content.empty() ? tools_text : content + "\n\n" + tools_text;
    return {Message("system", std::move(content))};
  }

 protected:
  RenderedMessage render_message(const Message& message, const RenderContext& context) const override;
  std::vector<TokenId> generation_header(std::string_view role, const RenderContext& context) const override;
  SupervisedExample do_build_supervised_example(std::span<const Message> messages, TrainOn train_on) const override;
  // Reasoning off: a produced turn that reasons does not start with the prompt's empty block.
  bool disables_thinking() const noexcept override { return !options_.thinking; }

 private:
  RenderedMessage encoded_together(const std::string& header, const std::string& output) const;
  RenderedMessage render_tool_result(const Message& message, const RenderContext& context) const;
  RenderedMessage render_assistant(const Message& message, const RenderContext& context) const;
  std::string assistant_header_suffix(const Message& message, const RenderContext& context) const;
  std::string tool_calls_text(const Message& message, std::size_t index, bool reasoning_written) const;
  std::string framed_reasoning(std::string_view reasoning) const {
    return options_.format == nemotron::Format::ultra ? "<think>\n" + std::string(reasoning) + "</think>"
                                                      : "<think>\n" + std::string(reasoning) + "\n</think>\n";
  }

  static bool is_before_last_user(const RenderContext& context) {
    return context.last_user_index && context.index < *context.last_user_index;
  }

  // The header of a message of `role`. The template always opens with a system block, so a
  // conversation whose first message is not one (or a generation prompt of no messages) gets an
  // empty one first, as the cookbook's renderer prepends an empty system message.
  static std::string opening(std::string_view role, const RenderContext& context, bool generated = false) {
    if (context.index > 0) return "\n<|im_start|>" + std::string(role) + "\n";
    if (role == "system" && !generated) return "<|im_start|>system\n";
    return "<|im_start|>system\n<|im_end|>\n<|im_start|>" + std::string(role) + "\n";
  }

  nemotron::Options options_;
  TokenId end_of_turn_ = 0;
  std::size_t injected_system_end_ = 0;  ///< index of the injected system block's <|im_end|>
};

Renderer::RenderedMessage Nemotron3Renderer::render_message(const Message& message,
                                                            const RenderContext& context) const {
  require_role(message, context.index, {"system", "user", "assistant", "tool"}, options_.name);
  require_text_parts(message, context.index, options_.name, /*thinking_allowed=*/message.role == "assistant");
  if (message.role == "assistant") return render_assistant(message, context);
  require_no_tool_calls(message, context.index, options_.name, "only assistant messages make them");
  if (message.role == "tool") return render_tool_result(message, context);
  std::string text = message.text();
  if (message.role == "user" && context.last_user_index == context.index) text += options_.effort_marker;
  return encoded_together(opening(message.role, context), text + std::string(nemotron::end_of_turn));
}

// A message the model does not write, encoded as one text as the template's output is, so text
// that starts with whitespace tokenizes as it does there (the "\n" ending the header can merge
// with it); the header is the tokens up to where they stop matching the header alone.
Renderer::RenderedMessage Nemotron3Renderer::encoded_together(const std::string& header,
                                                              const std::string& output) const {
  std::vector<TokenId> tokens = encode(header + output);
  const std::vector<TokenId> header_alone = encode(header);
  const auto split = std::mismatch(tokens.begin(), tokens.end(), header_alone.begin(), header_alone.end()).first;
  RenderedMessage rendered;
  rendered.header.assign(tokens.begin(), split);
  rendered.output.emplace_back(EncodedTextChunk(std::vector<TokenId>(split, tokens.end())));
  return rendered;
}

// A run of consecutive tool results shares one user message: the first opens it, the last
// closes it; each block carries its own trailing "\n".
Renderer::RenderedMessage Nemotron3Renderer::render_tool_result(const Message& message,
                                                                const RenderContext& context) const {
  const bool continues_run = context.previous != nullptr && context.previous->role == "tool";
  const bool run_goes_on = context.next != nullptr && context.next->role == "tool";
  const std::string block = "<tool_response>\n" + message.text() + "\n</tool_response>\n";
  return encoded_together(continues_run ? std::string() : opening("user", context),
                          block + (run_goes_on ? "" : std::string(nemotron::end_of_turn)));
}

// "<think></think>" opens every assistant message whose reasoning is not written: one without
// reasoning, and history whose reasoning is dropped. Nano/Super's template keeps the "\n" that
// followed the dropped block when text (and no tool call) follows.
std::string Nemotron3Renderer::assistant_header_suffix(const Message& message, const RenderContext& context) const {
  const bool historical = is_before_last_user(context);
  const bool thinking = nemotron::has_thinking_part(message);
  if (thinking && (!historical || !options_.strip_history)) return {};
  if (options_.format == nemotron::Format::nano && historical && thinking && nemotron::has_nonempty_text(message) &&
      message.tool_calls.empty()) {
    return std::string(nemotron::empty_think_block) + "\n";
  }
  return std::string(nemotron::empty_think_block);
}

// The calls after the text, each followed by "\n". Nano/Super write a "\n" before the first call
// unless written reasoning (which ends with "\n") is all that precedes it; Ultra always does.
// Reasoning dropped from history leaves the "\n", as the template writes it (the cookbook's
// renderer leaves it out there, a case its tests do not reach).
std::string Nemotron3Renderer::tool_calls_text(const Message& message, std::size_t index,
                                               bool reasoning_written) const {
  if (message.tool_calls.empty()) return {};
  const bool reasoning_ends_line = options_.format == nemotron::Format::nano && reasoning_written;
  std::string out = reasoning_ends_line && !nemotron::has_nonempty_text(message) ? "" : "\n";
  for (std::size_t i = 0; i < message.tool_calls.size(); ++i) {
    out += nemotron3_tool_call_xml(message.tool_calls[i], index, i) + "\n";
  }
  return out;
}

Renderer::RenderedMessage Nemotron3Renderer::render_assistant(const Message& message,
                                                              const RenderContext& context) const {
  const bool drops_reasoning = options_.strip_history && is_before_last_user(context);
  std::string body;
  bool reasoning_written = false;
  for (const ContentPart& part : message.content) {
    if (const auto* text = std::get_if<TextPart>(&part)) {
      body += text->text;
    } else if (const auto* thought = std::get_if<ThinkingPart>(&part); thought != nullptr && !drops_reasoning) {
      body += framed_reasoning(thought->thinking);
      reasoning_written = true;
    }
  }
  body += tool_calls_text(message, context.index, reasoning_written) + std::string(nemotron::end_of_turn);
  RenderedMessage rendered;
  rendered.header = encode(opening("assistant", context) + assistant_header_suffix(message, context));
  rendered.output.emplace_back(EncodedTextChunk(encode(body)));
  return rendered;
}

std::vector<TokenId> Nemotron3Renderer::generation_header(std::string_view role, const RenderContext& context) const {
  return encode(opening(role, context, /*generated=*/true) +
                std::string(options_.thinking ? "<think>\n" : nemotron::empty_think_block));
}

SupervisedExample Nemotron3Renderer::do_build_supervised_example(std::span<const Message> messages,
                                                                 TrainOn train_on) const {
  SupervisedExample example = Renderer::do_build_supervised_example(messages, train_on);
  // The cookbook's renderer prepends a real empty system message, whose "<|im_end|>" is that
  // message's output: trained by the modes that train system messages.
  const bool trains_system = train_on == TrainOn::all_messages || train_on == TrainOn::all_user_and_system_messages;
  if (trains_system && messages.front().role != "system" && injected_system_end_ < example.weights.size()) {
    example.weights[injected_system_end_] = 1.0f;
  }
  return example;
}

// Cuts at <|im_end|>, restores the "<think>\n" the generation prompt wrote when the answer closes
// a think block, then splits reasoning and XML tool calls out of the text, undoing the framing:
// the whitespace around the reasoning and after its block, the "\n" before the first call and
// the "\n" after each.
ParsedResponse Nemotron3Renderer::parse_response(std::span<const TokenId> tokens) const {
  const StopSplit split = split_at_stop_token(tokens, end_of_turn_, tokenizer().eos_id());
  DecodedText decoded = decode_sampled(tokenizer(), split.body);
  ParsedResponse parsed;
  parsed.termination = decoded.all_ids_valid ? split.termination : ParseTermination::malformed;
  Message& message = parsed.message;
  message.role = "assistant";
  std::string& text = decoded.text;
  if (!text.starts_with(nemotron::think_open) && text.find(nemotron::think_close) != std::string::npos) {
    text.insert(0, "<think>\n");
  }
  const std::vector<TextBlock> blocks = split_blocks(text, nemotron::response_markers);
  bool after_think_block = false;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const TextBlock& block = blocks[i];
    if (block.kind == BlockKind::thinking) {
      const std::string_view reasoning = qwen::strip_python_whitespace(block.inner);
      if (!reasoning.empty()) message.content.emplace_back(ThinkingPart(std::string(reasoning)));
      after_think_block = true;
      continue;
    }
    if (block.kind == BlockKind::tool_call) {
      add_tool_call(message, qwen::read_xml_tool_call(block.raw));
      after_think_block = false;
      continue;
    }
    std::string_view piece = after_think_block ? lstrip_newlines(block.inner) : block.inner;
    after_think_block = false;
    if (i > 0 && blocks[i - 1].kind == BlockKind::tool_call && piece.starts_with('\n')) piece.remove_prefix(1);
    if (i + 1 < blocks.size() && blocks[i + 1].kind == BlockKind::tool_call && piece.ends_with('\n')) {
      piece.remove_suffix(1);
    }
    if (block.unterminated == BlockKind::tool_call) {
      message.unparsed_tool_calls.push_back(
          unterminated_tool_call(block.raw, nemotron::tool_call_open, nemotron::tool_call_close));
    }
    if (!piece.empty()) message.content.emplace_back(TextPart(std::string(piece)));
  }
  if (message.content.empty()) message.content.emplace_back(TextPart());
  return parsed;
}

std::unique_ptr<Renderer> make_nemotron(TokenizerPtr tokenizer, const nemotron::Options& options) {
  return std::make_unique<Nemotron3Renderer>(std::move(tokenizer), options);
}

}  // namespace

std::unique_ptr<Renderer> make_nemotron3(TokenizerPtr tokenizer) {
  return make_nemotron(std::move(tokenizer), {"nemotron3", nemotron::Format::nano, true, true, {}});
}

std::unique_ptr<Renderer> make_nemotron3_disable_thinking(TokenizerPtr tokenizer) {
  return make_nemotron(std::move(tokenizer), {"nemotron3_disable_thinking", nemotron::Format::nano, false, true, {}});
}

std::unique_ptr<Renderer> make_nemotron3_preserve_thinking(TokenizerPtr tokenizer) {
  return make_nemotron(std::move(tokenizer), {"nemotron3_preserve_thinking", nemotron::Format::nano, true, false, {}});
}

std::unique_ptr<Renderer> make_nemotron3_low_thinking(TokenizerPtr tokenizer) {
  return make_nemotron(std::move(tokenizer),
                       {"nemotron3_low_thinking", nemotron::Format::nano, true, true, "\n\n{reasoning effort: low}"});
}

std::unique_ptr<Renderer> make_nemotron3_ultra(TokenizerPtr tokenizer) {
  return make_nemotron(std::move(tokenizer), {"nemotron3_ultra", nemotron::Format::ultra, true, true, {}});
}

std::unique_ptr<Renderer> make_nemotron3_ultra_disable_thinking(TokenizerPtr tokenizer) {
  return make_nemotron(std::move(tokenizer),
                       {"nemotron3_ultra_disable_thinking", nemotron::Format::ultra, false, true, {}});
}

std::unique_ptr<Renderer> make_nemotron3_ultra_medium_thinking(TokenizerPtr tokenizer) {
  return make_nemotron(std::move(tokenizer), {"nemotron3_ultra_medium_thinking", nemotron::Format::ultra, true, true,
                                              "\n\n{reasoning effort: efficient}"});
}

std::unique_ptr<Renderer> make_nemotron3_ultra_preserve_thinking(TokenizerPtr tokenizer) {
  return make_nemotron(std::move(tokenizer),
                       {"nemotron3_ultra_preserve_thinking", nemotron::Format::ultra, true, false, {}});
}

}  // namespace tinker::renderers::detail
