// RestClient's run and checkpoint calls against in-process tinker-local, in both addressing
// forms (run id + checkpoint id, and tinker:// paths).
#include "integration/rest/rest_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace tinker::test {
namespace {

namespace asio = boost::asio;

using RestCheckpoints = RestService;

std::vector<std::string> ids_of(const std::vector<Checkpoint>& checkpoints) {
  std::vector<std::string> ids;
  for (const Checkpoint& c : checkpoints) ids.push_back(c.checkpoint_id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

const Checkpoint* find_checkpoint(const std::vector<Checkpoint>& checkpoints, const std::string& id) {
  for (const Checkpoint& c : checkpoints) {
    if (c.checkpoint_id == id) return &c;
  }
  return nullptr;
}

TEST_F(RestCheckpoints, RunsAndTheirCheckpointsAreListedAndFoundByIdAndByPath) {
  auto service = make_fast_service();
  const RunWithCheckpoints run = this->run(make_run(*service, {"first", "second"}));
  RestClient rest = service->create_rest_client();

  auto listed = rest.async_list_checkpoints(run.run_id, asio::use_future);
  const CheckpointsListResponse checkpoints = run_until_ready(io, listed);
  const std::vector<std::string> expected{"sampler_weights/for-sampling", "weights/first", "weights/second"};
  EXPECT_EQ(ids_of(checkpoints.checkpoints), expected);
  const Checkpoint* first = find_checkpoint(checkpoints.checkpoints, "weights/first");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->tinker_path, run.training_paths[0]);
  EXPECT_EQ(first->checkpoint_type, CheckpointType::training);
  EXPECT_FALSE(first->expires_at.has_value());

  auto by_id = rest.async_get_training_run(run.run_id, AccessScope::owned, asio::use_future);
  const TrainingRun training_run = run_until_ready(io, by_id);
  EXPECT_EQ(training_run.training_run_id, run.run_id);
  EXPECT_EQ(training_run.base_model, tiny_model);
  EXPECT_EQ(training_run.lora_rank, 4);
  ASSERT_TRUE(training_run.last_checkpoint.has_value());
  EXPECT_EQ(training_run.last_checkpoint->checkpoint_id, "weights/second");
  auto by_path =
      rest.async_get_training_run_from_tinker_path(run.sampler_path, AccessScope::accessible, asio::use_future);
  EXPECT_EQ(run_until_ready(io, by_path), training_run);

  auto runs = rest.async_list_training_runs(ListTrainingRunsOptions(), asio::use_future);
  const TrainingRunsResponse page = run_until_ready(io, runs);
  ASSERT_EQ(page.training_runs.size(), 1u);
  EXPECT_EQ(page.training_runs[0].training_run_id, run.run_id);
  EXPECT_EQ(page.cursor.total_count, 1);
  EXPECT_EQ(page.cursor.limit, 20);

  auto info = rest.async_get_weights_info_from_tinker_path(run.training_paths[1], asio::use_future);
  const WeightsInfoResponse weights = run_until_ready(io, info);
  EXPECT_EQ(weights.base_model, tiny_model);
  EXPECT_EQ(weights.lora_rank, 4);
}

TEST_F(RestCheckpoints, TtlIsSetAndClearedInBothFormsAndShowsInExpiresAt) {
  auto service = make_fast_service();
  const RunWithCheckpoints run = this->run(make_run(*service, {"kept"}));
  RestClient rest = service->create_rest_client();
  auto expires_at = [&] {
    auto listed = rest.async_list_checkpoints(run.run_id, asio::use_future);
    const CheckpointsListResponse response = run_until_ready(io, listed);
    const Checkpoint* kept = find_checkpoint(response.checkpoints, "weights/kept");
    EXPECT_NE(kept, nullptr);
    return kept != nullptr ? kept->expires_at : std::nullopt;
  };

  const auto before = std::chrono::system_clock::now();
  auto set = rest.async_set_checkpoint_ttl(run.run_id, "weights/kept", 3600, asio::use_future);
  run_until_ready(io, set);
  const std::optional<Timestamp> expiry = expires_at();
  ASSERT_TRUE(expiry.has_value());
  EXPECT_GE(*expiry, before + std::chrono::seconds(3599));
  EXPECT_LE(*expiry, std::chrono::system_clock::now() + std::chrono::seconds(3601));

  auto cleared = rest.async_set_checkpoint_ttl_from_tinker_path(run.training_paths[0], std::nullopt, asio::use_future);
  run_until_ready(io, cleared);
  EXPECT_FALSE(expires_at().has_value());

  auto by_path = rest.async_set_checkpoint_ttl_from_tinker_path(run.training_paths[0], 60, asio::use_future);
  run_until_ready(io, by_path);
  EXPECT_TRUE(expires_at().has_value());

  diagnostics diag;
  auto zero = rest.async_set_checkpoint_ttl(run.run_id, "weights/kept", 0, diag, asio::use_future);
  EXPECT_EQ(failure_of(io, zero), errc::bad_request);
  EXPECT_EQ(diag.http_status, 400);
}

TEST_F(RestCheckpoints, PublishingTwiceIsAConflictWithTheRequestIdAndUnpublishLikewise) {
  auto service = make_fast_service();
  const RunWithCheckpoints run = this->run(make_run(*service, {"shared"}));
  RestClient rest = service->create_rest_client();

  auto publish = rest.async_publish_checkpoint(run.run_id, "weights/shared", asio::use_future);
  run_until_ready(io, publish);
  auto listed = rest.async_list_checkpoints(run.run_id, asio::use_future);
  const Checkpoint* shared = nullptr;
  const CheckpointsListResponse after_publish = run_until_ready(io, listed);
  shared = find_checkpoint(after_publish.checkpoints, "weights/shared");
  ASSERT_NE(shared, nullptr);
  EXPECT_TRUE(shared->public_);

  diagnostics diag;
  auto again = rest.async_publish_checkpoint_from_tinker_path(run.training_paths[0], diag, asio::use_future);
  EXPECT_EQ(failure_of(io, again), errc::conflict);
  EXPECT_EQ(diag.http_status, 409);
  EXPECT_FALSE(diag.request_id.empty());
  // A 409 here is the answer, not a transient conflict: exactly one request was sent.
  EXPECT_EQ(requests_to(server->audit(), "/weights/shared/publish").size(), 2u);

  auto unpublish = rest.async_unpublish_checkpoint_from_tinker_path(run.training_paths[0], asio::use_future);
  run_until_ready(io, unpublish);
  diagnostics second_diag;
  auto unpublish_again = rest.async_unpublish_checkpoint(run.run_id, "weights/shared", second_diag, asio::use_future);
  EXPECT_EQ(failure_of(io, unpublish_again), errc::conflict);
  EXPECT_EQ(second_diag.http_status, 409);
  EXPECT_FALSE(second_diag.request_id.empty());
}

TEST_F(RestCheckpoints, DeletedCheckpointsLeaveTheListingsInBothForms) {
  auto service = make_fast_service();
  const RunWithCheckpoints run = this->run(make_run(*service, {"a", "b", "c"}));
  RestClient rest = service->create_rest_client();

  auto by_id = rest.async_delete_checkpoint(run.run_id, "weights/a", asio::use_future);
  run_until_ready(io, by_id);
  auto by_path = rest.async_delete_checkpoint_from_tinker_path(run.sampler_path, asio::use_future);
  run_until_ready(io, by_path);

  auto listed = rest.async_list_checkpoints(run.run_id, asio::use_future);
  const std::vector<std::string> expected{"weights/b", "weights/c"};
  EXPECT_EQ(ids_of(run_until_ready(io, listed).checkpoints), expected);
  auto user = rest.async_list_user_checkpoints(ListUserCheckpointsOptions(), asio::use_future);
  EXPECT_EQ(ids_of(run_until_ready(io, user).checkpoints), expected);

  diagnostics diag;
  auto twice = rest.async_delete_checkpoint(run.run_id, "weights/a", diag, asio::use_future);
  EXPECT_EQ(failure_of(io, twice), errc::not_found);
  EXPECT_EQ(diag.http_status, 404);
}

TEST_F(RestCheckpoints, ABadTinkerPathFailsBeforeAnyRequestNamingTheProblem) {
  auto service = make_fast_service();
  RestClient rest = service->create_rest_client();
  diagnostics diag;
  auto bad = rest.async_publish_checkpoint_from_tinker_path("tinker://run-1/checkpoints/x", diag, asio::use_future);
  EXPECT_EQ(failure_of(io, bad), errc::invalid_argument);
  EXPECT_NE(diag.message.find("tinker://run-1/checkpoints/x"), std::string::npos) << diag.message;
  diagnostics empty_diag;
  auto empty = rest.async_delete_checkpoint("", "weights/x", empty_diag, asio::use_future);
  EXPECT_EQ(failure_of(io, empty), errc::invalid_argument);
  EXPECT_NE(empty_diag.message.find("run_id"), std::string::npos) << empty_diag.message;
  EXPECT_TRUE(requests_to(server->audit(), "/publish").empty());
  EXPECT_TRUE(requests_to(server->audit(), "/weights/x").empty());
}

TEST_F(RestCheckpoints, EveryPageOfRunsAndCheckpointsIsFetchedAndAShortPageEndsTheListing) {
  auto service = make_fast_service();
  const RunWithCheckpoints first = this->run(make_run(*service, {"s1", "s2", "s3"}));
  const RunWithCheckpoints second = this->run(make_run(*service, {"t1"}));
  const RunWithCheckpoints third = this->run(make_run(*service, {}));
  RestClient rest = service->create_rest_client();

  // 3 + 1 + 0 training and 3 sampler checkpoints = 7: pages of 3, 3 and 1.
  ListAllOptions options;
  options.page_size = 3;
  auto all = rest.async_list_all_user_checkpoints(options, asio::use_future);
  const std::vector<Checkpoint> checkpoints = run_until_ready(io, all);
  EXPECT_EQ(checkpoints.size(), 7u);
  EXPECT_EQ(requests_to(server->audit(), "/api/v1/checkpoints").size(), 3u);
  std::set<std::string> distinct;
  for (const Checkpoint& c : checkpoints) distinct.insert(c.tinker_path);
  EXPECT_EQ(distinct.size(), 7u) << "no checkpoint repeated or skipped across pages";
  for (std::size_t i = 1; i < checkpoints.size(); ++i) EXPECT_GE(checkpoints[i - 1].time, checkpoints[i].time);

  // 3 runs in pages of 2: the cursor's total_count ends it after the second page.
  options.page_size = 2;
  auto runs = rest.async_list_all_training_runs(options, asio::use_future);
  std::vector<std::string> run_ids;
  for (const TrainingRun& r : run_until_ready(io, runs)) run_ids.push_back(r.training_run_id);
  std::sort(run_ids.begin(), run_ids.end());
  std::vector<std::string> expected{first.run_id, second.run_id, third.run_id};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(run_ids, expected);
  EXPECT_EQ(requests_to(server->audit(), "/api/v1/training_runs").size(), 2u);

  // The default page sizes (1000 checkpoints, as the Python CLI pages them): one short page each.
  auto defaults = rest.async_list_all_user_checkpoints(ListAllOptions(), asio::use_future);
  EXPECT_EQ(run_until_ready(io, defaults).size(), 7u);
  EXPECT_EQ(requests_to(server->audit(), "/api/v1/checkpoints").size(), 4u);

  diagnostics diag;
  options.page_size = 0;
  auto zero = rest.async_list_all_training_runs(options, diag, asio::use_future);
  EXPECT_EQ(failure_of(io, zero), errc::invalid_argument);
  EXPECT_NE(diag.message.find("page_size"), std::string::npos) << diag.message;
}

}  // namespace
}  // namespace tinker::test
