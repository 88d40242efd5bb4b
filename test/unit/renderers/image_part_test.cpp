// ImagePart's factories (file, bytes, data: URI), image_size, the token-count entry points, and
// image parts in conversation_from_json: PNG and JPEG kept byte for byte, WebP made PNG, every
// bad input an error that names the file, URI or JSON path and what is wrong.
#include "core/wire/json_writer.hpp"
#include "image/image_file.hpp"

#include "support/expect_error.hpp"
#include "support/image_samples.hpp"
#include "support/temp_files.hpp"

#include <tinker/renderers.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tinker::renderers {
namespace {

using test::expect_tinker_error;

std::string data_uri(std::string_view media_type, const std::vector<std::uint8_t>& bytes) {
  return "data:" + std::string(media_type) + ";base64," + wire::base64_encode(bytes);
}

TEST(ImagePart, PngAndJpegAreKeptByteForByte) {
  const auto png = test::png_sample(37, 23);
  EXPECT_EQ(ImagePart::from_bytes(png), ImagePart(png, ImageFormat::png));
  const auto jpeg = test::jpeg_sample(37, 23, test::JpegKind::progressive);
  EXPECT_EQ(ImagePart::from_bytes(jpeg), ImagePart(jpeg, ImageFormat::jpeg));
}

TEST(ImagePart, WebpIsDecodedAndReencodedAsPngLosslessly) {
  for (const auto kind :
       {test::WebpKind::lossy, test::WebpKind::lossless, test::WebpKind::lossy_alpha, test::WebpKind::lossless_exif}) {
    const auto webp = test::webp_sample(37, 23, kind);
    const ImagePart part = ImagePart::from_bytes(webp);
    EXPECT_EQ(part.format, ImageFormat::png);
    const image::FileInfo info = image::inspect(part.data);
    EXPECT_EQ(info.format, image::FileFormat::png);
    EXPECT_EQ(info.width, 37u);
    EXPECT_EQ(info.height, 23u);
    // The PNG holds exactly the pixels libwebp decodes.
    EXPECT_EQ(image::decode_rgb(part.data).rgb, image::decode_rgb(webp).rgb);
  }
  EXPECT_EQ(image::decode_rgb(ImagePart::from_bytes(test::webp_sample(8, 8, test::WebpKind::lossless)).data).rgb,
            test::sample_rgb(8, 8));
}

TEST(ImagePart, BadBytesAreNamed) {
  expect_tinker_error(errc::invalid_argument, "image: not a PNG, JPEG or WebP image", [] {
    (void)ImagePart::from_bytes({'h', 'e', 'l', 'l', 'o'});
  });
  expect_tinker_error(errc::invalid_argument, "image: no image data (0 bytes)",
                      [] { (void)ImagePart::from_bytes({}); });
  auto png = test::png_sample(37, 23);
  png.resize(png.size() - 3);
  expect_tinker_error(errc::invalid_argument, "image: PNG: truncated", [&] { (void)ImagePart::from_bytes(png); });
  // A WebP announcing 16384x16384 pixels is refused before the conversion allocates for them.
  auto webp = test::webp_sample(16, 16, test::WebpKind::lossless);
  webp[21] = webp[22] = webp[23] = 0xff;
  webp[24] = static_cast<std::uint8_t>((webp[24] & 0xf0) | 0x0f);
  expect_tinker_error(errc::invalid_argument, "image: webp image of 16384x16384 pixels: more than the 67108864",
                      [&] { (void)ImagePart::from_bytes(webp); });
}

TEST(ImagePart, FromFileReadsTheFileAndNamesItInErrors) {
  const auto jpeg = test::jpeg_sample(20, 10);
  const test::TempFile file(test::as_string(jpeg), ".jpg");
  EXPECT_EQ(ImagePart::from_file(file.path().string()), ImagePart(jpeg, ImageFormat::jpeg));
  const test::TempFile webp(test::as_string(test::webp_sample(20, 10)), ".png");  // the name is not believed
  EXPECT_EQ(ImagePart::from_file(webp.path().string()).format, ImageFormat::png);

  const test::TempDir dir;
  const std::string missing = (dir / "missing.png").string();
  expect_tinker_error(errc::invalid_argument, "image file \"" + missing + "\": cannot open: No such file or directory",
                      [&] { (void)ImagePart::from_file(missing); });
  expect_tinker_error(errc::invalid_argument, "image file \"" + dir.path().string() + "\": ", [&] {
    (void)ImagePart::from_file(dir.path().string());
  });
  const test::TempFile text("just text", ".png");
  expect_tinker_error(errc::invalid_argument,
                      "image file \"" + text.path().string() + "\": not a PNG, JPEG or WebP image",
                      [&] { (void)ImagePart::from_file(text.path().string()); });
}

TEST(ImagePart, FromDataUriReadsEveryImageTypeAndTrustsTheBytes) {
  const auto png = test::png_sample(5, 7);
  const auto jpeg = test::jpeg_sample(5, 7);
  EXPECT_EQ(ImagePart::from_data_uri(data_uri("image/png", png)), ImagePart(png, ImageFormat::png));
  EXPECT_EQ(ImagePart::from_data_uri(data_uri("image/jpeg", jpeg)), ImagePart(jpeg, ImageFormat::jpeg));
  EXPECT_EQ(ImagePart::from_data_uri(data_uri("image/jpg", jpeg)), ImagePart(jpeg, ImageFormat::jpeg));
  EXPECT_EQ(ImagePart::from_data_uri(data_uri("image/webp", test::webp_sample(5, 7))).format, ImageFormat::png);
  EXPECT_EQ(ImagePart::from_data_uri("DATA:IMAGE/PNG;BASE64," + wire::base64_encode(png)),
            ImagePart(png, ImageFormat::png));
  // The format comes from the bytes, whatever the media type says (as for a file name).
  EXPECT_EQ(ImagePart::from_data_uri(data_uri("image/png", jpeg)), ImagePart(jpeg, ImageFormat::jpeg));
}

TEST(ImagePart, FromDataUriNamesWhatIsWrong) {
  const auto png = test::png_sample(5, 7);
  const auto error_of = [](const std::string& uri, std::string_view text) {
    expect_tinker_error(errc::invalid_argument, text, [&] { (void)ImagePart::from_data_uri(uri); });
  };
  error_of("data:image/png;base64,iVBORw0KGgo*", "image data URI: the data is not valid base64");
  error_of("data:image/png;base64,iVBORw0KGgo", "image data URI: the data is not valid base64");  // unpadded
  error_of("data:image/png;base64," + wire::base64_encode(png) + "\n", "not valid base64");
  error_of(data_uri("text/plain", png), "image data URI: media type \"text/plain\" is not an image read here");
  error_of(data_uri("image/gif", png), "media type \"image/gif\" is not an image read here");
  error_of("data:;base64," + wire::base64_encode(png), "media type \"\" is not an image");
  error_of("data:image/png," + test::as_string(png), "image data URI: only base64 data is read");
  error_of("data:image/png;base64", "image data URI: no ',' before the data");
  error_of("https://example.com/cat.png", "image data URI: remote URLs are not fetched; download the image");
  error_of("/tmp/cat.png", "image data URI: not a data: URI (it starts \"/tmp/cat.png\")");
  error_of(data_uri("image/png", {'G', 'I', 'F', '8', '9', 'a', 0, 0}),
           "image data URI: not a PNG, JPEG or WebP image (it looks like a GIF image)");
  auto truncated = png;
  truncated.resize(30);
  error_of(data_uri("image/png", truncated), "image data URI: PNG: truncated");
}

TEST(ImagePart, SizeAndTokenCountsComeFromTheHeader) {
  EXPECT_EQ(image_size(test::png_sample(37, 23)), (ImageSize{37, 23}));
  EXPECT_EQ(image_size(test::jpeg_sample(37, 23)), (ImageSize{37, 23}));
  EXPECT_EQ(image_size(test::webp_sample(37, 23)), (ImageSize{37, 23}));
  expect_tinker_error(errc::invalid_argument, "not a PNG, JPEG or WebP image", [] {
    (void)image_size(std::vector<std::uint8_t>{1, 2, 3});
  });
  // The cookbook's vectors (Qwen3-VL-8B-Instruct; Kimi K2.5).
  EXPECT_EQ(qwen_vl_image_tokens({224, 224}), 64);
  EXPECT_EQ(qwen_vl_image_tokens({150, 224}), 70);
  EXPECT_EQ(qwen_vl_image_tokens({400, 300}), 108);
  EXPECT_EQ(kimi_k25_image_tokens({2048, 1365}), 3626);
  EXPECT_EQ(kimi_k25_image_tokens({17, 64}), 3);
  EXPECT_EQ(kimi_k25_image_tokens({5000, 6000}), 4189);
  expect_tinker_error(errc::invalid_argument, "aspect ratio is over 200", [] { (void)qwen_vl_image_tokens({1, 201}); });
}

// ---- image parts in conversation JSON -----------------------------------------------------------

std::string user_with_part(const std::string& part) {
  return R"({"messages": [{"role": "user", "content": [{"type": "text", "text": "What is it?"}, )" + part + "]}]}";
}

ImagePart image_of(const std::string& json) {
  const std::vector<Message> messages = conversation_from_json(json);
  return std::get<ImagePart>(messages.at(0).content.at(1));
}

TEST(ConversationImages, ReadsBase64DataUrisAndOpenAiImageUrls) {
  const auto png = test::png_sample(5, 7);
  const auto jpeg = test::jpeg_sample(5, 7);
  const auto webp = test::webp_sample(5, 7, test::WebpKind::lossless);
  EXPECT_EQ(image_of(user_with_part(R"({"type": "image", "image": ")" + wire::base64_encode(png) + "\"}")),
            ImagePart(png, ImageFormat::png));
  EXPECT_EQ(
      image_of(user_with_part(R"({"type": "image", "format": "png", "image": ")" + wire::base64_encode(jpeg) + "\"}")),
      ImagePart(jpeg, ImageFormat::jpeg));
  EXPECT_EQ(image_of(user_with_part(R"({"type": "image", "image": ")" + data_uri("image/jpeg", jpeg) + "\"}")),
            ImagePart(jpeg, ImageFormat::jpeg));
  const ImagePart from_webp =
      image_of(user_with_part(R"({"type": "image", "format": "webp", "image": ")" + wire::base64_encode(webp) + "\"}"));
  EXPECT_EQ(from_webp.format, ImageFormat::png);
  EXPECT_EQ(image::decode_rgb(from_webp.data).rgb, test::sample_rgb(5, 7));
  EXPECT_EQ(
      image_of(user_with_part(R"({"type": "image_url", "image_url": {"url": ")" + data_uri("image/png", png) + "\"}}")),
      ImagePart(png, ImageFormat::png));
  EXPECT_EQ(image_of(user_with_part(R"({"type": "image_url", "image_url": ")" + data_uri("image/png", png) + "\"}")),
            ImagePart(png, ImageFormat::png));
}

TEST(ConversationImages, ErrorsNameTheJsonPathAndTheProblem) {
  const auto error_of = [](const std::string& part, std::string_view text) {
    expect_tinker_error(errc::invalid_argument, text, [&] { (void)conversation_from_json(user_with_part(part)); });
  };
  const std::string png64 = wire::base64_encode(test::png_sample(5, 7));
  error_of(R"({"type": "image", "image": "not base64!"})",
           "conversation JSON: messages[0].content[1].image: not valid base64");
  error_of(R"({"type": "image", "image": "https://example.com/a.png"})",
           "messages[0].content[1].image: remote URLs are not fetched; download the image");
  error_of(R"({"type": "image_url", "image_url": {"url": "http://example.com/a.png"}})",
           "messages[0].content[1].image_url.url: image data URI: remote URLs are not fetched");
  error_of(R"({"type": "image_url", "image_url": {"detail": "high"}})",
           "messages[0].content[1].image_url.url: required");
  error_of(R"({"type": "image", "image": ")" + png64 + R"(", "format": "gif"})",
           "messages[0].content[1].format: unknown image format \"gif\" (known: png, jpeg, webp)");
  error_of(R"({"type": "image", "image": "aGVsbG8="})",
           "messages[0].content[1].image: image: not a PNG, JPEG or WebP image");
  error_of(R"({"type": "image"})", "messages[0].content[1].image: required");
  error_of(R"({"type": "image_url", "image_url": {"url": "data:text/plain;base64,aGVsbG8="}})",
           "messages[0].content[1].image_url.url: image data URI: media type \"text/plain\"");
  error_of(R"({"type": "video"})", "unknown part type \"video\" (known: text, thinking, image, image_url)");
}

}  // namespace
}  // namespace tinker::renderers
