// ImagePart's factories (file, bytes, data: URI), image_size and the per-family token counts.
//
// PNG and JPEG are kept byte for byte: the service takes both, and the token count depends only
// on the size in the header, so re-encoding would cost CPU and (for JPEG) quality for nothing.
// WebP, which the service's image chunks cannot carry, is decoded and re-encoded as PNG here,
// once, when the part is made (doc/renderers.md#images).
#include "core/wire/json_writer.hpp"
#include "image/image_file.hpp"
#include "image/token_counts.hpp"

#include <tinker/error.hpp>
#include <tinker/renderers.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace tinker::renderers {
namespace {

// Larger image files than this are refused before reading: the service's requests are far
// smaller, and a path to a multi-gigabyte file is more likely a mistake than an image.
constexpr std::uint64_t max_image_file_bytes = std::uint64_t{256} << 20;
// A WebP is decoded to RGB (3 bytes a pixel) to be re-encoded: at most 8192x8192 pixels, so a
// small hostile file cannot make the conversion allocate gigabytes.
constexpr std::uint64_t max_converted_webp_pixels = std::uint64_t{1} << 26;

[[noreturn]] void image_part_fail(const std::string& where, const error& cause) {
  throw error(errc::invalid_argument, where + ": " + cause.diag().message);
}

bool iequals_prefix(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), text.begin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
         });
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && iequals_prefix(a, b);
}

std::string quoted_start(std::string_view text) {
  constexpr std::size_t shown = 40;
  return "\"" + std::string(text.substr(0, shown)) + (text.size() > shown ? "...\"" : "\"");
}

struct FileCloser {
  void operator()(std::FILE* file) const noexcept { std::fclose(file); }
};

std::vector<std::uint8_t> read_image_file(const std::string& path) {
  errno = 0;
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) throw error(errc::invalid_argument, std::string("cannot open: ") + std::strerror(errno));
  std::vector<std::uint8_t> bytes;
  std::uint8_t buffer[1 << 16];
  for (;;) {
    const std::size_t got = std::fread(buffer, 1, sizeof buffer, file.get());
    bytes.insert(bytes.end(), buffer, buffer + got);
    if (bytes.size() > max_image_file_bytes) {
      throw error(errc::invalid_argument,
                  "larger than " + std::to_string(max_image_file_bytes >> 20) + " MiB, too large for an image part");
    }
    if (got < sizeof buffer) break;
  }
  if (std::ferror(file.get()) != 0) throw error(errc::invalid_argument, "read error (is it a directory?)");
  return bytes;
}

// The media types a data: URI may name; the bytes decide the format, whichever of these it says.
bool is_image_media_type(std::string_view type) {
  return iequals(type, "image/png") || iequals(type, "image/jpeg") || iequals(type, "image/jpg") ||
         iequals(type, "image/webp");
}

// The base64 payload of `uri`, after checking its media type and encoding; throws a message
// without the "image data URI" prefix.
std::string_view data_uri_payload(std::string_view uri) {
  if (!iequals_prefix(uri, "data:")) {
    if (iequals_prefix(uri, "http://") || iequals_prefix(uri, "https://")) {
      throw error(errc::invalid_argument,
                  "remote URLs are not fetched; download the image and pass its bytes or a data: URI");
    }
    throw error(errc::invalid_argument, "not a data: URI (it starts " + quoted_start(uri) + ")");
  }
  const std::size_t comma = uri.find(',');
  if (comma == std::string_view::npos) throw error(errc::invalid_argument, "no ',' before the data");
  std::string_view header = uri.substr(5, comma - 5);
  const std::string_view media_type = header.substr(0, header.find(';'));
  if (!is_image_media_type(media_type)) {
    throw error(errc::invalid_argument, "media type \"" + std::string(media_type) +
                                            "\" is not an image read here (known: image/png, image/jpeg, image/webp)");
  }
  const std::size_t last_parameter = header.rfind(';');
  if (last_parameter == std::string_view::npos || !iequals(header.substr(last_parameter + 1), "base64")) {
    throw error(errc::invalid_argument,
                "only base64 data is read (\"data:" + std::string(media_type) + ";base64,...\")");
  }
  return uri.substr(comma + 1);
}

// The part for `bytes`; throws messages without a prefix, which each factory adds.
ImagePart image_part_of(std::vector<std::uint8_t> bytes) {
  const image::FileInfo info = image::inspect(bytes);
  switch (info.format) {
    case image::FileFormat::png: return ImagePart(std::move(bytes), ImageFormat::png);
    case image::FileFormat::jpeg: return ImagePart(std::move(bytes), ImageFormat::jpeg);
    case image::FileFormat::webp: break;
  }
  return ImagePart(image::encode_png(image::decode_rgb(bytes, max_converted_webp_pixels)), ImageFormat::png);
}

}  // namespace

ImagePart ImagePart::from_file(const std::string& path) {
  const std::string where = "image file \"" + path + "\"";
  try {
    return image_part_of(read_image_file(path));
  } catch (const error& e) {
    image_part_fail(where, e);
  }
}

ImagePart ImagePart::from_bytes(std::vector<std::uint8_t> bytes) {
  try {
    return image_part_of(std::move(bytes));
  } catch (const error& e) {
    image_part_fail("image", e);
  }
}

ImagePart ImagePart::from_data_uri(std::string_view uri) {
  const std::string where = "image data URI";
  try {
    const std::string_view payload = data_uri_payload(uri);
    std::string decoded;
    if (!wire::base64_decode(payload, decoded)) {
      throw error(errc::invalid_argument, "the data is not valid base64 (standard alphabet, padded, no spaces)");
    }
    return image_part_of(std::vector<std::uint8_t>(decoded.begin(), decoded.end()));
  } catch (const error& e) {
    image_part_fail(where, e);
  }
}

ImageSize image_size(std::span<const std::uint8_t> image) {
  const image::FileInfo info = image::inspect(image);
  return ImageSize{info.width, info.height};
}

std::int64_t qwen_vl_image_tokens(ImageSize size) {
  return image::qwen_vl_tokens(size.width, size.height);
}

std::int64_t kimi_k25_image_tokens(ImageSize size) {
  return image::kimi_k25_tokens(size.width, size.height);
}

}  // namespace tinker::renderers
