// The JSON forms of checkpoint search, weights copy, storage usage and checkpoint user_metadata
// (doc/rest.md#search-checkpoints, doc/service.md#copying-weights, doc/training.md#checkpoint-metadata):
// exact bodies, omitted versus sent, and tolerant decoding of what servers answer.
#include <tinker/codec.hpp>
#include <tinker/error.hpp>
#include <tinker/types.hpp>

#include <gtest/gtest.h>

#include <string>

namespace tinker {
namespace {

TEST(CheckpointSearchCodec, DefaultRequestSendsOwnerMetadataAndLimitOnly) {
  EXPECT_EQ(to_json(CheckpointSearchRequest()), R"({"user_metadata":{},"owner":{"type":"own"},"limit":50})");
}

TEST(CheckpointSearchCodec, EveryFilterHasItsWireName) {
  CheckpointSearchRequest request;
  request.project_ids = std::vector<std::string>{"p1"};
  request.user_metadata = {{"stage", "sft"}};
  request.checkpoint_type = CheckpointType::sampler;
  request.owner = SearchOwner::users({"tml:organization_user:ab"});
  request.base_models = std::vector<std::string>{"Qwen/Qwen3-8B"};
  request.limit = 200;
  request.cursor = CheckpointSearchCursor(parse_timestamp("2026-11-28T10:00:00.123456Z"), "uuid-1");
  EXPECT_EQ(
      to_json(request),
      R"({"project_ids":["p1"],"user_metadata":{"stage":"sft"},"checkpoint_type":"sampler",)"
      R"("owner":{"type":"user","owner_urns":["tml:organization_user:ab"]},"base_models":["Qwen/Qwen3-8B"],)"
      R"("limit":200,"cursor":{"last_created_at":"2026-11-28T10:00:00.123456Z","last_checkpoint_uuid":"uuid-1"}})");
  EXPECT_EQ(from_json<CheckpointSearchRequest>(to_json(request)), request);
}

TEST(CheckpointSearchCodec, AnEmptyBaseModelListIsSentUnlikeAnUnsetOne) {
  CheckpointSearchRequest request;
  request.base_models = std::vector<std::string>{};
  EXPECT_NE(to_json(request).find(R"("base_models":[])"), std::string::npos);
  const auto decoded = from_json<CheckpointSearchRequest>(R"({"base_models":[],"limit":5})");
  ASSERT_TRUE(decoded.base_models.has_value());
  EXPECT_TRUE(decoded.base_models->empty());
  EXPECT_FALSE(from_json<CheckpointSearchRequest>(R"({"base_models":null})").base_models.has_value());
}

TEST(CheckpointSearchCodec, ResponseDecodesCheckpointsWithBaseModelAndMetadata) {
  const auto response = from_json<CheckpointSearchResponse>(
      R"({"checkpoints":[{"checkpoint_id":"weights/a","checkpoint_type":"training","time":"2026-11-28T10:00:00Z",)"
      R"("tinker_path":"tinker://r:train:0/weights/a","base_model":"Qwen/Qwen3-8B","user_metadata":{"k":"v"},)"
      R"("unknown_field":1}],"next_cursor":{"last_created_at":"2026-11-28T10:00:00+00:00","last_checkpoint_uuid":"u"}})");
  ASSERT_EQ(response.checkpoints.size(), 1u);
  const Checkpoint& checkpoint = response.checkpoints[0];
  EXPECT_EQ(checkpoint.base_model, "Qwen/Qwen3-8B");
  ASSERT_TRUE(checkpoint.user_metadata.has_value());
  EXPECT_EQ(checkpoint.user_metadata->at("k"), "v");
  ASSERT_TRUE(response.next_cursor.has_value());
  EXPECT_EQ(response.next_cursor->last_checkpoint_uuid, "u");
  EXPECT_EQ(response.next_cursor->last_created_at, parse_timestamp("2026-11-28T10:00:00Z"));
}

TEST(CheckpointSearchCodec, ALastPageHasNoCursorWhetherNullOrAbsent) {
  EXPECT_FALSE(from_json<CheckpointSearchResponse>(R"({"checkpoints":[],"next_cursor":null})").next_cursor);
  EXPECT_FALSE(from_json<CheckpointSearchResponse>(R"({"checkpoints":[]})").next_cursor);
  EXPECT_EQ(to_json(CheckpointSearchResponse()), R"({"checkpoints":[]})");
}

TEST(CheckpointSearchCodec, ACheckpointWithoutTheNewFieldsDecodesAsBefore) {
  const auto checkpoint = from_json<Checkpoint>(
      R"({"checkpoint_id":"weights/a","checkpoint_type":"training","time":"2026-11-28T10:00:00Z",)"
      R"("tinker_path":"tinker://r:train:0/weights/a"})");
  EXPECT_FALSE(checkpoint.base_model.has_value());
  EXPECT_FALSE(checkpoint.user_metadata.has_value());
  EXPECT_EQ(to_json(checkpoint).find("base_model"), std::string::npos);
}

TEST(CheckpointSearchCodec, SaveRequestsOmitUserMetadataUnlessGiven) {
  SaveWeightsRequest save("r:train:0", 3, "step-1", 7200, true);
  EXPECT_EQ(to_json(save), R"({"model_id":"r:train:0","path":"step-1","seq_id":3,"ttl_seconds":7200,"overwrite":true,)"
                           R"("type":"save_weights"})");
  save.user_metadata = std::map<std::string, std::string>{{"stage", "sft"}};
  EXPECT_EQ(to_json(save), R"({"model_id":"r:train:0","path":"step-1","seq_id":3,"ttl_seconds":7200,"overwrite":true,)"
                           R"("user_metadata":{"stage":"sft"},"type":"save_weights"})");
  // An explicitly empty map is still sent: with overwrite it clears the old metadata either way.
  save.user_metadata = std::map<std::string, std::string>{};
  EXPECT_NE(to_json(save).find(R"("user_metadata":{})"), std::string::npos);

  SaveWeightsForSamplerRequest sampler("r:train:0", 4, std::nullopt);
  sampler.sampling_session_seq_id = 0;
  EXPECT_EQ(to_json(sampler),
            R"({"model_id":"r:train:0","sampling_session_seq_id":0,"seq_id":4,"type":"save_weights_for_sampler"})");
  sampler.user_metadata = std::map<std::string, std::string>{{"k", "v"}};
  EXPECT_EQ(to_json(sampler), R"({"model_id":"r:train:0","sampling_session_seq_id":0,"seq_id":4,)"
                              R"("user_metadata":{"k":"v"},"type":"save_weights_for_sampler"})");
}

TEST(CheckpointSearchCodec, UserMetadataValuesMustBeStrings) {
  try {
    (void)from_json<SaveWeightsRequest>(R"({"model_id":"m","user_metadata":{"k":1}})");
    FAIL() << "a number was accepted as a metadata value";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("user_metadata.k"), std::string::npos) << e.what();
  }
}

TEST(CopyWeightsCodec, RequestOmitsWhatIsNotGiven) {
  CopyWeightsRequest request("s1", 2, "tinker://r:train:0/weights/a");
  EXPECT_EQ(to_json(request), R"({"session_id":"s1","model_seq_id":2,"source_path":"tinker://r:train:0/weights/a"})");
  request.ttl_seconds = 3600;
  request.weights_access_token = "tok";
  EXPECT_EQ(to_json(request), R"({"session_id":"s1","model_seq_id":2,"source_path":"tinker://r:train:0/weights/a",)"
                              R"("ttl_seconds":3600,"weights_access_token":"tok"})");
  EXPECT_EQ(from_json<CopyWeightsResponse>(R"({"tinker_path":"tinker://s1:train:2/weights/a"})").tinker_path,
            "tinker://s1:train:2/weights/a");
}

TEST(StorageUsageCodec, DecodesRowsWithOptionalFieldsNullOrAbsent) {
  const auto usage = from_json<CheckpointStorageUsageResponse>(
      R"({"effective_rate_usd_per_gigabyte_month":null,"data":[)"
      R"({"project_id":"p","org_user_urn":null,"checkpoint_count":3,"size_bytes":2000000000,"size_gigabytes":2.0,)"
      R"("estimated_monthly_cost_usd":0.04},{"checkpoint_count":0,"size_bytes":0,"size_gigabytes":0}]})");
  EXPECT_FALSE(usage.effective_rate_usd_per_gigabyte_month.has_value());
  ASSERT_EQ(usage.data.size(), 2u);
  EXPECT_EQ(usage.data[0].project_id, "p");
  EXPECT_FALSE(usage.data[0].org_user_urn.has_value());
  EXPECT_EQ(usage.data[0].checkpoint_count, 3);
  EXPECT_EQ(usage.data[0].size_bytes, 2000000000);
  EXPECT_DOUBLE_EQ(usage.data[0].size_gigabytes, 2.0);
  EXPECT_DOUBLE_EQ(usage.data[0].estimated_monthly_cost_usd.value_or(0), 0.04);
  EXPECT_FALSE(usage.data[1].estimated_monthly_cost_usd.has_value());
  try {
    (void)from_json<CheckpointStorageUsageResponse>(R"({"data":[{"size_bytes":1,"size_gigabytes":0}]})");
    FAIL() << "a row without checkpoint_count was accepted";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("data[0].checkpoint_count"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tinker
