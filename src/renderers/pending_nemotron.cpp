// TEMPORARY (issue 27 in progress): declarations whose families are being written; removed
// when the family lands. Each throws so nothing silently renders a wrong format.
#include "renderers/families.hpp"

#include <tinker/error.hpp>

namespace tinker::renderers::detail {
namespace {
[[noreturn]] std::unique_ptr<Renderer> pending_nemotron(const char* name) {
  throw error(errc::invalid_argument, std::string("renderer ") + name + " is not written yet");
}
}  // namespace
std::unique_ptr<Renderer> make_nemotron3(TokenizerPtr) { pending_nemotron("nemotron3"); }
std::unique_ptr<Renderer> make_nemotron3_disable_thinking(TokenizerPtr) { pending_nemotron("nemotron3_disable_thinking"); }
std::unique_ptr<Renderer> make_nemotron3_preserve_thinking(TokenizerPtr) { pending_nemotron("nemotron3_preserve_thinking"); }
std::unique_ptr<Renderer> make_nemotron3_low_thinking(TokenizerPtr) { pending_nemotron("nemotron3_low_thinking"); }
std::unique_ptr<Renderer> make_nemotron3_ultra(TokenizerPtr) { pending_nemotron("nemotron3_ultra"); }
std::unique_ptr<Renderer> make_nemotron3_ultra_disable_thinking(TokenizerPtr) { pending_nemotron("nemotron3_ultra_disable_thinking"); }
std::unique_ptr<Renderer> make_nemotron3_ultra_medium_thinking(TokenizerPtr) { pending_nemotron("nemotron3_ultra_medium_thinking"); }
std::unique_ptr<Renderer> make_nemotron3_ultra_preserve_thinking(TokenizerPtr) { pending_nemotron("nemotron3_ultra_preserve_thinking"); }
std::unique_ptr<Renderer> make_deepseekv3_disable_thinking(TokenizerPtr) { pending_nemotron("deepseekv3_disable_thinking"); }
std::unique_ptr<Renderer> make_gpt_oss_low_reasoning(TokenizerPtr) { pending_nemotron("gpt_oss_low_reasoning"); }
std::unique_ptr<Renderer> make_gpt_oss_high_reasoning(TokenizerPtr) { pending_nemotron("gpt_oss_high_reasoning"); }
}  // namespace tinker::renderers::detail
