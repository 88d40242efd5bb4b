#include "programs/local/server/http_dates.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace tinker::local::front {
namespace {

using std::chrono::day;
using std::chrono::hours;
using std::chrono::microseconds;
using std::chrono::minutes;
using std::chrono::month;
using std::chrono::seconds;
using std::chrono::sys_days;
using std::chrono::system_clock;
using std::chrono::year;

system_clock::time_point utc_date_time(int y, unsigned mo, unsigned d, int h, int mi, int s, int micros = 0) {
  return sys_days{year{y} / month{mo} / day{d}} + hours{h} + minutes{mi} + seconds{s} + microseconds{micros};
}

TEST(HttpDateTest, ImfFixdate) {
  EXPECT_EQ(http_date(utc_date_time(1994, 11, 6, 8, 49, 37)), "Sun, 06 Nov 1994 08:49:37 GMT");
  EXPECT_EQ(http_date(utc_date_time(2026, 8, 8, 12, 0, 0, 999999)), "Sat, 08 Aug 2026 12:00:00 GMT");
}

TEST(HttpDateTest, Rfc3339AlwaysHasMicroseconds) {
  EXPECT_EQ(rfc3339_micros(utc_date_time(2026, 8, 8, 12, 0, 0)), "2026-08-08T12:00:00.000000Z");
  EXPECT_EQ(rfc3339_micros(utc_date_time(2026, 1, 2, 3, 4, 5, 123456)), "2026-01-02T03:04:05.123456Z");
}

}  // namespace
}  // namespace tinker::local::front
