// wire::append_sample_body: the asample body written directly must be append_json's text, byte
// for byte, for every request (and fail as append_json fails).
#include "core/wire/sample_body.hpp"

#include <tinker/codec.hpp>
#include <tinker/error.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace tinker::wire {
namespace {

std::string generic(const SampleRequest& request) {
  std::string out = "prefix";
  append_json(request, out);
  return out;
}

std::string direct(const SampleRequest& request) {
  std::string out = "prefix";
  append_sample_body(request, out);
  return out;
}

std::vector<TokenId> random_tokens(std::mt19937& random, std::size_t count) {
  std::uniform_int_distribution<TokenId> token(std::numeric_limits<TokenId>::min(),
                                               std::numeric_limits<TokenId>::max());
  std::vector<TokenId> tokens(count);
  for (TokenId& t : tokens) t = token(random);
  return tokens;
}

double random_double(std::mt19937& random) {
  static const double specials[] = {0.0,       -0.0,   1.0,     0.7,      1e-300,  -2.5e300, 5e-324, 123456789.125,
                                    0.1 + 0.2, 9999.0, 10000.0, -10000.0, 99999.0, 1e5,      -3.0,   120000.0};
  std::uniform_int_distribution<std::size_t> pick(0, std::size(specials));
  const std::size_t index = pick(random);
  if (index < std::size(specials)) return specials[index];
  return std::uniform_real_distribution<double>(-10, 10)(random);
}

SampleRequest random_request(std::mt19937& random) {
  std::bernoulli_distribution coin;
  std::uniform_int_distribution<std::size_t> chunk_count(0, 3);
  std::uniform_int_distribution<std::size_t> token_count(0, 700);  // across int_array's 512-number blocks
  std::uniform_int_distribution<std::int64_t> any_int(std::numeric_limits<std::int64_t>::min(),
                                                      std::numeric_limits<std::int64_t>::max());
  SampleRequest request;
  request.num_samples = any_int(random);
  for (std::size_t i = chunk_count(random); i > 0; --i) {
    request.prompt.chunks.emplace_back(EncodedTextChunk(random_tokens(random, token_count(random))));
  }
  SamplingParams& params = request.sampling_params;
  if (coin(random)) params.max_tokens = any_int(random);
  if (coin(random)) params.seed = coin(random) ? std::numeric_limits<std::uint64_t>::max() : 1;
  params.temperature = random_double(random);
  params.top_k = any_int(random);
  params.top_p = random_double(random);
  if (coin(random)) {
    static const char* ids[] = {"sampler-1", "", "quote\" back\\slash \x01 caf\xc3\xa9",
                                "0f8a1c2e-5b6d-4e7f-8a9b-0c1d2e3f4a5b"};
    request.sampling_session_id = ids[std::uniform_int_distribution<std::size_t>(0, 3)(random)];
  }
  if (coin(random)) request.seq_id = any_int(random);
  if (coin(random)) request.prompt_logprobs = coin(random);
  request.topk_prompt_logprobs = coin(random) ? 0 : any_int(random);
  return request;
}

TEST(SampleBody, IsAppendJsonsTextForRandomRequests) {
  std::mt19937 random(20261126);
  for (int i = 0; i < 400; ++i) {
    const SampleRequest request = random_request(random);
    ASSERT_EQ(direct(request), generic(request)) << "request " << i;
  }
}

TEST(SampleBody, TheSamplersUsualRequest) {
  SampleRequest request("sampler-7", 12, ModelInput::from_ints(std::vector<TokenId>{11, 12, 13}), SamplingParams(8));
  request.sampling_params.seed = 1;
  EXPECT_EQ(direct(request),
            R"(prefix{"num_samples":1,"prompt":{"chunks":[{"tokens":[11,12,13],"type":"encoded_text"}]},)"
            R"("sampling_params":{"max_tokens":8,"seed":1,"temperature":1,"top_k":-1,"top_p":1},)"
            R"("sampling_session_id":"sampler-7","seq_id":12,"topk_prompt_logprobs":0,"type":"sample"})");
}

TEST(SampleBody, OtherShapesGoThroughTheGenericEncoder) {
  SampleRequest request("sampler-7", 3, ModelInput::from_ints(std::vector<TokenId>{1, 2}), SamplingParams(4));
  SampleRequest with_image = request;
  with_image.prompt.chunks.emplace_back(ImageChunk({0x89, 0x50}, ImageFormat::png, 3));
  SampleRequest with_stop = request;
  with_stop.sampling_params.stop = StopCondition(std::vector<std::string>{"\n\n", "END"});
  SampleRequest by_model = request;
  by_model.sampling_session_id.reset();
  by_model.base_model = "tinker-local/tiny-lm";
  SampleRequest by_path = request;
  by_path.model_path = "tinker://run/sampler_weights/0001";
  for (const SampleRequest* other : {&with_image, &with_stop, &by_model, &by_path}) {
    EXPECT_EQ(direct(*other), generic(*other));
  }
}

// What append_json refuses, append_sample_body refuses the same way, leaving the buffer as it was.
void expect_same_failure(const SampleRequest& request) {
  std::string generic_out = "prefix";
  std::string direct_out = "prefix";
  std::string generic_message;
  std::string direct_message;
  try {
    append_json(request, generic_out);
  } catch (const error& e) {
    generic_message = e.what();
  }
  try {
    append_sample_body(request, direct_out);
  } catch (const error& e) {
    direct_message = e.what();
  }
  EXPECT_FALSE(generic_message.empty());
  EXPECT_EQ(direct_message, generic_message);
  EXPECT_EQ(direct_out, "prefix");
}

TEST(SampleBody, FailsAsAppendJsonFails) {
  SampleRequest request("sampler-7", 3, ModelInput::from_ints(std::vector<TokenId>{1, 2}), SamplingParams(4));
  SampleRequest nan_temperature = request;
  nan_temperature.sampling_params.temperature = std::nan("");
  expect_same_failure(nan_temperature);
  SampleRequest infinite_top_p = request;
  infinite_top_p.sampling_params.top_p = std::numeric_limits<double>::infinity();
  expect_same_failure(infinite_top_p);
  SampleRequest bad_id = request;
  bad_id.sampling_session_id = "bad \xff utf-8";
  expect_same_failure(bad_id);
}

}  // namespace
}  // namespace tinker::wire
