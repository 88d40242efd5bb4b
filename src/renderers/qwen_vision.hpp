// The Qwen vision families: Qwen3-VL (qwen3_vl, qwen3_vl_instruct), Qwen3.5 and 3.6 (qwen3_5,
// qwen3_5_disable_thinking) and Qwen3.8 (qwen3_8_*_reasoning, qwen3_8_disable_thinking), as the
// cookbook's Qwen3VLRenderer, Qwen3_5Renderer and Qwen3_8Renderer write them. One renderer, told
// apart by QwenVisionFormat; qwen_vision.cpp renders, qwen_vision_parse.cpp reads responses.
//
//   <|im_start|>system\n{text}<|im_end|>\n<|im_start|>user\n{text}<|vision_start|>[image]<|vision_end|><|im_end|>\n
//   <|im_start|>assistant\n<think>\n{reasoning}\n</think>\n\n{text}<|im_end|>
//
// Messages are separated by the "\n" after <|im_end|>, written at the start of the next header,
// so a trained turn ends on <|im_end|>, where sampling stops.
#pragma once

#include "renderers/families.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace tinker::renderers::detail {

/// Which of the cookbook's Qwen vision renderers.
enum class QwenGeneration {
  qwen3_vl,  ///< Qwen3VLRenderer: JSON tool calls, reasoning as <think>...</think>
  qwen3_5,   ///< Qwen3_5Renderer: XML tool calls, framed reasoning, the produced turn's empty block
  qwen3_8,   ///< Qwen3_8Renderer: 3.5 with reasoning kept in history and the effort sentence
};

/// What tells the families apart.
class QwenVisionFormat {
 public:
  std::string_view name;  ///< the family's name
  QwenGeneration generation = QwenGeneration::qwen3_5;
  bool unframes_thinking = true;            ///< parse undoes the "\n"s around reasoning (not VL instruct)
  bool disables_thinking = false;           ///< the generation prompt closes the think block
  std::string_view reasoning_instructions;  ///< Qwen3.8: the effort sentence put in the system message
};

class QwenVisionRenderer final : public Renderer {
 public:
  QwenVisionRenderer(TokenizerPtr tokenizer, QwenVisionFormat format);

  std::string_view name() const noexcept override { return format_.name; }
  StopCondition stop_sequences() const override { return std::vector<TokenId>{end_of_turn_}; }
  ParsedResponse parse_response(std::span<const TokenId> tokens) const override;
  std::vector<Message> create_conversation_prefix_with_tools(std::span<const ToolSpec> tools,
                                                             std::string_view system_prompt) const override;
  // Qwen3-VL and 3.5 drop reasoning from history. 3.8 keeps it, but with thinking on a turn that
  // did not reason is sampled after the open "<think>\n" and written in history as the closed
  // empty block, whose "\n\n" is one token. With thinking off, the prompt already holds that
  // closed block, which history writes the same way, and a turn that reasons cannot be trained:
  // qwen3_8_disable_thinking extends every conversation it renders (the cookbook says False,
  // giving the thinking-on reason for both).
  bool has_extension_property() const noexcept override { return is_3_8() && format_.disables_thinking; }

 protected:
  RenderedMessage render_message(const Message& message, const RenderContext& context) const override;
  std::vector<TokenId> generation_header(std::string_view role, const RenderContext& context) const override;
  bool disables_thinking() const noexcept override { return format_.disables_thinking; }

 private:
  bool is_vl() const noexcept { return format_.generation == QwenGeneration::qwen3_vl; }
  bool is_3_8() const noexcept { return format_.generation == QwenGeneration::qwen3_8; }

  // ---- qwen_vision.cpp ----
  std::string header_text(const Message& message, const RenderContext& context) const;
  std::string generation_suffix(std::string_view role, const RenderContext& context) const;
  std::string assistant_header_suffix(const Message& message, const RenderContext& context) const;
  bool strips_thinking(const Message& message, const RenderContext& context) const;
  bool writes_newline_before(const Message& message, const RenderContext& context) const;
  std::string preamble(const Message& message, const RenderContext& context) const;
  std::string system_text(const Message& message) const;
  bool renders_nothing(const Message& message, std::size_t index) const;
  std::string tool_calls_text(const Message& message, std::size_t index) const;
  std::string xml_tool_call(const ToolCall& call, std::size_t index, std::size_t call_index) const;
  std::string json_tool_call(const ToolCall& call, std::size_t index, std::size_t call_index) const;
  std::vector<ModelInputChunk> output_chunks(const Message& message, const RenderContext& context) const;

  QwenVisionFormat format_;
  TokenId end_of_turn_ = 0;
  TokenId think_close_ = 0;
  std::vector<TokenId> think_prefix_;  // "<think>\n", which the 3.5 and 3.8 prompts end with
};

}  // namespace tinker::renderers::detail
