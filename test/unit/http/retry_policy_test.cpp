#include "http/retry_policy.hpp"

#include <tinker/error.hpp>

#include <boost/asio/error.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace tinker::http {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using TimePoint = std::chrono::system_clock::time_point;

constexpr milliseconds max_hint = 60s;
constexpr double almost_one = 0.9999999999999999;

// 1994-11-06 08:49:37 UTC, the RFC's example date.
TimePoint rfc_example() {
  using namespace std::chrono;
  return sys_days{year{1994} / November / 6} + 8h + 49min + 37s;
}

TimePoint at(int y, unsigned m, unsigned d) {
  using namespace std::chrono;
  return sys_days{year{y} / month{m} / day{d}};
}

Response with_headers(std::vector<Header> headers) {
  Response r;
  r.status = 429;
  r.headers = std::move(headers);
  return r;
}

std::optional<milliseconds> hint(std::vector<Header> headers, TimePoint now = rfc_example()) {
  return server_retry_hint(with_headers(std::move(headers)), now, max_hint);
}

TEST(HttpRetryStatus, RetriesExactlyTheSpecStatuses) {
  for (int status : {408, 409, 429, 500, 502, 503, 504, 599}) EXPECT_TRUE(should_retry_status(status, "")) << status;
  for (int status : {200, 302, 400, 401, 402, 403, 404, 410, 418, 422, 499}) {
    EXPECT_FALSE(should_retry_status(status, "")) << status;
  }
}

TEST(HttpRetryStatus, ShouldRetryHeaderOverridesTheStatus) {
  EXPECT_TRUE(should_retry_status(400, "true"));
  EXPECT_TRUE(should_retry_status(404, " TRUE "));
  EXPECT_TRUE(should_retry_status(200, "True"));
  EXPECT_FALSE(should_retry_status(503, "false"));
  EXPECT_FALSE(should_retry_status(429, "\tFalse\r\n"));
  // Anything else leaves the decision to the status.
  EXPECT_TRUE(should_retry_status(503, "yes"));
  EXPECT_FALSE(should_retry_status(400, "1"));
  EXPECT_FALSE(should_retry_status(400, "truthy"));
}

TEST(HttpRetryHint, RetryAfterMsIsCheckedFirst) {
  EXPECT_EQ(hint({{"retry-after-ms", "1500"}}), 1500ms);
  EXPECT_EQ(hint({{"retry-after-ms", "250.5"}, {"retry-after", "7"}}), 251ms);  // rounded up
  EXPECT_EQ(hint({{"Retry-After-Ms", " 60000 "}}), 60s);
  EXPECT_EQ(hint({{"retry-after-ms", "+2e3"}}), 2s);
  // A value that parses decides even when out of range (as in the Python SDK).
  EXPECT_EQ(hint({{"retry-after-ms", "0"}, {"retry-after", "7"}}), std::nullopt);
  // A malformed one falls through to retry-after.
  EXPECT_EQ(hint({{"retry-after-ms", "soon"}, {"retry-after", "7"}}), 7s);
}

TEST(HttpRetryHint, RetryAfterSeconds) {
  EXPECT_EQ(hint({{"retry-after", "5"}}), 5s);
  EXPECT_EQ(hint({{"retry-after", "0.25"}}), 250ms);
  EXPECT_EQ(hint({{"retry-after", "60"}}), 60s);
  EXPECT_EQ(hint({{"retry-after", ".5"}}), 500ms);
}

TEST(HttpRetryHint, RetryAfterHttpDateInAllThreeForms) {
  const TimePoint now = rfc_example() - 30s;
  EXPECT_EQ(hint({{"retry-after", "Sun, 06 Nov 1994 08:49:37 GMT"}}, now), 30s);
  EXPECT_EQ(hint({{"retry-after", "Sunday, 06-Nov-94 08:49:37 GMT"}}, now), 30s);
  EXPECT_EQ(hint({{"retry-after", "Sun Nov  6 08:49:37 1994"}}, now), 30s);
  // Fractional "now": the hint is the exact remaining time, rounded up to a millisecond.
  EXPECT_EQ(hint({{"retry-after", "Sun, 06 Nov 1994 08:49:37 GMT"}}, now + 250500us), 29750ms);
}

TEST(HttpRetryHint, OnlyHintsInZeroToSixtySecondsCount) {
  EXPECT_EQ(hint({{"retry-after", "0"}}), std::nullopt);
  EXPECT_EQ(hint({{"retry-after", "-3"}}), std::nullopt);
  EXPECT_EQ(hint({{"retry-after", "60.001"}}), std::nullopt);
  EXPECT_EQ(hint({{"retry-after", "61"}}), std::nullopt);
  EXPECT_EQ(hint({{"retry-after-ms", "61000"}}), std::nullopt);
  EXPECT_EQ(hint({{"retry-after-ms", "-1"}}), std::nullopt);
  EXPECT_EQ(hint({{"retry-after", "inf"}}), std::nullopt);
  EXPECT_EQ(hint({{"retry-after", "nan"}}), std::nullopt);
  // Dates: in the past, now, and more than 60 s ahead.
  EXPECT_EQ(hint({{"retry-after", "Sun, 06 Nov 1994 08:49:36 GMT"}}), std::nullopt);
  EXPECT_EQ(hint({{"retry-after", "Sun, 06 Nov 1994 08:49:37 GMT"}}), std::nullopt);
  EXPECT_EQ(hint({{"retry-after", "Sun, 06 Nov 1994 08:50:38 GMT"}}), std::nullopt);
  EXPECT_EQ(hint({{"retry-after", "Sun, 06 Nov 1994 08:50:37 GMT"}}), 60s);
  // The cap comes from the caller.
  EXPECT_EQ(server_retry_hint(with_headers({{"retry-after", "5"}}), rfc_example(), 4s), std::nullopt);
}

TEST(HttpRetryHint, MalformedValuesGiveNoHint) {
  for (const char* value :
       {"", "   ", "soon", "5s", "1,5", "0x10", "+-1", "--1", "1e", "Sun, 06 Nov 1994", "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 31 Nov 1994 08:49:37 GMT",
        "Sun, 06 Foo 1994 08:49:37 GMT", "Xyz, 06 Nov 1994 08:49:37 GMT", "Sun Nov 6 08:49:37 1994",
        "Sunday, 06-Nov-1994 08:49:37 GMT"}) {
    EXPECT_EQ(hint({{"retry-after", value}}, rfc_example() - 10s), std::nullopt) << value;
  }
  EXPECT_EQ(hint({}), std::nullopt);
}

TEST(HttpRetryHint, ParseHttpDate) {
  EXPECT_EQ(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"), rfc_example());
  EXPECT_EQ(parse_http_date("  sun, 06 nov 1994 08:49:37 gmt "), rfc_example());
  EXPECT_EQ(parse_http_date("Sun Nov 06 08:49:37 1994"), rfc_example());
  EXPECT_EQ(parse_http_date("Thu, 29 Feb 2024 23:59:59 GMT"), at(2024, 2, 29) + 23h + 59min + 59s);
  EXPECT_EQ(parse_http_date("Thu, 29 Feb 2023 00:00:00 GMT"), std::nullopt);
  EXPECT_EQ(parse_http_date("Wed, 31 Dec 2025 23:59:60 GMT"), at(2026, 1, 1));  // leap second
  EXPECT_EQ(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT trailing"), std::nullopt);
}

TEST(HttpRetryHint, Rfc850TwoDigitYears) {
  // More than 50 years in the future means the previous century (RFC 9110 5.6.7).
  EXPECT_EQ(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT", at(2026, 1, 1)), rfc_example());
  EXPECT_EQ(parse_http_date("Friday, 01-Jan-27 00:00:00 GMT", at(2026, 1, 1)), at(2027, 1, 1));
  EXPECT_EQ(parse_http_date("Saturday, 01-Jan-76 00:00:00 GMT", at(2026, 1, 1)), at(2076, 1, 1));
  EXPECT_EQ(parse_http_date("Friday, 01-Jan-77 00:00:00 GMT", at(2026, 1, 1)), at(1977, 1, 1));
  EXPECT_EQ(parse_http_date("Monday, 01-Jan-00 00:00:00 GMT", at(2026, 1, 1)), at(2000, 1, 1));
  EXPECT_EQ(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT", at(1994, 1, 1)), rfc_example());
}

RetryOptions defaults() {
  return RetryOptions();
}

TEST(HttpRetryBackoff, SequenceWithoutJitter) {
  const std::vector<milliseconds> expected{500ms, 1s, 2s, 4s, 8s, 10s, 10s, 10s};
  for (std::size_t n = 0; n < expected.size(); ++n) {
    EXPECT_EQ(backoff_delay(static_cast<int>(n), 0.0, defaults()), expected[n]) << n;
  }
}

TEST(HttpRetryBackoff, JitterOnlyShortensByUpToAQuarter) {
  const std::vector<milliseconds> expected{375ms, 750ms, 1500ms, 3s, 6s, 7500ms, 7500ms};
  for (std::size_t n = 0; n < expected.size(); ++n) {
    EXPECT_EQ(backoff_delay(static_cast<int>(n), almost_one, defaults()), expected[n]) << n;
  }
  EXPECT_EQ(backoff_delay(2, 0.5, defaults()), 1750ms);
  for (double u : {0.0, 0.1, 0.5, 0.9, almost_one}) {
    const milliseconds d = backoff_delay(3, u, defaults());
    EXPECT_LE(d, 4s);
    EXPECT_GE(d, 3s);
  }
}

TEST(HttpRetryBackoff, LargeAndOddInputsStayInRange) {
  for (int n : {30, 62, 63, 64, 999, 1000, 1001, std::numeric_limits<int>::max()}) {
    EXPECT_EQ(backoff_delay(n, 0.0, defaults()), 10s) << n;
  }
  EXPECT_EQ(backoff_delay(-5, 0.0, defaults()), 500ms);
  EXPECT_EQ(backoff_delay(0, std::nan(""), defaults()), 500ms);
  EXPECT_EQ(backoff_delay(0, 7.0, defaults()), 375ms);
  RetryOptions huge;
  huge.initial_delay = milliseconds(std::numeric_limits<milliseconds::rep>::max() / 2);
  huge.max_delay = milliseconds::max();
  EXPECT_EQ(backoff_delay(1000, 0.0, huge), milliseconds::max());
  RetryOptions custom;
  custom.initial_delay = 100ms;
  custom.max_delay = 1s;
  EXPECT_EQ(backoff_delay(3, 0.0, custom), 800ms);
  EXPECT_EQ(backoff_delay(4, 0.0, custom), 1s);
}

// The download's status retries: no cap given, no jitter asked for.
TEST(HttpRetryBackoff, UncappedWithoutJitterDoublesExactly) {
  const Backoff backoff(250ms);
  EXPECT_EQ(backoff.delay(0, 0.0), 250ms);
  EXPECT_EQ(backoff.delay(1, 0.0), 500ms);
  EXPECT_EQ(backoff.delay(2, 0.0), 1s);
  EXPECT_EQ(backoff.delay(20, 0.0), 250ms * (1 << 20));
  EXPECT_EQ(backoff.delay(1000, 0.0), milliseconds::max());
}

TEST(HttpTransportRetry, ServerHintElseBackoff) {
  const Response hinted = with_headers({{"retry-after", "3"}});
  const Response unhinted = with_headers({});
  const Response too_long = with_headers({{"retry-after", "120"}});
  EXPECT_EQ(transport_retry_delay(&hinted, 4, rfc_example(), 0.0, defaults()), 3s);
  EXPECT_EQ(transport_retry_delay(&unhinted, 4, rfc_example(), 0.0, defaults()), 8s);
  EXPECT_EQ(transport_retry_delay(&too_long, 0, rfc_example(), 0.0, defaults()), 500ms);
  EXPECT_EQ(transport_retry_delay(nullptr, 1, rfc_example(), almost_one, defaults()), 750ms);
  RetryOptions low_cap;
  low_cap.max_retry_after = 2s;
  EXPECT_EQ(transport_retry_delay(&hinted, 0, rfc_example(), 0.0, low_cap), 500ms);
}

TEST(HttpTransportRetry, TransportFailuresRetryOnlyConnectionFailuresAndTimeouts) {
  const Response no_response;  // status 0: the attempt failed before a response
  EXPECT_TRUE(transport_should_retry(make_error_code(errc::connection_failed), no_response));
  EXPECT_TRUE(transport_should_retry(make_error_code(errc::timeout), no_response));
  EXPECT_FALSE(transport_should_retry(make_error_code(errc::tls_error), no_response));
  EXPECT_FALSE(transport_should_retry(make_error_code(errc::response_too_large), no_response));
  EXPECT_FALSE(transport_should_retry(make_error_code(errc::cancelled), no_response));
}

TEST(HttpTransportRetry, ResponsesRetryByStatusAndShouldRetryHeader) {
  Response overloaded;
  overloaded.status = 503;
  EXPECT_TRUE(transport_should_retry(make_error_code(errc::server_error), overloaded));
  Response refused;
  refused.status = 400;
  EXPECT_FALSE(transport_should_retry(make_error_code(errc::bad_request), refused));
  refused.headers.emplace_back("x-should-retry", "true");
  EXPECT_TRUE(transport_should_retry(make_error_code(errc::bad_request), refused));
  Response bare;  // a bare 400, which attempt_error makes a connection fault
  bare.status = 400;
  EXPECT_TRUE(transport_should_retry(make_error_code(errc::connection_failed), bare));
  overloaded.headers.emplace_back("x-should-retry", "false");
  EXPECT_FALSE(transport_should_retry(make_error_code(errc::server_error), overloaded));
}

TEST(HttpCallRetry, RetryableCodes) {
  for (errc e : {errc::timeout, errc::connection_failed, errc::request_timeout, errc::conflict, errc::rate_limited,
                 errc::server_error}) {
    EXPECT_TRUE(call_should_retry(make_error_code(e))) << static_cast<int>(e);
  }
  for (errc e : {errc::cancelled, errc::tls_error, errc::bad_request, errc::authentication_failed,
                 errc::payment_required, errc::permission_denied, errc::not_found, errc::gone,
                 errc::unprocessable_entity, errc::http_error, errc::protocol_error, errc::decode_error,
                 errc::response_too_large, errc::request_failed, errc::invalid_argument, errc::invalid_configuration}) {
    EXPECT_FALSE(call_should_retry(make_error_code(e))) << static_cast<int>(e);
  }
  EXPECT_FALSE(call_should_retry({}));
  EXPECT_FALSE(call_should_retry(boost::asio::error::operation_aborted));
  EXPECT_FALSE(call_should_retry(boost::asio::error::connection_reset));
}

TEST(HttpCallRetry, DelaysDoubleUpToTheCap) {
  const std::vector<milliseconds> expected{1s, 2s, 4s, 8s, 16s, 30s, 30s};
  for (std::size_t k = 0; k < expected.size(); ++k) {
    EXPECT_EQ(call_retry_delay(static_cast<int>(k), 0ms, defaults()), expected[k]) << k;
  }
  for (int k : {40, 63, 64, 1000, std::numeric_limits<int>::max()})
    EXPECT_EQ(call_retry_delay(k, 0ms, defaults()), 30s);
  EXPECT_EQ(call_retry_delay(-1, 0ms, defaults()), 1s);
}

TEST(HttpCallRetry, TruncatedToTheBudget) {
  EXPECT_EQ(call_retry_delay(5, 280s, defaults()), 20s);
  EXPECT_EQ(call_retry_delay(0, 299500ms, defaults()), 500ms);
  EXPECT_EQ(call_retry_delay(5, 300s, defaults()), std::nullopt);
  EXPECT_EQ(call_retry_delay(0, 301s, defaults()), std::nullopt);
}

TEST(HttpCallRetry, WholeScheduleSpendsExactlyTheBudget) {
  // Failures are instantaneous: the sleeps alone use up the 300 s.
  milliseconds elapsed{0};
  std::vector<milliseconds> sleeps;
  for (int k = 0;; ++k) {
    const auto delay = call_retry_delay(k, elapsed, defaults());
    if (!delay) break;
    sleeps.push_back(*delay);
    elapsed += *delay;
  }
  const std::vector<milliseconds> expected{1s, 2s, 4s, 8s, 16s, 30s, 30s, 30s, 30s, 30s, 30s, 30s, 30s, 29s};
  EXPECT_EQ(sleeps, expected);
  EXPECT_EQ(elapsed, 300s);
}

}  // namespace
}  // namespace tinker::http
