#include "http/error_mapping.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace tinker::http {
namespace {

using namespace std::chrono_literals;
using namespace std::string_literals;

const std::string secret = "tml-Sup3rSecretKeyValue0123456789";
const std::chrono::system_clock::time_point now{std::chrono::hours(24 * 365 * 50)};

Response response(int status, std::string body, std::vector<Header> headers = {}) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  r.headers = std::move(headers);
  return r;
}

diagnostics diagnose(const Response& r) {
  diagnostics d;
  fill_diagnostics(r, d, secret, now, 60s);
  return d;
}

TEST(HttpErrorMapping, ErrorForStatus) {
  EXPECT_EQ(error_for_status(404), make_error_code(errc::not_found));
  EXPECT_EQ(error_for_status(429), make_error_code(errc::rate_limited));
  EXPECT_EQ(error_for_status(503), make_error_code(errc::server_error));
  EXPECT_EQ(error_for_status(418), make_error_code(errc::http_error));
}

TEST(HttpErrorMapping, AttemptErrorClassifiesOneAttempt) {
  const boost::system::error_code none;
  EXPECT_FALSE(attempt_error(none, 200, false));
  EXPECT_FALSE(attempt_error(none, 204, false));
  EXPECT_EQ(attempt_error(none, 302, false), error_for_status(302));  // redirects are never followed
  EXPECT_FALSE(attempt_error(none, 302, true));                       // unless the caller wants the 3xx
  EXPECT_EQ(attempt_error(none, 404, true), make_error_code(errc::not_found));
  EXPECT_EQ(attempt_error(none, 503, false), make_error_code(errc::server_error));
  // A 400 without a body is a proxy's connection fault; with the server's body it is its verdict.
  Response bare;
  bare.status = 400;
  EXPECT_EQ(attempt_error(none, bare, false), make_error_code(errc::connection_failed));
  bare.body = R"({"detail":"bad seq_id"})";
  EXPECT_EQ(attempt_error(none, bare, false), make_error_code(errc::bad_request));
  // A transport error wins over whatever status there is.
  EXPECT_EQ(attempt_error(make_error_code(errc::timeout), 0, false), make_error_code(errc::timeout));
  EXPECT_EQ(attempt_error(make_error_code(errc::response_too_large), 200, false),
            make_error_code(errc::response_too_large));
}

TEST(HttpErrorMapping, Redact) {
  EXPECT_EQ(redact("key " + secret + " and " + secret + secret, secret), "key <redacted> and <redacted><redacted>");
  EXPECT_EQ(redact("nothing here", secret), "nothing here");
  EXPECT_EQ(redact("abc abc", "abc"), "abc abc");  // too short to be a credential
  EXPECT_EQ(redact("abc abc", ""), "abc abc");
  EXPECT_EQ(redact("xdactx", "dact"), "x<redacted>x");  // the marker itself contains the secret
}

TEST(HttpErrorMapping, DetailString) {
  const diagnostics d = diagnose(response(404, R"({"detail": "Model not found"})"));
  EXPECT_EQ(d.http_status, 404);
  EXPECT_EQ(d.message, "Model not found");
  EXPECT_FALSE(d.category.has_value());
  EXPECT_EQ(d.body_excerpt, R"({"detail": "Model not found"})");
  EXPECT_FALSE(d.retry_after.has_value());
}

TEST(HttpErrorMapping, DetailListOrObjectIsCompactJson) {
  const diagnostics list = diagnose(response(422, R"({"detail": [ {"loc": ["body", "seq_id"], "msg": "bad"} ]})"));
  EXPECT_EQ(list.message, R"([{"loc":["body","seq_id"],"msg":"bad"}])");
  const diagnostics object = diagnose(response(400, R"({"detail": {"reason": "ttl", "max": 0.7}})"));
  EXPECT_EQ(object.message, R"({"reason":"ttl","max":0.7})");
}

TEST(HttpErrorMapping, ErrorWithCategory) {
  const diagnostics user = diagnose(response(400, R"({"error": "bad target", "category": "user"})"));
  EXPECT_EQ(user.message, "bad target");
  EXPECT_EQ(user.category, RequestErrorCategory::user);
  EXPECT_EQ(diagnose(response(500, R"({"error": "boom", "category": "server"})")).category,
            RequestErrorCategory::server);
  EXPECT_EQ(diagnose(response(500, R"({"error": "boom", "category": "User"})")).category,
            RequestErrorCategory::unknown);
  EXPECT_EQ(diagnose(response(500, R"({"error": "boom", "category": 3})")).category, RequestErrorCategory::unknown);
  EXPECT_EQ(diagnose(response(500, R"({"error": "boom"})")).category, RequestErrorCategory::unknown);
}

TEST(HttpErrorMapping, MessageKeyAndPrecedence) {
  EXPECT_EQ(diagnose(response(500, R"({"message": "internal"})")).message, "internal");
  EXPECT_EQ(diagnose(response(500, R"({"message": "m", "detail": "d", "error": "e"})")).message, "d");
  EXPECT_EQ(diagnose(response(500, R"({"message": "m", "error": "e"})")).message, "e");
  EXPECT_EQ(diagnose(response(500, R"({"detail": null, "message": "m"})")).message, "m");
  // A JSON document of another shape is shown whole.
  EXPECT_EQ(diagnose(response(500, R"({"code": 7, "ok": false})")).message, R"({"code":7,"ok":false})");
}

TEST(HttpErrorMapping, NonJsonBodyGivesItsFirstLine) {
  EXPECT_EQ(diagnose(response(502, "\n  Bad gateway  \r\nnginx\n")).message, "Bad gateway");
  EXPECT_EQ(diagnose(response(500, "{not json at all\nsecond")).message, "{not json at all");
  EXPECT_EQ(diagnose(response(500, "")).message, "");
  const diagnostics long_line = diagnose(response(500, std::string(300, 'x')));
  EXPECT_EQ(long_line.message, std::string(200, 'x'));
  // Cut at a UTF-8 boundary: 199 bytes + a 2-byte character would make 201.
  EXPECT_EQ(diagnose(response(500, std::string(199, 'x') + "\xc3\xa9tc")).message, std::string(199, 'x'));
}

TEST(HttpErrorMapping, RequestIdHeaders) {
  EXPECT_EQ(diagnose(response(500, "", {{"x-request-id", "req-1"}, {"request-id", "req-2"}})).request_id, "req-1");
  EXPECT_EQ(diagnose(response(500, "", {{"x-amzn-requestid", "amzn"}, {"request-id", "req-2"}})).request_id, "req-2");
  EXPECT_EQ(diagnose(response(500, "", {{"X-Amzn-RequestId", "amzn"}})).request_id, "amzn");
  EXPECT_EQ(diagnose(response(500, "", {{"x-request-id", " "}, {"request-id", "req-2"}})).request_id, "req-2");
  EXPECT_EQ(diagnose(response(500, "")).request_id, "");
}

TEST(HttpErrorMapping, RetryAfterIsTheServerHint) {
  EXPECT_EQ(diagnose(response(429, "", {{"retry-after", "2"}})).retry_after, 2s);
  EXPECT_EQ(diagnose(response(429, "", {{"retry-after-ms", "250"}})).retry_after, 250ms);
  EXPECT_EQ(diagnose(response(429, "", {{"retry-after", "600"}})).retry_after, std::nullopt);
}

TEST(HttpErrorMapping, ExcerptIsCutAt512BytesOnACharacterBoundary) {
  EXPECT_EQ(diagnose(response(500, std::string(600, 'a'))).body_excerpt, std::string(512, 'a'));
  EXPECT_EQ(diagnose(response(500, std::string(512, 'a'))).body_excerpt, std::string(512, 'a'));
  // A 3-byte character starting at offset 510 does not fit.
  const std::string euro = "\xe2\x82\xac";
  EXPECT_EQ(diagnose(response(500, std::string(510, 'a') + euro + "b")).body_excerpt, std::string(510, 'a'));
  EXPECT_EQ(diagnose(response(500, std::string(509, 'a') + euro + "b")).body_excerpt, std::string(509, 'a') + euro);
  // A 4-byte character across the limit.
  EXPECT_EQ(diagnose(response(500, std::string(511, 'a') + "\xf0\x9f\x98\x80")).body_excerpt, std::string(511, 'a'));
}

TEST(HttpErrorMapping, InvalidUtf8AndControlCharactersBecomeQuestionMarks) {
  const std::string body =
      "ok \xff\xfe lone-continuation \x80 truncated \xe2\x82 overlong \xc0\xaf surrogate \xed\xa0\x80 "
      "too-big \xf4\x90\x80\x80 nul \x00 bell \x07 del \x7f c1 \xc2\x85 keep\ttab\nnewline cr\r end \xe2\x82"s;
  const diagnostics d = diagnose(response(500, body));
  EXPECT_EQ(d.body_excerpt,
            "ok ?? lone-continuation ? truncated ?? overlong ?? surrogate ??? too-big ???? nul ? bell ? del ? c1 ? "
            "keep\ttab\nnewline cr? end ??");
  EXPECT_EQ(d.message,
            "ok ?? lone-continuation ? truncated ?? overlong ?? surrogate ??? too-big ???? nul ? bell ? "
            "del ? c1 ? keep\ttab");
  EXPECT_EQ(printable_prefix("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 100),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
}

TEST(HttpErrorMapping, JsonStringsWithControlCharactersAreCleaned) {
  EXPECT_EQ(diagnose(response(400, R"({"detail": "line1\nline2\u0000\u001b[31m"})")).message, "line1\nline2??[31m");
}

TEST(HttpErrorMapping, TheSecretNeverAppearsInAnyField) {
  const std::vector<std::string> bodies{
      R"({"detail": "invalid key )" + secret + R"("})",
      R"({"detail": ["key", ")" + secret + R"("]})",
      R"({"error": ")" + secret + R"(", "category": "user"})",
      R"({"message": "key=)" + secret + R"("})",
      R"({"other": ")" + secret + R"("})",
      "plain text: " + secret + "\nmore " + secret,
      std::string(505, 'a') + secret,  // the secret straddles the excerpt limit
      std::string(195, 'b') + secret,  // ... and the first-line limit
      std::string(1000, 'c') + secret,
  };
  for (const std::string& body : bodies) {
    const Response r = response(401, body, {{"x-request-id", "echo-" + secret}, {"retry-after", secret}});
    const diagnostics d = diagnose(r);
    for (const std::string* field : {&d.message, &d.request_id, &d.body_excerpt}) {
      EXPECT_EQ(field->find(secret), std::string::npos) << *field;
      EXPECT_EQ(field->find(secret.substr(0, 8)), std::string::npos) << *field;  // no partial secret either
    }
    EXPECT_EQ(std::string(error(make_error_code(errc::authentication_failed), d).what()).find(secret.substr(0, 8)),
              std::string::npos);
  }
  EXPECT_EQ(diagnose(response(401, R"({"detail": "bad )" + secret + R"("})")).message, "bad <redacted>");
  EXPECT_EQ(diagnose(response(401, "", {{"x-request-id", "echo-" + secret}})).request_id, "echo-<redacted>");
}

TEST(HttpErrorMapping, NeverThrowsOnOddBodies) {
  const std::vector<std::string> bodies{
      "{",
      "{\"detail\":",
      "[1,2,3]",
      "null",
      "\"just a string\"",
      std::string(100'000, '['),
      std::string(100'000, '{'),
      "{\"detail\": \"\xff\"}",
      std::string("\0\0\0", 3),
      "{\"a\":1}{\"b\":2}",
  };
  for (const std::string& body : bodies) {
    diagnostics d;
    EXPECT_NO_THROW(fill_diagnostics(response(500, body), d, secret, now, 60s)) << body.substr(0, 20);
    EXPECT_LE(d.body_excerpt.size(), 512u);
    EXPECT_LE(d.message.size(), 1024u);
  }
}

TEST(HttpErrorMapping, FillReplacesStaleDiagnostics) {
  diagnostics d;
  d.category = RequestErrorCategory::user;
  d.message = "old";
  d.request_id = "old-id";
  fill_diagnostics(response(503, "unavailable"), d, secret, now, 60s);
  EXPECT_EQ(d.http_status, 503);
  EXPECT_EQ(d.message, "unavailable");
  EXPECT_EQ(d.request_id, "");
  EXPECT_FALSE(d.category.has_value());
}

}  // namespace
}  // namespace tinker::http
