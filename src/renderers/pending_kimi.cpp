// TEMPORARY (issue 27 in progress): declarations whose families are being written; removed
// when the family lands. Each throws so nothing silently renders a wrong format.
#include "renderers/families.hpp"

#include <tinker/error.hpp>

namespace tinker::renderers::detail {
namespace {
[[noreturn]] std::unique_ptr<Renderer> pending_kimi(const char* name) {
  throw error(errc::invalid_argument, std::string("renderer ") + name + " is not written yet");
}
}  // namespace
std::unique_ptr<Renderer> make_kimi_k25(TokenizerPtr) { pending_kimi("kimi_k25"); }
std::unique_ptr<Renderer> make_kimi_k25_disable_thinking(TokenizerPtr) { pending_kimi("kimi_k25_disable_thinking"); }
std::unique_ptr<Renderer> make_kimi_k26(TokenizerPtr) { pending_kimi("kimi_k26"); }
std::unique_ptr<Renderer> make_kimi_k26_disable_thinking(TokenizerPtr) { pending_kimi("kimi_k26_disable_thinking"); }
std::unique_ptr<Renderer> make_kimi_k26_preserve_thinking(TokenizerPtr) { pending_kimi("kimi_k26_preserve_thinking"); }
}  // namespace tinker::renderers::detail
