#include "core/wire/base64url.hpp"

#include <gtest/gtest.h>

namespace tinker::wire {
namespace {

TEST(Base64Url, DecodesWithAndWithoutPadding) {
  EXPECT_EQ(base64url_decode("aGVsbG8"), "hello");
  EXPECT_EQ(base64url_decode("aGVsbG8="), "hello");
  EXPECT_EQ(base64url_decode("aGk"), "hi");
  EXPECT_EQ(base64url_decode(""), "");
  EXPECT_EQ(base64url_decode("-_8"), std::string("\xfb\xff", 2));  // URL alphabet, not + and /
  EXPECT_FALSE(base64url_decode("a+b/").has_value());
  EXPECT_FALSE(base64url_decode("abcde").has_value());  // impossible length
}

TEST(Base64Url, EncodesWithoutPaddingAndRoundTrips) {
  EXPECT_EQ(base64url_encode("hello"), "aGVsbG8");
  EXPECT_EQ(base64url_encode(std::string("\xfb\xff", 2)), "-_8");
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  for (std::size_t n = 0; n <= all.size(); n += 37)
    EXPECT_EQ(base64url_decode(base64url_encode(all.substr(0, n))), all.substr(0, n));
}

TEST(Base64Url, RoundTripsWithoutPaddingAndToleratesPaddingOnInput) {
  for (std::string text : {"", "f", "fo", "foo", "foob", "fooba", "foobar", "\xff\xfe\xfd"}) {
    const std::string encoded = base64url_encode(text);
    EXPECT_EQ(encoded.find('='), std::string::npos);
    EXPECT_EQ(base64url_decode(encoded), text) << encoded;
  }
  EXPECT_EQ(base64url_encode("\xfb\xff"), "-_8");
  EXPECT_EQ(base64url_decode("Zm9vYg=="), "foob");
  EXPECT_FALSE(base64url_decode("a+b/").has_value());
  EXPECT_FALSE(base64url_decode("abcde").has_value());
}

}  // namespace
}  // namespace tinker::wire
