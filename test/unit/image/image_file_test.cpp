// Image files (image/image_file.hpp) on images the real encoders write in the test: inspect()
// reads every layout's size, refuses every truncation and garbage, decode_rgb() round-trips the
// pixels, and nothing malformed gets past as anything but a tinker::error.
#include "image/image_file.hpp"

#include "support/expect_error.hpp"
#include "support/image_samples.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>

namespace tinker::image {
namespace {

using test::JpegKind;
using test::PngKind;
using test::WebpKind;

struct Sample {
  std::string name;
  std::vector<std::uint8_t> bytes;
  FileFormat format;
  std::uint32_t width;
  std::uint32_t height;
};

std::vector<Sample> samples_of_size(std::uint32_t w, std::uint32_t h) {
  const std::string size = std::to_string(w) + "x" + std::to_string(h);
  return {
      {"png rgb " + size, test::png_sample(w, h, PngKind::rgb), FileFormat::png, w, h},
      {"png grey " + size, test::png_sample(w, h, PngKind::grey), FileFormat::png, w, h},
      {"png palette " + size, test::png_sample(w, h, PngKind::palette), FileFormat::png, w, h},
      {"png rgba " + size, test::png_sample(w, h, PngKind::rgba), FileFormat::png, w, h},
      {"png grey16 " + size, test::png_sample(w, h, PngKind::grey16), FileFormat::png, w, h},
      {"jpeg baseline " + size, test::jpeg_sample(w, h, JpegKind::baseline), FileFormat::jpeg, w, h},
      {"jpeg baseline exif " + size, test::jpeg_sample(w, h, JpegKind::baseline_with_exif), FileFormat::jpeg, w, h},
      {"jpeg progressive exif " + size, test::jpeg_sample(w, h, JpegKind::progressive), FileFormat::jpeg, w, h},
      {"jpeg grey " + size, test::jpeg_sample(w, h, JpegKind::grey), FileFormat::jpeg, w, h},
      {"jpeg cmyk " + size, test::jpeg_sample(w, h, JpegKind::cmyk), FileFormat::jpeg, w, h},
      {"webp lossy " + size, test::webp_sample(w, h, WebpKind::lossy), FileFormat::webp, w, h},
      {"webp lossless " + size, test::webp_sample(w, h, WebpKind::lossless), FileFormat::webp, w, h},
      {"webp lossy alpha " + size, test::webp_sample(w, h, WebpKind::lossy_alpha), FileFormat::webp, w, h},
      {"webp lossless exif " + size, test::webp_sample(w, h, WebpKind::lossless_exif), FileFormat::webp, w, h},
  };
}

const std::vector<Sample>& samples() {
  static const std::vector<Sample> all = [] {
    std::vector<Sample> list = samples_of_size(37, 23);
    for (Sample& tiny : samples_of_size(1, 1)) list.push_back(std::move(tiny));
    return list;
  }();
  return all;
}

std::span<const std::uint8_t> prefix(const std::vector<std::uint8_t>& bytes, std::size_t length) {
  return std::span<const std::uint8_t>(bytes).first(length);
}

// Runs `call`; passes when it returns or throws tinker::error (invalid_argument), fails on any
// other exception. (A crash or sanitizer report fails the test binary.)
void expect_error_or_result(const std::string& what, const std::function<void()>& call) {
  try {
    call();
  } catch (const error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument)) << what << ": " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": not a tinker::error: " << e.what();
  }
}

double mean_abs_difference(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) {
  EXPECT_EQ(a.size(), b.size());
  double total = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) total += std::abs(int{a[i]} - int{b[i]});
  return a.empty() ? 0 : total / static_cast<double>(a.size());
}

std::vector<std::uint8_t> green_as_rgb(std::uint32_t w, std::uint32_t h) {
  const std::vector<std::uint8_t> rgb = test::sample_rgb(w, h);
  std::vector<std::uint8_t> grey;
  for (std::size_t i = 0; i < rgb.size(); i += 3) grey.insert(grey.end(), 3, rgb[i + 1]);
  return grey;
}

TEST(ImageInspect, ReadsTheFormatAndSizeOfEveryLayout) {
  for (const Sample& sample : samples()) {
    SCOPED_TRACE(sample.name);
    const FileInfo info = inspect(sample.bytes);
    EXPECT_EQ(info.format, sample.format);
    EXPECT_EQ(info.width, sample.width);
    EXPECT_EQ(info.height, sample.height);
  }
  EXPECT_STREQ(to_string(FileFormat::png), "png");
  EXPECT_STREQ(to_string(FileFormat::jpeg), "jpeg");
  EXPECT_STREQ(to_string(FileFormat::webp), "webp");
}

TEST(ImageInspect, TheSamplesHaveTheLayoutsTheyClaim) {
  // The EXIF segment (FF E1) comes before the frame header, progressive is SOF2, the extended
  // WebPs start with VP8X: so the tests above walk those paths.
  const auto find = [](const std::vector<std::uint8_t>& bytes, std::initializer_list<std::uint8_t> needle) {
    return std::search(bytes.begin(), bytes.end(), needle.begin(), needle.end()) - bytes.begin();
  };
  const auto progressive = test::jpeg_sample(37, 23, JpegKind::progressive);
  EXPECT_LT(find(progressive, {0xff, 0xe1}), find(progressive, {0xff, 0xc2}));
  EXPECT_LT(find(progressive, {0xff, 0xc2}), static_cast<std::ptrdiff_t>(progressive.size()));
  const auto exif = test::jpeg_sample(37, 23, JpegKind::baseline_with_exif);
  EXPECT_LT(find(exif, {0xff, 0xe1}), find(exif, {0xff, 0xc0}));
  EXPECT_EQ(test::as_string(test::webp_sample(37, 23, WebpKind::lossy_alpha)).substr(12, 4), "VP8X");
  EXPECT_EQ(test::as_string(test::webp_sample(37, 23, WebpKind::lossless_exif)).substr(12, 4), "VP8X");
  EXPECT_EQ(test::as_string(test::webp_sample(37, 23, WebpKind::lossy)).substr(12, 4), "VP8 ");
  EXPECT_EQ(test::as_string(test::webp_sample(37, 23, WebpKind::lossless)).substr(12, 4), "VP8L");
}

TEST(ImageInspect, EveryTruncationIsAnErrorAndNeverACrash) {
  for (const Sample& sample : samples()) {
    for (std::size_t length = 0; length < sample.bytes.size(); ++length) {
      const auto bytes = prefix(sample.bytes, length);
      EXPECT_THROW((void)inspect(bytes), error) << sample.name << " cut to " << length << " bytes";
      EXPECT_THROW((void)decode_rgb(bytes), error) << sample.name << " cut to " << length << " bytes";
    }
  }
}

TEST(ImageInspect, TruncationErrorsSayWhatIsMissing) {
  const auto png = test::png_sample(37, 23);
  test::expect_tinker_error(errc::invalid_argument, "PNG: truncated", [&] { (void)inspect(prefix(png, 40)); });
  const auto jpeg = test::jpeg_sample(37, 23);
  test::expect_tinker_error(errc::invalid_argument, "JPEG: truncated",
                            [&] { (void)inspect(prefix(jpeg, jpeg.size() - 2)); });
  const auto webp = test::webp_sample(37, 23);
  test::expect_tinker_error(errc::invalid_argument, "WebP: truncated",
                            [&] { (void)inspect(prefix(webp, webp.size() - 1)); });
  test::expect_tinker_error(errc::invalid_argument, "truncated PNG signature", [&] { (void)inspect(prefix(png, 5)); });
}

TEST(ImageInspect, FlippedBytesGiveAnErrorOrAnImageOfTheHeadersSize) {
  for (const Sample& sample : samples()) {
    for (std::size_t at = 0; at < sample.bytes.size(); ++at) {
      std::vector<std::uint8_t> bytes = sample.bytes;
      bytes[at] ^= 0x5a;
      const std::string what = sample.name + " with byte " + std::to_string(at) + " flipped";
      expect_error_or_result(what, [&] {
        const FileInfo info = inspect(bytes);
        const RgbImage image = decode_rgb(bytes, 1u << 20);
        EXPECT_EQ(image.width, info.width) << what;
        EXPECT_EQ(image.height, info.height) << what;
        EXPECT_EQ(image.rgb.size(), std::size_t{image.width} * image.height * 3) << what;
      });
    }
  }
}

TEST(ImageInspect, GarbageIsNamed) {
  const auto bytes = [](std::string_view text) { return std::vector<std::uint8_t>(text.begin(), text.end()); };
  test::expect_tinker_error(errc::invalid_argument, "no image data (0 bytes)", [&] { (void)inspect({}); });
  test::expect_tinker_error(errc::invalid_argument, "it looks like a GIF image",
                            [&] { (void)inspect(bytes("GIF89a\x01\x00\x01\x00")); });
  test::expect_tinker_error(errc::invalid_argument, "it looks like a RIFF file that is not WebP",
                            [&] { (void)inspect(bytes("RIFF\x04\x00\x00\x00WAVEfmt ")); });
  test::expect_tinker_error(errc::invalid_argument, "not a PNG, JPEG or WebP image (11 bytes starting 68 65 6c 6c",
                            [&] { (void)inspect(bytes("hello world")); });
  std::vector<std::uint8_t> noise(4096);
  std::uint32_t state = 12345;
  for (int round = 0; round < 200; ++round) {
    for (std::uint8_t& byte : noise) byte = static_cast<std::uint8_t>((state = state * 1103515245 + 12345) >> 16);
    // Half the rounds wear a real signature, so the readers themselves meet the noise.
    static const std::vector<std::vector<std::uint8_t>> signatures = {
        {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'},
        {0xff, 0xd8, 0xff},
        {'R', 'I', 'F', 'F', 0, 1, 0, 0, 'W', 'E', 'B', 'P'}};
    if (round % 2 == 0) {
      const auto& signature = signatures[static_cast<std::size_t>(round / 2) % signatures.size()];
      std::copy(signature.begin(), signature.end(), noise.begin());
    }
    EXPECT_THROW((void)decode_rgb(noise), error) << "round " << round;
  }
}

TEST(ImageDecode, RoundTripsThePixels) {
  const std::uint32_t w = 37;
  const std::uint32_t h = 23;
  const std::vector<std::uint8_t> rgb = test::sample_rgb(w, h);
  const auto decoded = [&](const std::vector<std::uint8_t>& file) {
    const RgbImage image = decode_rgb(file);
    EXPECT_EQ(image.width, w);
    EXPECT_EQ(image.height, h);
    return image.rgb;
  };
  // Lossless layouts give the pixels back exactly; alpha is dropped, not composited.
  EXPECT_EQ(decoded(test::png_sample(w, h, PngKind::rgb)), rgb);
  EXPECT_EQ(decoded(test::png_sample(w, h, PngKind::rgba)), rgb);
  EXPECT_EQ(decoded(test::png_sample(w, h, PngKind::grey)), green_as_rgb(w, h));
  EXPECT_EQ(decoded(test::webp_sample(w, h, WebpKind::lossless)), rgb);
  EXPECT_EQ(decoded(test::webp_sample(w, h, WebpKind::lossless_exif)), rgb);
  // The palette sample maps each pixel to one of 16 colours.
  std::vector<std::uint8_t> quantised;
  for (std::size_t i = 0; i < rgb.size(); i += 3) {
    quantised.insert(quantised.end(), {static_cast<std::uint8_t>(rgb[i] / 64 * 85),
                                       static_cast<std::uint8_t>(rgb[i + 1] / 64 * 85), std::uint8_t{200}});
  }
  EXPECT_EQ(decoded(test::png_sample(w, h, PngKind::palette)), quantised);
  // 16-bit grey is grey.
  const std::vector<std::uint8_t> grey16 = decoded(test::png_sample(w, h, PngKind::grey16));
  for (std::size_t i = 0; i < grey16.size(); i += 3) {
    ASSERT_EQ(grey16[i], grey16[i + 1]);
    ASSERT_EQ(grey16[i], grey16[i + 2]);
  }
  // Lossy layouts come back close.
  EXPECT_LT(mean_abs_difference(decoded(test::jpeg_sample(w, h, JpegKind::baseline)), rgb), 4);
  EXPECT_LT(mean_abs_difference(decoded(test::jpeg_sample(w, h, JpegKind::progressive)), rgb), 4);
  EXPECT_LT(mean_abs_difference(decoded(test::jpeg_sample(w, h, JpegKind::grey)), green_as_rgb(w, h)), 4);
  EXPECT_LT(mean_abs_difference(decoded(test::jpeg_sample(w, h, JpegKind::cmyk)), rgb), 4);
  EXPECT_LT(mean_abs_difference(decoded(test::webp_sample(w, h, WebpKind::lossy)), rgb), 6);
  EXPECT_LT(mean_abs_difference(decoded(test::webp_sample(w, h, WebpKind::lossy_alpha)), rgb), 6);
}

TEST(ImageDecode, RefusesMorePixelsThanAllowedBeforeDecoding) {
  const auto png = test::png_sample(37, 23);
  EXPECT_EQ(decode_rgb(png, 37 * 23).rgb.size(), 37u * 23u * 3u);
  test::expect_tinker_error(errc::invalid_argument, "png image of 37x23 pixels: more than the 850 pixels allowed",
                            [&] { (void)decode_rgb(png, 37 * 23 - 1); });
  const auto jpeg = test::jpeg_sample(37, 23);
  test::expect_tinker_error(errc::invalid_argument, "jpeg image of 37x23", [&] { (void)decode_rgb(jpeg, 100); });
  const auto webp = test::webp_sample(37, 23);
  test::expect_tinker_error(errc::invalid_argument, "webp image of 37x23", [&] { (void)decode_rgb(webp, 100); });
}

TEST(ImageEncodePng, RoundTripsThroughTheDecoder) {
  for (const auto& [w, h] : std::vector<std::pair<std::uint32_t, std::uint32_t>>{{1, 1}, {37, 23}, {200, 3}}) {
    RgbImage image;
    image.width = w;
    image.height = h;
    image.rgb = test::sample_rgb(w, h);
    const std::vector<std::uint8_t> file = encode_png(image);
    const FileInfo info = inspect(file);
    EXPECT_EQ(info.format, FileFormat::png);
    EXPECT_EQ(info.width, w);
    EXPECT_EQ(info.height, h);
    EXPECT_EQ(decode_rgb(file).rgb, image.rgb);
  }
}

TEST(ImageEncodePng, RefusesInconsistentImages) {
  RgbImage empty;
  test::expect_tinker_error(errc::invalid_argument, "encode_png: zero-sized image (0x0 pixels)",
                            [&] { (void)encode_png(empty); });
  RgbImage short_pixels;
  short_pixels.width = 4;
  short_pixels.height = 4;
  short_pixels.rgb.resize(47);
  test::expect_tinker_error(errc::invalid_argument, "encode_png: 47 bytes of pixels for a 4x4 RGB image",
                            [&] { (void)encode_png(short_pixels); });
}

}  // namespace
}  // namespace tinker::image
