// Encoded image files: what they are and how big, from their headers; decoding to RGB pixels;
// PNG encoding. Shared by the renderers (image parts) and tinker-local (vision model).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tinker::image {

/// The encodings read here.
enum class FileFormat { png, jpeg, webp };

/// "png", "jpeg" or "webp".
const char* to_string(FileFormat format) noexcept;

/// What an image file's header says.
struct FileInfo {
  FileFormat format = FileFormat::png;
  std::uint32_t width = 0;
  std::uint32_t height = 0;
};

/// Reads the format and size from the header of `data` without decoding pixels. Throws
/// tinker::error (invalid_argument) saying what is wrong: not PNG/JPEG/WebP, truncated header,
/// zero width or height.
FileInfo inspect(std::span<const std::uint8_t> data);

/// Decoded pixels, 3 bytes (R, G, B) per pixel, rows top to bottom.
struct RgbImage {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::vector<std::uint8_t> rgb;
};

/// Decodes a PNG, JPEG or WebP file to RGB (alpha dropped, palettes and grey expanded). Throws
/// tinker::error (invalid_argument) for corrupt or truncated data, or more than `max_pixels`.
RgbImage decode_rgb(std::span<const std::uint8_t> data, std::uint64_t max_pixels = 1ull << 28);

/// Encodes RGB pixels as a PNG file (lossless).
std::vector<std::uint8_t> encode_png(const RgbImage& image);

}  // namespace tinker::image
