#include "http/message.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tinker::http {
namespace {

Response with_content_type(std::string value) {
  Response r;
  r.headers.emplace_back("content-type", std::move(value));
  return r;
}

TEST(HttpMessage, MethodNames) {
  EXPECT_STREQ(to_string(Method::get), "GET");
  EXPECT_STREQ(to_string(Method::post), "POST");
  EXPECT_STREQ(to_string(Method::put), "PUT");
  EXPECT_STREQ(to_string(Method::delete_), "DELETE");
}

TEST(HttpMessage, PoolKindNames) {
  EXPECT_STREQ(to_string(PoolKind::session), "session");
  EXPECT_STREQ(to_string(PoolKind::training), "training");
  EXPECT_STREQ(to_string(PoolKind::sampling), "sampling");
  EXPECT_STREQ(to_string(PoolKind::futures), "futures");
  EXPECT_STREQ(to_string(PoolKind::storage), "storage");
}

TEST(HttpMessage, ResponseHeadersKeepEveryFieldInOrderWithNamesLowerCased) {
  ResponseHeaders headers;
  EXPECT_TRUE(headers.empty());
  EXPECT_EQ(headers.begin(), headers.end());
  headers.emplace_back("Content-Type", "application/json");
  headers.emplace_back("X-Empty", "");
  headers.emplace_back("", "a value with no name");
  const std::string with_nul("a\0b", 3);  // hand-built values may hold any byte
  headers.emplace_back("x-Binary", with_nul);
  headers.emplace_back("Retry-After", std::string(70000, '7'));  // longer than any one buffer growth
  ASSERT_EQ(headers.size(), 5U);
  std::vector<std::pair<std::string, std::string>> seen;
  for (const HeaderView field : headers) seen.emplace_back(field.name, field.value);
  const std::vector<std::pair<std::string, std::string>> expected = {{"content-type", "application/json"},
                                                                     {"x-empty", ""},
                                                                     {"", "a value with no name"},
                                                                     {"x-binary", with_nul},
                                                                     {"retry-after", std::string(70000, '7')}};
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(headers.find("X-BINARY"), with_nul);
  EXPECT_EQ(headers.find("x-empty"), "");

  const ResponseHeaders moved = std::move(headers);
  EXPECT_EQ(moved.find("content-type"), "application/json");
  ResponseHeaders copy = moved;
  copy.set("CONTENT-TYPE", "text/html");
  copy.set("ETag", "\"v1\"");
  EXPECT_EQ(copy.find("content-type"), "text/html");
  EXPECT_EQ(copy.find("etag"), "\"v1\"");
  EXPECT_EQ(copy.size(), 6U);
  EXPECT_EQ(moved.find("content-type"), "application/json");  // the copy is its own
  copy.clear();
  EXPECT_TRUE(copy.empty());
  EXPECT_EQ(copy.find("etag"), "");
}

// Names are lower-cased eight bytes at a time: every byte value, at every position of a word and
// of the tail, against the one-character rule.
TEST(HttpMessage, ResponseHeaderNamesLowerCaseOnlyAsciiLetters) {
  for (std::size_t length : {1u, 7u, 8u, 9u, 16u, 23u}) {
    for (int first = 0; first < 256; first += 8) {
      std::string name;
      for (std::size_t i = 0; i < length; ++i) name.push_back(static_cast<char>((first + i * 37) % 256));
      ResponseHeaders headers;
      headers.emplace_back(name, "v");
      std::string expected = name;
      for (char& c : expected) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      }
      EXPECT_EQ((*headers.begin()).name, expected) << "length " << length << ", first byte " << first;
    }
  }
}

// The buffer is the headers' own: a moved-from list is empty and usable, a copy of an empty
// list is empty, assigning a list to itself keeps it, and a name longer than the lookup's
// lower-casing room is still found.
TEST(HttpMessage, ResponseHeadersOwnTheirBuffer) {
  ResponseHeaders empty;
  EXPECT_EQ(empty.find("content-type"), "");
  const ResponseHeaders empty_copy = empty;
  EXPECT_TRUE(empty_copy.empty());
  EXPECT_EQ(empty_copy.begin(), empty_copy.end());

  ResponseHeaders headers;
  const std::string long_name(100, 'N');
  headers.emplace_back(long_name, "long");
  headers.emplace_back("Short", "s");
  ResponseHeaders moved = std::move(headers);
  EXPECT_TRUE(headers.empty());  // NOLINT(bugprone-use-after-move): a moved-from list is empty
  EXPECT_EQ(headers.begin(), headers.end());
  headers.emplace_back("After", "move");
  EXPECT_EQ(headers.find("after"), "move");
  EXPECT_EQ(moved.find(std::string(100, 'n')), "long");
  EXPECT_EQ(moved.find("SHORT"), "s");

  ResponseHeaders& same = moved;
  moved = same;  // copy-assigned to itself
  EXPECT_EQ(moved.size(), 2U);
  EXPECT_EQ(moved.find("short"), "s");
  moved = std::move(same);  // and moved onto itself
  EXPECT_EQ(moved.find("short"), "s");
}

TEST(HttpMessage, RequestPathIsAConstantOrItsOwnString) {
  static constexpr std::string_view constant = "/api/v1/retrieve_future";
  const RequestPath viewed = RequestPath::constant(constant);
  EXPECT_EQ(viewed.view(), constant);
  EXPECT_EQ(viewed.view().data(), constant.data());  // no copy
  RequestPath owned = std::string("/api/v1/training_runs/run-1");
  EXPECT_EQ(owned.str(), "/api/v1/training_runs/run-1");
  RequestPath moved = std::move(owned);
  EXPECT_EQ(moved.view(), "/api/v1/training_runs/run-1");
  moved = RequestPath::constant(constant);
  EXPECT_EQ(moved.view(), constant);
  moved = std::string("/x");
  EXPECT_EQ(moved.view(), "/x");
  EXPECT_TRUE(RequestPath().empty());
  const Request request(Method::post, RequestPath::constant(constant));
  EXPECT_EQ(std::string_view(request.path), constant);
}

TEST(HttpMessage, IdempotencyKeyIsKeptInPlace) {
  Request request(Method::post, "/x");
  EXPECT_TRUE(request.idempotency_key.empty());
  char* out = request.idempotency_key.overwrite(5);
  std::memcpy(out, "k-123", 5);
  EXPECT_EQ(request.idempotency_key.view(), "k-123");
  const Request copy = request;
  EXPECT_EQ(std::string_view(copy.idempotency_key), "k-123");
  request.idempotency_key.overwrite(IdempotencyKey::capacity + 10);  // never past its room
  EXPECT_EQ(request.idempotency_key.view().size(), IdempotencyKey::capacity);
}

TEST(HttpMessage, ResponseHeadersFromHeaderLists) {
  const ResponseHeaders listed{{"A", "1"}, {"b", "2"}};
  const ResponseHeaders from_vector(std::vector<Header>{{"A", "1"}, {"b", "2"}});
  ASSERT_EQ(listed.size(), 2U);
  ASSERT_EQ(from_vector.size(), 2U);
  EXPECT_EQ((*listed.begin()).name, "a");
  EXPECT_EQ(from_vector.find("B"), "2");
}

TEST(HttpMessage, HeaderLookupIsCaseInsensitiveAndTakesTheFirst) {
  Response r;
  r.headers.emplace_back("x-request-id", "first");
  r.headers.emplace_back("X-Request-Id", "second");
  r.headers.emplace_back("Retry-After", "5");
  EXPECT_EQ(r.header("X-REQUEST-ID"), "first");
  EXPECT_EQ(r.header("retry-after"), "5");
  EXPECT_EQ(r.header("retry-after-ms"), "");
  EXPECT_EQ(r.header(""), "");
  EXPECT_EQ(Response().content_type(), "");
}

TEST(HttpMessage, IsJsonLooksAtTheMediaTypeOnly) {
  EXPECT_TRUE(with_content_type("application/json").is_json());
  EXPECT_TRUE(with_content_type("application/json; charset=utf-8").is_json());
  EXPECT_TRUE(with_content_type("  Application/JSON ;charset=utf-8").is_json());
  EXPECT_TRUE(with_content_type("application/problem+json").is_json());
  EXPECT_TRUE(with_content_type("text/json").is_json());
  EXPECT_FALSE(with_content_type("text/plain; format=json").is_json());
  EXPECT_FALSE(with_content_type("application/jsonl").is_json());
  EXPECT_FALSE(with_content_type("text/html").is_json());
  EXPECT_FALSE(with_content_type("").is_json());
  EXPECT_FALSE(Response().is_json());
}

TEST(HttpMessage, IsProtobufSearchesTheWholeValue) {
  EXPECT_TRUE(with_content_type("application/x-protobuf").is_protobuf());
  EXPECT_TRUE(with_content_type("Application/X-Protobuf; messageType=Sample").is_protobuf());
  EXPECT_TRUE(with_content_type("application/x-protobuf, application/json").is_protobuf());
  EXPECT_FALSE(with_content_type("application/protobuf").is_protobuf());
  EXPECT_FALSE(with_content_type("application/json").is_protobuf());
  EXPECT_FALSE(Response().is_protobuf());
}

}  // namespace
}  // namespace tinker::http
