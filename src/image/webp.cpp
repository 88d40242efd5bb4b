// WebP files: the RIFF chunk walk of inspect() for the three layouts (VP8 lossy, VP8L lossless,
// VP8X extended: alpha, metadata), and decoding through libwebp into a buffer sized beforehand.
#include "image/formats.hpp"

#include <webp/decode.h>

#include <algorithm>
#include <string_view>

namespace tinker::image {
namespace {

constexpr std::size_t webp_riff_header_size = 12;  // "RIFF", size, "WEBP"
constexpr std::size_t webp_chunk_header_size = 8;  // fourcc, size
constexpr std::uint8_t webp_vp8x_animation_flag = 0x02;

[[noreturn]] void webp_fail(const std::string& what) {
  detail::fail("WebP: " + what);
}

struct WebpChunk {
  std::string_view fourcc;
  std::span<const std::uint8_t> payload;
  std::size_t next = 0;  // where the next chunk starts
};

// The chunk at `pos`, which must lie within [0, end).
WebpChunk webp_read_chunk(std::span<const std::uint8_t> data, std::size_t pos, std::size_t end) {
  if (end - pos < webp_chunk_header_size) {
    webp_fail("truncated: a chunk header at byte " + std::to_string(pos) + " runs past the end of the RIFF data");
  }
  WebpChunk chunk;
  chunk.fourcc = std::string_view(reinterpret_cast<const char*>(data.data() + pos), 4);
  const std::size_t size = detail::read_le32(data, pos + 4);
  if (end - pos - webp_chunk_header_size < size) {
    webp_fail("truncated: chunk \"" + std::string(chunk.fourcc) + "\" of " + std::to_string(size) + " bytes at byte " +
              std::to_string(pos) + " runs past the end of the RIFF data (" + std::to_string(end) + " bytes)");
  }
  chunk.payload = data.subspan(pos + webp_chunk_header_size, size);
  // Chunks are padded to an even size; a missing pad byte at the very end is tolerated, as
  // libwebp tolerates it.
  chunk.next = std::min(end, pos + webp_chunk_header_size + size + (size & 1));
  return chunk;
}

void webp_check_size(const FileInfo& info) {
  if (info.width == 0 || info.height == 0) {
    webp_fail("zero-sized image (" + std::to_string(info.width) + "x" + std::to_string(info.height) + " pixels)");
  }
}

// A lossy key frame: 3-byte frame tag, start code 9D 01 2A, 14-bit width and height.
FileInfo webp_read_vp8(std::span<const std::uint8_t> payload) {
  if (payload.size() < 10) webp_fail("truncated VP8 frame header");
  const std::uint32_t tag = detail::read_le24(payload, 0);
  if ((tag & 1) != 0) webp_fail("the VP8 frame is not a key frame");
  if (((tag >> 1) & 7) > 3) webp_fail("unknown VP8 profile " + std::to_string((tag >> 1) & 7));
  if (((tag >> 4) & 1) == 0) webp_fail("the VP8 frame is not shown");
  if ((tag >> 5) >= payload.size()) webp_fail("the VP8 first partition runs past its chunk");
  if (payload[3] != 0x9d || payload[4] != 0x01 || payload[5] != 0x2a) webp_fail("missing VP8 start code");
  FileInfo info;
  info.format = FileFormat::webp;
  info.width = detail::read_le16(payload, 6) & 0x3fff;
  info.height = detail::read_le16(payload, 8) & 0x3fff;
  webp_check_size(info);
  return info;
}

// A lossless image: signature 0x2F, then width-1 and height-1 in 14 bits each, alpha, version.
FileInfo webp_read_vp8l(std::span<const std::uint8_t> payload) {
  if (payload.size() < 5) webp_fail("truncated VP8L header");
  if (payload[0] != 0x2f) webp_fail("missing VP8L signature");
  const std::uint32_t bits = detail::read_le32(payload, 1);
  if ((bits >> 29) != 0) webp_fail("unknown VP8L version " + std::to_string(bits >> 29));
  FileInfo info;
  info.format = FileFormat::webp;
  info.width = (bits & 0x3fff) + 1;
  info.height = ((bits >> 14) & 0x3fff) + 1;
  return info;
}

FileInfo webp_read_image_chunk(const WebpChunk& chunk) {
  return chunk.fourcc == "VP8 " ? webp_read_vp8(chunk.payload) : webp_read_vp8l(chunk.payload);
}

bool webp_is_image_chunk(std::string_view fourcc) {
  return fourcc == "VP8 " || fourcc == "VP8L";
}

// The extended layout: VP8X (flags, canvas size), then optional ICCP, ALPH, the image chunk,
// EXIF, XMP and chunks of unknown kinds (skipped, as the format says).
FileInfo webp_read_extended(std::span<const std::uint8_t> data, const WebpChunk& header, std::size_t end) {
  if (header.payload.size() < 10) webp_fail("truncated VP8X header");
  if ((header.payload[0] & webp_vp8x_animation_flag) != 0) webp_fail("animated WebP is not supported");
  FileInfo canvas;
  canvas.format = FileFormat::webp;
  canvas.width = detail::read_le24(header.payload, 4) + 1;
  canvas.height = detail::read_le24(header.payload, 7) + 1;
  if (std::uint64_t{canvas.width} * canvas.height > 0xffffffffu) webp_fail("canvas over 2^32 pixels");
  for (std::size_t pos = header.next; pos < end;) {
    const WebpChunk chunk = webp_read_chunk(data, pos, end);
    if (chunk.fourcc == "ANIM" || chunk.fourcc == "ANMF") webp_fail("animated WebP is not supported");
    if (webp_is_image_chunk(chunk.fourcc)) {
      const FileInfo image = webp_read_image_chunk(chunk);
      if (image.width != canvas.width || image.height != canvas.height) {
        webp_fail("the image (" + std::to_string(image.width) + "x" + std::to_string(image.height) +
                  ") does not fill the VP8X canvas (" + std::to_string(canvas.width) + "x" +
                  std::to_string(canvas.height) + ")");
      }
      return canvas;
    }
    pos = chunk.next;
  }
  webp_fail("no image data (VP8 or VP8L chunk) after the VP8X header");
}

const char* webp_status_text(VP8StatusCode status) {
  switch (status) {
    case VP8_STATUS_OK: return "ok";
    case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
    case VP8_STATUS_INVALID_PARAM: return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR: return "corrupt image data";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature";
    case VP8_STATUS_SUSPENDED: return "suspended";
    case VP8_STATUS_USER_ABORT: return "aborted";
    case VP8_STATUS_NOT_ENOUGH_DATA: return "truncated image data";
  }
  return "unknown libwebp status";
}

}  // namespace

namespace detail {

FileInfo inspect_webp(std::span<const std::uint8_t> data) {
  const std::size_t riff_size = read_le32(data, 4);
  if (riff_size < webp_riff_header_size - 8 + webp_chunk_header_size) {
    webp_fail("RIFF size " + std::to_string(riff_size) + " too small for a WebP image");
  }
  if (data.size() - 8 < riff_size) {
    webp_fail("truncated: the RIFF header announces " + std::to_string(riff_size + 8) + " bytes, the file has " +
              std::to_string(data.size()));
  }
  const std::size_t end = 8 + riff_size;  // bytes after the RIFF data are not the image's
  const WebpChunk first = webp_read_chunk(data, webp_riff_header_size, end);
  if (webp_is_image_chunk(first.fourcc)) return webp_read_image_chunk(first);
  if (first.fourcc == "VP8X") return webp_read_extended(data, first, end);
  webp_fail("unknown first chunk \"" + std::string(first.fourcc) + "\" (expected VP8, VP8L or VP8X)");
}

RgbImage decode_webp(std::span<const std::uint8_t> data, const FileInfo& info, std::uint64_t max_pixels) {
  RgbImage out = allocate_rgb(info, max_pixels);
  WebPDecoderConfig config;
  if (WebPInitDecoderConfig(&config) == 0) webp_fail("libwebp version mismatch");
  VP8StatusCode status = WebPGetFeatures(data.data(), data.size(), &config.input);
  if (status != VP8_STATUS_OK) webp_fail(std::string("reading the header: ") + webp_status_text(status));
  if (config.input.has_animation != 0) webp_fail("animated WebP is not supported");
  if (static_cast<std::uint32_t>(config.input.width) != info.width ||
      static_cast<std::uint32_t>(config.input.height) != info.height) {
    webp_fail("libwebp reads another size than the header's");
  }
  // Decoded straight into our buffer (alpha dropped), so libwebp allocates no output of its own.
  config.output.colorspace = MODE_RGB;
  config.output.is_external_memory = 1;
  config.output.u.RGBA.rgba = out.rgb.data();
  config.output.u.RGBA.stride = static_cast<int>(info.width * 3);
  config.output.u.RGBA.size = out.rgb.size();
  status = WebPDecode(data.data(), data.size(), &config);
  WebPFreeDecBuffer(&config.output);
  if (status != VP8_STATUS_OK) webp_fail(std::string("decoding: ") + webp_status_text(status));
  return out;
}

}  // namespace detail
}  // namespace tinker::image
