// The CLI's output and date helpers (no server needed).
#include "programs/cli/context.hpp"
#include "programs/cli/output.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace tinker::cli {
namespace {

TEST(CliOutput, DatesAreIso8601AndUtcWithoutAZone) {
  EXPECT_EQ(format_timestamp(parse_cli_time("2026-08-08", "--before")), "2026-08-08T00:00:00Z");
  EXPECT_EQ(format_timestamp(parse_cli_time("2026-08-08T12:30", "--before")), "2026-08-08T12:30:00Z");
  EXPECT_EQ(format_timestamp(parse_cli_time("2026-08-08 12:30", "--before")), "2026-08-08T12:30:00Z");
  EXPECT_EQ(format_timestamp(parse_cli_time("2026-08-08T12:30Z", "--before")), "2026-08-08T12:30:00Z");
  EXPECT_EQ(format_timestamp(parse_cli_time("2026-08-08T12:30+02:00", "--before")), "2026-08-08T10:30:00Z");
  EXPECT_EQ(format_timestamp(parse_cli_time("2026-08-08T12:30:15.5-01:00", "--before")), "2026-08-08T13:30:15.500000Z");
  for (const char* bad : {"", "2026", "2026-13-01", "2026-08-08T25:00", "08/08/2026", "2026-08-08T12", "yesterday"}) {
    try {
      parse_cli_time(bad, "--after");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--after"), std::string::npos) << e.what();
    }
  }
}

TEST(CliOutput, SizesAndFlags) {
  EXPECT_EQ(display_size(std::nullopt), "N/A");
  EXPECT_EQ(display_size(0), "0 B");
  EXPECT_EQ(display_size(1023), "1023 B");
  EXPECT_EQ(display_size(1536), "1.5 KiB");
  EXPECT_EQ(display_size(std::int64_t{3} << 30), "3.0 GiB");
  EXPECT_EQ(display_lora(true, 32), "Rank 32");
  EXPECT_EQ(display_lora(true, std::nullopt), "Yes");
  EXPECT_EQ(display_lora(false, 8), "No");
  EXPECT_EQ(display_time(parse_timestamp("2026-08-08T12:00:00.25Z")), "2026-08-08 12:00:00 UTC");
}

TEST(CliOutput, TableColumnsAlign) {
  Table table({"A", "Long header", "C"});
  table.add_row({"wide cell", "x", "last"});
  table.add_row({"y"});  // missing cells are empty
  std::ostringstream out;
  table.print(out);
  EXPECT_EQ(out.str(),
            "A          Long header  C\n"
            "wide cell  x            last\n"
            "y\n");
}

TEST(CliOutput, JsonIsIndentedWithShortestNumbers) {
  boost::json::value value = boost::json::parse(R"({"a":[1,0.7,"x\"y"],"b":{},"c":[],"d":null,"e":true})");
  std::ostringstream out;
  print_json(out, value);
  EXPECT_EQ(out.str(),
            "{\n"
            "  \"a\": [\n"
            "    1,\n"
            "    0.7,\n"
            "    \"x\\\"y\"\n"
            "  ],\n"
            "  \"b\": {},\n"
            "  \"c\": [],\n"
            "  \"d\": null,\n"
            "  \"e\": true\n"
            "}\n");
}

}  // namespace
}  // namespace tinker::cli
