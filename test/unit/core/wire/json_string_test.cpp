// wire::append_json_string: the one JSON string escaper of the SDK and tinker-local.
#include "core/wire/json_writer.hpp"

#include <gtest/gtest.h>

namespace tinker::wire {
namespace {

std::string quoted(std::string_view text) {
  std::string out = "x=";
  append_json_string(out, text);
  return out;
}

TEST(JsonString, QuotesAndEscapesOnlyWhatJsonRequires) {
  EXPECT_EQ(quoted("plain"), R"(x="plain")");
  EXPECT_EQ(quoted("a\"b\\c"), R"(x="a\"b\\c")");
  EXPECT_EQ(quoted("l1\nl2\tt\r"), R"(x="l1\nl2\tt\r")");
  EXPECT_EQ(quoted(std::string_view("\x01\x1f", 2)), R"(x="\u0001\u001f")");
  EXPECT_EQ(quoted("caf\xc3\xa9 /"), "x=\"caf\xc3\xa9 /\"");  // UTF-8 and '/' as they are
  EXPECT_EQ(quoted(""), R"(x="")");
}

}  // namespace
}  // namespace tinker::wire
