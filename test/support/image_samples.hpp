// Small image files made in the test with libpng, libjpeg and libwebp themselves, so the image
// readers are checked against what the real encoders write (and no binary test data is needed).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tinker::test {

/// Deterministic pixels of a w x h RGB image: smooth gradients (lossy encoders keep them close)
/// with a pattern that differs between neighbouring sizes.
std::vector<std::uint8_t> sample_rgb(std::uint32_t width, std::uint32_t height);

/// The PNG colour layouts written.
enum class PngKind { rgb, grey, palette, rgba, grey16 };
/// A PNG of `sample_rgb`'s pixels in `kind` (grey: their green channel; palette: 16 colours;
/// rgba: alpha varying; grey16: 16-bit grey).
std::vector<std::uint8_t> png_sample(std::uint32_t width, std::uint32_t height, PngKind kind = PngKind::rgb);

/// The JPEG layouts written.
enum class JpegKind {
  baseline,           ///< SOF0, 4:2:0
  progressive,        ///< SOF2 with an EXIF APP1 segment before the frame header
  grey,               ///< one component
  cmyk,               ///< four components, Adobe APP14 (inverted CMYK, as Photoshop writes)
  baseline_with_exif  ///< SOF0 with an EXIF APP1 segment before the frame header
};
/// A JPEG of `sample_rgb`'s pixels (quality 95).
std::vector<std::uint8_t> jpeg_sample(std::uint32_t width, std::uint32_t height, JpegKind kind = JpegKind::baseline);

/// The WebP layouts written.
enum class WebpKind {
  lossy,          ///< "VP8 " chunk
  lossless,       ///< "VP8L" chunk
  lossy_alpha,    ///< VP8X + ALPH + "VP8 "
  lossless_exif,  ///< VP8X + "VP8L" + EXIF (the lossless file re-wrapped by hand)
};
/// A WebP of `sample_rgb`'s pixels (alpha varying where the kind has alpha).
std::vector<std::uint8_t> webp_sample(std::uint32_t width, std::uint32_t height, WebpKind kind = WebpKind::lossy);

/// A file's bytes as the std::string test helpers (base64, temp files) take.
std::string as_string(const std::vector<std::uint8_t>& bytes);

}  // namespace tinker::test
