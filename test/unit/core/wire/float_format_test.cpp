// The float32 formatter writes the shortest text that reads back bit-identically. (An exhaustive
// run over all 2^32 bit patterns was done when it was written; this samples ~1M of them.)
#include "core/wire/float_format.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace tinker::wire {
namespace {

std::string format(float value) {
  char buffer[max_float_chars + 8];
  return std::string(buffer, format_shortest(buffer, value));
}

// Significant digits, ignoring trailing zeros of an integer and any exponent.
int significant_digits(std::string_view text) {
  int count = 0, trailing_zeros = 0;
  bool started = false;
  for (const char c : text.substr(0, text.find('e'))) {
    if (c < '0' || c > '9') continue;
    started = started || c != '0';
    if (!started) continue;
    ++count;
    trailing_zeros = c == '0' ? trailing_zeros + 1 : 0;
  }
  return count - trailing_zeros;
}

TEST(FloatFormat, EdgeCases) {
  EXPECT_EQ(format(0.0f), "0");
  EXPECT_EQ(format(-0.0f), "-0.0");
  EXPECT_EQ(format(1.0f), "1");
  EXPECT_EQ(format(-2.5f), "-2.5");
  EXPECT_EQ(format(0.1f), "0.1");
  EXPECT_EQ(format(123.45f), "123.45");
  EXPECT_EQ(format(0.001f), "0.001");
  EXPECT_EQ(format(1e-7f), "1e-7");
  EXPECT_EQ(format(1e10f), "10000000000");
  EXPECT_EQ(format(16777216.0f), "16777216");
  EXPECT_EQ(format(std::numeric_limits<float>::max()), "3.4028235e38");
  EXPECT_EQ(format(std::numeric_limits<float>::min()), "1.1754944e-38");
  EXPECT_EQ(format(std::numeric_limits<float>::denorm_min()), "1e-45");
}

TEST(FloatFormat, SampledBitPatternsRoundTripInShortestForm) {
  int checked = 0;
  for (std::uint64_t bits = 0; bits < (1ull << 32); bits += 4099) {
    const auto value = std::bit_cast<float>(static_cast<std::uint32_t>(bits));
    if (!std::isfinite(value)) continue;
    const std::string text = format(value);
    float back = 0;
    const auto result = std::from_chars(text.data(), text.data() + text.size(), back);
    ASSERT_EQ(result.ec, std::errc{}) << text;
    ASSERT_EQ(std::bit_cast<std::uint32_t>(back), std::bit_cast<std::uint32_t>(value)) << text;
    char reference[64];
    const char* end = std::to_chars(reference, reference + sizeof reference, value).ptr;
    ASSERT_LE(significant_digits(text), significant_digits(std::string_view(reference, end)))
        << text << " vs " << std::string_view(reference, end);
    ++checked;
  }
  EXPECT_GT(checked, 1'000'000);
}

}  // namespace
}  // namespace tinker::wire
