#include "http/retry_policy.hpp"

#include "core/ascii.hpp"

#include <tinker/error.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

namespace tinker::http {
namespace {

using std::chrono::milliseconds;
using Seconds = std::chrono::duration<double>;
using TimePoint = std::chrono::system_clock::time_point;

// ---- HTTP-date parsing (RFC 9110 5.6.7) --------------------------------------------------------

constexpr std::array<std::string_view, 7> short_days{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
constexpr std::array<std::string_view, 7> long_days{"Monday", "Tuesday",  "Wednesday", "Thursday",
                                                    "Friday", "Saturday", "Sunday"};
constexpr std::array<std::string_view, 12> months{"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

// A left-to-right reader over the date text. Names match case-insensitively (RFC 9110 asks
// recipients to be robust); the weekday is checked to be a weekday name, not to match the date.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : rest_(text) {}

  bool literal(std::string_view lit) {
    if (!ascii::iequals(rest_.substr(0, lit.size()), lit)) return false;
    rest_.remove_prefix(lit.size());
    return true;
  }

  template <std::size_t N>
  bool name(const std::array<std::string_view, N>& names, int& index) {
    for (std::size_t i = 0; i < N; ++i) {
      if (literal(names[i])) {
        index = static_cast<int>(i);
        return true;
      }
    }
    return false;
  }

  bool digits(std::size_t count, int& out) {
    if (rest_.size() < count) return false;
    out = 0;
    for (std::size_t i = 0; i < count; ++i) {
      const char c = rest_[i];
      if (c < '0' || c > '9') return false;
      out = out * 10 + (c - '0');
    }
    rest_.remove_prefix(count);
    return true;
  }

  // time-of-day = hour ":" minute ":" second; second 60 is a leap second.
  bool time_of_day(int& h, int& m, int& s) {
    return digits(2, h) && literal(":") && digits(2, m) && literal(":") && digits(2, s) && h <= 23 && m <= 59 &&
           s <= 60;
  }

  bool done() const noexcept { return rest_.empty(); }

 private:
  std::string_view rest_;
};

class DateParts {
 public:
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
};

std::optional<TimePoint> to_time_point(const DateParts& p) {
  // system_clock counts nanoseconds in libstdc++ (years 1678..2262): stay well inside.
  if (p.year < 1900 || p.year > 2199) return std::nullopt;
  const std::chrono::year_month_day ymd{std::chrono::year{p.year}, std::chrono::month{static_cast<unsigned>(p.month)},
                                        std::chrono::day{static_cast<unsigned>(p.day)}};
  if (!ymd.ok()) return std::nullopt;
  return TimePoint{std::chrono::sys_days{ymd}} + std::chrono::hours{p.hour} + std::chrono::minutes{p.minute} +
         std::chrono::seconds{p.second};
}

// "Sun, 06 Nov 1994 08:49:37 GMT"
std::optional<DateParts> parse_imf_fixdate(std::string_view text) {
  Cursor c(text);
  DateParts p;
  int weekday = 0;
  if (!(c.name(short_days, weekday) && c.literal(", ") && c.digits(2, p.day) && c.literal(" ") &&
        c.name(months, p.month) && c.literal(" ") && c.digits(4, p.year) && c.literal(" ") &&
        c.time_of_day(p.hour, p.minute, p.second) && c.literal(" GMT") && c.done())) {
    return std::nullopt;
  }
  ++p.month;
  return p;
}

// "Sunday, 06-Nov-94 08:49:37 GMT"; the century is resolved by the caller.
std::optional<DateParts> parse_rfc850(std::string_view text) {
  Cursor c(text);
  DateParts p;
  int weekday = 0;
  if (!(c.name(long_days, weekday) && c.literal(", ") && c.digits(2, p.day) && c.literal("-") &&
        c.name(months, p.month) && c.literal("-") && c.digits(2, p.year) && c.literal(" ") &&
        c.time_of_day(p.hour, p.minute, p.second) && c.literal(" GMT") && c.done())) {
    return std::nullopt;
  }
  ++p.month;
  return p;
}

// "Sun Nov  6 08:49:37 1994" (day is 2DIGIT or SP DIGIT)
std::optional<DateParts> parse_asctime(std::string_view text) {
  Cursor c(text);
  DateParts p;
  int weekday = 0;
  if (!(c.name(short_days, weekday) && c.literal(" ") && c.name(months, p.month) && c.literal(" "))) {
    return std::nullopt;
  }
  const bool day_ok = c.literal(" ") ? c.digits(1, p.day) : c.digits(2, p.day);
  if (!(day_ok && c.literal(" ") && c.time_of_day(p.hour, p.minute, p.second) && c.literal(" ") &&
        c.digits(4, p.year) && c.done())) {
    return std::nullopt;
  }
  ++p.month;
  return p;
}

// RFC 9110: a two-digit year that appears to be more than 50 years in the future means the
// most recent past year with the same last two digits.
int resolve_two_digit_year(int yy, TimePoint now) {
  const int current = static_cast<int>(std::chrono::year_month_day{std::chrono::floor<std::chrono::days>(now)}.year());
  int year = current - current % 100 + yy;
  if (year > current + 50) year -= 100;
  return year;
}

// ---- Retry hints -------------------------------------------------------------------------------

// Python's float(): surrounding whitespace, an optional sign, decimal or exponent notation,
// inf and nan (both of which then fail the range check). Digit-group underscores are not
// accepted.
std::optional<double> parse_float(std::string_view text) {
  text = ascii::trim(text);
  if (text.starts_with('+')) {
    text.remove_prefix(1);
    if (text.starts_with('-')) return std::nullopt;
  }
  if (text.empty()) return std::nullopt;
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<milliseconds> hint_in_range(double seconds, milliseconds max_hint) {
  // Written so that NaN fails too.
  if (!(seconds > 0.0 && seconds <= Seconds(max_hint).count())) return std::nullopt;
  // Round up: retrying a little late is harmless, retrying early may just hit the limit again.
  return std::min(std::chrono::ceil<milliseconds>(Seconds(seconds)), max_hint);
}

}  // namespace

bool should_retry_status(int status, std::string_view x_should_retry_header) noexcept {
  const std::string_view verdict = ascii::trim(x_should_retry_header);
  if (ascii::iequals(verdict, "true")) return true;
  if (ascii::iequals(verdict, "false")) return false;
  return status == 408 || status == 409 || status == 429 || status >= 500;
}

bool transport_should_retry(boost::system::error_code ec, const Response& response) noexcept {
  // A bare 400 comes as connection_failed with its status (attempt_error): retried as one.
  if (response.status == 0 || ec == errc::connection_failed)
    return ec == errc::connection_failed || ec == errc::timeout;
  return should_retry_status(response.status, response.header("x-should-retry"));
}

std::optional<TimePoint> parse_http_date(std::string_view text, TimePoint now) {
  text = ascii::trim(text);
  if (auto p = parse_imf_fixdate(text)) return to_time_point(*p);
  if (auto p = parse_rfc850(text)) {
    p->year = resolve_two_digit_year(p->year, now);
    return to_time_point(*p);
  }
  if (auto p = parse_asctime(text)) return to_time_point(*p);
  return std::nullopt;
}

std::optional<TimePoint> parse_http_date(std::string_view text) {
  return parse_http_date(text, std::chrono::system_clock::now());
}

std::optional<milliseconds> server_retry_hint(const Response& r, TimePoint now, milliseconds max_hint) {
  if (const auto ms = parse_float(r.header("retry-after-ms"))) return hint_in_range(*ms / 1000.0, max_hint);
  const std::string_view retry_after = r.header("retry-after");
  if (const auto seconds = parse_float(retry_after)) return hint_in_range(*seconds, max_hint);
  if (const auto date = parse_http_date(retry_after, now)) return hint_in_range(Seconds(*date - now).count(), max_hint);
  return std::nullopt;
}

milliseconds Backoff::delay(int retries_done, double random_unit) const noexcept {
  // In double: 2^1000 * any millisecond count is either finite or +inf, and min() with the cap
  // brings both back; integer shifts would overflow long before n = 1000.
  const int n = std::clamp(retries_done, 0, 1000);
  const double cap = std::max(0.0, static_cast<double>(cap_.count()));
  const double initial = std::max(0.0, static_cast<double>(initial_.count()));
  const double base = std::min(std::ldexp(initial, n), cap);
  const double u = std::isnan(random_unit) ? 0.0 : std::clamp(random_unit, 0.0, 1.0);
  const double delay = base * (1.0 - 0.25 * u);
  if (delay >= cap) return std::max(cap_, milliseconds::zero());
  return milliseconds(std::llround(delay));
}

milliseconds backoff_delay(int retries_done, double random_unit, const RetryOptions& o) {
  return Backoff(o.initial_delay, o.max_delay).delay(retries_done, random_unit);
}

milliseconds transport_retry_delay(const Response* response_or_null, int retries_done, TimePoint now,
                                   double random_unit, const RetryOptions& o) {
  if (response_or_null != nullptr) {
    if (const auto hint = server_retry_hint(*response_or_null, now, o.max_retry_after)) return *hint;
  }
  return backoff_delay(retries_done, random_unit, o);
}

bool call_should_retry(boost::system::error_code ec) noexcept {
  if (ec.category() != error_category()) return false;
  switch (static_cast<errc>(ec.value())) {
    case errc::timeout:
    case errc::connection_failed:
    case errc::request_timeout:
    case errc::conflict:
    case errc::rate_limited:
    case errc::server_error: return true;
    default: return false;
  }
}

std::optional<milliseconds> call_retry_delay(int failures_so_far, milliseconds elapsed, const RetryOptions& o) {
  const milliseconds budget = o.call_budget;
  if (elapsed >= budget) return std::nullopt;
  const milliseconds cap = std::max(milliseconds(o.call_max_delay), milliseconds::zero());
  // 2^k s exceeds any sensible cap long before the shift could overflow.
  const int k = std::max(failures_so_far, 0);
  const milliseconds sleep = k >= 40 ? cap : std::min(milliseconds(1000LL << k), cap);
  return std::min(sleep, budget - elapsed);
}

}  // namespace tinker::http
