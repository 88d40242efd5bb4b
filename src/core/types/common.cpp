#include "core/types/raw_json_access.hpp"
#include "core/wire/json_reader.hpp"
#include "core/wire/json_writer.hpp"

#include <tinker/error.hpp>
#include <tinker/types/common.hpp>

#include <charconv>
#include <cstdio>
#include <ostream>

namespace tinker {
namespace {

using std::chrono::days;
using std::chrono::microseconds;

[[noreturn]] void bad_timestamp(std::string_view text, std::string_view why) {
  throw error(errc::invalid_argument, "invalid timestamp \"" + std::string(text) + "\": " + std::string(why));
}

// Reads exactly `width` digits at `pos`.
int read_digits(std::string_view text, std::size_t pos, std::size_t width) {
  if (pos + width > text.size()) bad_timestamp(text, "too short");
  int value = 0;
  const auto result = std::from_chars(text.data() + pos, text.data() + pos + width, value);
  if (result.ec != std::errc{} || result.ptr != text.data() + pos + width) bad_timestamp(text, "expected digits");
  return value;
}

void expect_char(std::string_view text, std::size_t pos, std::string_view allowed) {
  if (pos >= text.size() || allowed.find(text[pos]) == std::string_view::npos) {
    bad_timestamp(text, "expected '" + std::string(allowed.substr(0, 1)) + "' at position " + std::to_string(pos));
  }
}

// Fractional seconds (any number of digits; beyond microseconds is truncated).
microseconds read_fraction(std::string_view text, std::size_t& pos) {
  if (pos >= text.size() || text[pos] != '.') return microseconds{0};
  ++pos;
  std::int64_t micros = 0;
  int digits = 0;
  const std::size_t start = pos;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
    if (digits < 6) micros = micros * 10 + (text[pos] - '0'), ++digits;
    ++pos;
  }
  if (pos == start) bad_timestamp(text, "empty fraction");
  while (digits++ < 6) micros *= 10;
  return microseconds{micros};
}

// Offset from UTC: "Z", "+hh:mm", "-hh:mm", or nothing (UTC).
std::chrono::minutes read_offset(std::string_view text, std::size_t& pos) {
  if (pos == text.size()) return std::chrono::minutes{0};
  if (text[pos] == 'Z' || text[pos] == 'z') {
    ++pos;
    return std::chrono::minutes{0};
  }
  expect_char(text, pos, "+-");
  const int sign = text[pos] == '-' ? -1 : 1;
  const int hours = read_digits(text, pos + 1, 2);
  expect_char(text, pos + 3, ":");
  const int minutes = read_digits(text, pos + 4, 2);
  if (hours > 23 || minutes > 59) bad_timestamp(text, "offset out of range");
  pos += 6;
  return std::chrono::minutes{sign * (hours * 60 + minutes)};
}

}  // namespace

Timestamp parse_timestamp(std::string_view text) {
  const int year = read_digits(text, 0, 4);
  expect_char(text, 4, "-");
  const int month = read_digits(text, 5, 2);
  expect_char(text, 7, "-");
  const int day = read_digits(text, 8, 2);
  expect_char(text, 10, "Tt ");
  const int hour = read_digits(text, 11, 2);
  expect_char(text, 13, ":");
  const int minute = read_digits(text, 14, 2);
  expect_char(text, 16, ":");
  const int second = read_digits(text, 17, 2);
  std::size_t pos = 19;
  const microseconds fraction = read_fraction(text, pos);
  const std::chrono::minutes offset = read_offset(text, pos);
  if (pos != text.size()) bad_timestamp(text, "unexpected trailing characters");

  const std::chrono::year_month_day date{std::chrono::year{year}, std::chrono::month{static_cast<unsigned>(month)},
                                         std::chrono::day{static_cast<unsigned>(day)}};
  if (!date.ok()) bad_timestamp(text, "no such date");
  if (hour > 23 || minute > 59 || second > 60) bad_timestamp(text, "time out of range");
  const auto local = std::chrono::sys_days{date} + std::chrono::hours{hour} + std::chrono::minutes{minute} +
                     std::chrono::seconds{second} + fraction;
  return Timestamp{std::chrono::duration_cast<microseconds>(local.time_since_epoch() - offset)};
}

std::string format_timestamp(Timestamp t) {
  const auto day_start = std::chrono::floor<days>(t);
  const std::chrono::year_month_day date{day_start};
  const std::chrono::hh_mm_ss<microseconds> time{t - day_start};
  char buf[48];
  int n = std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d", static_cast<int>(date.year()),
                        static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                        static_cast<int>(time.hours().count()), static_cast<int>(time.minutes().count()),
                        static_cast<int>(time.seconds().count()));
  if (time.subseconds().count() != 0) {
    n += std::snprintf(buf + n, sizeof buf - static_cast<std::size_t>(n), ".%06lld",
                       static_cast<long long>(time.subseconds().count()));
  }
  return std::string(buf, static_cast<std::size_t>(n)) + "Z";
}

RawJson RawJson::parse(std::string_view json_text) {
  boost::json::value value;
  try {
    value = wire::parse_json(json_text);
  } catch (const error& e) {
    throw error(errc::invalid_argument, e.diag().message);
  }
  std::string normalised;
  wire::write_value(value, normalised);
  return RawJsonAccess::make(std::move(normalised));
}

RawJson RawJson::string(std::string_view value) {
  std::string text;
  wire::JsonWriter writer(text);
  if (!writer.string(value)) throw error(errc::invalid_argument, "RawJson::string: value is not valid UTF-8");
  return RawJson(trusted_tag{}, std::move(text));
}

RawJson RawJson::number(double value) {
  std::string text;
  wire::JsonWriter writer(text);
  if (!writer.number(value)) throw error(errc::invalid_argument, "RawJson::number: NaN and infinity are not JSON");
  return RawJson(trusted_tag{}, std::move(text));
}

RawJson RawJson::integer(std::int64_t value) {
  return RawJson(trusted_tag{}, std::to_string(value));
}

RawJson RawJson::boolean(bool value) {
  return RawJson(trusted_tag{}, value ? "true" : "false");
}

JsonObject json_object_of_strings(const std::map<std::string, std::string>& values) {
  JsonObject object;
  for (const auto& [key, value] : values) object.emplace(key, RawJson::string(value));
  return object;
}

std::ostream& operator<<(std::ostream& os, const RawJson& value) {
  return os << value.text();
}

}  // namespace tinker
