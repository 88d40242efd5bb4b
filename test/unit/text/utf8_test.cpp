// The UTF-8 checks every backend relies on: strict validation (RFC 3629) and the lossy decoding
// that decode() applies to bytes that do not form characters.
#include "text/utf8.hpp"

#include <gtest/gtest.h>

#include <string>

namespace tinker::tokenizer_detail {
namespace {

TEST(TextUtf8, ValidTextHasNoInvalidOffset) {
  EXPECT_EQ(first_invalid_utf8(""), std::nullopt);
  EXPECT_EQ(first_invalid_utf8("plain ASCII text longer than eight bytes"), std::nullopt);
  EXPECT_EQ(first_invalid_utf8("Zürich 東京 🏳️‍🌈 \xF4\x8F\xBF\xBF"),
            std::nullopt);  // U+10FFFF is the last
}

TEST(TextUtf8, NamesTheOffsetOfTheFirstBadByte) {
  EXPECT_EQ(first_invalid_utf8("abcdefghij\xFFxyz"), 10U);             // a byte that never starts a character
  EXPECT_EQ(first_invalid_utf8("ab\xC3"), 2U);                         // cut at the end
  EXPECT_EQ(first_invalid_utf8("ab\xC3("), 2U);                        // continuation missing
  EXPECT_EQ(first_invalid_utf8("\xC0\xAF"), 0U);                       // overlong '/'
  EXPECT_EQ(first_invalid_utf8("\xE0\x80\xAF"), 0U);                   // overlong, 3 bytes
  EXPECT_EQ(first_invalid_utf8("ok \xED\xA0\x80"), 3U);                // a UTF-16 surrogate
  EXPECT_EQ(first_invalid_utf8("\xF4\x90\x80\x80"), 0U);               // above U+10FFFF
  EXPECT_EQ(first_invalid_utf8("\x80"), 0U);                           // a lone continuation byte
  EXPECT_EQ(first_invalid_utf8(std::string("a\0b", 3) + "\xFE"), 3U);  // NUL is valid
}

TEST(TextUtf8, LossyDecodingReplacesEachMaximalInvalidPartOnce) {
  const auto lossy = [](std::string_view bytes) {
    std::string out;
    append_utf8_lossy(out, bytes);
    return out;
  };
  EXPECT_EQ(lossy("héllo"), "héllo");
  EXPECT_EQ(lossy("a\xF0\x9F\x98"), "a\xEF\xBF\xBD");  // an emoji cut after 3 of its 4 bytes: one U+FFFD
  EXPECT_EQ(lossy("\xF0\x9F\x98"
                  "b"),
            "\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(lossy("\xFF\xFE"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // two bytes that start nothing: two
  EXPECT_EQ(lossy("\xE0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // E0 80 is no prefix of a valid sequence
  EXPECT_EQ(lossy("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate bytes, one each
}

}  // namespace
}  // namespace tinker::tokenizer_detail
