// The raw loop of `tinker-bench sample --compare-raw` (src/programs/bench/raw_tinker_client.hpp) sends byte for byte
// the sample body the SDK sends for the same request shape: the comparison measures the client, not a different
// request.
#include "programs/bench/raw_tinker_client.hpp"

#include <tinker/codec.hpp>
#include <tinker/types.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tinker::bench {
namespace {

std::string body_of(const std::string& request) {
  return request.substr(request.find("\r\n\r\n") + 4);
}

TEST(RawTinkerClient, TheSampleBodyIsTheSdks) {
  const std::vector<TokenId> prompt = {101, 7, 999, 42};
  SamplingParams params(16, 1.0);
  params.seed = 1;
  const SampleRequest sdk("sampler-7:sample:0", 1234, ModelInput::from_ints(prompt), params, 3);
  SdkShapedRequests raw(8080, SampleShape("101,7,999,42", 3, 16));
  EXPECT_EQ(body_of(raw.sample("sampler-7:sample:0", 1234)), to_json(sdk));
}

TEST(RawTinkerClient, TheDefaultShapeIsThreeTokensAndOneSampleOfEight) {
  SamplingParams params(8, 1.0);
  params.seed = 1;
  const SampleRequest sdk("s", 5, ModelInput::from_ints(std::vector<TokenId>{11, 12, 13}), params, 1);
  SdkShapedRequests raw(8080);
  EXPECT_EQ(body_of(raw.sample("s", 5)), to_json(sdk));
}

TEST(RawTinkerClient, TheCompletionsPollBodyIsTheSdks) {
  const FuturesRetrieveRequest sdk(SamplingSessionFuturesTarget("sess:sample:0", 0), 17, 30.0);
  SdkShapedRequests raw(8080);
  EXPECT_EQ(body_of(raw.completions_poll("sess:sample:0", 17)), to_json(sdk));
}

TEST(RawTinkerClient, ReadsTheReportedRequestIdsAndTheCursor) {
  const FuturesRetrieveResponse answer(
      {FutureCompletion("finished", "sess:req:1"), FutureCompletion("failed", "sess:req:2")}, 42);
  std::vector<std::string_view> ids = {"stale"};
  const std::string text = to_json(answer);
  EXPECT_EQ(reported_request_ids(text, ids), 42);
  EXPECT_EQ(ids, (std::vector<std::string_view>{"sess:req:1", "sess:req:2"}));
  EXPECT_EQ(reported_request_ids(R"({"completions":[],"cursor":7})", ids), 7);
  EXPECT_TRUE(ids.empty());
}

TEST(RawTinkerClient, AnAnswerWithoutACursorOrWithACutIdIsAnError) {
  std::vector<std::string_view> ids;
  EXPECT_THROW(reported_request_ids(R"({"completions":[]})", ids), std::runtime_error);
  EXPECT_THROW(reported_request_ids(R"({"completions":[{"request_id":"abc)", ids), std::runtime_error);
}

}  // namespace
}  // namespace tinker::bench
