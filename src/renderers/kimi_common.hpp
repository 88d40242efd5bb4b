// The chat format of the Kimi families (kimi_k2.cpp: Kimi K2 Thinking; kimi_k25.cpp: Kimi K2.5
// and K2.6), which differ only in what KimiFamily says:
//
//   <|im_system|>tool_declare<|im_middle|>{tool declarations}<|im_end|>      (with tools)
//   <|im_system|>system<|im_middle|>You are Kimi, an AI assistant created by Moonshot AI.<|im_end|>
//   <|im_user|>user<|im_middle|>{user}<|im_end|>
//   <|im_assistant|>assistant<|im_middle|><think>{reasoning}</think>{answer}<|im_end|>
//
// A conversation that does not open with a system message (after a leading tool_declare one) gets
// that default one. Reasoning is written only after the last assistant message that made no tool
// call (the "turn" Kimi's template keeps it in); earlier assistant messages get an empty
// <think></think>, unless the family keeps reasoning everywhere. Tool calls follow the answer as
//   <|tool_calls_section_begin|><|tool_call_begin|>{id}<|tool_call_argument_begin|>{arguments}<|tool_call_end|>...<|tool_calls_section_end|>
// with the call's id (or "functions.{name}:{index}"), and a tool result is a system-token message
// named after the function: <|im_system|>{name}<|im_middle|>## Return of {id}\n{result}<|im_end|>.
// Images (K2.5, K2.6) are <|media_begin|>image<|media_content|>{image}<|media_end|>\n in the text.
// The format is the model's chat template's (moonshotai/Kimi-K2-Thinking, Kimi-K2.5, Kimi-K2.6)
// as the Tinker cookbook's kimi_k2.py / kimi_k25.py / kimi_k26.py write it; doc/renderers.md#kimi.
#pragma once

#include "renderers/families.hpp"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tinker::renderers::detail {

/// What one Kimi family writes differently from the others.
class KimiFamily {
 public:
  std::string_view name;  ///< as make_renderer knows it
  /// Written after the assistant header of every generation prompt (before the caller's prefill):
  /// "" (K2), "<think>" (thinking on) or "<think></think>" (thinking off).
  std::string_view generation_prefill;
  bool keeps_history_reasoning = false;  ///< reasoning in every assistant message (K2.6 preserve_thinking)
  bool renders_images = false;           ///< image parts in non-assistant messages (K2.5, K2.6)
  /// The text of the tool_declare message declaring `tools`. Throws tinker::error
  /// (invalid_argument) naming tools[i] for a declaration it cannot write.
  std::string (*declare_tools)(std::span<const ToolSpec> tools) = nullptr;

  /// The generation prompt closes the think block, which tells the model not to reason.
  bool disables_thinking() const noexcept { return generation_prefill == "<think></think>"; }
};

/// A renderer of one Kimi family. Immutable; safe to share between threads.
class KimiRenderer : public Renderer {
 public:
  /// Throws tinker::error (invalid_argument) when `tokenizer` lacks one of the family's tokens.
  KimiRenderer(TokenizerPtr tokenizer, KimiFamily family);

  std::string_view name() const noexcept override { return family_.name; }
  StopCondition stop_sequences() const override { return std::vector<TokenId>{im_end_}; }
  ParsedResponse parse_response(std::span<const TokenId> tokens) const override;
  /// A tool_declare message (when there are tools), then the system message: `system_prompt`,
  /// or Kimi's default one when it is empty.
  std::vector<Message> create_conversation_prefix_with_tools(std::span<const ToolSpec> tools,
                                                             std::string_view system_prompt = {}) const override;
  /// Only when reasoning is kept in every message: elsewhere the reasoning written for the turn
  /// being produced leaves the next turn's prompt.
  bool has_extension_property() const noexcept override { return family_.keeps_history_reasoning; }

 protected:
  RenderedMessage render_message(const Message& message, const RenderContext& context) const override;
  ModelInput do_build_generation_prompt(std::span<const Message> messages, std::string_view role,
                                        std::optional<std::string_view> prefill) const override;
  SupervisedExample do_build_supervised_example(std::span<const Message> messages, TrainOn train_on) const override;

 private:
  class Conversation;

  RenderedMessage render_at(const Message& message, const RenderContext& context, std::size_t caller_index) const;
  std::vector<ModelInputChunk> content_chunks(const Message& message, std::size_t caller_index) const;
  ModelInput prompt_of(const Conversation& conversation, std::size_t end, std::string_view role,
                       std::optional<std::string_view> prefill) const;
  void check_content(std::span<const Message> messages) const;

  KimiFamily family_;
  TokenId im_end_;
  std::optional<TokenId> think_open_;   // K2.5 and K2.6: restored in front of a sampled reasoning
  std::optional<TokenId> think_close_;  // that the prompt's "<think>" began
};

/// Kimi K2's tool declarations: the tools in OpenAI's shape ({"function": {"description",
/// "name", "parameters"}, "type": "function"}) as compact JSON with every object's keys sorted,
/// as Kimi's tokenizer sorts them and its template writes them (tojson with separators ",", ":").
std::string kimi_json_tool_declarations(std::span<const ToolSpec> tools);

/// Kimi K2.5's and K2.6's: TypeScript-style declarations in a "namespace functions" block, as
/// the model repository's tool_declaration_ts.py writes them from the sorted tools.
std::string kimi_typescript_tool_declarations(std::span<const ToolSpec> tools);

}  // namespace tinker::renderers::detail
