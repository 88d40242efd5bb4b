// JsonWriter's escaping and UTF-8 check scan 8 bytes at a time, then byte by byte: a special
// character must be found at every position, inside and after the 8-byte words.
#include "core/wire/json_writer.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace tinker::wire {
namespace {

// JSON string escaping (doc/protocol.md#json-encoding), written the obvious way.
std::string reference_escape(std::string_view text) {
  constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"') {
      out += "\\\"";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\b') {
      out += "\\b";
    } else if (c == '\f') {
      out += "\\f";
    } else if (c < 0x20) {
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 0xF];
    } else {
      out += ch;
    }
  }
  return out;
}

TEST(JsonWriterEscape, FindsEverySpecialCharacterAtEveryPosition) {
  const std::string specials = std::string("\"\\\n\r\t\b\f\x01\x1f", 9) + std::string(1, '\0');
  for (const char special : specials) {
    for (std::size_t length = 1; length <= 20; ++length) {
      for (std::size_t position = 0; position < length; ++position) {
        std::string text(length, 'a');
        text[position] = special;
        std::string out;
        JsonWriter writer(out);
        writer.begin_object();
        writer.key(text);
        ASSERT_TRUE(writer.string(text));
        writer.end_object();
        const std::string escaped = reference_escape(text);
        ASSERT_EQ(out, "{\"" + escaped + "\":\"" + escaped + "\"}")
            << "character " << static_cast<int>(special) << " at " << position << " of " << length;
      }
    }
  }
}

TEST(JsonWriterEscape, PlainTextAndUtf8AreCopiedAsIs) {
  const std::string text = "sampler:0123456789abcdef \xc3\xa9t\xc3\xa9 ~ \x7f end";
  std::string out;
  JsonWriter writer(out);
  writer.begin_array();
  ASSERT_TRUE(writer.string(text));
  ASSERT_TRUE(writer.string(""));
  writer.end_array();
  EXPECT_EQ(out, "[\"" + text + "\",\"\"]");
}

TEST(JsonWriterEscape, InvalidUtf8IsRefusedAfterAnAsciiRun) {
  for (std::size_t position = 0; position < 20; ++position) {
    std::string text(20, 'x');
    text[position] = '\xff';
    EXPECT_FALSE(is_valid_utf8(text)) << position;
    text[position] = '\xc3';  // a lead byte whose continuation is missing
    EXPECT_FALSE(is_valid_utf8(text)) << position;
  }
  EXPECT_TRUE(is_valid_utf8(std::string(20, 'x') + "\xe2\x82\xac"));
}

}  // namespace
}  // namespace tinker::wire
