// The pure pieces of the REST endpoints: the archive answer (302 / 200 forms), query strings
// and the audit log's day.
#include "api/endpoints_rest.hpp"

#include <gtest/gtest.h>

namespace tinker::api {
namespace {

using std::chrono::minutes;
using std::chrono::sys_days;

http::Response redirect(std::string location, std::string expires) {
  http::Response response;
  response.status = 302;
  if (!location.empty()) response.headers.emplace_back("location", std::move(location));
  if (!expires.empty()) response.headers.emplace_back("expires", std::move(expires));
  response.headers.emplace_back("x-request-id", "req-1");
  return response;
}

const std::chrono::system_clock::time_point now = sys_days(std::chrono::year(2026) / 8 / 8) + std::chrono::hours(12);

TEST(ArchiveAnswer, ARedirectGivesLocationAndTheExpiresHeader) {
  CheckpointArchiveUrlResponse out;
  diagnostics diag;
  const auto response = redirect("https://storage.example/a.tar?sig=1", "Sat, 08 Aug 2026 12:30:00 GMT");
  ASSERT_FALSE(decode_archive_answer(response, now, out, diag));
  EXPECT_EQ(out.url, "https://storage.example/a.tar?sig=1");
  EXPECT_EQ(out.expires, now + minutes(30));
}

TEST(ArchiveAnswer, AMissingOrUnparsableExpiresMeansFifteenMinutes) {
  for (const std::string expires : {"", "tomorrow-ish"}) {
    CheckpointArchiveUrlResponse out;
    diagnostics diag;
    ASSERT_FALSE(decode_archive_answer(redirect("https://s/a.tar", expires), now, out, diag)) << expires;
    EXPECT_EQ(out.expires, now + minutes(15)) << expires;
  }
}

TEST(ArchiveAnswer, ARedirectWithoutLocationIsAProtocolErrorWithTheRequestId) {
  CheckpointArchiveUrlResponse out;
  diagnostics diag;
  EXPECT_EQ(decode_archive_answer(redirect("", ""), now, out, diag), errc::protocol_error);
  EXPECT_EQ(diag.http_status, 302);
  EXPECT_EQ(diag.request_id, "req-1");
  EXPECT_NE(diag.message.find("Location"), std::string::npos) << diag.message;
}

TEST(ArchiveAnswer, The200JsonFormIsDecoded) {
  http::Response response;
  response.status = 200;
  response.headers.emplace_back("content-type", "application/json");
  response.body = R"({"url": "https://s/b.tar", "expires": "2026-08-08T13:00:00Z"})";
  CheckpointArchiveUrlResponse out;
  diagnostics diag;
  ASSERT_FALSE(decode_archive_answer(response, now, out, diag));
  EXPECT_EQ(out.url, "https://s/b.tar");
  EXPECT_EQ(out.expires, now + minutes(60));
  response.body = R"({"expires": "2026-08-08T13:00:00Z"})";
  EXPECT_EQ(decode_archive_answer(response, now, out, diag), errc::decode_error);
  EXPECT_NE(diag.message.find("url"), std::string::npos) << diag.message;
}

TEST(QueryStringTest, ValuesArePercentEncodedAndJoined) {
  QueryString query;
  query.add("limit", std::int64_t{20}).add("project_id", "a b&c/é").add("starting_on", "2026-07-13T00:00:00Z");
  EXPECT_EQ(query.text(), "?limit=20&project_id=a%20b%26c%2F%C3%A9&starting_on=2026-07-13T00:00:00Z");
  EXPECT_EQ(QueryString().text(), "");
}

TEST(FormatDay, IsoDatesAndInvalidDatesRefused) {
  EXPECT_EQ(format_day(std::chrono::year(2026) / 3 / 7), "2026-03-07");
  EXPECT_THROW(format_day(std::chrono::year(2026) / 2 / 30), error);
}

}  // namespace
}  // namespace tinker::api
