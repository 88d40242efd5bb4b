// The Qwen3-VL families: renderers/qwen_vision.hpp renders them. qwen3_vl reads the "\n"s
// around reasoning as framing when parsing; qwen3_vl_instruct (whose models do not reason) keeps
// the text of a <think> block as it is.
#include "renderers/qwen_vision.hpp"

namespace tinker::renderers::detail {

std::unique_ptr<Renderer> make_qwen3_vl(TokenizerPtr tokenizer) {
  QwenVisionFormat format;
  format.name = "qwen3_vl";
  format.generation = QwenGeneration::qwen3_vl;
  return std::make_unique<QwenVisionRenderer>(std::move(tokenizer), format);
}

std::unique_ptr<Renderer> make_qwen3_vl_instruct(TokenizerPtr tokenizer) {
  QwenVisionFormat format;
  format.name = "qwen3_vl_instruct";
  format.generation = QwenGeneration::qwen3_vl;
  format.unframes_thinking = false;
  return std::make_unique<QwenVisionRenderer>(std::move(tokenizer), format);
}

}  // namespace tinker::renderers::detail
