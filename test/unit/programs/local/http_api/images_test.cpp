// doc/local.md#images: image chunks over HTTP. tinker-local/tiny-vl takes them in forward_backward
// (JSON and protobuf) and asample; a chunk the service would refuse is answered 400 naming it
// (before the request takes its seq_id); models without vision refuse images naming the model.
#include "unit/programs/local/support/expectations.hpp"
#include "unit/programs/local/support/local_server.hpp"
#include "unit/programs/local/support/training_steps.hpp"

#include "image/image_file.hpp"

#include <gmock/gmock.h>

#include <boost/json/parse.hpp>

namespace tinker::local::test {
namespace {

namespace json = boost::json;
using ::testing::HasSubstr;

constexpr std::string_view vision_model = "tinker-local/tiny-vl";

// Standard base64 with padding (doc/protocol.md#json-encoding), written here so the test checks
// the server against the protocol rather than against the SDK's own encoder.
std::string base64(const std::vector<std::uint8_t>& bytes) {
  static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string text;
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t left = bytes.size() - i;
    const std::uint32_t group = (bytes[i] << 16) | (left > 1 ? bytes[i + 1] << 8 : 0) | (left > 2 ? bytes[i + 2] : 0);
    text += alphabet[(group >> 18) & 63];
    text += alphabet[(group >> 12) & 63];
    text += left > 1 ? alphabet[(group >> 6) & 63] : '=';
    text += left > 2 ? alphabet[group & 63] : '=';
  }
  return text;
}

// A solid `width` x `height` PNG.
std::vector<std::uint8_t> solid_png(std::uint32_t width, std::uint32_t height, std::uint8_t red) {
  image::RgbImage image;
  image.width = width;
  image.height = height;
  for (std::uint32_t i = 0; i < width * height; ++i) image.rgb.insert(image.rgb.end(), {red, 40, 90});
  return image::encode_png(image);
}

json::object text_chunk(const Tokens& tokens) {
  json::object chunk;
  chunk["tokens"] = int_array(tokens);
  chunk["type"] = "encoded_text";
  return chunk;
}

json::object image_chunk(const std::vector<std::uint8_t>& png, std::optional<std::int64_t> expected_tokens) {
  json::object chunk;
  chunk["data"] = base64(png);
  chunk["format"] = "png";
  if (expected_tokens) chunk["expected_tokens"] = *expected_tokens;
  chunk["type"] = "image";
  return chunk;
}

// {"chunks": [text {1, 2, 3}, the image, text {4, 5}]}
json::object input_with_image(json::object image) {
  json::array chunks;
  chunks.emplace_back(text_chunk({1, 2, 3}));
  chunks.emplace_back(std::move(image));
  chunks.emplace_back(text_chunk({4, 5}));
  json::object input;
  input["chunks"] = std::move(chunks);
  return input;
}

// A cross_entropy datum over `input` of `length` positions: weight 1 on the last target only
// (image positions carry weight 0, as a renderer writes them).
json::object datum_over(json::object input, std::size_t length) {
  Tokens targets(length, 0);
  std::vector<double> weights(length, 0.0);
  targets.back() = 6;
  weights.back() = 1.0;
  json::object inputs;
  inputs["target_tokens"] = int64_tensor(targets);
  inputs["weights"] = float32_tensor(weights);
  json::object datum;
  datum["model_input"] = std::move(input);
  datum["loss_fn_inputs"] = std::move(inputs);
  return datum;
}

class HttpApiImages : public LocalServerTest {
 protected:
  void SetUp() override { session = api().create_session(); }

  RawResponse post_forward_backward(const std::string& model, std::int64_t seq, json::object image) {
    json::array data;
    data.emplace_back(datum_over(input_with_image(std::move(image)), 3 + 64 + 2));
    return api().post("/api/v1/forward_backward", forward_backward_body(model, seq, std::move(data)));
  }

  static std::string detail_of(const RawResponse& response) { return string_field(response.json(), "detail"); }

  std::string session;
  const std::vector<std::uint8_t> square = solid_png(224, 224, 200);
};

TEST_F(HttpApiImages, ForwardBackwardWithAnImageChunkSucceeds) {
  const std::string model = api().create_model(session, 0, 4, vision_model);
  const RawResponse ticket = post_forward_backward(model, 1, image_chunk(square, 64));
  ASSERT_EQ(ticket.status, 200) << ticket.describe();
  const std::vector<std::vector<double>> logprobs =
      json_logprobs(api().await_json(string_field(ticket.json(), "request_id")));
  ASSERT_EQ(logprobs.size(), 1u);
  EXPECT_EQ(logprobs[0].size(), 3u + 64u + 2u);  // the image is exactly its 64 positions
}

TEST_F(HttpApiImages, ProtobufForwardBackwardCarriesImages) {
  const std::string model = api().create_model(session, 0, 4, vision_model);
  tinker_public::ForwardBackwardRequest request = proto_forward_backward(model, 1, {{1, 2, 3, 4}}, true);
  tinker_public::Datum& datum = *request.mutable_data(0);
  tinker_public::ImageChunk& image = *datum.add_model_input()->mutable_image();
  image.set_data(std::string(square.begin(), square.end()));
  image.set_format("png");
  image.set_expected_tokens(64);
  datum.add_model_input()->mutable_encoded_text()->set_tokens(int32_le({5}));
  // target_tokens and weights cover the 3 + 64 + 1 positions.
  auto& targets = (*datum.mutable_loss_fn_inputs())["target_tokens"];
  targets.set_dense(int64_le(Tokens(68, 1)));
  targets.set_shape(0, 68);
  auto& weights = (*datum.mutable_loss_fn_inputs())["weights"];
  weights.set_dense(float32_le(std::vector<float>(68, 0.0f)));
  weights.set_shape(0, 68);
  const std::string id = api().submit_raw("/api/v1/forward_backward", request.SerializeAsString(), protobuf_type);
  const std::vector<std::vector<double>> logprobs = json_logprobs(api().await_json(id));
  ASSERT_EQ(logprobs.size(), 1u);
  EXPECT_EQ(logprobs[0].size(), 68u);
}

TEST_F(HttpApiImages, WrongExpectedTokensIs400NamingTheChunkAndLeavesTheSeqIdFree) {
  const std::string model = api().create_model(session, 0, 4, vision_model);
  const RawResponse refused = post_forward_backward(model, 1, image_chunk(square, 70));
  ASSERT_EQ(refused.status, 400) << refused.describe();
  EXPECT_EQ(detail_of(refused),
            "data[0].model_input.chunks[1]: Expected 70 tokens, got 64 from image: expected_tokens is 70 but the image "
            "(224x224) takes 64 tokens by Qwen-VL's rule");
  // The refused request took no seq_id: the client sends the next operation with the same one.
  const RawResponse accepted = post_forward_backward(model, 1, image_chunk(square, 64));
  ASSERT_EQ(accepted.status, 200) << accepted.describe();
  api().await_json(string_field(accepted.json(), "request_id"));

  const RawResponse missing = post_forward_backward(model, 2, image_chunk(square, std::nullopt));
  ASSERT_EQ(missing.status, 400) << missing.describe();
  EXPECT_THAT(detail_of(missing), HasSubstr("chunks[1]: expected_tokens is missing; the image (224x224) takes 64"));

  const RawResponse garbage = post_forward_backward(model, 2, image_chunk({1, 2, 3, 4, 5, 6, 7, 8}, 64));
  ASSERT_EQ(garbage.status, 400) << garbage.describe();
  EXPECT_THAT(detail_of(garbage), HasSubstr("data[0].model_input.chunks[1]: not a readable PNG or JPEG image"));
}

TEST_F(HttpApiImages, ModelsWithoutVisionRefuseImagesNamingTheModel) {
  const std::string model = api().create_model(session, 0, 4, tiny_model);
  const RawResponse refused = post_forward_backward(model, 1, image_chunk(square, 64));
  ASSERT_EQ(refused.status, 400) << refused.describe();
  EXPECT_EQ(detail_of(refused),
            "data[0].model_input.chunks[1]: base model tinker-local/tiny-lm does not take images (image chunks need a "
            "vision model: tinker-local/tiny-vl)");

  const std::string sampler = create_sampling_session(api(), session, 0, "tinker-local/tiny-lm-sp", std::nullopt);
  json::object body = sample_body(sampler, 0, {1}, 1, 2, 0.0, 1);
  body["prompt"] = input_with_image(image_chunk(square, 64));
  const RawResponse sample = api().post("/api/v1/asample", body);
  ASSERT_EQ(sample.status, 400) << sample.describe();
  EXPECT_THAT(detail_of(sample),
              HasSubstr("prompt.chunks[1]: base model tinker-local/tiny-lm-sp does not take images"));
}

TEST_F(HttpApiImages, SampleAndPromptLogprobsWithAnImage) {
  const std::string sampler = create_sampling_session(api(), session, 0, std::string(vision_model), std::nullopt);
  json::object body = sample_body(sampler, 0, {1}, 2, 3, 1.0, 7);
  body["prompt"] = input_with_image(image_chunk(square, 64));
  body["prompt_logprobs"] = true;  // what compute_logprobs asks for
  const json::value result = api().call("/api/v1/asample", body);
  const json::array& sequences = items(result, "sequences");
  ASSERT_EQ(sequences.size(), 2u);
  EXPECT_EQ(integers(field(sequences[0], "tokens")).size(), 3u);
  const json::array& prompt_logprobs = items(result, "prompt_logprobs");
  ASSERT_EQ(prompt_logprobs.size(), 3u + 64u + 2u);
  EXPECT_TRUE(prompt_logprobs[0].is_null());
  EXPECT_LE(number(prompt_logprobs[1]), 0.0);
  EXPECT_TRUE(prompt_logprobs[3].is_null());    // an image cell is not a token
  EXPECT_TRUE(prompt_logprobs[66].is_null());   // the image's last cell
  EXPECT_LE(number(prompt_logprobs[67]), 0.0);  // token 4, after the image

  json::object wrong = sample_body(sampler, 1, {1}, 1, 3, 1.0, 7);
  wrong["prompt"] = input_with_image(image_chunk(solid_png(150, 224, 10), 64));
  const RawResponse refused = api().post("/api/v1/asample", wrong);
  ASSERT_EQ(refused.status, 400) << refused.describe();
  EXPECT_THAT(detail_of(refused), HasSubstr("prompt.chunks[1]: Expected 64 tokens, got 70 from image"));
}

TEST_F(HttpApiImages, TheVisionModelHasQwensMarkupInItsTokenizer) {
  const std::string model = api().create_model(session, 0, 4, vision_model);
  json::object body;
  body["model_id"] = model;
  body["type"] = "get_info";
  const json::value info = api().post("/api/v1/get_info", body).json();
  EXPECT_EQ(string_field(field(info, "model_data"), "tokenizer_id"), "tinker-local/tiny-bpe-vl");
  EXPECT_EQ(api().server().tokenizer_id(vision_model), "tinker-local/tiny-bpe-vl");
}

}  // namespace
}  // namespace tinker::local::test
