// REST state: training runs (pagination, scopes, ownership), checkpoint publish/TTL/delete
// rules, user checkpoints, billing validation and usage, audit log, trace export.
#include "engine_test_support.hpp"

namespace tinker::local::test {
namespace {

class RestTest : public EngineFixture {
 protected:
  std::string save(const std::string& model, std::int64_t seq, const std::string& name) {
    auto body = result_json(engine->save_weights(SaveWeightsRequest(model, seq, name), alice).request_id);
    return text(body["path"]);
  }
  static std::string hour_text(Timestamp t) { return format_timestamp(std::chrono::floor<std::chrono::hours>(t)); }
};

TEST_F(RestTest, TrainingRunsArePaginatedNewestFirstWithTotalCount) {
  start();
  std::string session = new_session(alice);
  std::vector<std::string> models;
  for (int i = 0; i < 5; ++i) {
    models.push_back(new_model(session, i));
    engine->clock().advance(std::chrono::seconds(1));
  }
  new_model(new_session(bob), 0, "tinker-local/tiny-lm", &bob);
  auto page = engine->list_training_runs(2, 0, "owned", alice);
  EXPECT_EQ(page.cursor.total_count, 5);
  EXPECT_EQ(page.cursor.limit, 2);
  ASSERT_EQ(page.training_runs.size(), 2u);
  EXPECT_EQ(page.training_runs[0].training_run_id, models[4]);
  EXPECT_EQ(page.training_runs[0].model_owner, alice.user_id);
  EXPECT_EQ(page.training_runs[0].lora_rank, 4);
  auto last = engine->list_training_runs(2, 4, "owned", alice);
  ASSERT_EQ(last.training_runs.size(), 1u);
  EXPECT_EQ(last.training_runs[0].training_run_id, models[0]);
  EXPECT_EQ(last.cursor.offset, 4);
  EXPECT_EQ(http_status_of([&] { engine->list_training_runs(0, 0, "owned", alice); }), 400);
  EXPECT_EQ(http_status_of([&] { engine->list_training_runs(5, -1, "owned", alice); }), 400);
  EXPECT_EQ(http_status_of([&] { engine->list_training_runs(5, 0, "everything", alice); }), 400);

  // A run's last_request_time moves with its operations.
  result(forward_backward(models[0], 1).request_id);
  EXPECT_EQ(engine->list_training_runs(1, 0, "owned", alice).training_runs[0].training_run_id, models[0]);
}

TEST_F(RestTest, OtherUsersSeeRunsOnlyThroughPublicCheckpoints) {
  start();
  std::string model = new_model(new_session(alice));
  save(model, 1, "private-one");
  EXPECT_EQ(engine->list_training_runs(20, 0, "accessible", bob).cursor.total_count, 0);
  EXPECT_EQ(http_status_of([&] { engine->get_training_run(model, "accessible", bob); }), 404);
  EXPECT_EQ(http_status_of([&] { engine->list_run_checkpoints(model, bob); }), 404);

  save(model, 2, "public-one");
  engine->publish_checkpoint(model, "weights/public-one", alice);
  EXPECT_EQ(engine->list_training_runs(20, 0, "owned", bob).cursor.total_count, 0);
  auto accessible = engine->list_training_runs(20, 0, "accessible", bob);
  ASSERT_EQ(accessible.training_runs.size(), 1u);
  EXPECT_EQ(accessible.training_runs[0].last_checkpoint->checkpoint_id, "weights/public-one");
  auto visible = engine->list_run_checkpoints(model, bob);
  ASSERT_EQ(visible.checkpoints.size(), 1u);
  EXPECT_TRUE(visible.checkpoints[0].public_);
  EXPECT_EQ(engine->list_run_checkpoints(model, alice).checkpoints.size(), 2u);
  auto run = engine->get_training_run(model, "owned", alice);
  EXPECT_EQ(run.base_model, "tinker-local/tiny-lm");
  EXPECT_EQ(run.last_checkpoint->checkpoint_id, "weights/public-one");
  EXPECT_FALSE(run.last_sampler_checkpoint.has_value());
}

TEST_F(RestTest, PublishUnpublishTtlAndDeleteFollowOwnershipAndStateRules) {
  start();
  std::string model = new_model(new_session(alice));
  save(model, 1, "c");
  const std::string id = "weights/c";
  EXPECT_EQ(http_status_of([&] { engine->publish_checkpoint(model, id, bob); }), 404);
  EXPECT_EQ(http_status_of([&] { engine->unpublish_checkpoint(model, id, alice); }), 409);
  engine->publish_checkpoint(model, id, alice);
  EXPECT_EQ(http_status_of([&] { engine->publish_checkpoint(model, id, alice); }), 409);
  engine->unpublish_checkpoint(model, id, alice);

  EXPECT_EQ(http_status_of([&] { engine->set_checkpoint_ttl(model, id, SetCheckpointTtlRequest(0), alice); }), 400);
  EXPECT_EQ(http_status_of([&] { engine->set_checkpoint_ttl(model, id, SetCheckpointTtlRequest(10), bob); }), 404);
  engine->set_checkpoint_ttl(model, id, SetCheckpointTtlRequest(100), alice);
  EXPECT_TRUE(engine->list_run_checkpoints(model, alice).checkpoints[0].expires_at.has_value());
  engine->set_checkpoint_ttl(model, id, SetCheckpointTtlRequest(std::nullopt), alice);
  EXPECT_FALSE(engine->list_run_checkpoints(model, alice).checkpoints[0].expires_at.has_value());

  EXPECT_EQ(http_status_of([&] { engine->delete_checkpoint(model, id, bob); }), 404);
  EXPECT_EQ(http_status_of([&] { engine->delete_checkpoint(model, "bogus/c", alice); }), 400);
  engine->delete_checkpoint(model, id, alice);
  EXPECT_TRUE(engine->list_run_checkpoints(model, alice).checkpoints.empty());
  EXPECT_EQ(http_status_of([&] { engine->delete_checkpoint(model, id, alice); }), 404);
}

TEST_F(RestTest, UserCheckpointsNewestFirstWithCursor) {
  start();
  std::string model = new_model(new_session(alice));
  for (int i = 1; i <= 3; ++i) {
    save(model, i, "c" + std::to_string(i));
    engine->clock().advance(std::chrono::seconds(1));
  }
  auto page = engine->list_user_checkpoints(2, 0, alice);
  ASSERT_EQ(page.checkpoints.size(), 2u);
  EXPECT_EQ(page.checkpoints[0].checkpoint_id, "weights/c3");
  EXPECT_EQ(page.checkpoints[1].checkpoint_id, "weights/c2");
  ASSERT_TRUE(page.cursor.has_value());
  EXPECT_EQ(page.cursor->total_count, 3);
  EXPECT_EQ(engine->list_user_checkpoints(2, 2, alice).checkpoints[0].checkpoint_id, "weights/c1");
  EXPECT_EQ(engine->list_user_checkpoints(10, 0, bob).cursor->total_count, 0);
}

TEST_F(RestTest, BillingValidatesTheWindowAndReportsUsage) {
  start();
  std::string session = new_session(alice);
  std::string model = new_model(session);
  result(forward_backward(model, 1).request_id);  // 2 datums x 5 tokens
  save(model, 2, "billed");
  Timestamp now = engine->clock().now_timestamp();
  std::string start_hour = hour_text(now);
  std::string next_hour = hour_text(now + std::chrono::hours(1));

  auto status = [&](std::string from, std::string to) {
    return http_status_of([&] { engine->billing_usage(from, to, alice); });
  };
  EXPECT_EQ(status("", next_hour), 400);
  EXPECT_EQ(status(start_hour, ""), 400);
  EXPECT_EQ(status("yesterday", next_hour), 400);
  EXPECT_EQ(status(format_timestamp(std::chrono::floor<std::chrono::hours>(now) + std::chrono::minutes(30)), next_hour),
            400);
  EXPECT_EQ(status(next_hour, start_hour), 400);
  EXPECT_EQ(status(hour_text(now - std::chrono::hours(24 * 15)), next_hour), 400);
  EXPECT_EQ(status(hour_text(now + std::chrono::hours(2)), hour_text(now + std::chrono::hours(3))), 400);

  engine->clock().advance(std::chrono::minutes(10));  // the checkpoint has been stored for a while
  BillingUsageResponse usage = engine->billing_usage(start_hour, next_hour, alice);
  std::int64_t training = 0, checkpoints = 0;
  bool storage = false;
  for (const auto& entry : usage.data) {
    if (auto* t = std::get_if<billing::Training>(&entry.event_info)) training += t->token_count;
    if (auto* c = std::get_if<billing::CheckpointEvent>(&entry.event_info)) checkpoints += c->count;
    storage = storage || std::holds_alternative<billing::Storage>(entry.event_info);
  }
  EXPECT_EQ(training, 10);
  EXPECT_EQ(checkpoints, 1);
  EXPECT_TRUE(storage);
  EXPECT_EQ(usage.sessions.count(session), 1u);
  EXPECT_TRUE(engine->billing_usage(start_hour, next_hour, bob).data.empty());
}

TEST_F(RestTest, AuditLogRecordsSessionModelAndCheckpointEvents) {
  start();
  std::string model = new_model(new_session(alice));
  save(model, 1, "a");
  engine->delete_checkpoint(model, "weights/a", alice);
  auto log = engine->audit_log(100, 0, alice);
  std::vector<std::string> events;
  for (const auto& entry : log.entries) events.push_back(entry.event);
  EXPECT_EQ(events,
            (std::vector<std::string>{"checkpoint.delete", "checkpoint.save", "model.create", "session.create"}));
  EXPECT_EQ(log.entries[0].tinker_path, "tinker://" + model + "/weights/a");
  EXPECT_EQ(engine->audit_log(1, 1, alice).entries[0].event, "checkpoint.save");
  EXPECT_TRUE(engine->audit_log(100, 0, bob).entries.empty());
}

TEST_F(RestTest, TraceExportIsPendingThenReadyWithADownload) {
  options.trace_export_pending_polls = 2;
  start();
  std::string session = new_session(alice);
  std::string model = new_model(session);
  result(forward_backward(model, 1).request_id);
  EXPECT_EQ(engine->trace_export(session, "http://h:1", alice).status, TraceExportStatus::pending);
  EXPECT_EQ(engine->trace_export(session, "http://h:1", alice).status, TraceExportStatus::pending);
  auto ready = engine->trace_export(session, "http://h:1", alice);
  ASSERT_EQ(ready.status, TraceExportStatus::ready);
  ASSERT_TRUE(ready.url.has_value());
  std::string prefix = "http://h:1/_downloads/";
  ASSERT_EQ(ready.url->rfind(prefix, 0), 0u);
  auto file = engine->download(ready.url->substr(prefix.size()));
  ASSERT_TRUE(file.has_value());
  EXPECT_FALSE(file->data->empty());
  EXPECT_EQ(static_cast<unsigned char>((*file->data)[0]), 0x0A);  // Trace.packet, length-delimited
  EXPECT_EQ(engine->trace_export(session, "http://h:1", alice).url, ready.url);
  EXPECT_EQ(http_status_of([&] { engine->trace_export(session, "http://h:1", bob); }), 404);
  EXPECT_FALSE(engine->download("unknown-token").has_value());
  engine->clock().advance(std::chrono::hours(2));
  EXPECT_FALSE(engine->download(ready.url->substr(prefix.size())).has_value());
}

}  // namespace
}  // namespace tinker::local::test
