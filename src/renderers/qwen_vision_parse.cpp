// Reading responses of the Qwen vision families, and their tool declarations
// (renderers/qwen_vision.hpp).
#include "renderers/parsing.hpp"
#include "renderers/qwen_common.hpp"
#include "renderers/qwen_vision.hpp"

#include <tinker/tokenizer.hpp>

#include <algorithm>

namespace tinker::renderers::detail {

// Cuts at <|im_end|> and splits the text as the cookbook's Qwen3 parser does. 3.5 and 3.8 prompts
// end with "<think>\n", so a response that closes a think block it never opened gets that opening
// back first; their reasoning is trimmed and their calls may be XML. A response that did not end
// cleanly is returned as its text, unsplit.
ParsedResponse QwenVisionRenderer::parse_response(std::span<const TokenId> tokens) const {
  std::vector<TokenId> restored;
  if (!is_vl()) {
    const bool opens =
        tokens.size() >= think_prefix_.size() && std::equal(think_prefix_.begin(), think_prefix_.end(), tokens.begin());
    if (!opens && std::find(tokens.begin(), tokens.end(), think_close_) != tokens.end()) {
      restored = think_prefix_;
      restored.insert(restored.end(), tokens.begin(), tokens.end());
      tokens = restored;
    }
  }
  const StopSplit split = split_at_stop_token(tokens, end_of_turn_, tokenizer().eos_id());
  const DecodedText decoded = decode_sampled(tokenizer(), split.body);
  ParsedResponse parsed;
  parsed.termination = decoded.all_ids_valid ? split.termination : ParseTermination::malformed;
  parsed.message.role = "assistant";
  if (parsed.termination == ParseTermination::malformed) {
    parsed.message.content.emplace_back(TextPart(decoded.text));
    return parsed;
  }
  qwen::ResponseFormat format;
  format.unframe_thinking = format_.unframes_thinking;
  format.trim_thinking = !is_vl();
  format.first_call_separator = is_vl() ? "\n" : "\n\n";
  format.read_call = is_vl() ? &read_tool_call_json : &qwen::read_qwen3_5_tool_call;
  qwen::read_response_text(decoded.text, format, parsed.message);
  return parsed;
}

// One system message: Qwen3-VL's "# Tools" block after the system prompt, as Qwen3's; Qwen3.5's
// (3.6's, 3.8's) XML-call block before it.
std::vector<Message> QwenVisionRenderer::create_conversation_prefix_with_tools(std::span<const ToolSpec> tools,
                                                                               std::string_view system_prompt) const {
  const std::string prompt(system_prompt);
  if (is_vl()) {
    const std::string tools_text = qwen::qwen3_tools_text(tools);
    return {Message("system", prompt.empty() ? tools_text : prompt + "\n\n" + tools_text)};
  }
  const std::string tools_text = qwen::qwen3_5_tools_text(tools);
  if (tools_text.empty()) return {Message("system", prompt)};
  return {Message("system", prompt.empty() ? tools_text : tools_text + "\n\n" + prompt)};
}

}  // namespace tinker::renderers::detail
