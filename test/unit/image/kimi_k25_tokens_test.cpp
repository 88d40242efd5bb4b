// Kimi K2.5's and K2.6's image token count (image::kimi_k25_tokens) against sizes whose count is
// derived by hand from the processor's rule (src/image/kimi_k25_tokens.cpp):
//
//   scale = min(1, sqrt(16384 / (max(1, w // 14) * max(1, h // 14))), 7168 / w, 7168 / h)
//   new side = min(7168, max(1, int(side * scale)))
//   tokens = ceil(new_w / 28) * ceil(new_h / 28)
//
// The first three rows are the Tinker cookbook's (kimi_k25_test.py), which it checks against the
// model's own processor.
#include "image/token_counts.hpp"

#include <tinker/error.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>

namespace tinker::image {
namespace {

class KimiTokenRow {
 public:
  std::uint32_t width;
  std::uint32_t height;
  std::int64_t tokens;
};

// clang-format off
const KimiTokenRow kimi_token_rows[] = {
    // 146 x 97 whole patches = 14162 <= 16384 and both sides <= 7168: scale 1;
    // ceil(2048 / 28) = 74, ceil(1365 / 28) = 49: 74 * 49.
    {2048, 1365, 3626},
    // No scaling; ceil(17 / 28) = 1, ceil(64 / 28) = 3.
    {17, 64, 3},
    // 357 x 428 patches: scale sqrt(16384 / 152796) = 0.327456..., so 1637 x 1964;
    // ceil(1637 / 28) = 59, ceil(1964 / 28) = 71: 59 * 71.
    {5000, 6000, 4189},
    // The smallest image: one patch counted (max(1, 0)), no scaling, one padded block.
    {1, 1, 1},
    // Exactly one 28-pixel block, and one pixel more: a second block.
    {28, 28, 1},
    {29, 28, 2},
    // Odd sizes pad up: ceil(1001 / 28) = 36, ceil(333 / 28) = 12.
    {1001, 333, 432},
    // Full HD: 137 x 77 patches, no scaling; ceil(1920 / 28) = 69, ceil(1080 / 28) = 39.
    {1920, 1080, 2691},
    // 128 x 128 patches = 16384 exactly: scale 1, 64 x 64 blocks.
    {1792, 1792, 4096},
    // One pixel wider, still 128 whole patches a side: no scaling; ceil(1793 / 28) = 65.
    {1793, 1792, 4160},
    // 129 x 129 patches: scale sqrt(16384 / 16641) = 0.992248..., int(1806 * 0.992248) = 1792.
    {1806, 1806, 4096},
    // 4096 / 14 = 292 patches a side: scale sqrt(16384 / 85264) = 0.438356..., int(4096 * scale) = 1795;
    // the count is not rounded to a square: ceil(1795 / 28) = 65, 65 * 65.
    {4096, 4096, 4225},
    // The 7168-pixel side limit: 7168 x 1 is not scaled (512 patches * 1 = 512); 256 blocks by 1.
    {7168, 1, 256},
    // One pixel more: scale 7168 / 7169, and 7169 * (7168 / 7169) rounds back to 7168.0: still
    // 256 blocks.
    {7169, 1, 256},
    // A very long strip: scale 7168 / 100000 = 0.07168, int(100000 * 0.07168) = 7167 in floating
    // point; ceil(7167 / 28) = 256. The short side stays at least one pixel.
    {100000, 1, 256},
    {1, 100000, 256},
    // 571 x 1 patches: the side limit wins (7168 / 8000 = 0.896 < sqrt(16384 / 571) = 5.35...);
    // int(8000 * 0.896) = 7168 and int(14 * 0.896) = int(12.544) = 12: 256 blocks by 1.
    {8000, 14, 256},
    // A narrow tall image under every limit: ceil(3 / 28) = 1, ceil(5000 / 28) = 179.
    {3, 5000, 179},
    // The largest PNG-ish square: 4681 x 4681 patches, scale 128 / 4681 = 0.0273445...,
    // int(65535 * scale) = 1792: 64 x 64 blocks.
    {65535, 65535, 4096},
};
// clang-format on

TEST(KimiK25ImageTokens, CountsAsKimisImageProcessor) {
  for (const KimiTokenRow& row : kimi_token_rows) {
    EXPECT_EQ(kimi_k25_tokens(row.width, row.height), row.tokens) << row.width << "x" << row.height;
  }
}

TEST(KimiK25ImageTokens, AZeroSideIsAnError) {
  for (const auto& size : {std::pair<std::uint32_t, std::uint32_t>{0, 10}, {10, 0}, {0, 0}}) {
    EXPECT_THAT([&] { kimi_k25_tokens(size.first, size.second); },
                ::testing::ThrowsMessage<error>(::testing::HasSubstr("zero-sized image")));
  }
}

}  // namespace
}  // namespace tinker::image
