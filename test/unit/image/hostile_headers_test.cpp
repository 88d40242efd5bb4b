// Image headers built to mislead (image/image_file.hpp): huge announced sizes, zero sizes,
// lengths past the end, unsupported variants, valid containers around corrupt data. Each is a
// tinker::error saying what is wrong, before anything large is allocated.
#include "image/image_file.hpp"

#include "support/expect_error.hpp"
#include "support/image_samples.hpp"

#include <gtest/gtest.h>

#include <array>

namespace tinker::image {
namespace {

using test::expect_tinker_error;

// ---- PNG built chunk by chunk --------------------------------------------------------------------

std::uint32_t crc_of(std::span<const std::uint8_t> bytes) {
  std::uint32_t c = 0xffffffffu;
  for (const std::uint8_t byte : bytes) {
    c ^= byte;
    for (int k = 0; k < 8; ++k) c = (c & 1) != 0 ? 0xedb88320u ^ (c >> 1) : c >> 1;
  }
  return c ^ 0xffffffffu;
}

void put_be32(std::vector<std::uint8_t>& out, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(value >> shift));
}

void put_chunk(std::vector<std::uint8_t>& png, std::string_view type, const std::vector<std::uint8_t>& body) {
  put_be32(png, static_cast<std::uint32_t>(body.size()));
  const std::size_t start = png.size();
  png.insert(png.end(), type.begin(), type.end());
  png.insert(png.end(), body.begin(), body.end());
  put_be32(png, crc_of(std::span<const std::uint8_t>(png).subspan(start)));
}

std::vector<std::uint8_t> ihdr(std::uint32_t width, std::uint32_t height, std::uint8_t depth = 8,
                               std::uint8_t color_type = 2) {
  std::vector<std::uint8_t> body;
  put_be32(body, width);
  put_be32(body, height);
  body.insert(body.end(), {depth, color_type, 0, 0, 0});
  return body;
}

// Signature, IHDR, the given IDAT payload, IEND.
std::vector<std::uint8_t> png_with(const std::vector<std::uint8_t>& header,
                                   const std::vector<std::uint8_t>& data = {0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00,
                                                                            0x01}) {
  std::vector<std::uint8_t> png{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  put_chunk(png, "IHDR", header);
  put_chunk(png, "IDAT", data);
  put_chunk(png, "IEND", {});
  return png;
}

TEST(ImageHostilePng, AHugeAnnouncedSizeIsReadButNotDecoded) {
  const auto png = png_with(ihdr(0x7fffffff, 0x7fffffff));
  const FileInfo info = inspect(png);
  EXPECT_EQ(info.width, 0x7fffffffu);
  EXPECT_EQ(info.height, 0x7fffffffu);
  expect_tinker_error(errc::invalid_argument, "png image of 2147483647x2147483647 pixels: more than the 268435456",
                      [&] { (void)decode_rgb(png); });
}

TEST(ImageHostilePng, MalformedHeadersAndChunksAreNamed) {
  expect_tinker_error(errc::invalid_argument, "PNG: zero-sized image (0x5 pixels)",
                      [] { (void)inspect(png_with(ihdr(0, 5))); });
  expect_tinker_error(errc::invalid_argument, "PNG: IHDR: width or height over 2^31-1",
                      [] { (void)inspect(png_with(ihdr(0x80000000u, 5))); });
  expect_tinker_error(errc::invalid_argument, "invalid colour type 2 with bit depth 4",
                      [] { (void)inspect(png_with(ihdr(5, 5, 4, 2))); });
  expect_tinker_error(errc::invalid_argument, "palette image without a PLTE chunk",
                      [] { (void)inspect(png_with(ihdr(5, 5, 8, 3))); });

  std::vector<std::uint8_t> no_data{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  put_chunk(no_data, "IHDR", ihdr(5, 5));
  put_chunk(no_data, "IEND", {});
  expect_tinker_error(errc::invalid_argument, "no IDAT chunk", [&] { (void)inspect(no_data); });

  std::vector<std::uint8_t> bad_crc = png_with(ihdr(5, 5));
  bad_crc[29] ^= 1;  // the IHDR's CRC
  expect_tinker_error(errc::invalid_argument, "chunk IHDR at byte 8: CRC mismatch", [&] { (void)inspect(bad_crc); });

  std::vector<std::uint8_t> huge_length = png_with(ihdr(5, 5));
  huge_length[33] = 0x80;  // the IDAT's length: 2^31 + 8
  expect_tinker_error(errc::invalid_argument, "length over 2^31-1", [&] { (void)inspect(huge_length); });

  std::vector<std::uint8_t> past_end = png_with(ihdr(5, 5));
  past_end[34] = 0x10;  // the IDAT's length: 2^20 + 8
  expect_tinker_error(errc::invalid_argument, "chunk IDAT of 1048584 bytes at byte 33 runs past the end",
                      [&] { (void)inspect(past_end); });

  std::vector<std::uint8_t> not_ihdr{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  put_chunk(not_ihdr, "IDAT", {1, 2, 3});
  expect_tinker_error(errc::invalid_argument, "the first chunk is not a 13-byte IHDR",
                      [&] { (void)inspect(not_ihdr); });
}

TEST(ImageHostilePng, AValidContainerAroundCorruptDataFailsToDecode) {
  const auto png = png_with(ihdr(5, 5), {0x78, 0x9c, 0xff, 0xff, 0xff, 0xff, 0x00, 0x01, 0x02});
  EXPECT_EQ(inspect(png).width, 5u);
  expect_tinker_error(errc::invalid_argument, "PNG: decoding", [&] { (void)decode_rgb(png); });
}

// ---- JPEG: a real file with its header patched -----------------------------------------------------

// The offset of the first `marker` segment (its FF byte) in a file the sample encoder wrote.
std::size_t marker_offset(const std::vector<std::uint8_t>& jpeg, std::uint8_t marker) {
  for (std::size_t i = 2; i + 1 < jpeg.size(); ++i) {
    if (jpeg[i] == 0xff && jpeg[i + 1] == marker) return i;
  }
  ADD_FAILURE() << "no marker FF" << std::hex << int{marker};
  return 0;
}

TEST(ImageHostileJpeg, AHugeAnnouncedSizeIsReadButNotDecoded) {
  std::vector<std::uint8_t> jpeg = test::jpeg_sample(16, 16);
  const std::size_t sof = marker_offset(jpeg, 0xc0);
  for (std::size_t i = sof + 5; i < sof + 9; ++i) jpeg[i] = 0xff;  // height and width 65535
  const FileInfo info = inspect(jpeg);
  EXPECT_EQ(info.width, 65535u);
  EXPECT_EQ(info.height, 65535u);
  expect_tinker_error(errc::invalid_argument, "jpeg image of 65535x65535 pixels: more than the",
                      [&] { (void)decode_rgb(jpeg); });
}

TEST(ImageHostileJpeg, MalformedHeadersAreNamed) {
  const std::vector<std::uint8_t> good = test::jpeg_sample(16, 16);
  const std::size_t sof = marker_offset(good, 0xc0);

  std::vector<std::uint8_t> dnl = good;
  dnl[sof + 5] = dnl[sof + 6] = 0;
  expect_tinker_error(errc::invalid_argument, "JPEG: the frame leaves its height to a DNL marker",
                      [&] { (void)inspect(dnl); });

  std::vector<std::uint8_t> lossless = good;
  lossless[sof + 1] = 0xc3;
  expect_tinker_error(errc::invalid_argument, "lossless JPEG (SOF marker FFC3) is not supported",
                      [&] { (void)inspect(lossless); });

  std::vector<std::uint8_t> hierarchical = good;
  hierarchical[sof + 1] = 0xc5;
  expect_tinker_error(errc::invalid_argument, "hierarchical JPEG", [&] { (void)inspect(hierarchical); });

  std::vector<std::uint8_t> twelve_bit = good;
  twelve_bit[sof + 4] = 12;
  expect_tinker_error(errc::invalid_argument, "12-bit samples are not supported", [&] { (void)inspect(twelve_bit); });

  std::vector<std::uint8_t> long_segment = good;
  long_segment[4] = long_segment[5] = 0xff;  // the APP0 (JFIF) segment's length
  expect_tinker_error(errc::invalid_argument, "segment FFE0 of 65535 bytes at byte 2 runs past the end",
                      [&] { (void)inspect(long_segment); });

  std::vector<std::uint8_t> short_segment = good;
  short_segment[4] = 0;
  short_segment[5] = 1;
  expect_tinker_error(errc::invalid_argument, "length < 2", [&] { (void)inspect(short_segment); });

  const std::vector<std::uint8_t> scan_first{0xff, 0xd8, 0xff, 0xda, 0x00, 0x08, 0x01,
                                             0x01, 0x00, 0x00, 0x3f, 0x00, 0xff, 0xd9};
  expect_tinker_error(errc::invalid_argument, "image data (SOS) before the frame header",
                      [&] { (void)inspect(scan_first); });
  const std::vector<std::uint8_t> empty_image{0xff, 0xd8, 0xff, 0xd9};
  expect_tinker_error(errc::invalid_argument, "no frame header (SOF) before the end",
                      [&] { (void)inspect(empty_image); });
  const std::vector<std::uint8_t> no_marker{0xff, 0xd8, 0xff, 0xe0, 0x00, 0x02, 0x12, 0x34};
  expect_tinker_error(errc::invalid_argument, "JPEG: truncated: the file ends after 8 bytes",
                      [&] { (void)inspect(no_marker); });
}

TEST(ImageHostileJpeg, StrayBytesBetweenSegmentsAreSkippedAsLibjpegSkipsThem) {
  std::vector<std::uint8_t> jpeg = test::jpeg_sample(37, 23);
  const std::size_t sof = marker_offset(jpeg, 0xc0);
  jpeg.insert(jpeg.begin() + static_cast<std::ptrdiff_t>(sof), {0x00, 0x12, 0x34});
  EXPECT_EQ(inspect(jpeg).width, 37u);
  EXPECT_EQ(decode_rgb(jpeg).rgb.size(), 37u * 23u * 3u);
}

TEST(ImageHostileJpeg, AValidContainerAroundCorruptDataGivesAnErrorOrAnImage) {
  // Entropy-coded data replaced by noise (no FF bytes, so the markers stay where they are): libjpeg
  // repairs what it can, as viewers do; it must not crash or print.
  std::vector<std::uint8_t> jpeg = test::jpeg_sample(37, 23);
  const std::size_t sos = marker_offset(jpeg, 0xda);
  const std::size_t data = sos + 2 + (std::size_t{jpeg[sos + 2]} << 8 | jpeg[sos + 3]);
  for (std::size_t i = data; i + 2 < jpeg.size(); ++i) jpeg[i] = static_cast<std::uint8_t>((i * 37) % 255);
  try {
    const RgbImage image = decode_rgb(jpeg);
    EXPECT_EQ(image.width, 37u);
  } catch (const error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
  }
}

// ---- WebP: real files with their headers patched ---------------------------------------------------

TEST(ImageHostileWebp, AHugeAnnouncedSizeIsReadButNotDecodedBeyondTheLimit) {
  std::vector<std::uint8_t> webp = test::webp_sample(16, 16, test::WebpKind::lossless);
  // VP8L: 14 bits width-1, 14 bits height-1 after the signature byte at offset 20.
  const std::uint32_t bits = 0x3fffu | 0x3fffu << 14;
  for (int i = 0; i < 3; ++i) webp[21 + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(bits >> (8 * i));
  webp[24] = static_cast<std::uint8_t>((webp[24] & 0xf0) | (bits >> 24));
  const FileInfo info = inspect(webp);
  EXPECT_EQ(info.width, 16384u);
  EXPECT_EQ(info.height, 16384u);
  expect_tinker_error(errc::invalid_argument, "webp image of 16384x16384 pixels: more than the 1048576",
                      [&] { (void)decode_rgb(webp, 1u << 20); });
}

TEST(ImageHostileWebp, MalformedContainersAreNamed) {
  const std::vector<std::uint8_t> good = test::webp_sample(16, 16, test::WebpKind::lossy_alpha);  // VP8X
  std::vector<std::uint8_t> animated = good;
  animated[20] |= 0x02;
  expect_tinker_error(errc::invalid_argument, "WebP: animated WebP is not supported", [&] { (void)inspect(animated); });

  std::vector<std::uint8_t> wrong_canvas = good;
  wrong_canvas[24] = 20;  // canvas width 21
  expect_tinker_error(errc::invalid_argument, "does not fill the VP8X canvas (21x16)",
                      [&] { (void)inspect(wrong_canvas); });

  std::vector<std::uint8_t> long_riff = good;
  long_riff[7] = 0x10;
  expect_tinker_error(errc::invalid_argument, "WebP: truncated: the RIFF header announces",
                      [&] { (void)inspect(long_riff); });

  std::vector<std::uint8_t> tiny_riff = good;
  tiny_riff[4] = 4;
  tiny_riff[5] = tiny_riff[6] = tiny_riff[7] = 0;
  expect_tinker_error(errc::invalid_argument, "RIFF size 4 too small", [&] { (void)inspect(tiny_riff); });

  std::vector<std::uint8_t> unknown_chunk = good;
  std::copy_n("ABCD", 4, unknown_chunk.begin() + 12);
  expect_tinker_error(errc::invalid_argument, "unknown first chunk \"ABCD\"", [&] { (void)inspect(unknown_chunk); });

  std::vector<std::uint8_t> lossy = test::webp_sample(16, 16, test::WebpKind::lossy);
  std::vector<std::uint8_t> no_start_code = lossy;
  no_start_code[23] = 0;
  expect_tinker_error(errc::invalid_argument, "missing VP8 start code", [&] { (void)inspect(no_start_code); });
  std::vector<std::uint8_t> inter_frame = lossy;
  inter_frame[20] |= 1;
  expect_tinker_error(errc::invalid_argument, "not a key frame", [&] { (void)inspect(inter_frame); });
  std::vector<std::uint8_t> zero_width = lossy;
  zero_width[26] = 0;
  zero_width[27] &= 0xc0;
  expect_tinker_error(errc::invalid_argument, "WebP: zero-sized image (0x16 pixels)",
                      [&] { (void)inspect(zero_width); });
}

TEST(ImageHostileWebp, AValidContainerAroundCorruptDataFailsToDecode) {
  std::vector<std::uint8_t> webp = test::webp_sample(37, 23, test::WebpKind::lossless);
  for (std::size_t i = 25; i < webp.size(); ++i) webp[i] = 0xff;
  EXPECT_EQ(inspect(webp).width, 37u);
  expect_tinker_error(errc::invalid_argument, "WebP: decoding:", [&] { (void)decode_rgb(webp); });
}

}  // namespace
}  // namespace tinker::image
