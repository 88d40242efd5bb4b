// Small image files written by the real encoders (support/image_samples.hpp).
#include "support/image_samples.hpp"

#include <cstdio>  // jpeglib.h needs FILE and size_t first
#include <cstring>
#include <stdexcept>

#include <jpeglib.h>
#include <png.h>
#include <webp/encode.h>

namespace tinker::test {
namespace {

std::uint8_t ramp(std::uint32_t value, std::uint32_t extent) {
  return static_cast<std::uint8_t>(extent <= 1 ? 128 : value * 255 / (extent - 1));
}

std::vector<std::uint8_t> channel(const std::vector<std::uint8_t>& rgb, std::size_t which) {
  std::vector<std::uint8_t> values(rgb.size() / 3);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = rgb[i * 3 + which];
  return values;
}

// Alpha that varies over the image and is never all opaque, so encoders keep the channel.
std::vector<std::uint8_t> with_alpha(const std::vector<std::uint8_t>& rgb, std::uint32_t width) {
  std::vector<std::uint8_t> rgba;
  rgba.reserve(rgb.size() / 3 * 4);
  for (std::size_t i = 0; i < rgb.size() / 3; ++i) {
    rgba.insert(rgba.end(), rgb.begin() + static_cast<std::ptrdiff_t>(i * 3),
                rgb.begin() + static_cast<std::ptrdiff_t>(i * 3 + 3));
    rgba.push_back(static_cast<std::uint8_t>(64 + (i % width) * 191 / std::max<std::uint32_t>(1, width)));
  }
  return rgba;
}

void append_le32(std::vector<std::uint8_t>& out, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
}

void append_chunk(std::vector<std::uint8_t>& out, const char* fourcc, const std::vector<std::uint8_t>& payload) {
  out.insert(out.end(), fourcc, fourcc + 4);
  append_le32(out, static_cast<std::uint32_t>(payload.size()));
  out.insert(out.end(), payload.begin(), payload.end());
  if (payload.size() % 2 != 0) out.push_back(0);
}

// "Exif\0\0" and an empty little-endian TIFF directory: the smallest EXIF block readers accept.
std::vector<std::uint8_t> exif_block(bool with_jpeg_prefix) {
  std::vector<std::uint8_t> exif;
  if (with_jpeg_prefix) exif = {'E', 'x', 'i', 'f', 0, 0};
  const std::uint8_t tiff[] = {'I', 'I', 42, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  exif.insert(exif.end(), std::begin(tiff), std::end(tiff));
  return exif;
}

// The lossless file re-wrapped in the extended layout: VP8X, its VP8L chunk, an EXIF chunk.
std::vector<std::uint8_t> extended_with_exif(const std::vector<std::uint8_t>& simple, std::uint32_t width,
                                             std::uint32_t height) {
  std::vector<std::uint8_t> vp8x(10, 0);
  vp8x[0] = 0x08;  // EXIF present
  for (int i = 0; i < 3; ++i) {
    vp8x[4 + i] = static_cast<std::uint8_t>((width - 1) >> (8 * i));
    vp8x[7 + i] = static_cast<std::uint8_t>((height - 1) >> (8 * i));
  }
  std::vector<std::uint8_t> body{'W', 'E', 'B', 'P'};
  append_chunk(body, "VP8X", vp8x);
  body.insert(body.end(), simple.begin() + 12, simple.end());  // the image chunk, header included
  append_chunk(body, "EXIF", exif_block(false));
  std::vector<std::uint8_t> file{'R', 'I', 'F', 'F'};
  append_le32(file, static_cast<std::uint32_t>(body.size()));
  file.insert(file.end(), body.begin(), body.end());
  return file;
}

}  // namespace

std::vector<std::uint8_t> sample_rgb(std::uint32_t width, std::uint32_t height) {
  std::vector<std::uint8_t> rgb;
  rgb.reserve(std::size_t{width} * height * 3);
  for (std::uint32_t y = 0; y < height; ++y) {
    for (std::uint32_t x = 0; x < width; ++x) {
      rgb.push_back(ramp(x, width));
      rgb.push_back(ramp(y, height));
      rgb.push_back(ramp(x + y, width + height - 1));
    }
  }
  return rgb;
}

std::vector<std::uint8_t> png_sample(std::uint32_t width, std::uint32_t height, PngKind kind) {
  const std::vector<std::uint8_t> rgb = sample_rgb(width, height);
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  image.width = width;
  image.height = height;
  std::vector<std::uint8_t> pixels;
  std::vector<std::uint8_t> colormap;
  switch (kind) {
    case PngKind::rgb:
      image.format = PNG_FORMAT_RGB;
      pixels = rgb;
      break;
    case PngKind::grey:
      image.format = PNG_FORMAT_GRAY;
      pixels = channel(rgb, 1);
      break;
    case PngKind::palette:
      // 16 colours: each pixel's red and green quantised to 4 levels.
      image.format = PNG_FORMAT_RGB_COLORMAP;
      image.colormap_entries = 16;
      for (int i = 0; i < 16; ++i) {
        colormap.insert(colormap.end(), {static_cast<std::uint8_t>((i % 4) * 85),
                                         static_cast<std::uint8_t>((i / 4) * 85), static_cast<std::uint8_t>(200)});
      }
      for (std::size_t i = 0; i < rgb.size() / 3; ++i) {
        pixels.push_back(static_cast<std::uint8_t>(rgb[i * 3] / 64 + rgb[i * 3 + 1] / 64 * 4));
      }
      break;
    case PngKind::rgba:
      image.format = PNG_FORMAT_RGBA;
      pixels = with_alpha(rgb, width);
      break;
    case PngKind::grey16: {
      image.format = PNG_FORMAT_LINEAR_Y;
      const std::vector<std::uint8_t> grey = channel(rgb, 1);
      pixels.resize(grey.size() * 2);
      for (std::size_t i = 0; i < grey.size(); ++i) {
        const std::uint16_t value = static_cast<std::uint16_t>(grey[i] * 257);
        std::memcpy(&pixels[i * 2], &value, 2);
      }
      break;
    }
  }
  std::vector<std::uint8_t> file(PNG_IMAGE_PNG_SIZE_MAX(image));
  png_alloc_size_t size = file.size();
  if (png_image_write_to_memory(&image, file.data(), &size, 0, pixels.data(), 0,
                                colormap.empty() ? nullptr : colormap.data()) == 0) {
    throw std::runtime_error(std::string("png_sample: ") + image.message);
  }
  file.resize(size);
  return file;
}

std::vector<std::uint8_t> jpeg_sample(std::uint32_t width, std::uint32_t height, JpegKind kind) {
  const std::vector<std::uint8_t> rgb = sample_rgb(width, height);
  std::vector<std::uint8_t> pixels = rgb;
  jpeg_compress_struct cinfo{};
  jpeg_error_mgr errors{};
  cinfo.err = jpeg_std_error(&errors);  // an encoder failure in a test may end the test binary
  jpeg_create_compress(&cinfo);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&cinfo, &buffer, &size);
  cinfo.image_width = width;
  cinfo.image_height = height;
  cinfo.input_components = 3;
  cinfo.in_color_space = JCS_RGB;
  if (kind == JpegKind::grey) {
    pixels = channel(rgb, 1);
    cinfo.input_components = 1;
    cinfo.in_color_space = JCS_GRAYSCALE;
  } else if (kind == JpegKind::cmyk) {
    // Inverted CMYK (as Adobe stores it) whose colour is exactly the sample: C=R, M=G, Y=B, K=255.
    pixels.clear();
    for (std::size_t i = 0; i < rgb.size() / 3; ++i) {
      pixels.insert(pixels.end(), {rgb[i * 3], rgb[i * 3 + 1], rgb[i * 3 + 2], 255});
    }
    cinfo.input_components = 4;
    cinfo.in_color_space = JCS_CMYK;
  }
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, 95, TRUE);
  if (kind == JpegKind::progressive) jpeg_simple_progression(&cinfo);
  jpeg_start_compress(&cinfo, TRUE);
  if (kind == JpegKind::progressive || kind == JpegKind::baseline_with_exif) {
    // Written now, after SOI and JFIF and before the frame header, which the first row emits.
    const std::vector<std::uint8_t> exif = exif_block(true);
    jpeg_write_marker(&cinfo, JPEG_APP0 + 1, exif.data(), static_cast<unsigned>(exif.size()));
  }
  const std::size_t stride = std::size_t{width} * static_cast<std::size_t>(cinfo.input_components);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = pixels.data() + cinfo.next_scanline * stride;
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  std::vector<std::uint8_t> file(buffer, buffer + size);
  jpeg_destroy_compress(&cinfo);
  std::free(buffer);
  return file;
}

std::vector<std::uint8_t> webp_sample(std::uint32_t width, std::uint32_t height, WebpKind kind) {
  const std::vector<std::uint8_t> rgb = sample_rgb(width, height);
  const std::vector<std::uint8_t> rgba = with_alpha(rgb, width);
  const int w = static_cast<int>(width);
  const int h = static_cast<int>(height);
  std::uint8_t* output = nullptr;
  std::size_t size = 0;
  switch (kind) {
    case WebpKind::lossy: size = WebPEncodeRGB(rgb.data(), w, h, w * 3, 90, &output); break;
    case WebpKind::lossless:
    case WebpKind::lossless_exif: size = WebPEncodeLosslessRGB(rgb.data(), w, h, w * 3, &output); break;
    case WebpKind::lossy_alpha: size = WebPEncodeRGBA(rgba.data(), w, h, w * 4, 90, &output); break;
  }
  if (size == 0) throw std::runtime_error("webp_sample: the encoder failed");
  std::vector<std::uint8_t> file(output, output + size);
  WebPFree(output);
  return kind == WebpKind::lossless_exif ? extended_with_exif(file, width, height) : file;
}

std::string as_string(const std::vector<std::uint8_t>& bytes) {
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace tinker::test
