// The external-weights wire types (doc/rest.md#external-weights): exact request bodies (omitted
// optionals, the union tag), and both shapes of an upload target (0.40 object, 0.39 bare URL).
#include <tinker/codec.hpp>
#include <tinker/error.hpp>
#include <tinker/types.hpp>

#include <gtest/gtest.h>

#include <string>

namespace tinker {
namespace {

TEST(ExternalWeightsCodec, SaveRequestOmitsUnsetOptionalsAndCarriesItsTag) {
  SaveWeightsExternalRequest request("run:train:0", 7, "step-7");
  EXPECT_EQ(to_json(request),
            R"({"model_id":"run:train:0","path":"step-7","seq_id":7,"type":"save_weights_external"})");
  request.ttl_seconds = 3600;
  request.age_encryption_recipients = std::vector<std::string>{"age1abc", "ssh-ed25519 AAAA"};
  EXPECT_EQ(to_json(request),
            R"({"model_id":"run:train:0","path":"step-7","seq_id":7,"ttl_seconds":3600,)"
            R"("age_encryption_recipients":["age1abc","ssh-ed25519 AAAA"],"type":"save_weights_external"})");
  EXPECT_EQ(from_json<SaveWeightsExternalRequest>(to_json(request)), request);
}

TEST(ExternalWeightsCodec, SaveResponseReadsPathAndOptionalSize) {
  const auto bare = from_json<SaveWeightsExternalResponse>(R"({"path":"tinker://r/external_weights/a"})");
  EXPECT_EQ(bare.path, "tinker://r/external_weights/a");
  EXPECT_FALSE(bare.size_bytes.has_value());
  const auto full = from_json<SaveWeightsExternalResponse>(
      R"({"path":"tinker://r/external_weights/a","size_bytes":123,"type":"save_weights_external"})");
  EXPECT_EQ(full.size_bytes, 123);
  EXPECT_THROW(from_json<SaveWeightsExternalResponse>(R"({"path":"p","type":"save_weights"})"), error);
}

TEST(ExternalWeightsCodec, UrlsResponseMapsRelativePathsToUrls) {
  const auto urls = from_json<ExternalWeightsUrlsResponse>(
      R"({"urls":{"adapter_config.json":"https://s/1","sub/w.safetensors":"https://s/2"},)"
      R"("expires":"2026-11-28T12:00:00Z","extra":1})");
  ASSERT_EQ(urls.urls.size(), 2u);
  EXPECT_EQ(urls.urls.at("sub/w.safetensors"), "https://s/2");
  EXPECT_EQ(format_timestamp(urls.expires), "2026-11-28T12:00:00Z");
  EXPECT_THROW(from_json<ExternalWeightsUrlsResponse>(R"({"urls":{}})"), error);  // expires is required
}

TEST(ExternalWeightsCodec, UploadStartRequestBody) {
  ExternalWeightsUploadStartRequest request("Qwen/Qwen3-8B", LoraConfig(8));
  EXPECT_EQ(to_json(request),
            R"({"base_model":"Qwen/Qwen3-8B","lora_config":{"rank":8,"train_unembed":true,"train_mlp":true,)"
            R"("train_attn":true}})");
  request.destination_project_id = "proj-1";
  EXPECT_EQ(to_json(request),
            R"({"base_model":"Qwen/Qwen3-8B","lora_config":{"rank":8,"train_unembed":true,"train_mlp":true,)"
            R"("train_attn":true},"destination_project_id":"proj-1"})");
}

TEST(ExternalWeightsCodec, UploadStartResponseTakesObjectTargetsWithHeaders) {
  const auto start = from_json<ExternalWeightsUploadStartResponse>(
      R"({"upload_id":"u1","expires":"2026-11-28T12:00:00Z","urls":{"adapter_model.safetensors":)"
      R"({"url":"https://store/put/1","headers":{"x-goog-meta":"a","Content-Type":"application/octet-stream"}}}})");
  EXPECT_EQ(start.upload_id, "u1");
  const ExternalWeightsUploadUrl& target = start.urls.at("adapter_model.safetensors");
  EXPECT_EQ(target.url, "https://store/put/1");
  EXPECT_EQ(target.headers.at("x-goog-meta"), "a");
  EXPECT_EQ(target.headers.size(), 2u);
}

TEST(ExternalWeightsCodec, UploadStartResponseTakesBareUrlTargetsOfTheOlderShape) {
  const auto start = from_json<ExternalWeightsUploadStartResponse>(
      R"({"upload_id":"u2","expires":"2026-11-28T12:00:00Z","urls":{"adapter_config.json":"https://store/put/2"}})");
  const ExternalWeightsUploadUrl& target = start.urls.at("adapter_config.json");
  EXPECT_EQ(target.url, "https://store/put/2");
  EXPECT_TRUE(target.headers.empty());
  try {
    (void)from_json<ExternalWeightsUploadStartResponse>(
        R"({"upload_id":"u","expires":"2026-11-28T12:00:00Z","urls":{"a":7}})");
    FAIL() << "a number target was accepted";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("urls.a"), std::string::npos) << e.what();
  }
}

TEST(ExternalWeightsCodec, UploadTargetEncodesAsTheNewerObject) {
  const ExternalWeightsUploadUrl target("https://s/p", {{"X-Token", "t"}});
  EXPECT_EQ(to_json(target), R"({"url":"https://s/p","headers":{"X-Token":"t"}})");
  EXPECT_EQ(from_json<ExternalWeightsUploadUrl>(to_json(target)), target);
}

TEST(ExternalWeightsCodec, UploadFinishBodies) {
  EXPECT_EQ(to_json(ExternalWeightsUploadFinishRequest("u1")), R"({"upload_id":"u1"})");
  EXPECT_EQ(
      from_json<ExternalWeightsUploadFinishResponse>(R"({"tinker_path":"tinker://u/external_weights/x"})").tinker_path,
      "tinker://u/external_weights/x");
}

std::string options_problem(const std::string& name, const SaveWeightsExternalOptions& options) {
  try {
    check_save_weights_external_options(name, options);
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::invalid_argument);
    return e.what();
  }
  return "accepted";
}

TEST(ExternalWeightsOptions, TtlBoundsNameAndRecipientsAreChecked) {
  EXPECT_EQ(options_problem("a", SaveWeightsExternalOptions()), "accepted");
  EXPECT_EQ(options_problem("a", SaveWeightsExternalOptions(3600)), "accepted");
  EXPECT_EQ(options_problem("a", SaveWeightsExternalOptions(315360000)), "accepted");
  EXPECT_NE(options_problem("a", SaveWeightsExternalOptions(3599)).find("ttl_seconds must be 3600..315360000"),
            std::string::npos);
  EXPECT_NE(options_problem("a", SaveWeightsExternalOptions(315360001)).find("got 315360001"), std::string::npos);
  EXPECT_NE(options_problem("", SaveWeightsExternalOptions()).find("name must not be empty"), std::string::npos);
  SaveWeightsExternalOptions empty_list;
  empty_list.age_encryption_recipients = std::vector<std::string>{};
  EXPECT_NE(options_problem("a", empty_list).find("at least one recipient"), std::string::npos);
  SaveWeightsExternalOptions empty_recipient;
  empty_recipient.age_encryption_recipients = std::vector<std::string>{"age1x", ""};
  EXPECT_NE(options_problem("a", empty_recipient).find("a recipient is empty"), std::string::npos);
}

}  // namespace
}  // namespace tinker
