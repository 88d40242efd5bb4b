// Images inside rendered messages: the ImageChunk a vision family writes for an ImagePart.
#pragma once

#include <tinker/renderers.hpp>

#include <cstddef>

namespace tinker::renderers::detail {

/// Which image processor's rule counts an image's tokens.
enum class ImageTokenRule {
  qwen_vl,   ///< Qwen3-VL, Qwen3.5, 3.6, 3.8: qwen_vl_image_tokens
  kimi_k25,  ///< Kimi K2.5, K2.6: kimi_k25_image_tokens
};

/// The chunk for `image`, part `part_index` of message `message_index`: the bytes as they are
/// (PNG or JPEG, checked against `image.format`) and `expected_tokens` by `rule`. Throws
/// tinker::error (invalid_argument) naming "messages[i].content[j]" for an unreadable image, a
/// format that does not match the bytes, a zero size or a size the rule refuses.
ImageChunk image_chunk(const ImagePart& image, ImageTokenRule rule, std::size_t message_index, std::size_t part_index);

}  // namespace tinker::renderers::detail
