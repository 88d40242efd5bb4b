// The blocking forms of checkpoint user_metadata, search, copy_weights, storage usage and the
// console link, against in-process tinker-local from a plain thread.
#include "integration/sync/sync_support.hpp"

#include <tinker/sync/rest_client.hpp>

#include <gtest/gtest.h>

namespace tinker::test {
namespace {

using CheckpointMetadata = std::map<std::string, std::string>;
using SyncCheckpointSearch = SyncService;

TEST_F(SyncCheckpointSearch, MetadataSearchCopyAndUsageWorkWithBlockingCalls) {
  sync::ServiceClient service = make_sync_service();
  sync::TrainingClient training = service.create_lora_training_client(std::string(tiny_model), 4);
  EXPECT_EQ(training.console_url(), "https://tinker.thinkingmachines.ai/training_runs/" + training.model_id());
  SaveStateOptions options(std::nullopt);
  options.user_metadata = CheckpointMetadata{{"stage", "sft"}};
  const std::string state = training.save_state("kept", options).get().path;
  const std::string sampler =
      training
          .save_weights_for_sampler("eval", SaveWeightsForSamplerOptions(std::nullopt, CheckpointMetadata{{"k", "v"}}))
          .get()
          .path.value_or("");
  EXPECT_TRUE(training.save_weights_and_get_sampling_client(CheckpointMetadata{{"k", "ephemeral"}}).valid());

  sync::RestClient rest = service.create_rest_client();
  CheckpointSearchRequest request;
  request.user_metadata = {{"stage", "sft"}};
  const CheckpointSearchResponse found = rest.search_checkpoints(request);
  ASSERT_EQ(found.checkpoints.size(), 1u);
  EXPECT_EQ(found.checkpoints[0].tinker_path, state);
  EXPECT_EQ(found.checkpoints[0].user_metadata, (CheckpointMetadata{{"stage", "sft"}}));
  request = CheckpointSearchRequest();
  request.limit = 1;
  EXPECT_EQ(rest.search_all_checkpoints(request).size(), 2u);
  const auto limited = rest.try_search_all_checkpoints(request, 1);
  ASSERT_TRUE(limited.has_error());
  EXPECT_EQ(limited.error().code, errc::protocol_error);
  request.limit = 500;
  const auto refused = rest.try_search_checkpoints(request);
  ASSERT_TRUE(refused.has_error());
  EXPECT_NE(refused.error().message().find("limit must be 1..200, got 500"), std::string::npos);

  const std::string copy = service.copy_weights(state);
  EXPECT_EQ(TinkerPath::parse(copy).name, "kept");
  EXPECT_TRUE(service.try_copy_weights(sampler, CopyWeightsOptions(5)).has_error());
  EXPECT_EQ(rest.get_checkpoint_storage_usage().data.at(0).checkpoint_count, 3);
  EXPECT_TRUE(rest.get_checkpoint_storage_usage(std::string("elsewhere")).data.empty());
}

}  // namespace
}  // namespace tinker::test
