#include "programs/local/server/request_fields.hpp"

#include <boost/asio/buffer.hpp>

#include <gtest/gtest.h>

#include <string_view>

namespace tinker::local::front {
namespace {

namespace bhttp = boost::beast::http;

// Parses a whole request from `text` with the server's parser (put() stops after the header).
void parse(RequestParser& parser, std::string_view text) {
  parser.eager(true);
  while (!parser.is_done()) {
    boost::system::error_code ec;
    const std::size_t used = parser.put(boost::asio::buffer(text.data(), text.size()), ec);
    ASSERT_FALSE(ec) << ec.message();
    ASSERT_GT(used, 0u) << "the parser stopped with " << text.size() << " bytes left";
    text.remove_prefix(used);
  }
  EXPECT_TRUE(text.empty());
}

constexpr std::string_view kSdkRequest =
    "POST /api/v1/asample HTTP/1.1\r\n"
    "Host: 127.0.0.1\r\n"
    "User-Agent: tinker-cpp/0.1.0\r\n"
    "X-Stainless-OS: Linux\r\n"
    "x-api-key: tml-secret\r\n"
    "Content-Type: application/json\r\n"
    "X-Idempotency-Key: key-1\r\n"
    "X-TINKER-SAMPLING-BACKPRESSURE: 1\r\n"
    "Connection: close\r\n"
    "Content-Length: 2\r\n"
    "\r\n"
    "{}";

TEST(RequestFields, KeepsWhatTheServerReadsAndDropsTheRest) {
  RequestParser parser;
  parse(parser, kSdkRequest);
  const auto& request = parser.get();
  EXPECT_EQ(request.body(), "{}");
  EXPECT_EQ(request["X-API-Key"], "tml-secret");  // names compare case-insensitively
  EXPECT_EQ(request[bhttp::field::content_type], "application/json");
  EXPECT_EQ(request["X-Idempotency-Key"], "key-1");
  EXPECT_EQ(request["X-Tinker-Sampling-Backpressure"], "1");
  EXPECT_EQ(request.count(bhttp::field::user_agent), 0u);
  EXPECT_EQ(request.count("X-Stainless-OS"), 0u);
  EXPECT_EQ(request.count(bhttp::field::host), 0u);
}

TEST(RequestFields, FramingDoesNotDependOnStoredFields) {
  RequestParser parser;
  parse(parser, kSdkRequest);
  EXPECT_FALSE(parser.keep_alive());  // Connection: close

  RequestParser chunked;
  parse(chunked,
        "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\nX-Stainless-Lang: cpp\r\n\r\n"
        "3\r\nabc\r\n0\r\n\r\n");
  EXPECT_EQ(chunked.get().body(), "abc");
  EXPECT_TRUE(chunked.keep_alive());
}

TEST(RequestFields, NamesEveryFieldAHandlerReads) {
  for (const std::string_view name :
       {"X-API-Key", "Authorization", "CF-Access-Client-Secret", "Content-Type", "Content-Encoding", "Accept", "Range",
        "Expect", "Connection", "X-Idempotency-Key", "x-stainless-retry-count", "X-Tinker-Request-Iteration",
        "X-Tinker-Sampling-Backpressure"}) {
    EXPECT_TRUE(is_kept_request_field(name)) << name;
  }
  for (const std::string_view name :
       {"User-Agent", "Host", "X-Stainless-Arch", "X-Tinker-Request-Type", "X-API-Keys"}) {
    EXPECT_FALSE(is_kept_request_field(name)) << name;
  }
}

}  // namespace
}  // namespace tinker::local::front
