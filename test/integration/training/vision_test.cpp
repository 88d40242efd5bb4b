// Images through the public SDK against tinker-local/tiny-vl (doc/local.md#images):
// forward_backward, sample and compute_logprobs with an image chunk, the service's 400 for a
// wrong expected_tokens, and a conversation with an image rendered by the qwen3_5 renderer.
#include "integration/support/local_service.hpp"

#include "image/image_file.hpp"

#include <tinker/renderers.hpp>
#include <tinker/tinker.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tinker::test {
namespace {

namespace asio = boost::asio;
namespace renderers = tinker::renderers;
using ::testing::HasSubstr;

constexpr std::string_view vision_model = "tinker-local/tiny-vl";

std::vector<std::uint8_t> solid_png(std::uint32_t width, std::uint32_t height, std::uint8_t red) {
  image::RgbImage image;
  image.width = width;
  image.height = height;
  for (std::uint32_t i = 0; i < width * height; ++i) image.rgb.insert(image.rgb.end(), {red, 90, 30});
  return image::encode_png(image);
}

// The image chunk a client makes: expected_tokens by the public Qwen-VL count.
ImageChunk chunk_of(const std::vector<std::uint8_t>& png) {
  return ImageChunk(png, ImageFormat::png, renderers::qwen_vl_image_tokens(renderers::image_size(png)));
}

// "<|im_start|>user\n<|vision_start|>" image "<|vision_end|>colour?<|im_end|>\n<|im_start|>assistant\n"
ModelInput prompt_with(const Tokenizer& tokenizer, const ImageChunk& image) {
  ModelInput input;
  input.append(EncodedTextChunk(tokenizer.encode("<|im_start|>user\n<|vision_start|>")));
  input.append(image);
  input.append(EncodedTextChunk(tokenizer.encode("<|vision_end|>colour?<|im_end|>\n<|im_start|>assistant\n")));
  return input;
}

// A datum training `answer` after the prompt: image positions have target 0 and weight 0.
Datum answer_datum(const Tokenizer& tokenizer, const ImageChunk& image, const std::string& answer) {
  ModelInput input = prompt_with(tokenizer, image);
  const std::vector<TokenId> reply = tokenizer.encode(answer + "<|im_end|>");
  const auto prompt_length = static_cast<std::size_t>(input.length());
  std::vector<std::int64_t> targets(prompt_length + reply.size() - 1, 0);
  std::vector<float> weights(targets.size(), 0.0f);
  for (std::size_t i = 0; i < reply.size(); ++i) {
    targets[prompt_length - 1 + i] = reply[i];
    weights[prompt_length - 1 + i] = 1.0f;
  }
  input.append(EncodedTextChunk(std::vector<TokenId>(reply.begin(), reply.end() - 1)));
  LossFnInputs inputs;
  inputs.emplace("target_tokens", TensorData(std::move(targets)));
  inputs.emplace("weights", TensorData(std::move(weights)));
  return Datum(std::move(input), std::move(inputs));
}

asio::awaitable<TrainingClient> vision_training(ServiceClient& service) {
  LoraTrainingOptions options(std::string(vision_model), 8);
  options.seed = 3;
  co_return co_await service.async_create_lora_training_client(options, use_awaitable);
}

class VisionTest : public LocalService {};

class VisionRun {
 public:
  std::int64_t datum_length = 0;
  std::size_t forward_logprobs = 0;
  std::vector<SampledSequence> sequences;
  std::int64_t prompt_length = 0;
  std::size_t text_before_image = 0;
  PromptLogprobs prompt_logprobs;
};

asio::awaitable<VisionRun> train_and_sample_with_an_image(ServiceClient& service) {
  TrainingClient training = co_await vision_training(service);
  const auto tokenizer = co_await training.async_get_tokenizer(use_awaitable);
  const ImageChunk image = chunk_of(solid_png(224, 224, 200));
  const Datum datum = answer_datum(*tokenizer, image, "red");
  const std::vector<Datum> batch{datum};
  VisionRun run;
  run.datum_length = datum.model_input.length();

  auto gradients =
      co_await training.async_forward_backward(ForwardBackwardInput(batch, loss_fn::cross_entropy), use_awaitable);
  auto update = co_await training.async_optim_step(AdamParams(1e-3), use_awaitable);
  const ForwardBackwardOutput output = co_await gradients.async_get(use_awaitable);
  co_await update.async_get(use_awaitable);
  run.forward_logprobs = output.loss_fn_outputs.at(0).at("logprobs").floats().size();

  SamplingClient sampler = co_await training.async_save_weights_and_get_sampling_client(use_awaitable);
  const ModelInput prompt = prompt_with(*tokenizer, image);
  auto sampling = co_await sampler.async_sample(prompt, 2, SamplingParams(4, 1.0), SampleOptions(), use_awaitable);
  run.sequences = (co_await sampling.async_get(use_awaitable)).sequences;
  auto computing = co_await sampler.async_compute_logprobs(prompt, use_awaitable);
  run.prompt_logprobs = co_await computing.async_get(use_awaitable);
  run.prompt_length = prompt.length();
  run.text_before_image = std::get<EncodedTextChunk>(prompt.chunks[0]).tokens.size();
  co_return run;
}

TEST_F(VisionTest, ForwardBackwardSampleAndComputeLogprobsWithAnImage) {
  auto service = make_service_client();
  const VisionRun result = run(train_and_sample_with_an_image(*service));
  EXPECT_EQ(static_cast<std::int64_t>(result.forward_logprobs), result.datum_length);
  ASSERT_EQ(result.sequences.size(), 2u);
  EXPECT_EQ(result.sequences[0].tokens.size(), 4u);
  ASSERT_EQ(static_cast<std::int64_t>(result.prompt_logprobs.size()), result.prompt_length);
  const std::size_t first_cell = result.text_before_image;
  EXPECT_TRUE(result.prompt_logprobs[first_cell - 1].has_value());  // the last token before the image
  EXPECT_FALSE(result.prompt_logprobs[first_cell].has_value());     // an image cell is not a token
  EXPECT_FALSE(result.prompt_logprobs[first_cell + 63].has_value());
  EXPECT_TRUE(result.prompt_logprobs[first_cell + 64].has_value());  // <|vision_end|>, after the image
}

class RefusedRun {
 public:
  std::optional<std::int64_t> counted;
  bool failed = false;
  diagnostics diag;
  std::size_t retried_logprobs = 0;
};

asio::awaitable<RefusedRun> submit_a_wrong_count(ServiceClient& service) {
  TrainingClient training = co_await vision_training(service);
  const auto tokenizer = co_await training.async_get_tokenizer(use_awaitable);
  ImageChunk image = chunk_of(solid_png(150, 224, 20));
  RefusedRun run;
  run.counted = image.expected_tokens;
  image.expected_tokens = 64;
  const std::vector<Datum> wrong{answer_datum(*tokenizer, image, "red")};
  auto [ec, future] =
      co_await training.async_forward_backward(ForwardBackwardInput(wrong, loss_fn::cross_entropy), run.diag, no_throw);
  if (!ec) ec = std::get<0>(co_await future.async_get(run.diag, no_throw));
  run.failed = static_cast<bool>(ec);

  // The refused submit used no seq_id: the model keeps training.
  image.expected_tokens = run.counted;
  const std::vector<Datum> fixed{answer_datum(*tokenizer, image, "red")};
  auto gradients =
      co_await training.async_forward_backward(ForwardBackwardInput(fixed, loss_fn::cross_entropy), use_awaitable);
  run.retried_logprobs =
      (co_await gradients.async_get(use_awaitable)).loss_fn_outputs.at(0).at("logprobs").floats().size();
  co_return run;
}

TEST_F(VisionTest, AWrongExpectedTokensIsRefusedWithTheServicesWords) {
  auto service = make_service_client();
  const RefusedRun result = run(submit_a_wrong_count(*service));
  EXPECT_EQ(result.counted, 70);
  EXPECT_TRUE(result.failed);
  EXPECT_EQ(result.diag.http_status, 400);
  EXPECT_THAT(result.diag.message, HasSubstr("data[0].model_input.chunks[1]: Expected 64 tokens, got 70 from image"));
  EXPECT_GT(result.retried_logprobs, 70u);
}

// The renderer path end to end: an ImagePart in a conversation, rendered by qwen3_5 (the
// recommended renderer of tiny-vl), trained on and sampled from.
asio::awaitable<renderers::ParsedResponse> render_train_and_sample(ServiceClient& service) {
  TrainingClient training = co_await vision_training(service);
  const auto tokenizer = co_await training.async_get_tokenizer(use_awaitable);
  const auto renderer = renderers::make_renderer(renderers::recommended_renderer(vision_model), tokenizer);
  const std::vector<renderers::Message> conversation{
      renderers::Message("user", {renderers::ImagePart::from_bytes(solid_png(224, 224, 230)),
                                  renderers::TextPart("What colour is this image?")}),
      renderers::Message("assistant", "red")};
  const renderers::SupervisedExample example =
      renderer->build_supervised_example(conversation, renderers::TrainOn::last_assistant_message);
  const std::vector<Datum> batch{example.to_datum()};
  auto gradients =
      co_await training.async_forward_backward(ForwardBackwardInput(batch, loss_fn::cross_entropy), use_awaitable);
  co_await gradients.async_get(use_awaitable);

  const std::vector<renderers::Message> question(conversation.begin(), conversation.end() - 1);
  SamplingParams params(8, 0.0);
  params.stop = renderer->stop_sequences();
  SamplingClient sampler = co_await training.async_save_weights_and_get_sampling_client(use_awaitable);
  auto sampling = co_await sampler.async_sample(renderer->build_generation_prompt(question), 1, params, SampleOptions(),
                                                use_awaitable);
  const SampleResponse response = co_await sampling.async_get(use_awaitable);
  co_return renderer->parse_response(response.sequences.at(0).tokens);
}

TEST_F(VisionTest, AConversationWithAnImageRendersTrainsAndSamples) {
  EXPECT_EQ(renderers::recommended_renderer(vision_model), "qwen3_5");
  auto service = make_service_client();
  const renderers::ParsedResponse reply = run(render_train_and_sample(*service));
  EXPECT_EQ(reply.message.role, "assistant");
}

}  // namespace
}  // namespace tinker::test
