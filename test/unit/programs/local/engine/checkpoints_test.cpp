// Checkpoints in null-model mode: naming and overwrite rules, TTL expiry, sampler checkpoints,
// access rules for loading, create-via-load, and survival across an engine restart.
#include "engine_test_support.hpp"

namespace tinker::local::test {
namespace {

class CheckpointsTest : public EngineFixture {
 protected:
  boost::json::object save(const std::string& model, std::int64_t seq, const std::string& name,
                           std::optional<std::int64_t> ttl = std::nullopt, bool overwrite = false) {
    UntypedAPIFuture ticket = engine->save_weights(SaveWeightsRequest(model, seq, name, ttl, overwrite), alice);
    return result_json(ticket.request_id);
  }
  boost::json::object load(const std::string& model, std::int64_t seq, const std::string& path, const Principal& who) {
    UntypedAPIFuture ticket = engine->load_weights(LoadWeightsRequest(model, seq, path, true), who);
    return result_json(ticket.request_id, &who);
  }
};

TEST_F(CheckpointsTest, SaveReturnsTheTinkerPathAndListsTheCheckpoint) {
  start();
  std::string model = new_model(new_session(alice));
  auto saved = save(model, 1, "step-0001");
  EXPECT_EQ(text(saved["type"]), "save_weights");
  EXPECT_EQ(text(saved["path"]), "tinker://" + model + "/weights/step-0001");
  auto listed = engine->list_run_checkpoints(model, alice);
  ASSERT_EQ(listed.checkpoints.size(), 1u);
  const Checkpoint& checkpoint = listed.checkpoints[0];
  EXPECT_EQ(checkpoint.checkpoint_id, "weights/step-0001");
  EXPECT_EQ(checkpoint.checkpoint_type, CheckpointType::training);
  EXPECT_EQ(checkpoint.tinker_path, text(saved["path"]));
  EXPECT_GT(checkpoint.size_bytes.value_or(0), 0);
  EXPECT_FALSE(checkpoint.public_);
  EXPECT_FALSE(checkpoint.expires_at.has_value());
  EXPECT_FALSE(listed.cursor.has_value());
}

TEST_F(CheckpointsTest, NamesAreValidatedAndExistingNamesNeedOverwrite) {
  start();
  std::string model = new_model(new_session(alice));
  std::int64_t seq = 1;
  for (const std::string& bad : std::vector<std::string>{"", "..", "a/b", "with space", std::string(129, 'x')}) {
    auto failed = save(model, seq++, bad);
    EXPECT_EQ(text(failed["category"]), "user") << bad;
  }
  EXPECT_TRUE(save(model, seq++, "a.b_c-1").contains("path"));
  auto duplicate = save(model, seq++, "a.b_c-1");
  EXPECT_EQ(text(duplicate["category"]), "user");
  EXPECT_NE(text(duplicate["error"]).find("overwrite"), std::string::npos);
  EXPECT_TRUE(save(model, seq++, "a.b_c-1", std::nullopt, true).contains("path"));
  EXPECT_EQ(engine->list_run_checkpoints(model, alice).checkpoints.size(), 1u);
}

TEST_F(CheckpointsTest, TtlSetsExpiryAndExpiredCheckpointsDisappear) {
  start();
  std::string session = new_session(alice);
  std::string model = new_model(session);
  auto saved = save(model, 1, "short", 60);
  std::string path = text(saved["path"]);
  auto listed = engine->list_run_checkpoints(model, alice);
  ASSERT_EQ(listed.checkpoints.size(), 1u);
  ASSERT_TRUE(listed.checkpoints[0].expires_at.has_value());
  EXPECT_EQ(*listed.checkpoints[0].expires_at - listed.checkpoints[0].time, std::chrono::seconds(60));
  EXPECT_EQ(text(save(model, 2, "bad-ttl", 0)["category"]), "user");

  engine->clock().advance(std::chrono::seconds(61));
  engine->heartbeat(SessionHeartbeatRequest(session), alice);
  EXPECT_TRUE(engine->list_run_checkpoints(model, alice).checkpoints.empty());
  EXPECT_EQ(http_status_of([&] { engine->weights_info(WeightsInfoRequest(path), alice); }), 404);
  EXPECT_EQ(text(load(model, 3, path, alice)["category"]), "user");
}

TEST_F(CheckpointsTest, SamplerCheckpointsAreListedButCannotBeLoaded) {
  start();
  std::string model = new_model(new_session(alice));
  UntypedAPIFuture ticket = engine->save_weights_for_sampler(SaveWeightsForSamplerRequest(model, 1, "s1"), alice);
  auto saved = result_json(ticket.request_id);
  EXPECT_EQ(text(saved["type"]), "save_weights_for_sampler");
  std::string path = text(saved["path"]);
  EXPECT_EQ(path, "tinker://" + model + "/sampler_weights/s1");
  // Sampler saves replace an existing name (no overwrite flag in the request).
  auto again = engine->save_weights_for_sampler(SaveWeightsForSamplerRequest(model, 2, "s1"), alice);
  EXPECT_EQ(text(result_json(again.request_id)["path"]), path);
  auto listed = engine->list_run_checkpoints(model, alice);
  ASSERT_EQ(listed.checkpoints.size(), 1u);
  EXPECT_EQ(listed.checkpoints[0].checkpoint_type, CheckpointType::sampler);
  auto loaded = load(model, 3, path, alice);
  EXPECT_EQ(text(loaded["category"]), "user");
  EXPECT_NE(text(loaded["error"]).find("sampler"), std::string::npos);
}

TEST_F(CheckpointsTest, OthersLoadOnlyPublicCheckpointsOrWithTheOwnersToken) {
  start();
  std::string model = new_model(new_session(alice));
  std::string path = text(save(model, 1, "shared")["path"]);
  std::string bob_model = new_model(new_session(bob), 0, "tinker-local/tiny-lm", &bob);

  EXPECT_EQ(text(load(bob_model, 1, path, bob)["category"]), "user");
  LoadWeightsRequest with_token(bob_model, 2, path, false);
  with_token.weights_access_token = "tml-alice-key";
  auto by_token = result_json(engine->load_weights(with_token, bob).request_id, &bob);
  EXPECT_EQ(text(by_token["type"]), "load_weights");
  EXPECT_EQ(text(by_token["model_id"]), bob_model);

  engine->publish_checkpoint(model, "weights/shared", alice);
  auto loaded = load(bob_model, 3, path, bob);
  EXPECT_EQ(text(loaded["path"]), path);
  EXPECT_EQ(text(loaded["model_id"]), bob_model);
}

TEST_F(CheckpointsTest, CreateViaLoadMakesAModelWithTheCheckpointsConfig) {
  start();
  std::string model = new_model(new_session(alice), 0, "Qwen/Qwen3-8B");
  std::string path = text(save(model, 1, "base")["path"]);
  std::string session = new_session(alice);
  LoadWeightsRequest request;
  request.session_id = session;
  request.model_seq_id = 0;
  request.path = path;
  request.optimizer = true;
  UntypedAPIFuture ticket = engine->load_weights(request, alice);
  EXPECT_EQ(ticket.model_id, session + ":train:0");
  EXPECT_EQ(engine->load_weights(request, alice), ticket);
  auto loaded = result_json(ticket.request_id);
  EXPECT_EQ(text(loaded["model_id"]), session + ":train:0");
  GetInfoResponse info = engine->get_info(GetInfoRequest(session + ":train:0"), alice);
  EXPECT_EQ(info.model_name, "Qwen/Qwen3-8B");
  EXPECT_EQ(info.lora_rank, 4);
  // The new model continues at seq_id 1.
  EXPECT_EQ(result(forward_backward(session + ":train:0", 1).request_id).content_type, "application/json");

  request.model_seq_id = 1;
  request.path = "tinker://nope:train:0/weights/x";
  EXPECT_EQ(text(result_json(engine->load_weights(request, alice).request_id)["category"]), "user");
  EXPECT_EQ(http_status_of([&] { engine->load_weights(LoadWeightsRequest(), alice); }), 400);
}

TEST_F(CheckpointsTest, CheckpointsAndRunsSurviveARestart) {
  start();
  std::string model = new_model(new_session(alice), 0, "meta-llama/Llama-3.1-8B");
  std::string path = text(save(model, 1, "keep")["path"]);
  engine->publish_checkpoint(model, "weights/keep", alice);
  save(model, 2, "temporary", 30);

  start();  // a new engine over the same data directory
  auto listed = engine->list_run_checkpoints(model, alice);
  ASSERT_EQ(listed.checkpoints.size(), 2u);
  auto info = engine->weights_info(WeightsInfoRequest(path), bob);  // public: readable by others
  EXPECT_EQ(info.base_model, "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(info.lora_rank, 4);
  auto runs = engine->list_training_runs(20, 0, "owned", alice);
  ASSERT_EQ(runs.training_runs.size(), 1u);
  EXPECT_EQ(runs.training_runs[0].training_run_id, model);
  ASSERT_TRUE(runs.training_runs[0].last_checkpoint.has_value());
  // The old model takes no ops (its session is gone), but its checkpoint loads into a new one.
  EXPECT_EQ(http_status_of([&] { forward_backward(model, 3); }), 404);
  std::string fresh = new_model(new_session(alice), 0, "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(text(load(fresh, 1, path, alice)["path"]), path);
}

}  // namespace
}  // namespace tinker::local::test
