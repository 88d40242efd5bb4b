// The two date formats tinker-local writes: HTTP dates (Expires, Retry-After) and the RFC 3339
// timestamps of its log lines and admin answers. Pure functions, unit-tested on their own.
#pragma once

#include <chrono>
#include <string>

namespace tinker::local::front {

/// RFC 9110 IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT" (seconds truncated).
std::string http_date(std::chrono::system_clock::time_point t);

/// RFC 3339 UTC with exactly six fractional digits: "2026-08-08T12:00:00.123456Z".
std::string rfc3339_micros(std::chrono::system_clock::time_point t);

}  // namespace tinker::local::front
