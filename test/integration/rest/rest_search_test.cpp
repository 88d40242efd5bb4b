// Checkpoint user_metadata, search, copy_weights, storage usage and console links through the
// public async API against in-process tinker-local (doc/rest.md#search-checkpoints, doc/service.md#copying-weights).
#include "integration/rest/rest_support.hpp"

#include <tinker/console.hpp>

#include <gtest/gtest.h>

namespace tinker::test {
namespace {

namespace asio = boost::asio;
using CheckpointMetadata = std::map<std::string, std::string>;

using RestCheckpointSearch = RestService;

std::size_t copy_search_requests_to(const local::Server& server, std::string_view path) {
  std::size_t count = 0;
  for (const local::RequestRecord& record : server.audit().requests) count += record.path == path ? 1 : 0;
  return count;
}

asio::awaitable<std::vector<Checkpoint>> copy_search_run_checkpoints(RestClient rest, std::string run_id) {
  co_return (co_await rest.async_list_checkpoints(run_id, use_awaitable)).checkpoints;
}

const Checkpoint* copy_search_by_id(const std::vector<Checkpoint>& checkpoints, const std::string& id) {
  for (const Checkpoint& c : checkpoints) {
    if (c.checkpoint_id == id) return &c;
  }
  return nullptr;
}

TEST_F(RestCheckpointSearch, SavesCarryUserMetadataThatListingsShowWithTheBaseModel) {
  auto service = make_fast_service();
  RestClient rest = service->create_rest_client();
  // Built outside the coroutine: GCC 12 cannot keep a braced initializer list in a coroutine frame.
  const CheckpointMetadata tagged{{"stage", "sft"}, {"step", "1"}};
  const CheckpointMetadata eval{{"kind", "eval"}};
  const CheckpointMetadata ephemeral_tags{{"kind", "ephemeral"}};
  const auto checkpoints = run([&]() -> asio::awaitable<std::vector<Checkpoint>> {
    TrainingClient training = co_await service->async_create_lora_training_client(
        LoraTrainingOptions(std::string(tiny_model), 4), use_awaitable);
    SaveStateOptions state_options(std::nullopt);
    state_options.user_metadata = tagged;
    co_await (co_await training.async_save_state("a", state_options, use_awaitable)).async_get(use_awaitable);
    // overwrite replaces the whole map: none given deletes it
    co_await (co_await training.async_save_state("b", state_options, use_awaitable)).async_get(use_awaitable);
    co_await (co_await training.async_save_state("b", SaveStateOptions(std::nullopt, true), use_awaitable))
        .async_get(use_awaitable);
    co_await (
        co_await training.async_save_weights_for_sampler("s", SaveWeightsForSamplerOptions(7200, eval), use_awaitable))
        .async_get(use_awaitable);
    SamplingClient ephemeral =
        co_await training.async_save_weights_and_get_sampling_client(ephemeral_tags, use_awaitable);
    EXPECT_TRUE(ephemeral.valid());
    co_return co_await copy_search_run_checkpoints(rest, training.model_id());
  }());
  ASSERT_EQ(checkpoints.size(), 3u);
  const Checkpoint* a = copy_search_by_id(checkpoints, "weights/a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->user_metadata, (CheckpointMetadata{{"stage", "sft"}, {"step", "1"}}));
  EXPECT_EQ(a->base_model, tiny_model);
  ASSERT_NE(copy_search_by_id(checkpoints, "weights/b"), nullptr);
  EXPECT_FALSE(copy_search_by_id(checkpoints, "weights/b")->user_metadata.has_value());
  const Checkpoint* s = copy_search_by_id(checkpoints, "sampler_weights/s");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->user_metadata, (CheckpointMetadata{{"kind", "eval"}}));
  ASSERT_TRUE(s->expires_at.has_value());
}

TEST_F(RestCheckpointSearch, ATtlOutsideItsBoundsIsRefusedBeforeAnythingIsSent) {
  auto service = make_fast_service();
  const std::string message = run([&]() -> asio::awaitable<std::string> {
    TrainingClient training = co_await service->async_create_lora_training_client(
        LoraTrainingOptions(std::string(tiny_model), 4), use_awaitable);
    std::string messages;
    try {
      co_await training.async_save_state("short", SaveStateOptions(60), use_awaitable);
    } catch (const error& e) {
      EXPECT_EQ(e.code(), errc::invalid_argument);
      messages += e.what();
    }
    try {
      co_await training.async_save_weights_for_sampler("long", SaveWeightsForSamplerOptions(315360001), use_awaitable);
    } catch (const error& e) {
      messages += e.what();
    }
    // The refused saves freed their turns: a later save goes through.
    co_await (co_await training.async_save_state("fine", SaveStateOptions(3600), use_awaitable))
        .async_get(use_awaitable);
    co_return messages;
  }());
  EXPECT_NE(message.find("save_state: ttl_seconds must be 3600..315360000"), std::string::npos) << message;
  EXPECT_NE(message.find("save_weights_for_sampler: ttl_seconds must be 3600..315360000"), std::string::npos);
  EXPECT_EQ(copy_search_requests_to(*server, "/api/v1/save_weights"), 1u);
  EXPECT_EQ(copy_search_requests_to(*server, "/api/v1/save_weights_for_sampler"), 0u);
}

TEST_F(RestCheckpointSearch, SearchFiltersAndPagesThroughEveryCheckpoint) {
  auto service = make_fast_service();
  const RunWithCheckpoints made = this->run(make_run(*service, {"one", "two", "three"}));
  RestClient rest = service->create_rest_client();
  CheckpointSearchRequest request;
  request.limit = 2;
  request.checkpoint_type = CheckpointType::training;
  auto first = rest.async_search_checkpoints(request, asio::use_future);
  const CheckpointSearchResponse page = run_until_ready(io, first);
  ASSERT_EQ(page.checkpoints.size(), 2u);
  EXPECT_EQ(page.checkpoints[0].checkpoint_type, CheckpointType::training);
  ASSERT_TRUE(page.next_cursor.has_value());

  auto all = rest.async_search_all_checkpoints(request, RestClient::default_search_max_pages, asio::use_future);
  const std::vector<Checkpoint> every = run_until_ready(io, all);
  ASSERT_EQ(every.size(), 3u);
  for (std::size_t i = 1; i < every.size(); ++i) EXPECT_GE(every[i - 1].time, every[i].time);  // newest first

  request.base_models = std::vector<std::string>{};
  auto none = rest.async_search_all_checkpoints(request, RestClient::default_search_max_pages, asio::use_future);
  EXPECT_TRUE(run_until_ready(io, none).empty());
  EXPECT_EQ(made.training_paths.size(), 3u);

  CheckpointSearchRequest endless_guard;
  endless_guard.limit = 1;
  diagnostics diag;
  auto limited = rest.async_search_all_checkpoints(endless_guard, 2, diag, asio::use_future);
  EXPECT_EQ(failure_of(io, limited), errc::protocol_error);
  EXPECT_NE(diag.message.find("max_pages (2)"), std::string::npos) << diag.message;
}

TEST_F(RestCheckpointSearch, CopyWeightsMakesARunWhoseSamplerServesAndUsageCountsIt) {
  auto service = make_fast_service();
  const RunWithCheckpoints made = this->run(make_run(*service, {"base"}));
  auto copying = service->async_copy_weights(made.sampler_path, CopyWeightsOptions(7200), asio::use_future);
  const std::string copy = run_until_ready(io, copying);
  const TinkerPath parsed = TinkerPath::parse(copy);
  EXPECT_NE(parsed.training_run_id, made.run_id);
  EXPECT_EQ(parsed.type, CheckpointType::sampler);
  EXPECT_EQ(parsed.name, "for-sampling");
  auto sampler = service->async_create_sampling_client(SamplingSource::from_model_path(copy), asio::use_future);
  EXPECT_TRUE(run_until_ready(io, sampler).valid());

  diagnostics diag;
  auto refused = service->async_copy_weights(made.sampler_path, CopyWeightsOptions(10), diag, asio::use_future);
  EXPECT_EQ(failure_of(io, refused), errc::invalid_argument);
  EXPECT_NE(diag.message.find("copy_weights: ttl_seconds"), std::string::npos) << diag.message;
  auto missing = service->async_copy_weights(made.run_id + "/weights/x", CopyWeightsOptions(), diag, asio::use_future);
  EXPECT_EQ(failure_of(io, missing), errc::invalid_argument);
  EXPECT_EQ(copy_search_requests_to(*server, "/api/v1/copy_weights"), 1u);

  RestClient rest = service->create_rest_client();
  auto usage = rest.async_get_checkpoint_storage_usage(std::nullopt, asio::use_future);
  const CheckpointStorageUsageResponse answer = run_until_ready(io, usage);
  ASSERT_EQ(answer.data.size(), 1u);
  EXPECT_EQ(answer.data[0].checkpoint_count, 3);  // the training and sampler checkpoints and the copy
  EXPECT_GT(answer.data[0].size_bytes, 0);
  auto other_project = rest.async_get_checkpoint_storage_usage(std::string("elsewhere"), asio::use_future);
  EXPECT_TRUE(run_until_ready(io, other_project).data.empty());
  EXPECT_EQ(console::console_url(copy),
            console::checkpoint_url(parsed.training_run_id, "sampler_weights/for-sampling"));
}

}  // namespace
}  // namespace tinker::test
