// Request assembly: the request target under the base path, the read-timeout value, and the three
// blocks of header lines (per origin, per call, per attempt), refused when they could inject lines.
#include "http/request_assembly.hpp"

#include <tinker/error.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tinker::http {
namespace {

using std::chrono::milliseconds;

TEST(HttpRequestAssembly, JoinPathPutsExactlyOneSlashBetween) {
  EXPECT_EQ(join_path("", "/api/v1/healthz"), "/api/v1/healthz");
  EXPECT_EQ(join_path("/", "/api/v1/healthz"), "/api/v1/healthz");
  EXPECT_EQ(join_path("/services/tinker-prod", "/api/v1/x"), "/services/tinker-prod/api/v1/x");
  EXPECT_EQ(join_path("/services/tinker-prod/", "api/v1/x?limit=2"), "/services/tinker-prod/api/v1/x?limit=2");
}

TEST(HttpRequestAssembly, AbsoluteUrlsAreHttpOrHttps) {
  EXPECT_TRUE(is_absolute_url("https://storage.example/bucket/a.tar?sig=1"));
  EXPECT_TRUE(is_absolute_url("http://127.0.0.1:9000/a"));
  EXPECT_FALSE(is_absolute_url("/api/v1/x"));
  EXPECT_FALSE(is_absolute_url("ftp://host/a"));
}

TEST(HttpRequestAssembly, SecondsText) {
  EXPECT_EQ(seconds_text(milliseconds(60000)), "60");
  EXPECT_EQ(seconds_text(milliseconds(0)), "0");
  EXPECT_EQ(seconds_text(milliseconds(2500)), "2.500");
  EXPECT_EQ(seconds_text(milliseconds(1007)), "1.007");
  EXPECT_EQ(seconds_text(milliseconds(250)), "0.250");
  EXPECT_EQ(seconds_text(milliseconds(-1500)), "0");
  const std::string longest = seconds_text(milliseconds::max());
  EXPECT_EQ(longest, "9223372036854775.807");
  EXPECT_LE(longest.size(), seconds_text_max);
}

TEST(HttpRequestAssembly, OriginLinesStartWithHostAndEndWithTheCredential) {
  const Endpoint endpoint("api.example", 8443, true);
  const std::vector<Header> standard{{"User-Agent", "tinker-cpp/test"}};
  EXPECT_EQ(origin_header_lines(endpoint, standard, "tml-key"),
            "Host: api.example:8443\r\nUser-Agent: tinker-cpp/test\r\nX-API-Key: tml-key\r\n");
  // Without a credential (signed storage URLs) there is no X-API-Key line at all.
  EXPECT_EQ(origin_header_lines(Endpoint("s.example", 443, true), standard, ""),
            "Host: s.example\r\nUser-Agent: tinker-cpp/test\r\n");
}

TEST(HttpRequestAssembly, OriginLinesRefuseALineBreakWithoutShowingTheValue) {
  const Endpoint endpoint("api.example", 443, true);
  try {
    origin_header_lines(endpoint, {}, "tml-secret\r\nX-Injected: yes");
    FAIL() << "a credential with a line break was accepted";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_configuration));
    EXPECT_EQ(std::string(e.what()).find("tml-secret"), std::string::npos) << e.what();
  }
  const std::vector<Header> bad_default{{"X-Team", "a\nb"}};
  EXPECT_THROW(origin_header_lines(endpoint, bad_default, "tml-key"), error);
}

TEST(HttpRequestAssembly, CallLinesOfAPost) {
  Request request(Method::post, "/api/v1/asample");
  request.content_type = "application/json";
  request.headers.emplace_back(HeaderName("X-Tinker-Sampling-Backpressure"), "1");
  EXPECT_EQ(call_header_lines(request, "tinker-cpp-retry-key", milliseconds(2500)),
            "Accept: application/json\r\n"
            "Content-Type: application/json\r\n"
            "X-Idempotency-Key: tinker-cpp-retry-key\r\n"
            "x-stainless-read-timeout: 2.500\r\n"
            "X-Tinker-Sampling-Backpressure: 1\r\n");
}

TEST(HttpRequestAssembly, CallLinesOfAGetHaveNoIdempotencyKey) {
  Request request(Method::get, "/api/v1/healthz");
  request.compress_zstd = true;
  EXPECT_EQ(call_header_lines(request, "ignored", milliseconds(60000)),
            "Accept: application/json\r\n"
            "Content-Encoding: zstd\r\n"
            "x-stainless-read-timeout: 60\r\n");
}

TEST(HttpRequestAssembly, CallLinesRefuseHeaderInjection) {
  Request request(Method::post, "/x");
  request.headers.emplace_back(HeaderName("X-Evil"), "a\r\nX-Injected: yes");
  try {
    call_header_lines(request, "key", milliseconds(1000));
    FAIL() << "an extra header with a line break was accepted";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
    EXPECT_NE(std::string(e.what()).find("X-Evil"), std::string::npos) << e.what();
  }
  Request bad_key(Method::post, "/x");
  EXPECT_THROW(call_header_lines(bad_key, "key\nX-Injected: yes", milliseconds(1000)), error);
}

TEST(HttpRequestAssembly, CallLinesAppendedAfterTheirCheckAreTheSame) {
  Request request(Method::post, "/api/v1/retrieve_future");
  request.content_type = "application/json";
  request.accept = "application/x-protobuf";
  request.headers.emplace_back(HeaderName("X-Tinker-Request-Iteration"), "0");
  request.headers.emplace_back(HeaderName("X-Tinker-Request-Type"), "Sample");
  CallHeaders call;
  call.request = &request;
  call.idempotency_key = "tinker-cpp-retry-key";
  call.read_timeout = milliseconds(45000);
  check_call_headers(call);
  std::string head = "POST / HTTP/1.1\r\n";
  append_call_header_lines(head, call);
  EXPECT_EQ(head, "POST / HTTP/1.1\r\n" + call_header_lines(request, "tinker-cpp-retry-key", milliseconds(45000)));
  EXPECT_LE(head.size() - 17, call_header_lines_size(call));
  std::string nothing;
  append_call_header_lines(nothing, CallHeaders());
  EXPECT_EQ(nothing, "");
  EXPECT_EQ(call_header_lines_size(CallHeaders()), 0u);
}

TEST(HttpRequestAssembly, CallHeaderCheckRefusesInjectionInKeyAndExtras) {
  Request request(Method::post, "/x");
  CallHeaders call;
  call.request = &request;
  call.idempotency_key = "key\r\nX-Injected: yes";
  EXPECT_THROW(check_call_headers(call), error);
  Request get(Method::get, "/x");  // a GET sends no key: nothing to check
  call.request = &get;
  EXPECT_NO_THROW(check_call_headers(call));
  get.headers.emplace_back(HeaderName("X-Evil"), "a\nb");
  EXPECT_THROW(check_call_headers(call), error);
}

TEST(HttpRequestAssembly, RetryCountLine) {
  EXPECT_EQ(RetryCountLine(0).text(), "x-stainless-retry-count: 0\r\n");
  EXPECT_EQ(RetryCountLine(12).text(), "x-stainless-retry-count: 12\r\n");
  EXPECT_EQ(RetryCountLine(2147483647).text(), "x-stainless-retry-count: 2147483647\r\n");
}

}  // namespace
}  // namespace tinker::http
