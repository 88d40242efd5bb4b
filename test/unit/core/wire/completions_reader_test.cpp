#include "core/wire/completions_reader.hpp"

#include <tinker/codec.hpp>

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace tinker::wire {
namespace {

// The completions as the schema decoder reads them, for comparison.
std::vector<FutureCompletion> as_completions(const std::vector<PlainCompletion>& plain) {
  std::vector<FutureCompletion> out;
  for (const PlainCompletion& c : plain) out.emplace_back(std::string(c.state), std::string(c.request_id));
  return out;
}

std::vector<FutureCompletion> without_sizes(std::vector<FutureCompletion> completions) {
  for (FutureCompletion& c : completions) c.response_payload_uncompressed_size.reset();
  return completions;
}

TEST(PlainCompletions, ReadsTheServicesAnswers) {
  std::vector<PlainCompletion> completions;
  std::int64_t cursor = -1;
  ASSERT_TRUE(read_plain_completions(
      R"({"completions":[{"state":"finished","request_id":"req-1","response_payload_uncompressed_size":812},)"
      R"({"state":"failed","request_id":"req-2"},{"request_id":"req-3","state":"finished",)"
      R"("response_payload_uncompressed_size":null},{"state":"paused"}],"cursor":41})",
      completions, cursor));
  EXPECT_EQ(cursor, 41);
  ASSERT_EQ(completions.size(), 4u);
  EXPECT_EQ(completions[0].state, "finished");
  EXPECT_EQ(completions[0].request_id, "req-1");
  EXPECT_EQ(completions[1].state, "failed");
  EXPECT_EQ(completions[2].request_id, "req-3");
  EXPECT_EQ(completions[3].state, "paused");  // unknown states are kept, without a request id
  EXPECT_EQ(completions[3].request_id, "");

  ASSERT_TRUE(read_plain_completions(" {\n\"cursor\" : 0 ,\t\"completions\" : [ ] }\r\n", completions, cursor));
  EXPECT_EQ(cursor, 0);
  EXPECT_TRUE(completions.empty());  // nothing of the earlier answer stays
}

TEST(PlainCompletions, LeavesEverythingElseToTheSchemaDecoder) {
  const std::vector<std::string> others = {
      "",
      "{}",
      R"({"completions":[]})",                                             // no cursor
      R"({"cursor":1})",                                                   // no completions
      R"({"completions":[],"cursor":1,"cursor":2})",                       // twice
      R"({"completions":[],"cursor":1,"extra":true})",                     // another key
      R"({"completions":[],"cursor":-1})",                                 // a sign
      R"({"completions":[],"cursor":1.0})",                                // a fraction
      R"({"completions":[],"cursor":1e3})",                                // an exponent
      R"({"completions":[],"cursor":01})",                                 // a leading zero
      R"({"completions":[],"cursor":1234567890123456789})",                // 19 digits
      R"({"completions":[],"cursor":"1"})",                                // a string
      R"({"completions":[{"request_id":"r"}],"cursor":1})",                // no state
      R"({"completions":[{"state":"finished","state":"x"}],"cursor":1})",  // twice
      R"({"completions":[{"state":"finished","other":1}],"cursor":1})",    // another key
      R"({"completions":[{"state":"finished","request_id":null}],"cursor":1})",
      R"({"completions":[{"state":"finished","response_payload_uncompressed_size":1.5}],"cursor":1})",
      R"({"completions":[{"state":"fin\"ished"}],"cursor":1})",        // an escape
      "{\"completions\":[{\"state\":\"caf\xc3\xa9\"}],\"cursor\":1}",  // not ASCII
      R"({"completions":[{"state":"finished"},],"cursor":1})",         // trailing comma
      R"({"completions":[{"state":"finished"}],"cursor":1} x)",        // trailing text
      R"({"completions":[{"state":"finished"}],"cursor":1)",           // unterminated
      R"({"completions":{},"cursor":1})",                              // not an array
      R"([{"completions":[],"cursor":1}])",                            // not an object
  };
  for (const std::string& text : others) {
    std::vector<PlainCompletion> completions;
    std::int64_t cursor = 0;
    EXPECT_FALSE(read_plain_completions(text, completions, cursor)) << text;
  }
}

// Random answers of the plain shape: the reader accepts each and reads what the schema decoder reads.
TEST(PlainCompletions, AgreesWithTheSchemaDecoderWhereItReads) {
  std::mt19937 random(29);
  const std::vector<std::string> states = {"finished", "failed", "queued_for_later"};
  for (int round = 0; round < 200; ++round) {
    const int count = static_cast<int>(random() % 6);
    std::string text = "{\"completions\":[";
    for (int i = 0; i < count; ++i) {
      if (i > 0) text += ",";
      text += "{\"state\":\"" + states[random() % states.size()] + "\"";
      if (random() % 4 != 0) text += ",\"request_id\":\"req-" + std::to_string(random()) + "\"";
      if (random() % 2 != 0) text += ",\"response_payload_uncompressed_size\":" + std::to_string(random() % 100000);
      text += "}";
    }
    const std::int64_t expected_cursor = static_cast<std::int64_t>(random());
    text += "],\"cursor\":" + std::to_string(expected_cursor) + "}";
    std::vector<PlainCompletion> completions;
    std::int64_t cursor = 0;
    ASSERT_TRUE(read_plain_completions(text, completions, cursor)) << text;
    const FuturesRetrieveResponse decoded = from_json<FuturesRetrieveResponse>(text);
    EXPECT_EQ(cursor, decoded.cursor) << text;
    EXPECT_EQ(as_completions(completions), without_sizes(decoded.completions)) << text;
  }
}

// An answer outside the plain shape (an escape, a key this SDK does not know) is read by the schema
// decoder, and an invalid one by neither.
TEST(Completions, ReadsOtherAnswersThroughTheSchemaDecoder) {
  const std::string text =
      R"({"completions":[{"state":"finished","request_id":"req-\u0041"},{"state":"failed","request_id":"r2",)"
      R"("note":"kept aside"}],"cursor":7,"server_time":1.5})";
  std::vector<PlainCompletion> completions;
  std::int64_t cursor = 0;
  FuturesRetrieveResponse decoded;
  ASSERT_FALSE(read_plain_completions(text, completions, cursor));
  ASSERT_TRUE(read_completions(text, completions, cursor, decoded));
  EXPECT_EQ(cursor, 7);
  ASSERT_EQ(completions.size(), 2u);
  EXPECT_EQ(completions[0].request_id, "req-A");
  EXPECT_EQ(completions[1].state, "failed");
  EXPECT_EQ(completions[1].request_id, "r2");

  EXPECT_FALSE(read_completions(R"({"completions":[{"request_id":"r"}],"cursor":1})", completions, cursor, decoded));
  EXPECT_FALSE(read_completions("not json", completions, cursor, decoded));
}

}  // namespace
}  // namespace tinker::wire
