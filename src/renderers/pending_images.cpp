// TEMPORARY (issue 27 in progress): the image and tool-declaration entry points being written.
#include <tinker/error.hpp>
#include <tinker/renderers.hpp>

namespace tinker::renderers {
namespace {
[[noreturn]] void pending_image(const char* what) {
  throw error(errc::invalid_argument, std::string(what) + " is not written yet");
}
}  // namespace

ImagePart ImagePart::from_file(const std::string&) { pending_image("ImagePart::from_file"); }
ImagePart ImagePart::from_bytes(std::vector<std::uint8_t>) { pending_image("ImagePart::from_bytes"); }
ImagePart ImagePart::from_data_uri(std::string_view) { pending_image("ImagePart::from_data_uri"); }
ImageSize image_size(std::span<const std::uint8_t>) { pending_image("image_size"); }
std::int64_t qwen_vl_image_tokens(ImageSize) { pending_image("qwen_vl_image_tokens"); }
std::int64_t kimi_k25_image_tokens(ImageSize) { pending_image("kimi_k25_image_tokens"); }
std::vector<ToolSpec> tools_from_json(std::string_view) { pending_image("tools_from_json"); }

}  // namespace tinker::renderers
