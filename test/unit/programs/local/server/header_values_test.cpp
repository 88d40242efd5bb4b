#include "programs/local/server/header_values.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

namespace tinker::local::front {
namespace {

using std::chrono::day;
using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::month;
using std::chrono::sys_days;
using std::chrono::year;

TEST(RetryAfterTest, EachForm) {
  const auto now = sys_days{year{2026} / month{8} / day{8}} + hours{12} + milliseconds{200};  // 12:00:00.2
  std::vector<Header> headers;
  append_retry_after(RetryAfterForm::none, milliseconds(2000), now, headers);
  EXPECT_TRUE(headers.empty());

  append_retry_after(RetryAfterForm::seconds, milliseconds(2000), now, headers);
  ASSERT_EQ(headers.size(), 1u);
  EXPECT_EQ(headers[0], Header("Retry-After", "2"));

  headers.clear();
  append_retry_after(RetryAfterForm::seconds, milliseconds(1500), now, headers);
  EXPECT_EQ(headers[0], Header("Retry-After", "1.5"));

  headers.clear();
  append_retry_after(RetryAfterForm::milliseconds, milliseconds(1500), now, headers);
  EXPECT_EQ(headers[0], Header("retry-after-ms", "1500"));

  headers.clear();
  // 12:00:00.2 + 2 s = 12:00:02.2, rounded up to the next whole second.
  append_retry_after(RetryAfterForm::http_date, milliseconds(2000), now, headers);
  EXPECT_EQ(headers[0], Header("Retry-After", "Sat, 08 Aug 2026 12:00:03 GMT"));
}

TEST(RetryAfterTest, SecondsText) {
  EXPECT_EQ(seconds_text(milliseconds(0)), "0");
  EXPECT_EQ(seconds_text(milliseconds(250)), "0.25");
  EXPECT_EQ(seconds_text(milliseconds(1005)), "1.005");
  EXPECT_EQ(seconds_text(milliseconds(30000)), "30");
}

TEST(RangeTest, HonoursOneByteRange) {
  auto r = parse_range("bytes=0-99", 1000);
  EXPECT_EQ(r.kind, RangeRequest::Kind::partial);
  EXPECT_EQ(r.first, 0u);
  EXPECT_EQ(r.last, 99u);

  r = parse_range("bytes=900-", 1000);
  EXPECT_EQ(r.kind, RangeRequest::Kind::partial);
  EXPECT_EQ(r.first, 900u);
  EXPECT_EQ(r.last, 999u);

  r = parse_range("bytes=990-5000", 1000);  // clamped to the end
  EXPECT_EQ(r.kind, RangeRequest::Kind::partial);
  EXPECT_EQ(r.last, 999u);

  r = parse_range("bytes=-10", 1000);
  EXPECT_EQ(r.kind, RangeRequest::Kind::partial);
  EXPECT_EQ(r.first, 990u);
  EXPECT_EQ(r.last, 999u);

  r = parse_range("bytes=-5000", 1000);
  EXPECT_EQ(r.first, 0u);
  EXPECT_EQ(r.last, 999u);

  r = parse_range(" Bytes=5-5 ", 10);
  EXPECT_EQ(r.kind, RangeRequest::Kind::partial);
  EXPECT_EQ(r.first, 5u);
  EXPECT_EQ(r.last, 5u);
}

TEST(RangeTest, UnsatisfiableRanges) {
  EXPECT_EQ(parse_range("bytes=1000-", 1000).kind, RangeRequest::Kind::unsatisfiable);
  EXPECT_EQ(parse_range("bytes=2000-3000", 1000).kind, RangeRequest::Kind::unsatisfiable);
  EXPECT_EQ(parse_range("bytes=-0", 1000).kind, RangeRequest::Kind::unsatisfiable);
  EXPECT_EQ(parse_range("bytes=0-", 0).kind, RangeRequest::Kind::unsatisfiable);
}

TEST(RangeTest, IgnoredRangesServeTheWhole) {
  for (const char* header : {"", "items=0-1", "bytes=0-1,5-6", "bytes=5-1", "bytes=a-b", "bytes=", "bytes=-", "bytes=1",
                             "bytes=99999999999999999999999-"}) {
    EXPECT_EQ(parse_range(header, 1000).kind, RangeRequest::Kind::whole) << header;
  }
}

TEST(HttpTextTest, MediaTypeAndCaseInsensitiveSearch) {
  EXPECT_EQ(media_type("application/json; charset=utf-8"), "application/json");
  EXPECT_EQ(media_type(" application/x-protobuf "), "application/x-protobuf");
  EXPECT_TRUE(icontains("Application/X-Protobuf, application/json", "application/x-protobuf"));
  EXPECT_FALSE(icontains("application/json", "application/x-protobuf"));
  EXPECT_TRUE(iequals("ZSTD", "zstd"));
}

}  // namespace
}  // namespace tinker::local::front
