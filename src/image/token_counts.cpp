// Image token counts of the Qwen vision families (image/token_counts.hpp).
//
// Qwen's image processor resizes an image to sides that are multiples of 32 (16-pixel patches,
// merged 2x2 into one token) with a pixel count between its minimum and maximum, keeping the
// aspect ratio as well as it can ("smart_resize"), then emits one token per merged patch. The
// arithmetic below is the processor's, operation for operation in double precision, including
// Python's round() (halves to even, which std::nearbyint does in the default rounding mode), so
// the count is the one the service computes: it refuses a request whose count differs.
#include "image/token_counts.hpp"

#include <tinker/error.hpp>

#include <algorithm>
#include <cmath>
#include <string>

namespace tinker::image {
namespace {

constexpr double qwen_factor = 32;                            // patch 16 x merge 2
constexpr double qwen_min_pixels = 65536;                     // the processor's shortest_edge
constexpr double qwen_max_pixels = 16777216;                  // the processor's longest_edge
constexpr std::int64_t qwen_tokens_per_patch_area = 32 * 32;  // one token per merged 32x32 block
constexpr double qwen_max_aspect_ratio = 200;

void require_nonzero(std::uint32_t width, std::uint32_t height) {
  if (width == 0 || height == 0) {
    throw error(errc::invalid_argument,
                "zero-sized image (" + std::to_string(width) + "x" + std::to_string(height) + " pixels)");
  }
}

}  // namespace

std::int64_t qwen_vl_tokens(std::uint32_t width, std::uint32_t height) {
  require_nonzero(width, height);
  const double w = width;
  const double h = height;
  if (std::max(w, h) / std::min(w, h) > qwen_max_aspect_ratio) {
    throw error(errc::invalid_argument, "image of " + std::to_string(width) + "x" + std::to_string(height) +
                                            " pixels: the aspect ratio is over 200, which Qwen's processor refuses");
  }
  double resized_h = std::nearbyint(h / qwen_factor) * qwen_factor;
  double resized_w = std::nearbyint(w / qwen_factor) * qwen_factor;
  if (resized_h * resized_w > qwen_max_pixels) {
    const double beta = std::sqrt((h * w) / qwen_max_pixels);
    resized_h = std::max(qwen_factor, std::floor(h / beta / qwen_factor) * qwen_factor);
    resized_w = std::max(qwen_factor, std::floor(w / beta / qwen_factor) * qwen_factor);
  } else if (resized_h * resized_w < qwen_min_pixels) {
    const double beta = std::sqrt(qwen_min_pixels / (h * w));
    resized_h = std::ceil(h * beta / qwen_factor) * qwen_factor;
    resized_w = std::ceil(w * beta / qwen_factor) * qwen_factor;
  }
  return static_cast<std::int64_t>(resized_h) * static_cast<std::int64_t>(resized_w) / qwen_tokens_per_patch_area;
}

}  // namespace tinker::image
