// The vision model (doc/local.md#images): an image chunk becomes exactly its Qwen-VL token count
// of positions, computed deterministically from its pixels; bad chunks are refused naming the
// chunk; and training can learn to tell images apart.
#include "programs/local/model/images.hpp"
#include "programs/local/model/tiny_lm_internal.hpp"
#include "unit/programs/local/model/model_test_support.hpp"

#include "image/image_file.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>

namespace tinker::local::model {
namespace {

using namespace testing;
using ::testing::HasSubstr;

constexpr int kVisionVocab = 61;

Architecture vision_arch() {
  Architecture arch = small_arch(kVisionVocab);
  arch.max_context = 256;
  arch.vision = true;
  return arch;
}

using Colour = std::array<std::uint8_t, 3>;

// A width x height image: the left `split` columns `left`, the rest `right`.
image::RgbImage two_colour_image(std::uint32_t width, std::uint32_t height, Colour left, Colour right,
                                 std::uint32_t split) {
  image::RgbImage image;
  image.width = width;
  image.height = height;
  for (std::uint32_t y = 0; y < height; ++y) {
    for (std::uint32_t x = 0; x < width; ++x) {
      const Colour& c = x < split ? left : right;
      image.rgb.insert(image.rgb.end(), c.begin(), c.end());
    }
  }
  return image;
}

ImageChunk png_chunk(std::uint32_t width, std::uint32_t height, Colour colour, std::optional<std::int64_t> tokens) {
  return ImageChunk(image::encode_png(two_colour_image(width, height, colour, colour, width)), ImageFormat::png,
                    tokens);
}

constexpr Colour kRed{220, 30, 30};
constexpr Colour kBlue{30, 40, 210};

// [text prefix] [image] [text suffix] as a cross_entropy datum with weight 0 on image positions.
Datum image_datum(const ImageChunk& image, const std::vector<TokenId>& prefix, const std::vector<TokenId>& suffix,
                  TokenId last_target) {
  ModelInput input;
  input.append(EncodedTextChunk(prefix)).append(image).append(EncodedTextChunk(suffix));
  const auto n = static_cast<std::size_t>(input.length());
  std::vector<std::int64_t> targets(n, 0);
  std::vector<float> weights(n, 0.0f);
  targets.back() = last_target;
  weights.back() = 1.0f;
  LossFnInputs inputs;
  inputs.emplace("target_tokens", TensorData(std::move(targets)));
  inputs.emplace("weights", TensorData(std::move(weights)));
  return Datum(std::move(input), std::move(inputs));
}

void expect_refusal_naming(const std::function<void()>& call, const std::string& message) {
  try {
    call();
    ADD_FAILURE() << "no UserError; expected " << message;
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr(message));
  }
}

TEST(TinyLmVisionGrid, RecoversQwensResizedGrid) {
  int rows = 0;
  int cols = 0;
  token_grid(64, 224, 224, rows, cols);  // 224x224 -> 256x256 -> 8 x 8
  EXPECT_EQ(rows, 8);
  EXPECT_EQ(cols, 8);
  token_grid(70, 150, 224, rows, cols);  // 150 wide, 224 high -> 224 x 320 -> 7 columns, 10 rows
  EXPECT_EQ(rows, 10);
  EXPECT_EQ(cols, 7);
  token_grid(108, 400, 300, rows, cols);  // 400x300 -> 384 x 288 -> 12 columns, 9 rows
  EXPECT_EQ(rows, 9);
  EXPECT_EQ(cols, 12);
  token_grid(7, 1000, 10, rows, cols);  // a prime count: one row
  EXPECT_EQ(rows, 1);
  EXPECT_EQ(cols, 7);
}

TEST(TinyLmVisionGrid, PoolsMeanColourAndPlace) {
  const image::RgbImage image = two_colour_image(8, 4, {255, 0, 0}, {0, 0, 255}, 4);
  const ImageGrid grid = pool_image(image, 2, 4);
  ASSERT_EQ(grid.tokens(), 8);
  ASSERT_EQ(grid.features.size(), 8u * kImageFeatures);
  const double* first = grid.features.data();  // row 0, column 0: red
  EXPECT_DOUBLE_EQ(first[0], 1.0);
  EXPECT_DOUBLE_EQ(first[1], -1.0);
  EXPECT_DOUBLE_EQ(first[2], -1.0);
  EXPECT_DOUBLE_EQ(first[3], -0.5);   // row centre
  EXPECT_DOUBLE_EQ(first[4], -0.75);  // column centre
  EXPECT_DOUBLE_EQ(first[5], 1.0);
  const double* last = grid.features.data() + 7 * kImageFeatures;  // row 1, column 3: blue
  EXPECT_DOUBLE_EQ(last[0], -1.0);
  EXPECT_DOUBLE_EQ(last[2], 1.0);
  EXPECT_DOUBLE_EQ(last[3], 0.5);
  EXPECT_DOUBLE_EQ(last[4], 0.75);
  // More cells than pixels: each cell takes the pixel it falls on.
  const ImageGrid fine = pool_image(image, 8, 16);
  EXPECT_EQ(fine.features.size(), 128u * kImageFeatures);
  EXPECT_DOUBLE_EQ(fine.features[0], 1.0);
}

class TinyLmVision : public ::testing::Test {
 protected:
  TinyLmVision() : base("vision", vision_arch()), lora(base, lora_settings(8, 3)) {}

  BaseModel base;
  LoraState lora;
};

TEST_F(TinyLmVision, AnImageTakesExactlyItsTokenCountOfPositions) {
  const ImageChunk square = png_chunk(224, 224, kRed, 64);
  const ImageChunk tall = png_chunk(150, 224, kBlue, 70);
  ModelInput input;
  input.append(EncodedTextChunk({1, 2, 3})).append(square).append(EncodedTextChunk({4})).append(tall);
  input.append(EncodedTextChunk({5, 6}));
  const InputSequence sequence = read_model_input(input, "prompt", base.arch());
  ASSERT_EQ(sequence.size(), 3u + 64u + 1u + 70u + 2u);
  ASSERT_EQ(static_cast<std::int64_t>(sequence.size()), input.length());
  std::size_t image_positions = 0;
  for (std::size_t t = 0; t < sequence.size(); ++t) image_positions += sequence.is_image(t) ? 1 : 0;
  EXPECT_EQ(image_positions, 134u);
  EXPECT_TRUE(sequence.is_image(3) && sequence.is_image(66) && !sequence.is_image(67) && sequence.is_image(68));
  EXPECT_DOUBLE_EQ(sequence.features(3)[0], 2.0 * 220 / 255 - 1);

  const Datum datum = image_datum(square, {1, 2}, {7, 8}, 9);
  const ForwardBackwardOutput out =
      forward_backward(base, lora, ForwardBackwardInput({datum}, loss_fn::cross_entropy), true);
  EXPECT_EQ(logprobs_of(out, 0).size(), 2u + 64u + 2u);
}

TEST_F(TinyLmVision, EmbeddingsAreADeterministicFunctionOfThePixels) {
  const ImageChunk red = png_chunk(224, 224, kRed, 64);
  const ImageGrid first = read_image_chunk(red, "chunk", 256);
  const ImageGrid again = read_image_chunk(png_chunk(224, 224, kRed, 64), "chunk", 256);
  EXPECT_EQ(first.features, again.features);

  auto forward_on = [&](const ImageChunk& image) {
    const Datum datum = image_datum(image, {1, 2}, {7, 8}, 9);
    return logprobs_of(forward_base(base, ForwardBackwardInput({datum}, loss_fn::cross_entropy)), 0);
  };
  const std::vector<float> red_logprobs = forward_on(red);
  EXPECT_EQ(forward_on(red), red_logprobs);          // bit for bit
  const BaseModel rebuilt("vision", vision_arch());  // the same name: the same frozen projection
  const Datum datum = image_datum(red, {1, 2}, {7, 8}, 9);
  EXPECT_EQ(logprobs_of(forward_base(rebuilt, ForwardBackwardInput({datum}, loss_fn::cross_entropy)), 0), red_logprobs);
  // Another colour changes what the text after the image predicts.
  EXPECT_NE(forward_on(png_chunk(224, 224, kBlue, 64)).back(), red_logprobs.back());
}

TEST_F(TinyLmVision, SamplingReadsImagesAndGivesImagePositionsNoPromptLogprob) {
  ModelInput prompt;
  prompt.append(EncodedTextChunk({1, 2})).append(png_chunk(224, 224, kRed, 64)).append(EncodedTextChunk({3}));
  SampleSettings settings;
  settings.params = SamplingParams(5, 0.0);
  settings.prompt_logprobs = true;
  settings.topk_prompt_logprobs = 2;
  const SampleResponse response = sample(base, &lora, prompt, settings, {});
  ASSERT_EQ(response.sequences.size(), 1u);
  EXPECT_EQ(response.sequences[0].tokens.size(), 5u);
  ASSERT_TRUE(response.prompt_logprobs.has_value());
  const auto& logprobs = *response.prompt_logprobs;
  ASSERT_EQ(logprobs.size(), 67u);
  EXPECT_FALSE(logprobs[0].has_value());
  EXPECT_TRUE(logprobs[1].has_value());    // token 2 after token 1
  EXPECT_FALSE(logprobs[2].has_value());   // the first image cell
  EXPECT_FALSE(logprobs[65].has_value());  // the last image cell
  EXPECT_TRUE(logprobs[66].has_value());   // token 3, after the image
  EXPECT_FALSE((*response.topk_prompt_logprobs)[30].has_value());
  EXPECT_EQ(sample(base, &lora, prompt, settings, {}).sequences[0].tokens, response.sequences[0].tokens);
}

TEST_F(TinyLmVision, BadImageChunksAreRefusedNamingTheChunk) {
  auto read = [&](const ImageChunk& chunk) {
    ModelInput input;
    input.append(EncodedTextChunk({1})).append(chunk);
    read_model_input(input, "data[0].model_input", base.arch());
  };
  expect_refusal_naming([&] { read(png_chunk(150, 224, kRed, 64)); },
                        "data[0].model_input.chunks[1]: Expected 64 tokens, got 70 from image: expected_tokens is 64 "
                        "but the image (150x224) takes 70 tokens");
  expect_refusal_naming(
      [&] { read(png_chunk(224, 224, kRed, std::nullopt)); },
      "data[0].model_input.chunks[1]: expected_tokens is missing; the image (224x224) takes 64 tokens");
  expect_refusal_naming(
      [&] {
        read(ImageChunk({'n', 'o', 't', ' ', 'a', 'n', ' ', 'i', 'm', 'a', 'g', 'e'}, ImageFormat::png, 64));
      },
      "data[0].model_input.chunks[1]: not a readable PNG or JPEG image");
  ImageChunk claimed_jpeg = png_chunk(224, 224, kRed, 64);
  claimed_jpeg.format = ImageFormat::jpeg;
  expect_refusal_naming([&] { read(claimed_jpeg); },
                        "data[0].model_input.chunks[1]: format is \"jpeg\" but the bytes are a PNG image");
  ImageChunk truncated = png_chunk(224, 224, kRed, 64);
  truncated.data.resize(truncated.data.size() / 2);
  expect_refusal_naming([&] { read(truncated); }, "data[0].model_input.chunks[1]: not a readable PNG");
  ImageChunk corrupt = png_chunk(224, 224, kRed, 64);  // the header intact, the pixel data not
  const std::string bytes(corrupt.data.begin(), corrupt.data.end());
  const std::size_t pixels = bytes.find("IDAT");
  ASSERT_NE(pixels, std::string::npos);
  for (std::size_t i = pixels + 4; i < pixels + 24; ++i) corrupt.data[i] ^= 0x5A;
  expect_refusal_naming([&] { read(corrupt); }, "data[0].model_input.chunks[1]: not a readable PNG");
  expect_refusal_naming([&] { read(png_chunk(1024, 1024, kRed, 1024)); },
                        "data[0].model_input.chunks[1]: the image (1024x1024) takes 1024 tokens, more than the model's "
                        "context of 256");
  EXPECT_NO_THROW(read(png_chunk(8, 8, kRed, 64)));  // scaled up to the minimum: one pixel per cell
}

TEST_F(TinyLmVision, AModelWithoutVisionRefusesImages) {
  const BaseModel text_only("text", small_arch(kVisionVocab));
  ModelInput input;
  input.append(png_chunk(224, 224, kRed, 64));
  expect_refusal_naming([&] { read_model_input(input, "prompt", text_only.arch()); },
                        "prompt.chunks[0]: image chunks are not supported; this model reads encoded_text only");
}

// The point of the projection: LoRA training learns to answer differently for different images.
TEST_F(TinyLmVision, TrainingLearnsToTellImagesApart) {
  constexpr TokenId kRedLabel = 10;
  constexpr TokenId kBlueLabel = 20;
  const Datum red = image_datum(png_chunk(224, 224, kRed, 64), {1, 2}, {7, 8}, kRedLabel);
  const Datum blue = image_datum(png_chunk(224, 224, kBlue, 64), {1, 2}, {7, 8}, kBlueLabel);
  const ForwardBackwardInput batch({red, blue}, loss_fn::cross_entropy);
  auto margin = [&](const Datum& datum, TokenId right, TokenId wrong) {
    Activations acts(base.arch(), false);
    std::vector<double> logprobs(kVisionVocab);
    const EffectiveWeights weights(base, &lora.impl());
    const InputSequence sequence = read_model_input(datum.model_input, "input", base.arch());
    for (std::size_t t = 0; t < sequence.size(); ++t) step(weights, sequence, t, acts, logprobs.data());
    return logprobs[right] - logprobs[wrong];
  };
  AdamParams adam(1e-2);
  for (int i = 0; i < 40; ++i) {
    forward_backward(base, lora, batch, false);
    optim_step(lora, adam);
  }
  EXPECT_GT(margin(red, kRedLabel, kBlueLabel), 1.0);
  EXPECT_GT(margin(blue, kBlueLabel, kRedLabel), 1.0);
}

}  // namespace
}  // namespace tinker::local::model
