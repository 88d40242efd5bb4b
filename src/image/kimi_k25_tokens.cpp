// Image token count of Kimi K2.5 and K2.6 (image/token_counts.hpp).
//
// Kimi's image processor (the model repository's remote code, `get_resize_config`, the same
// "NaViT" resize for both models) cuts an image into 14-pixel patches and merges them 2x2 into one
// token. It first scales the image down, never up, so that it holds at most 16,384 whole patches
// and neither side is longer than 512 patches (7,168 pixels):
//
//   scale = min(1, sqrt(16384 / (max(1, w // 14) * max(1, h // 14))), 7168 / w, 7168 / h)
//   new_w = max(1, int(w * scale)), then at most 7168 (new_h likewise)
//
// then pads each side up to a multiple of 28 (patch x merge) and counts one token per 28x28 block.
// The arithmetic below is the processor's, operation for operation in double precision (Python's
// floats): `//` on the integer sizes, `int()` truncating toward zero, so the count is the one the
// service computes, which refuses a request whose count differs. The processor has no lower
// clamp: a 1x1 image is one token.
#include "image/token_counts.hpp"

#include <tinker/error.hpp>

#include <algorithm>
#include <cmath>
#include <string>

namespace tinker::image {
namespace {

constexpr std::uint32_t kimi_patch_size = 14;
constexpr std::int64_t kimi_merge_kernel = 2;
constexpr double kimi_max_patches = 16384;                                     // in_patch_limit
constexpr std::int64_t kimi_max_side = 512 * kimi_patch_size;                  // patch_limit_on_one_side, in pixels
constexpr std::int64_t kimi_token_side = kimi_patch_size * kimi_merge_kernel;  // one token per 28x28 block

// A side after scaling: truncated as Python's int(), at least one pixel, at most the side limit.
std::int64_t kimi_scaled_side(std::uint32_t side, double scale) {
  const auto scaled = static_cast<std::int64_t>(static_cast<double>(side) * scale);
  return std::min(std::max<std::int64_t>(1, scaled), kimi_max_side);
}

std::int64_t kimi_blocks(std::int64_t side) {
  return (side + kimi_token_side - 1) / kimi_token_side;
}

}  // namespace

std::int64_t kimi_k25_tokens(std::uint32_t width, std::uint32_t height) {
  if (width == 0 || height == 0) {
    throw error(errc::invalid_argument,
                "zero-sized image (" + std::to_string(width) + "x" + std::to_string(height) + " pixels)");
  }
  // Whole patches, at least one a side, multiplied as integers (as Python does): the product is
  // exact in a double for any side below about a billion pixels.
  const std::uint64_t whole_patches =
      std::max<std::uint64_t>(1, width / kimi_patch_size) * std::max<std::uint64_t>(1, height / kimi_patch_size);
  const double by_patch_count = std::sqrt(kimi_max_patches / static_cast<double>(whole_patches));
  const double by_width = static_cast<double>(kimi_max_side) / width;
  const double by_height = static_cast<double>(kimi_max_side) / height;
  const double scale = std::min({1.0, by_patch_count, by_width, by_height});
  return kimi_blocks(kimi_scaled_side(width, scale)) * kimi_blocks(kimi_scaled_side(height, scale));
}

}  // namespace tinker::image
