// Kimi K2.5's and K2.6's chat formats: the Kimi format of kimi_common.hpp (as Kimi K2's) with
//   - a generation prompt that opens the think block ("<think>", thinking on: kimi_k25, kimi_k26,
//     kimi_k26_preserve_thinking) or writes it empty ("<think></think>", thinking off: the
//     *_disable_thinking families), as the template's `thinking` variable does;
//   - tools declared TypeScript-style (kimi_typescript_tool_declarations);
//   - images: <|media_begin|>image<|media_content|>{image}<|media_end|>\n, the image counted by
//     Kimi's image processor (image/token_counts.hpp);
//   - kimi_k26_preserve_thinking: the template's preserve_thinking=true, reasoning kept in every
//     assistant message (so the extension property holds).
// K2.6's template differs from K2.5's only by preserve_thinking, so kimi_k26 and
// kimi_k26_disable_thinking write what kimi_k25 and kimi_k25_disable_thinking write. From the
// Tinker cookbook's kimi_k25.py and kimi_k26.py and their tests.
#include "renderers/families.hpp"
#include "renderers/kimi_common.hpp"

namespace tinker::renderers {
namespace {

constexpr std::string_view kThinkingOn = "<think>";
constexpr std::string_view kThinkingOff = "<think></think>";

std::unique_ptr<Renderer> make_kimi_vision(detail::TokenizerPtr tokenizer, std::string_view name,
                                           std::string_view prefill, bool keeps_history_reasoning) {
  return std::make_unique<detail::KimiRenderer>(
      std::move(tokenizer),
      detail::KimiFamily{name, prefill, keeps_history_reasoning, true, &detail::kimi_typescript_tool_declarations});
}

}  // namespace

std::unique_ptr<Renderer> detail::make_kimi_k25(TokenizerPtr tokenizer) {
  return make_kimi_vision(std::move(tokenizer), "kimi_k25", kThinkingOn, false);
}

std::unique_ptr<Renderer> detail::make_kimi_k25_disable_thinking(TokenizerPtr tokenizer) {
  return make_kimi_vision(std::move(tokenizer), "kimi_k25_disable_thinking", kThinkingOff, false);
}

std::unique_ptr<Renderer> detail::make_kimi_k26(TokenizerPtr tokenizer) {
  return make_kimi_vision(std::move(tokenizer), "kimi_k26", kThinkingOn, false);
}

std::unique_ptr<Renderer> detail::make_kimi_k26_disable_thinking(TokenizerPtr tokenizer) {
  return make_kimi_vision(std::move(tokenizer), "kimi_k26_disable_thinking", kThinkingOff, false);
}

std::unique_ptr<Renderer> detail::make_kimi_k26_preserve_thinking(TokenizerPtr tokenizer) {
  return make_kimi_vision(std::move(tokenizer), "kimi_k26_preserve_thinking", kThinkingOn, true);
}

}  // namespace tinker::renderers
