#include <tinker/error.hpp>
#include <tinker/types/common.hpp>

#include <gtest/gtest.h>

namespace tinker {
namespace {

using namespace std::chrono;

TEST(Timestamp, ParsesRfc3339Forms) {
  const Timestamp base = parse_timestamp("2026-08-08T12:00:00Z");
  EXPECT_EQ(format_timestamp(base), "2026-08-08T12:00:00Z");
  EXPECT_EQ(parse_timestamp("2026-08-08T12:00:00"), base);  // no offset = UTC
  EXPECT_EQ(parse_timestamp("2026-08-08T14:30:00+02:30"), base);
  EXPECT_EQ(parse_timestamp("2026-08-08T11:00:00-01:00"), base);
  EXPECT_EQ(parse_timestamp("2026-08-08 12:00:00.5z"), base + milliseconds{500});
  EXPECT_EQ(parse_timestamp("2026-08-08T12:00:00.123456789Z"), base + microseconds{123456});
  EXPECT_EQ(format_timestamp(base + microseconds{1}), "2026-08-08T12:00:00.000001Z");
  EXPECT_EQ(sys_seconds{duration_cast<seconds>(parse_timestamp("1970-01-01T00:00:00Z").time_since_epoch())},
            sys_seconds{});
}

TEST(Timestamp, RejectsGarbage) {
  for (const char* text :
       {"", "2026-08-08", "2026-13-01T00:00:00Z", "2026-02-29T00:00:00Z", "2026-08-08T25:00:00Z",
        "2026-08-08T12:00:00Zjunk", "2026-08-08T12:00:00+2:00", "2026-08-08T12:00:00.Z", "yyyy-08-08T12:00:00Z"}) {
    EXPECT_THROW((void)parse_timestamp(text), error) << text;
  }
}

TEST(RawJson, NormalisesAndCompares) {
  EXPECT_EQ(RawJson::parse(R"( { "a" : [1, 2.50, null] } )").text(), R"({"a":[1,2.5,null]})");
  EXPECT_EQ(RawJson::parse("0.1"), RawJson::number(0.1));
  EXPECT_EQ(RawJson::string("a\"b").text(), R"("a\"b")");
  EXPECT_TRUE(RawJson().is_null());
  EXPECT_TRUE(RawJson::string("x").is_string());
  EXPECT_EQ(RawJson::boolean(false).text(), "false");
  EXPECT_THROW((void)RawJson::parse("{"), error);
  EXPECT_THROW((void)RawJson::number(std::numeric_limits<double>::infinity()), error);
  EXPECT_THROW((void)RawJson::string("\xff"), error);
  const JsonObject object = json_object_of_strings({{"k", "v"}});
  EXPECT_EQ(object.at("k").text(), R"("v")");
}

}  // namespace
}  // namespace tinker
