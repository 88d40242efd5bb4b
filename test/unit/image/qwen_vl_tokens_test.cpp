// Qwen's image token count (image/token_counts.hpp): a table of (width, height) -> tokens, each
// derived by hand from the processor's rule, including the cookbook's test vectors.
//
// The rule (smart_resize, factor 32 = patch 16 x merge 2, min 65,536 and max 16,777,216 pixels):
//   h' = round(h / 32) * 32, w' = round(w / 32) * 32   (round: halves to even, Python's round)
//   if h' * w' > max: beta = sqrt(h * w / max); h' = max(32, floor(h / beta / 32) * 32) (w' likewise)
//   elif h' * w' < min: beta = sqrt(min / (h * w)); h' = ceil(h * beta / 32) * 32 (w' likewise)
//   tokens = (h' / 16) * (w' / 16) / 4 = h' * w' / 1024
// Aspect ratios over 200 are refused.
#include "image/token_counts.hpp"

#include "support/expect_error.hpp"

#include <gtest/gtest.h>

namespace tinker::image {
namespace {

struct QwenCase {
  std::uint32_t width;
  std::uint32_t height;
  std::int64_t tokens;
  const char* derivation;
};

const QwenCase qwen_cases[] = {
    // The cookbook's vectors for Qwen/Qwen3-VL-8B-Instruct.
    {224, 224, 64, "224/32 = 7 -> 224x224 = 50,176 < min; beta = sqrt(65536/50176) = 8/7; 224*8/7 = 256 -> 256x256"},
    {150, 224, 70,
     "h 224 -> 224, w 150/32 = 4.69 -> 160; 35,840 < min; beta = 1.3966; h 312.8/32 -> ceil 10 -> 320, "
     "w 209.5/32 -> ceil 7 -> 224; 320*224/1024 = 70"},
    {224, 150, 70, "the transpose of 150x224"},
    {400, 300, 108,
     "h 300/32 = 9.375 -> 9 -> 288, w 400/32 = 12.5 -> 12 (half to even) -> 384; 110,592 within bounds; "
     "288*384/1024 = 108"},
    // Rounding halves to even, both ways: 18.5 -> 18 and 10.5 -> 10 (half-up would give 19x11 blocks, 209 tokens).
    {592, 336, 180, "w 592/32 = 18.5 -> 18 -> 576, h 336/32 = 10.5 -> 10 -> 320; 576*320/1024 = 180"},
    {624, 368, 240, "w 19.5 -> 20 -> 640, h 11.5 -> 12 -> 384; 640*384/1024 = 240"},
    // Within bounds, no clamp.
    {1920, 1080, 2040, "w 60 -> 1920, h 33.75 -> 34 -> 1088; 1920*1088/1024 = 2040"},
    {1000, 1000, 961, "31.25 -> 31 -> 992; 992*992/1024 = 961"},
    // The min-pixel clamp.
    {1, 1, 64, "1/32 rounds to 0 -> 0 < min; beta = 256; 1*256/32 = 8 -> 256x256 -> 64"},
    {33, 33, 64, "33/32 -> 1 -> 32x32 = 1,024 < min; beta = 256/33; 33*beta = 256 -> 8 blocks -> 256x256 -> 64"},
    {255, 257, 64, "8 -> 256 both; 65,536 = min, not below -> 256x256 -> 64"},
    {16, 16, 64, "16/32 = 0.5 -> 0 (half to even) -> 0 < min; beta = 16; 256x256 -> 64"},
    // The max-pixel clamp.
    {4096, 4096, 16384, "128 -> 4096 both; 16,777,216 = max, not above -> 4096*4096/1024 = 16,384"},
    {4097, 4097, 16384, "128.03 -> 128 -> 4096 both, = max -> 16,384"},
    {5000, 5000, 16384,
     "156.25 -> 156 -> 4992; 24.9M > max; beta = sqrt(25M/16.78M) = 1.2207; 5000/1.2207/32 = 128.0 -> 4096 -> 16,384"},
    {8000, 6000, 16170,
     "h 187.5 -> 188 -> 6016, w 250 -> 8000; 48.1M > max; beta = sqrt(48M/16,777,216) = 1.69146; "
     "h 6000/1.69146/32 = 110.85 -> 110 -> 3520, w 8000/1.69146/32 = 147.8 -> 147 -> 4704; 3520*4704/1024 = 16,170"},
    {6000, 8000, 16170, "the transpose of 8000x6000"},
    // Odd sizes.
    {31, 4097, 128, "w 31/32 = 0.97 -> 1 -> 32, h 128.03 -> 128 -> 4096; 131,072 within bounds; 32*4096/1024 = 128"},
    {10000, 50, 624, "w 312.5 -> 312 -> 9984, h 1.56 -> 2 -> 64; 638,976 within bounds; 9984*64/1024 = 624"},
    // Aspect ratio 200 exactly is allowed (the processor refuses only over 200).
    {1, 200, 114,
     "w 0, h 6.25 -> 6; 0 < min; beta = sqrt(65536/200) = 18.102; h 200*18.102/32 = 113.1 -> 114 -> 3648, "
     "w 18.1/32 -> 1 -> 32; 3648*32/1024 = 114"},
    {200, 1, 114, "the transpose of 1x200"},
    {20, 4000, 125, "ratio 200; w 0.625 -> 1 -> 32, h 125 -> 4000; 128,000 within bounds; 32*4000/1024 = 125"},
};

TEST(QwenVlTokens, MatchesTheProcessorsRuleForEveryRow) {
  for (const QwenCase& row : qwen_cases) {
    EXPECT_EQ(qwen_vl_tokens(row.width, row.height), row.tokens)
        << row.width << "x" << row.height << ": " << row.derivation;
  }
}

TEST(QwenVlTokens, RefusesAspectRatiosOver200AndZeroSides) {
  test::expect_tinker_error(errc::invalid_argument, "aspect ratio is over 200", [] { (void)qwen_vl_tokens(1, 201); });
  test::expect_tinker_error(errc::invalid_argument, "aspect ratio is over 200", [] { (void)qwen_vl_tokens(201, 1); });
  test::expect_tinker_error(errc::invalid_argument, "aspect ratio is over 200", [] { (void)qwen_vl_tokens(20, 4020); });
  test::expect_tinker_error(errc::invalid_argument, "zero-sized image (0x10 pixels)",
                            [] { (void)qwen_vl_tokens(0, 10); });
  test::expect_tinker_error(errc::invalid_argument, "zero-sized", [] { (void)qwen_vl_tokens(10, 0); });
}

TEST(QwenVlTokens, TheLargestSidesStayWithinTheMaximum) {
  // 65535 x 65535 (JPEG's largest): clamped to at most 16,777,216 pixels, i.e. 16,384 tokens.
  EXPECT_LE(qwen_vl_tokens(65535, 65535), 16384);
  EXPECT_LE(qwen_vl_tokens(4000000000u, 20000000u), 16384);  // ratio 200, 8e16 pixels
}

}  // namespace
}  // namespace tinker::image
