// tinker-local's checkpoint user_metadata, search, copy_weights and storage usage in null-model
// mode (doc/local.md#checkpoint-search, #copying-weights, #checkpoint-storage-usage).
#include "engine_test_support.hpp"

#include <filesystem>

namespace tinker::local::test {
namespace {

using Metadata = std::map<std::string, std::string>;

class CheckpointSearchTest : public EngineFixture {
 protected:
  boost::json::object save(const std::string& model, std::int64_t seq, const std::string& name,
                           std::optional<Metadata> metadata, bool overwrite = false) {
    SaveWeightsRequest request(model, seq, name, std::nullopt, overwrite);
    request.user_metadata = std::move(metadata);
    return result_json(engine->save_weights(request, alice).request_id);
  }
  boost::json::object save_sampler(const std::string& model, std::int64_t seq, const std::string& name,
                                   std::optional<Metadata> metadata) {
    SaveWeightsForSamplerRequest request(model, seq, name);
    request.user_metadata = std::move(metadata);
    return result_json(engine->save_weights_for_sampler(request, alice).request_id);
  }
  Checkpoint listed(const std::string& model, const std::string& id) {
    for (const Checkpoint& c : engine->list_run_checkpoints(model, alice).checkpoints) {
      if (c.checkpoint_id == id) return c;
    }
    ADD_FAILURE() << id << " not listed";
    return Checkpoint();
  }
  std::vector<std::string> ids(const CheckpointSearchResponse& response) {
    std::vector<std::string> out;
    for (const Checkpoint& c : response.checkpoints) out.push_back(c.checkpoint_id);
    return out;
  }
  CheckpointSearchRequest request_with(std::int64_t limit) {
    CheckpointSearchRequest request;
    request.limit = limit;
    return request;
  }
};

TEST_F(CheckpointSearchTest, MetadataAndBaseModelAreKeptListedAndSurviveARestart) {
  start();
  std::string model = new_model(new_session(alice));
  save(model, 1, "a", Metadata{{"stage", "sft"}});
  save_sampler(model, 2, "s", Metadata{{"k", "v"}});
  EXPECT_EQ(listed(model, "weights/a").user_metadata, (Metadata{{"stage", "sft"}}));
  EXPECT_EQ(listed(model, "weights/a").base_model, std::string("tinker-local/tiny-lm"));
  EXPECT_EQ(listed(model, "sampler_weights/s").user_metadata, (Metadata{{"k", "v"}}));
  start();
  EXPECT_EQ(listed(model, "weights/a").user_metadata, (Metadata{{"stage", "sft"}}));
}

TEST_F(CheckpointSearchTest, OverwriteReplacesTheWholeMetadataMap) {
  start();
  std::string model = new_model(new_session(alice));
  save(model, 1, "a", Metadata{{"x", "1"}, {"y", "2"}});
  save(model, 2, "a", Metadata{{"z", "3"}}, true);
  EXPECT_EQ(listed(model, "weights/a").user_metadata, (Metadata{{"z", "3"}}));
  save(model, 3, "a", std::nullopt, true);  // none given: the old metadata is deleted
  EXPECT_FALSE(listed(model, "weights/a").user_metadata.has_value());
}

TEST_F(CheckpointSearchTest, EveryFilterNarrowsTheSearch) {
  start();
  std::string mine = new_model(new_session(alice));
  save(mine, 1, "a", Metadata{{"stage", "sft"}, {"run", "1"}});
  save(mine, 2, "b", Metadata{{"stage", "rl"}});
  save_sampler(mine, 3, "s", Metadata{{"stage", "sft"}});
  std::string theirs = new_model(new_session(bob), 0, std::string("tinker-local/tiny-lm"), &bob);
  UntypedAPIFuture bob_save = engine->save_weights(SaveWeightsRequest(theirs, 1, "other"), bob);
  result_json(bob_save.request_id, &bob);

  EXPECT_EQ(ids(engine->search_checkpoints(request_with(50), alice)).size(), 3u);  // own only
  CheckpointSearchRequest request = request_with(50);
  request.user_metadata = {{"stage", "sft"}};
  EXPECT_EQ(ids(engine->search_checkpoints(request, alice)),
            (std::vector<std::string>{"sampler_weights/s", "weights/a"}));
  request.checkpoint_type = CheckpointType::training;
  EXPECT_EQ(ids(engine->search_checkpoints(request, alice)), (std::vector<std::string>{"weights/a"}));
  request = request_with(50);
  request.base_models = std::vector<std::string>{};
  EXPECT_TRUE(engine->search_checkpoints(request, alice).checkpoints.empty());  // an empty list matches nothing
  request.base_models = std::vector<std::string>{std::string("tinker-local/tiny-lm")};
  EXPECT_EQ(engine->search_checkpoints(request, alice).checkpoints.size(), 3u);
  request = request_with(50);
  request.project_ids = std::vector<std::string>{"elsewhere"};
  EXPECT_TRUE(engine->search_checkpoints(request, alice).checkpoints.empty());
  request.project_ids = std::vector<std::string>{"default"};
  EXPECT_EQ(engine->search_checkpoints(request, alice).checkpoints.size(), 3u);
  request = request_with(50);
  request.owner = SearchOwner::accessible();
  EXPECT_EQ(engine->search_checkpoints(request, alice).checkpoints.size(), 4u);
  request.owner = SearchOwner::users({bob.user_id});
  EXPECT_EQ(ids(engine->search_checkpoints(request, alice)), (std::vector<std::string>{"weights/other"}));
  EXPECT_EQ(http_status_of([&] { engine->search_checkpoints(request_with(0), alice); }), 400);
  EXPECT_EQ(http_status_of([&] { engine->search_checkpoints(request_with(201), alice); }), 400);
}

TEST_F(CheckpointSearchTest, PagesAreNewestFirstAndTheCursorContinuesStrictlyAfter) {
  start();
  std::string model = new_model(new_session(alice));
  for (int i = 1; i <= 5; ++i) {
    save(model, i, "c" + std::to_string(i), std::nullopt);
    engine->clock().advance(std::chrono::seconds(1));
  }
  std::vector<std::string> seen;
  CheckpointSearchRequest request = request_with(2);
  for (int page = 0; page < 10; ++page) {
    CheckpointSearchResponse response = engine->search_checkpoints(request, alice);
    for (const Checkpoint& c : response.checkpoints) seen.push_back(c.checkpoint_id);
    if (!response.next_cursor) break;
    EXPECT_EQ(response.checkpoints.size(), 2u);
    request.cursor = response.next_cursor;
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"weights/c5", "weights/c4", "weights/c3", "weights/c2", "weights/c1"}));
}

TEST_F(CheckpointSearchTest, ACopyIsANewRunSharingTheFilesThatTakesNoTraining) {
  start();
  std::string session = new_session(alice);
  std::string model = new_model(session);
  std::string source = text(save(model, 1, "a", Metadata{{"k", "v"}})["path"]);
  CopyWeightsRequest request(session, 5, source);
  request.ttl_seconds = 7200;
  CopyWeightsResponse copy = engine->copy_weights(request, alice);
  EXPECT_EQ(copy.tinker_path, "tinker://" + session + ":train:5/weights/a");
  EXPECT_EQ(engine->copy_weights(request, alice).tinker_path, copy.tinker_path);  // a re-send answers the same copy
  Checkpoint copied = listed(session + ":train:5", "weights/a");
  EXPECT_EQ(copied.user_metadata, (Metadata{{"k", "v"}}));
  ASSERT_TRUE(copied.expires_at.has_value());
  EXPECT_EQ(*copied.expires_at - copied.time, std::chrono::seconds(7200));
  // Hard-linked: both directories hold the same state file.
  const auto root = std::filesystem::path(options.data_dir) / "checkpoints";
  std::size_t state_files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.path().filename() == "state.bin") {
      ++state_files;
      EXPECT_EQ(std::filesystem::hard_link_count(entry.path()), 2u);
    }
  }
  EXPECT_EQ(state_files, 2u);
  // The copy's run is refused training, now and after a restart; its weights load elsewhere.
  EXPECT_EQ(http_status_of([&] { forward_backward(session + ":train:5", 1); }), 400);
  start();
  EXPECT_EQ(http_status_of([&] { forward_backward(session + ":train:5", 1); }), 400);
  std::string fresh = new_model(new_session(alice));
  UntypedAPIFuture load = engine->load_weights(LoadWeightsRequest(fresh, 1, copy.tinker_path, false), alice);
  EXPECT_EQ(text(result_json(load.request_id)["path"]), copy.tinker_path);
}

TEST_F(CheckpointSearchTest, CopyRefusesWhatItCannotReadOrUse) {
  start();
  std::string session = new_session(alice);
  std::string model = new_model(session);
  std::string source = text(save(model, 1, "a", std::nullopt)["path"]);
  std::string bob_session = new_session(bob);
  EXPECT_EQ(http_status_of([&] { engine->copy_weights(CopyWeightsRequest(bob_session, 1, source), bob); }), 404);
  CopyWeightsRequest with_token(bob_session, 1, source);
  with_token.weights_access_token = "tml-alice-key";  // the owner's key grants read access
  EXPECT_EQ(engine->copy_weights(with_token, bob).tinker_path, "tinker://" + bob_session + ":train:1/weights/a");
  EXPECT_EQ(http_status_of([&] { engine->copy_weights(CopyWeightsRequest(session, 0, source), alice); }), 409);
  EXPECT_EQ(http_status_of([&] { engine->copy_weights(CopyWeightsRequest(session, 7, "tinker://x"), alice); }), 400);
  CopyWeightsRequest short_ttl(session, 8, source);
  short_ttl.ttl_seconds = 60;
  EXPECT_EQ(http_status_of([&] { engine->copy_weights(short_ttl, alice); }), 400);
}

TEST_F(CheckpointSearchTest, StorageUsageCountsLiveCheckpointsPerProjectAndOwner) {
  start();
  std::string model = new_model(new_session(alice));
  save(model, 1, "a", std::nullopt);
  save(model, 2, "b", std::nullopt);
  CheckpointStorageUsageResponse usage = engine->checkpoint_storage_usage(std::nullopt, alice);
  ASSERT_EQ(usage.data.size(), 1u);
  const CheckpointStorageUsageItem& row = usage.data[0];
  EXPECT_EQ(row.project_id, "default");
  EXPECT_EQ(row.org_user_urn, alice.user_id);
  EXPECT_EQ(row.user_email, alice.email);
  EXPECT_EQ(row.checkpoint_count, 2);
  std::int64_t bytes = 0;
  for (const Checkpoint& c : engine->list_run_checkpoints(model, alice).checkpoints) bytes += c.size_bytes.value_or(0);
  EXPECT_EQ(row.size_bytes, bytes);
  EXPECT_DOUBLE_EQ(row.size_gigabytes, static_cast<double>(bytes) / 1e9);
  ASSERT_TRUE(usage.effective_rate_usd_per_gigabyte_month.has_value());
  EXPECT_DOUBLE_EQ(row.estimated_monthly_cost_usd.value_or(-1),
                   row.size_gigabytes * *usage.effective_rate_usd_per_gigabyte_month);
  EXPECT_TRUE(engine->checkpoint_storage_usage(std::string("elsewhere"), alice).data.empty());
  EXPECT_EQ(http_status_of([&] { engine->checkpoint_storage_usage(std::string(), alice); }), 400);
}

}  // namespace
}  // namespace tinker::local::test
