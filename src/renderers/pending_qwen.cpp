// TEMPORARY (issue 27 in progress): declarations whose families are being written; removed
// when the family lands. Each throws so nothing silently renders a wrong format.
#include "renderers/families.hpp"

#include <tinker/error.hpp>

namespace tinker::renderers::detail {
namespace {
[[noreturn]] std::unique_ptr<Renderer> pending_qwen(const char* name) {
  throw error(errc::invalid_argument, std::string("renderer ") + name + " is not written yet");
}
}  // namespace
std::unique_ptr<Renderer> make_qwen3_vl(TokenizerPtr) { pending_qwen("qwen3_vl"); }
std::unique_ptr<Renderer> make_qwen3_vl_instruct(TokenizerPtr) { pending_qwen("qwen3_vl_instruct"); }
std::unique_ptr<Renderer> make_qwen3_5(TokenizerPtr) { pending_qwen("qwen3_5"); }
std::unique_ptr<Renderer> make_qwen3_5_disable_thinking(TokenizerPtr) { pending_qwen("qwen3_5_disable_thinking"); }
std::unique_ptr<Renderer> make_qwen3_8_xhigh_reasoning(TokenizerPtr) { pending_qwen("qwen3_8_xhigh_reasoning"); }
std::unique_ptr<Renderer> make_qwen3_8_medium_reasoning(TokenizerPtr) { pending_qwen("qwen3_8_medium_reasoning"); }
std::unique_ptr<Renderer> make_qwen3_8_low_reasoning(TokenizerPtr) { pending_qwen("qwen3_8_low_reasoning"); }
std::unique_ptr<Renderer> make_qwen3_8_disable_thinking(TokenizerPtr) { pending_qwen("qwen3_8_disable_thinking"); }
}  // namespace tinker::renderers::detail
