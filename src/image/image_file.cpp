// Image files (image/image_file.hpp): which encoding a file is, from its signature, handed to the
// reader of that encoding (png.cpp, jpeg.cpp, webp.cpp).
#include "image/image_file.hpp"

#include "image/formats.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <limits>
#include <optional>
#include <string_view>

namespace tinker::image {
namespace {

constexpr std::array<std::uint8_t, 8> png_signature{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

bool file_starts_with(std::span<const std::uint8_t> data, std::string_view prefix, std::size_t at = 0) {
  return data.size() >= at + prefix.size() &&
         std::equal(prefix.begin(), prefix.end(), data.begin() + static_cast<std::ptrdiff_t>(at),
                    [](char a, std::uint8_t b) { return static_cast<std::uint8_t>(a) == b; });
}

std::optional<FileFormat> signature_format(std::span<const std::uint8_t> data) {
  if (data.size() >= png_signature.size() && std::equal(png_signature.begin(), png_signature.end(), data.begin())) {
    return FileFormat::png;
  }
  if (data.size() >= 3 && data[0] == 0xff && data[1] == 0xd8 && data[2] == 0xff) return FileFormat::jpeg;
  if (file_starts_with(data, "RIFF") && file_starts_with(data, "WEBP", 8)) return FileFormat::webp;
  return std::nullopt;
}

// Names the encodings people most often pass by mistake, so the error says what the file is.
std::optional<std::string_view> other_format_name(std::span<const std::uint8_t> data) {
  if (file_starts_with(data, "GIF87a") || file_starts_with(data, "GIF89a")) return "a GIF image";
  if (file_starts_with(data, "BM")) return "a BMP image";
  if (file_starts_with(data, std::string_view("II*\0", 4)) || file_starts_with(data, std::string_view("MM\0*", 4))) {
    return "a TIFF image";
  }
  if (file_starts_with(data, "ftypheic", 4) || file_starts_with(data, "ftypheix", 4) ||
      file_starts_with(data, "ftypmif1", 4)) {
    return "a HEIC image";
  }
  if (file_starts_with(data, "ftypavif", 4)) return "an AVIF image";
  if (file_starts_with(data, "%PDF")) return "a PDF document";
  if (file_starts_with(data, "<svg") || file_starts_with(data, "<?xml")) return "an SVG or XML document";
  if (file_starts_with(data, "RIFF")) return "a RIFF file that is not WebP";
  return std::nullopt;
}

std::string first_bytes_hex(std::span<const std::uint8_t> data) {
  std::string hex;
  for (std::size_t i = 0; i < std::min<std::size_t>(data.size(), 8); ++i) {
    char byte[4];
    std::snprintf(byte, sizeof byte, i == 0 ? "%02x" : " %02x", data[i]);
    hex += byte;
  }
  return hex;
}

[[noreturn]] void fail_unknown_format(std::span<const std::uint8_t> data) {
  if (data.empty()) detail::fail("no image data (0 bytes)");
  std::string what = "not a PNG, JPEG or WebP image";
  if (const auto other = other_format_name(data)) {
    what += " (it looks like " + std::string(*other) + ")";
  } else if (data.size() < png_signature.size() && std::equal(data.begin(), data.end(), png_signature.begin())) {
    what = "truncated PNG signature (" + std::to_string(data.size()) + " bytes)";
  } else {
    what += " (" + std::to_string(data.size()) + " bytes starting " + first_bytes_hex(data) + ")";
  }
  detail::fail(what);
}

}  // namespace

const char* to_string(FileFormat format) noexcept {
  switch (format) {
    case FileFormat::png: return "png";
    case FileFormat::jpeg: return "jpeg";
    case FileFormat::webp: return "webp";
  }
  return "unknown";
}

FileInfo inspect(std::span<const std::uint8_t> data) {
  const auto format = signature_format(data);
  if (!format) fail_unknown_format(data);
  switch (*format) {
    case FileFormat::png: return detail::inspect_png(data);
    case FileFormat::jpeg: return detail::inspect_jpeg(data);
    case FileFormat::webp: return detail::inspect_webp(data);
  }
  fail_unknown_format(data);
}

RgbImage decode_rgb(std::span<const std::uint8_t> data, std::uint64_t max_pixels) {
  // inspect() first: the container is then known to be whole and its lengths sane, and the
  // decoders' own size checks see the size the header promised.
  const FileInfo info = inspect(data);
  switch (info.format) {
    case FileFormat::png: return detail::decode_png(data, info, max_pixels);
    case FileFormat::jpeg: return detail::decode_jpeg(data, info, max_pixels);
    case FileFormat::webp: return detail::decode_webp(data, info, max_pixels);
  }
  fail_unknown_format(data);
}

namespace detail {

RgbImage allocate_rgb(const FileInfo& info, std::uint64_t max_pixels) {
  const std::uint64_t pixels = std::uint64_t{info.width} * info.height;
  if (pixels > max_pixels) {
    fail(std::string(to_string(info.format)) + " image of " + std::to_string(info.width) + "x" +
         std::to_string(info.height) + " pixels: more than the " + std::to_string(max_pixels) +
         " pixels allowed to decode");
  }
  if (pixels > std::numeric_limits<std::size_t>::max() / 3) fail("image too large to decode on this machine");
  RgbImage image;
  image.width = info.width;
  image.height = info.height;
  image.rgb.resize(static_cast<std::size_t>(pixels) * 3);
  return image;
}

}  // namespace detail
}  // namespace tinker::image
