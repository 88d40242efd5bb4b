// PNG files: the chunk walk of inspect(), decoding and encoding through libpng's simplified API
// (png_image_*), which keeps libpng's setjmp/longjmp error handling inside libpng: every failure
// comes back as a return value with a message, so nothing here jumps over C++ frames.
#include "image/formats.hpp"

#include <png.h>

#include <array>
#include <cstring>
#include <limits>

namespace tinker::image {
namespace {

constexpr std::size_t png_signature_size = 8;
constexpr std::size_t png_chunk_overhead = 12;        // length, type, CRC
constexpr std::uint32_t png_max_length = 0x7fffffff;  // the specification's bound on lengths and sides

[[noreturn]] void png_fail(const std::string& what) {
  detail::fail("PNG: " + what);
}

// CRC-32 as PNG (and zlib) define it, computed here rather than linking zlib for one function.
std::array<std::uint32_t, 256> make_png_crc_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t n = 0; n < 256; ++n) {
    std::uint32_t c = n;
    for (int k = 0; k < 8; ++k) c = (c & 1) != 0 ? 0xedb88320u ^ (c >> 1) : c >> 1;
    table[n] = c;
  }
  return table;
}

std::uint32_t png_chunk_crc(std::span<const std::uint8_t> bytes) {
  static const std::array<std::uint32_t, 256> table = make_png_crc_table();
  std::uint32_t c = 0xffffffffu;
  for (const std::uint8_t byte : bytes) c = table[(c ^ byte) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

bool png_valid_depth(std::uint8_t color_type, std::uint8_t depth) {
  switch (color_type) {
    case 0: return depth == 1 || depth == 2 || depth == 4 || depth == 8 || depth == 16;  // grey
    case 3: return depth == 1 || depth == 2 || depth == 4 || depth == 8;                 // palette
    case 2:                                                                              // RGB
    case 4:                                                                              // grey + alpha
    case 6: return depth == 8 || depth == 16;                                            // RGBA
    default: return false;
  }
}

FileInfo png_read_ihdr(std::span<const std::uint8_t> body) {
  FileInfo info;
  info.format = FileFormat::png;
  info.width = detail::read_be32(body, 0);
  info.height = detail::read_be32(body, 4);
  if (info.width == 0 || info.height == 0) {
    png_fail("zero-sized image (" + std::to_string(info.width) + "x" + std::to_string(info.height) + " pixels)");
  }
  if (info.width > png_max_length || info.height > png_max_length) png_fail("IHDR: width or height over 2^31-1");
  const std::uint8_t depth = body[8];
  const std::uint8_t color_type = body[9];
  if (!png_valid_depth(color_type, depth)) {
    png_fail("IHDR: invalid colour type " + std::to_string(color_type) + " with bit depth " + std::to_string(depth));
  }
  if (body[10] != 0 || body[11] != 0) png_fail("IHDR: unknown compression or filter method");
  if (body[12] > 1) png_fail("IHDR: unknown interlace method " + std::to_string(body[12]));
  return info;
}

// Walks every chunk up to IEND: lengths within the file, CRCs right, IHDR first, PLTE where a
// palette image needs one, image data present. What follows IEND is ignored, as decoders do.
FileInfo png_walk_chunks(std::span<const std::uint8_t> data) {
  FileInfo info;
  bool has_palette = false;
  bool has_data = false;
  bool palette_image = false;
  std::size_t pos = png_signature_size;
  for (std::size_t index = 0;; ++index) {
    if (data.size() - pos < png_chunk_overhead) {
      png_fail("truncated: the file ends after " + std::to_string(data.size()) + " bytes, before the IEND chunk");
    }
    const std::uint32_t length = detail::read_be32(data, pos);
    const auto type = data.subspan(pos + 4, 4);
    const std::string name(type.begin(), type.end());
    if (length > png_max_length) png_fail("chunk " + std::to_string(index) + ": length over 2^31-1");
    for (const std::uint8_t c : type) {
      if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))) {
        png_fail("chunk " + std::to_string(index) + " at byte " + std::to_string(pos) + ": invalid chunk type");
      }
    }
    if (data.size() - pos - png_chunk_overhead < length) {
      png_fail("truncated: chunk " + name + " of " + std::to_string(length) + " bytes at byte " + std::to_string(pos) +
               " runs past the end of the file (" + std::to_string(data.size()) + " bytes)");
    }
    const auto body = data.subspan(pos + 8, length);
    if (png_chunk_crc(data.subspan(pos + 4, length + 4)) != detail::read_be32(data, pos + 8 + length)) {
      png_fail("chunk " + name + " at byte " + std::to_string(pos) + ": CRC mismatch (corrupt data)");
    }
    if (index == 0) {
      if (name != "IHDR" || length != 13) png_fail("the first chunk is not a 13-byte IHDR");
      info = png_read_ihdr(body);
      palette_image = body[9] == 3;
    } else if (name == "IHDR") {
      png_fail("a second IHDR chunk");
    } else if (name == "PLTE") {
      has_palette = true;
    } else if (name == "IDAT") {
      if (palette_image && !has_palette) png_fail("palette image without a PLTE chunk before its data");
      has_data = true;
    } else if (name == "IEND") {
      if (!has_data) png_fail("no IDAT chunk: the file holds no image data");
      return info;
    }
    pos += png_chunk_overhead + length;
  }
}

// libpng's simplified API state, freed however the function using it ends.
class PngImage {
 public:
  PngImage() {
    std::memset(&image_, 0, sizeof image_);
    image_.version = PNG_IMAGE_VERSION;
  }
  ~PngImage() { png_image_free(&image_); }
  PngImage(const PngImage&) = delete;
  PngImage& operator=(const PngImage&) = delete;

  png_image& get() { return image_; }
  [[noreturn]] void fail(const char* doing) const {
    png_fail(std::string(doing) + ": " + (image_.message[0] != '\0' ? image_.message : "libpng failed"));
  }

 private:
  png_image image_;
};

}  // namespace

namespace detail {

FileInfo inspect_png(std::span<const std::uint8_t> data) {
  return png_walk_chunks(data);
}

RgbImage decode_png(std::span<const std::uint8_t> data, const FileInfo& info, std::uint64_t max_pixels) {
  RgbImage out = allocate_rgb(info, max_pixels);
  PngImage png;
  if (png_image_begin_read_from_memory(&png.get(), data.data(), data.size()) == 0) png.fail("reading the header");
  if (png.get().width != info.width || png.get().height != info.height) png_fail("libpng read another size");
  // Alpha is dropped rather than composited (as PIL's convert("RGB") does): read RGBA where the
  // file has alpha and keep the colour channels.
  const bool has_alpha = (png.get().format & PNG_FORMAT_FLAG_ALPHA) != 0;
  png.get().format = has_alpha ? PNG_FORMAT_RGBA : PNG_FORMAT_RGB;
  const std::size_t channels = has_alpha ? 4 : 3;
  if (std::uint64_t{info.width} * channels > static_cast<std::uint64_t>(std::numeric_limits<png_int_32>::max())) {
    png_fail("rows too wide to decode");
  }
  const auto stride = static_cast<png_int_32>(info.width * channels);
  if (!has_alpha) {
    if (png_image_finish_read(&png.get(), nullptr, out.rgb.data(), stride, nullptr) == 0) png.fail("decoding");
    return out;
  }
  std::vector<std::uint8_t> rgba(out.rgb.size() / 3 * 4);
  if (png_image_finish_read(&png.get(), nullptr, rgba.data(), stride, nullptr) == 0) png.fail("decoding");
  for (std::size_t pixel = 0, count = out.rgb.size() / 3; pixel < count; ++pixel) {
    std::memcpy(&out.rgb[pixel * 3], &rgba[pixel * 4], 3);
  }
  return out;
}

}  // namespace detail

std::vector<std::uint8_t> encode_png(const RgbImage& image) {
  if (image.width == 0 || image.height == 0) {
    detail::fail("encode_png: zero-sized image (" + std::to_string(image.width) + "x" + std::to_string(image.height) +
                 " pixels)");
  }
  if (image.width > png_max_length / 3 || image.height > png_max_length) {
    detail::fail("encode_png: image too large for a PNG row");
  }
  if (image.rgb.size() != std::uint64_t{image.width} * image.height * 3) {
    detail::fail("encode_png: " + std::to_string(image.rgb.size()) + " bytes of pixels for a " +
                 std::to_string(image.width) + "x" + std::to_string(image.height) + " RGB image");
  }
  PngImage png;
  png.get().width = image.width;
  png.get().height = image.height;
  png.get().format = PNG_FORMAT_RGB;
  // The largest PNG libpng can make of these pixels: written in one pass, then trimmed.
  std::vector<std::uint8_t> file(PNG_IMAGE_PNG_SIZE_MAX(png.get()));
  png_alloc_size_t size = file.size();
  if (png_image_write_to_memory(&png.get(), file.data(), &size, 0, image.rgb.data(),
                                static_cast<png_int_32>(image.width * 3), nullptr) == 0) {
    png.fail("encoding");
  }
  file.resize(size);
  return file;
}

}  // namespace tinker::image
