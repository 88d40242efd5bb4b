// Kimi K2's chat format (`kimi_k2`, for Kimi K2 Thinking): the Kimi format of kimi_common.hpp with
// an empty generation prefill (the assistant header ends the prompt) and tools declared as JSON.
// Strings from the model's chat_template.jinja (moonshotai/Kimi-K2-Thinking) and the Tinker
// cookbook's kimi_k2.py.
#include "renderers/families.hpp"
#include "renderers/kimi_common.hpp"

namespace tinker::renderers {

std::unique_ptr<Renderer> detail::make_kimi_k2(TokenizerPtr tokenizer) {
  return std::make_unique<KimiRenderer>(std::move(tokenizer),
                                        KimiFamily{"kimi_k2", "", false, false, &kimi_json_tool_declarations});
}

}  // namespace tinker::renderers
