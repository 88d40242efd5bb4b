// The capacity hint of the JSON bulk requests: an upper bound of the encoded text, so that to_json
// writes the body once into one buffer (doc/performance.md#training-path).
#include "core/wire/json_api.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace tinker::wire {
namespace {

// Values chosen for the longest texts of each kind: negative and extreme integers, floats that
// need 9 significant digits and an exponent, integral floats with and without a sign, -0.0.
Datum awkward_datum() {
  std::vector<TokenId> tokens{0, 1, 9, 10, 151935, std::numeric_limits<TokenId>::max()};
  std::vector<std::int64_t> targets{
      std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(), -1, 0, 7, 1234567890123};
  std::vector<float> weights{-0.0f, 0.0f, 1.0f, -1.0f, 9999999.0f, 1.17549435e-38f};
  std::vector<float> advantages{-1.23456789e-37f, 3.40282347e+38f, 0.1f, -0.333333343f, 16777216.0f, 1e7f};
  LossFnInputs inputs{{"target_tokens", TensorData(std::move(targets))},
                      {"weights", TensorData(std::move(weights), std::vector<std::int64_t>{2, 3})},
                      {"advantages", TensorData(std::move(advantages))}};
  ModelInput input = ModelInput::from_ints(std::move(tokens));
  input.append(ImageChunk(std::vector<std::uint8_t>(100, 0xff), ImageFormat::png, 4));
  input.append(ImageAssetPointerChunk("s3://bucket/\"quoted\"\n", ImageFormat::jpeg, 4));
  return Datum(std::move(input), std::move(inputs));
}

ForwardBackwardInput batch_of(std::size_t datums) {
  std::vector<Datum> data(datums, awkward_datum());
  data.push_back(Datum(ModelInput::from_ints(std::vector<TokenId>{}), LossFnInputs{}));
  const TensorData sparse = TensorData::sparse_csr(std::vector<float>{0.5f, -2.0f}, 2, 3, {0, 1, 2}, {2, 0});
  data.back().loss_fn_inputs.emplace("mask", sparse);
  return ForwardBackwardInput(std::move(data), loss_fn::ppo, LossFnConfig{{"clip_low_threshold", 0.8}});
}

TEST(JsonCapacityHint, BoundsTheForwardBackwardBody) {
  for (const std::size_t datums : {std::size_t{0}, std::size_t{1}, std::size_t{17}}) {
    const ForwardBackwardRequest request("session:train:0", 12345, batch_of(datums));
    const std::string body = to_json(request);
    EXPECT_GE(json_capacity_hint(request), body.size()) << datums << " datums";
    EXPECT_EQ(body.capacity(), json_capacity_hint(request)) << "the body outgrew the hint";
  }
}

TEST(JsonCapacityHint, BoundsTheForwardBody) {
  const ForwardRequest request("session:train:0", 3, batch_of(5));
  const std::string body = to_json(request);
  EXPECT_GE(json_capacity_hint(request), body.size());
  EXPECT_EQ(body.capacity(), json_capacity_hint(request));
}

TEST(JsonCapacityHint, SmallBodiesKeepTheDefault) {
  EXPECT_EQ(json_capacity_hint(AdamParams(1e-4)), 128u);
}

}  // namespace
}  // namespace tinker::wire
