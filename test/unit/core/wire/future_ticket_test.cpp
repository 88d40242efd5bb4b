#include "core/wire/future_ticket.hpp"

#include <tinker/codec.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tinker::wire {
namespace {

TEST(PlainFutureTicket, ReadsTheUsualAnswers) {
  UntypedAPIFuture ticket;
  ASSERT_TRUE(read_plain_future_ticket(R"({"request_id":"req-1"})", ticket));
  EXPECT_EQ(ticket.request_id, "req-1");
  EXPECT_FALSE(ticket.model_id.has_value());

  ASSERT_TRUE(read_plain_future_ticket(" {\n \"model_id\" : \"m-2\",\t\"request_id\":\"r 2\"}\r\n", ticket));
  EXPECT_EQ(ticket.request_id, "r 2");
  EXPECT_EQ(ticket.model_id, "m-2");

  ASSERT_TRUE(read_plain_future_ticket(R"({"request_id":""})", ticket));  // the decoder, not the reader, judges ids
  EXPECT_EQ(ticket.request_id, "");
  EXPECT_FALSE(ticket.model_id.has_value());  // a model id of an earlier ticket does not stay
}

TEST(PlainFutureTicket, LeavesEverythingElseToTheSchemaDecoder) {
  const std::vector<std::string> others = {
      "",
      "{}",
      R"({"model_id":"m"})",                           // no request_id
      R"({"request_id":"a","request_id":"b"})",        // twice
      R"({"request_id":"a","queue_state":"active"})",  // another key
      R"({"request_id":"a","model_id":null})",         // not a string
      R"({"request_id":3})",                           // not a string
      R"({"request_id":"a\"b"})",                      // an escape
      R"({"request_id":"a\u0041"})",                   // an escape
      "{\"request_id\":\"caf\xc3\xa9\"}",              // not ASCII
      "{\"request_id\":\"a\tb\"}",                     // a control byte
      R"({"request_id":"a"} x)",                       // trailing text
      R"({"request_id":"a")",                          // unterminated
      R"({"request_id":"a",})",                        // trailing comma
      R"(["request_id","a"])",                         // not an object
  };
  for (const std::string& text : others) {
    UntypedAPIFuture ticket("before");
    EXPECT_FALSE(read_plain_future_ticket(text, ticket)) << text;
    EXPECT_EQ(ticket.request_id, "before") << text;
  }
}

TEST(PlainFutureTicket, AgreesWithTheSchemaDecoderWhereItReads) {
  for (const std::string text : {R"({"request_id":"r"})", R"({"model_id":"m","request_id":"r"})",
                                 " { \"request_id\" : \"id-with-dashes_and.dots\" } "}) {
    UntypedAPIFuture fast;
    ASSERT_TRUE(read_plain_future_ticket(text, fast)) << text;
    EXPECT_EQ(fast, from_json<UntypedAPIFuture>(text)) << text;
  }
}

// The id is checked eight bytes at a time: every byte value at every place of a word, and in the
// tail, is judged as the plain rule says (printable ASCII, no backslash).
TEST(PlainFutureTicket, JudgesEveryByteAtEveryPlace) {
  for (std::size_t length : {1u, 7u, 8u, 9u, 17u}) {
    for (std::size_t at = 0; at < length; ++at) {
      for (int byte = 0; byte < 256; ++byte) {
        if (byte == '"') continue;  // ends the string instead
        std::string id(length, 'a');
        id[at] = static_cast<char>(byte);
        const bool plain = byte >= 0x20 && byte < 0x7f && byte != '\\';
        UntypedAPIFuture ticket;
        EXPECT_EQ(read_plain_future_ticket("{\"request_id\":\"" + id + "\"}", ticket), plain)
            << "byte " << byte << " at " << at << " of " << length;
        if (plain) {
          EXPECT_EQ(ticket.request_id, id);
        }
      }
    }
  }
}

}  // namespace
}  // namespace tinker::wire
