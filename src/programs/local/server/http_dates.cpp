#include "programs/local/server/http_dates.hpp"

#include <cstdio>

namespace tinker::local::front {

std::string http_date(std::chrono::system_clock::time_point t) {
  static constexpr const char* kWeekdays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const auto seconds = std::chrono::floor<std::chrono::seconds>(t);
  const auto day = std::chrono::floor<std::chrono::days>(seconds);
  const std::chrono::year_month_day date{day};
  const std::chrono::hh_mm_ss<std::chrono::seconds> time{seconds - day};
  const std::chrono::weekday weekday{day};
  char buf[40];
  const int n = std::snprintf(buf, sizeof buf, "%s, %02u %s %04d %02d:%02d:%02d GMT", kWeekdays[weekday.c_encoding()],
                              static_cast<unsigned>(date.day()), kMonths[static_cast<unsigned>(date.month()) - 1],
                              static_cast<int>(date.year()), static_cast<int>(time.hours().count()),
                              static_cast<int>(time.minutes().count()), static_cast<int>(time.seconds().count()));
  return std::string(buf, static_cast<std::size_t>(n));
}

std::string rfc3339_micros(std::chrono::system_clock::time_point t) {
  const auto micros = std::chrono::floor<std::chrono::microseconds>(t);
  const auto day = std::chrono::floor<std::chrono::days>(micros);
  const std::chrono::year_month_day date{day};
  const std::chrono::hh_mm_ss<std::chrono::microseconds> time{micros - day};
  char buf[48];
  const int n =
      std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%06lldZ", static_cast<int>(date.year()),
                    static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                    static_cast<int>(time.hours().count()), static_cast<int>(time.minutes().count()),
                    static_cast<int>(time.seconds().count()), static_cast<long long>(time.subseconds().count()));
  return std::string(buf, static_cast<std::size_t>(n));
}

}  // namespace tinker::local::front
