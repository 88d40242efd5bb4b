// tinker::sync::RestClient: the blocking REST calls, throwing and try_ forms, from a plain thread.
#include "integration/sync/sync_support.hpp"

#include <tinker/sync/rest_client.hpp>

#include <gtest/gtest.h>

#include <algorithm>

namespace tinker::test {
namespace {

class SyncRest : public SyncService {
 protected:
  local::ServerOptions server_options() const override {
    auto options = fast_server_options();
    options.trace_export_pending_polls = 0;  // the polling itself is tested with the async client
    return options;
  }
};

TEST_F(SyncRest, CheckpointsAreManagedWithBlockingCalls) {
  sync::ServiceClient service = make_sync_service();
  sync::TrainingClient training = service.create_lora_training_client(std::string(tiny_model), 4);
  const std::string path = training.save_state("blocking").get().path;
  const std::string run_id = training.model_id();
  sync::RestClient rest = service.create_rest_client();

  EXPECT_EQ(rest.get_training_run(run_id).training_run_id, run_id);
  EXPECT_EQ(rest.get_training_run_from_tinker_path(path).training_run_id, run_id);
  EXPECT_EQ(rest.get_weights_info_from_tinker_path(path).lora_rank, 4);
  // The deprecated `_by_tinker_path` spellings still answer, for one release.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  EXPECT_EQ(rest.get_training_run_by_tinker_path(path).training_run_id, run_id);
  EXPECT_EQ(rest.get_weights_info_by_tinker_path(path).lora_rank, 4);
#pragma GCC diagnostic pop
  ASSERT_EQ(rest.list_checkpoints(run_id).checkpoints.size(), 1u);
  EXPECT_EQ(rest.list_user_checkpoints().checkpoints.at(0).tinker_path, path);
  EXPECT_EQ(rest.list_all_user_checkpoints().size(), 1u);
  EXPECT_EQ(rest.list_training_runs().cursor.total_count, 1);
  EXPECT_EQ(rest.list_all_training_runs().size(), 1u);

  rest.set_checkpoint_ttl_from_tinker_path(path, 600);
  EXPECT_TRUE(rest.list_checkpoints(run_id).checkpoints.at(0).expires_at.has_value());
  rest.set_checkpoint_ttl(run_id, "weights/blocking", std::nullopt);
  EXPECT_FALSE(rest.list_checkpoints(run_id).checkpoints.at(0).expires_at.has_value());

  rest.publish_checkpoint_from_tinker_path(path);
  const sync::Result<void> again = rest.try_publish_checkpoint(run_id, "weights/blocking");
  ASSERT_TRUE(again.has_error());
  EXPECT_EQ(again.error().code, errc::conflict);
  EXPECT_FALSE(again.error().diag.request_id.empty());
  try {
    rest.publish_checkpoint(run_id, "weights/blocking");
    ADD_FAILURE() << "a second publish must throw";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::conflict);
    EXPECT_NE(std::string(e.what()).find(e.diag().request_id), std::string::npos) << e.what();
  }
  rest.unpublish_checkpoint(run_id, "weights/blocking");

  const CheckpointArchiveUrlResponse archive = rest.get_checkpoint_archive_url_from_tinker_path(path);
  EXPECT_NE(archive.url.find("/_downloads/"), std::string::npos) << archive.url;

  rest.delete_checkpoint_from_tinker_path(path);
  EXPECT_TRUE(rest.list_checkpoints(run_id).checkpoints.empty());
  const sync::Result<void> missing = rest.try_delete_checkpoint(run_id, "weights/blocking");
  ASSERT_TRUE(missing.has_error());
  EXPECT_EQ(missing.error().code, errc::not_found);
}

TEST_F(SyncRest, SessionsAreListedAndTheirTraceExported) {
  sync::ServiceClient service = make_sync_service();
  sync::TrainingClient training = service.create_lora_training_client(std::string(tiny_model), 4);
  sync::RestClient rest = service.create_rest_client();
  const std::string session_id = service.session_id();

  const std::vector<std::string> sessions = rest.list_all_sessions();
  EXPECT_NE(std::find(sessions.begin(), sessions.end(), session_id), sessions.end());
  EXPECT_EQ(rest.list_sessions().sessions, sessions);
  EXPECT_EQ(rest.get_session(session_id).training_run_ids, std::vector<std::string>{training.model_id()});
  rest.assign_session_project(session_id, "project-sync");
  const TraceExportResponse trace = rest.export_session_trace(session_id);
  EXPECT_EQ(trace.status, TraceExportStatus::ready);
  EXPECT_TRUE(trace.url.has_value());

  const sync::Result<GetSessionResponse> unknown = rest.try_get_session("no-such-session");
  ASSERT_TRUE(unknown.has_error());
  EXPECT_EQ(unknown.error().code, errc::not_found);
  EXPECT_EQ(unknown.error().diag.http_status, 404);

  const sync::RestClient empty;
  EXPECT_THROW(empty.list_sessions(), error);
}

}  // namespace
}  // namespace tinker::test
