// The Qwen3.5 (also Qwen3.6) and Qwen3.8 families: renderers/qwen_vision.hpp renders them.
#include "renderers/qwen_vision.hpp"

namespace tinker::renderers::detail {
namespace {

// The sentences Qwen3.8's template puts first in the system message for each reasoning effort
// (none for medium, and none with thinking off).
constexpr std::string_view xhigh_effort =
    "Reasoning effort is set to xhigh. Please think carefully through the task, validate key assumptions, consider "
    "plausible alternatives, and prioritize correctness, consistency, and clarity in the final answer.";
constexpr std::string_view low_effort =
    "Reasoning effort is set to low. Keep your thinking brief and focused, moving directly to the conclusion without "
    "unnecessary elaboration.";

std::unique_ptr<Renderer> make_qwen_vision(TokenizerPtr tokenizer, std::string_view name, QwenGeneration generation,
                                           bool disables_thinking, std::string_view instructions = {}) {
  QwenVisionFormat format;
  format.name = name;
  format.generation = generation;
  format.disables_thinking = disables_thinking;
  format.reasoning_instructions = instructions;
  return std::make_unique<QwenVisionRenderer>(std::move(tokenizer), format);
}

}  // namespace

std::unique_ptr<Renderer> make_qwen3_5(TokenizerPtr tokenizer) {
  return make_qwen_vision(std::move(tokenizer), "qwen3_5", QwenGeneration::qwen3_5, false);
}

std::unique_ptr<Renderer> make_qwen3_5_disable_thinking(TokenizerPtr tokenizer) {
  return make_qwen_vision(std::move(tokenizer), "qwen3_5_disable_thinking", QwenGeneration::qwen3_5, true);
}

std::unique_ptr<Renderer> make_qwen3_8_xhigh_reasoning(TokenizerPtr tokenizer) {
  return make_qwen_vision(std::move(tokenizer), "qwen3_8_xhigh_reasoning", QwenGeneration::qwen3_8, false,
                          xhigh_effort);
}

std::unique_ptr<Renderer> make_qwen3_8_medium_reasoning(TokenizerPtr tokenizer) {
  return make_qwen_vision(std::move(tokenizer), "qwen3_8_medium_reasoning", QwenGeneration::qwen3_8, false);
}

std::unique_ptr<Renderer> make_qwen3_8_low_reasoning(TokenizerPtr tokenizer) {
  return make_qwen_vision(std::move(tokenizer), "qwen3_8_low_reasoning", QwenGeneration::qwen3_8, false, low_effort);
}

std::unique_ptr<Renderer> make_qwen3_8_disable_thinking(TokenizerPtr tokenizer) {
  return make_qwen_vision(std::move(tokenizer), "qwen3_8_disable_thinking", QwenGeneration::qwen3_8, true);
}

}  // namespace tinker::renderers::detail
