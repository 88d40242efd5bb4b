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

}  // namespace
}  // namespace tinker::bench
