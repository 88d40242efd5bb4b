// The ImageChunk a vision family writes for an ImagePart (renderers/images.hpp).
#include "renderers/images.hpp"

#include <tinker/error.hpp>

#include <algorithm>
#include <optional>
#include <string>

namespace tinker::renderers::detail {
namespace {

// The format the bytes announce, from their signature.
std::optional<ImageFormat> signature_format(std::span<const std::uint8_t> data) {
  static constexpr std::uint8_t png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (data.size() >= sizeof png && std::equal(std::begin(png), std::end(png), data.begin())) return ImageFormat::png;
  if (data.size() >= 3 && data[0] == 0xff && data[1] == 0xd8 && data[2] == 0xff) return ImageFormat::jpeg;
  return std::nullopt;
}

}  // namespace

ImageChunk image_chunk(const ImagePart& image, ImageTokenRule rule, std::size_t message_index, std::size_t part_index) {
  const std::string where =
      "messages[" + std::to_string(message_index) + "].content[" + std::to_string(part_index) + "]";
  try {
    const auto format = signature_format(image.data);
    if (!format) {
      throw error(errc::invalid_argument,
                  "the bytes are not a PNG or JPEG file (make the part with ImagePart::from_file, from_bytes or "
                  "from_data_uri, which also convert WebP)");
    }
    if (*format != image.format) {
      throw error(errc::invalid_argument,
                  std::string("the part says ") + to_string(image.format) + " but the bytes are " + to_string(*format));
    }
    const ImageSize size = image_size(image.data);
    const std::int64_t tokens =
        rule == ImageTokenRule::qwen_vl ? qwen_vl_image_tokens(size) : kimi_k25_image_tokens(size);
    return ImageChunk(image.data, image.format, tokens);
  } catch (const error& e) {
    throw error(errc::invalid_argument, where + ": image: " + e.diag().message);
  }
}

}  // namespace tinker::renderers::detail
