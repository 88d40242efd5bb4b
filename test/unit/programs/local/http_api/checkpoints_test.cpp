// Checkpoints on the training side (doc/local.md#checkpoints): save_weights (TTL, overwrite),
// load_weights with and without optimizer (legacy and create-via-load), save_weights_for_sampler
// named and ephemeral.
#include "unit/programs/local/support/expectations.hpp"
#include "unit/programs/local/support/local_server.hpp"
#include "unit/programs/local/support/training_steps.hpp"

#include <boost/json/parse.hpp>

namespace tinker::local::test {
namespace {

namespace json = boost::json;

class HttpApiCheckpoints : public LocalServerTest {
 protected:
  void SetUp() override {
    session = api().create_session();
    model = std::make_unique<TrainingModel>(api(), api().create_model(session, 0, 4));
  }

  json::value run_checkpoints() {
    const RawResponse response = api().get("/api/v1/training_runs/" + model->id() + "/checkpoints");
    if (response.status != 200) throw std::runtime_error(response.describe());
    return field(response.json(), "checkpoints");
  }

  json::value find_checkpoint(const std::string& checkpoint_id) {
    const json::value all = run_checkpoints();
    for (const json::value& c : all.as_array()) {
      if (string_field(c, "checkpoint_id") == checkpoint_id) return c;
    }
    return nullptr;
  }

  json::object load_body(const std::string& path, bool optimizer) {
    json::object body;
    body["path"] = path;
    body["optimizer"] = optimizer;
    body["type"] = "load_weights";
    return body;
  }

  /// Creates model <session>:train:<model_seq_id> from `path` (create-via-load: one load_weights
  /// naming the session and model_seq_id instead of a model).
  std::unique_ptr<TrainingModel> create_via_load(const std::string& path, bool optimizer, std::int64_t model_seq_id) {
    json::object body = load_body(path, optimizer);
    body["session_id"] = session;
    body["model_seq_id"] = model_seq_id;
    const json::value result = api().call("/api/v1/load_weights", body);
    const std::string id = session + ":train:" + std::to_string(model_seq_id);
    if (const json::value* model_id = result.as_object().if_contains("model_id")) {
      EXPECT_EQ(model_id->as_string(), id);
    }
    return std::make_unique<TrainingModel>(api(), id);
  }

  std::string session;
  std::unique_ptr<TrainingModel> model;
  const std::vector<Tokens> batch{{41, 42, 43, 44, 45, 46}, {51, 52, 53, 54}};
};

TEST_F(HttpApiCheckpoints, SaveWeightsAnswersTheTinkerPathAndListsTheCheckpoint) {
  const RawResponse response = model->save_weights("step-1");
  ASSERT_EQ(response.status, 200) << response.describe();
  ASSERT_TRUE(is_json_answer(response));
  const json::value result = response.json();
  EXPECT_EQ(string_field(result, "path"), "tinker://" + model->id() + "/weights/step-1");
  if (const json::value* type = result.as_object().if_contains("type")) {
    EXPECT_EQ(type->as_string(), "save_weights");
  }

  const json::value listed = find_checkpoint("weights/step-1");
  ASSERT_FALSE(listed.is_null()) << to_text(run_checkpoints());
  EXPECT_EQ(string_field(listed, "checkpoint_type"), "training");
  EXPECT_EQ(string_field(listed, "tinker_path"), "tinker://" + model->id() + "/weights/step-1");
  const std::string time = string_field(listed, "time");
  EXPECT_EQ(time.back(), 'Z') << time;  // timezone-aware UTC: the Python CLI compares aware datetimes
  if (const json::value* size = listed.as_object().if_contains("size_bytes")) {
    EXPECT_GT(number(*size), 0);
  }
  if (const json::value* pub = listed.as_object().if_contains("public")) {
    EXPECT_EQ(*pub, json::value(false));
  }
  if (const json::value* expires = listed.as_object().if_contains("expires_at")) {
    EXPECT_TRUE(expires->is_null());
  }
}

TEST_F(HttpApiCheckpoints, SaveWeightsWithTtlExpires) {
  ASSERT_EQ(model->save_weights("short", 600).status, 200);
  const json::value listed = find_checkpoint("weights/short");
  ASSERT_FALSE(listed.is_null());
  EXPECT_TRUE(field(listed, "expires_at").is_string()) << to_text(listed);
  api().server().advance_clock(std::chrono::seconds(601));
  EXPECT_TRUE(find_checkpoint("weights/short").is_null()) << "expired checkpoint still listed";
  const RawResponse info =
      api().post("/api/v1/weights_info", json::object{{"tinker_path", "tinker://" + model->id() + "/weights/short"}});
  EXPECT_TRUE(is_error(info, 404));
}

TEST_F(HttpApiCheckpoints, SaveWeightsNameCollisionNeedsOverwrite) {
  ASSERT_NO_THROW(model->save("same"));
  const RawResponse collision = model->save_weights("same");
  if (collision.status == 200) {
    // tinker-local's choice (doc/local.md#checkpoints): a failed future with category user.
    ASSERT_TRUE(collision.json().as_object().contains("error")) << collision.describe();
    EXPECT_EQ(string_field(collision.json(), "category"), "user");
    EXPECT_NE(string_field(collision.json(), "error").find("same"), std::string::npos) << collision.body;
  } else {
    EXPECT_TRUE(is_error(collision, 409));
  }
  const RawResponse overwritten = model->save_weights("same", std::nullopt, true);
  ASSERT_EQ(overwritten.status, 200) << overwritten.describe();
  EXPECT_EQ(string_field(overwritten.json(), "path"), "tinker://" + model->id() + "/weights/same");
}

TEST_F(HttpApiCheckpoints, SaveWeightsRejectsBadNames) {
  for (const char* name : {"a/b", ""}) {
    const RawResponse response = model->save_weights(name);
    if (response.status == 200) {
      EXPECT_EQ(string_field(response.json(), "category"), "user") << name << "\n" << response.body;
    } else {
      EXPECT_TRUE(is_client_error(response)) << name;
    }
  }
}

TEST_F(HttpApiCheckpoints, LoadWeightsIntoAnExistingModelRestoresTheWeights) {
  for (int i = 0; i < 2; ++i) model->train_step(batch, 1e-3);
  const std::string path = model->save("trained");
  const auto trained = model->forward_logprobs(batch);

  TrainingModel fresh(api(), api().create_model(session, 1, 4));
  const auto untrained = fresh.forward_logprobs(batch);
  EXPECT_NE(untrained, trained);
  json::object body = load_body(path, false);
  body["model_id"] = fresh.id();
  body["seq_id"] = fresh.next_seq();
  const json::value result = api().call("/api/v1/load_weights", body);
  if (const json::value* p = result.as_object().if_contains("path")) {
    EXPECT_EQ(p->as_string(), path);
  }
  EXPECT_EQ(fresh.forward_logprobs(batch), trained);
}

TEST_F(HttpApiCheckpoints, CreateViaLoadMakesAModelWithTheCheckpointsWeightsAndConfig) {
  model->train_step(batch, 1e-3);
  const std::string path = model->save("for-create");
  const auto trained = model->forward_logprobs(batch);
  const auto created = create_via_load(path, false, 5);
  EXPECT_EQ(created->forward_logprobs(batch), trained);
  const json::value info =
      api().post("/api/v1/get_info", json::object{{"model_id", created->id()}, {"type", "get_info"}}).json();
  EXPECT_EQ(field(info, "lora_rank").to_number<std::int64_t>(), 4);
  EXPECT_EQ(string_field(info, "model_name"), tiny_model);
}

TEST_F(HttpApiCheckpoints, OptimizerStateIsRestoredOnlyWhenAsked) {
  for (int i = 0; i < 3; ++i) model->train_step(batch, 1e-3);
  const std::string path = model->save("with-moments");
  // Continue the original for one step; a model loaded with its optimizer state must follow it
  // exactly, one loaded without must not (fresh Adam moments and step count).
  model->train_step(batch, 1e-3);
  const auto continued = model->forward_logprobs(batch);

  const auto with_optimizer = create_via_load(path, true, 1);
  with_optimizer->train_step(batch, 1e-3);
  EXPECT_EQ(with_optimizer->forward_logprobs(batch), continued);

  const auto without_optimizer = create_via_load(path, false, 2);
  without_optimizer->train_step(batch, 1e-3);
  EXPECT_NE(without_optimizer->forward_logprobs(batch), continued);
}

TEST_F(HttpApiCheckpoints, SamplerCheckpointCannotBeLoadedForTraining) {
  const std::string sampler_path = model->save_for_sampler("only-for-sampling");
  json::object body = load_body(sampler_path, false);
  body["session_id"] = session;
  body["model_seq_id"] = 1;
  const RawResponse submit = api().post("/api/v1/load_weights", body);
  if (submit.status == 200) {
    EXPECT_EQ(string_field(api().await_failure(string_field(submit.json(), "request_id")), "category"), "user");
  } else {
    EXPECT_TRUE(is_client_error(submit));
  }
}

TEST_F(HttpApiCheckpoints, LoadOfAMissingCheckpointFails) {
  json::object body = load_body("tinker://" + model->id() + "/weights/never-saved", false);
  body["model_id"] = model->id();
  body["seq_id"] = model->next_seq();
  const RawResponse submit = api().post("/api/v1/load_weights", body);
  if (submit.status == 200) {
    EXPECT_EQ(string_field(api().await_failure(string_field(submit.json(), "request_id")), "category"), "user");
  } else {
    EXPECT_TRUE(is_error(submit, 404));
  }
}

TEST_F(HttpApiCheckpoints, NamedSamplerSaveIsAPersistentSamplerCheckpoint) {
  const std::string path = model->save_for_sampler("sampler-a");
  EXPECT_EQ(path, "tinker://" + model->id() + "/sampler_weights/sampler-a");
  const json::value listed = find_checkpoint("sampler_weights/sampler-a");
  ASSERT_FALSE(listed.is_null()) << to_text(run_checkpoints());
  EXPECT_EQ(string_field(listed, "checkpoint_type"), "sampler");

  const std::string sampler = create_sampling_session(api(), session, 0, std::nullopt, path);
  EXPECT_EQ(sampler, session + ":sample:0");
  const json::value got = api().get("/api/v1/samplers/" + sampler).json();
  EXPECT_EQ(string_field(got, "base_model"), tiny_model);
  EXPECT_EQ(string_field(got, "model_path"), path);
  const json::value sampled = api().call("/api/v1/asample", sample_body(sampler, 0, {5, 6, 7}, 1, 3, 1.0, 1));
  EXPECT_EQ(items(sampled, "sequences").size(), 1u);
}

TEST_F(HttpApiCheckpoints, EphemeralSamplerSaveYieldsASamplingSession) {
  model->train_step(batch, 1e-3);
  const std::string sampler = model->save_for_sampler_ephemeral(1);
  EXPECT_EQ(sampler, session + ":sample:1");
  const json::value sampled = api().call("/api/v1/asample", sample_body(sampler, 0, {5, 6, 7}, 2, 4, 1.0, 9));
  EXPECT_EQ(items(sampled, "sequences").size(), 2u);
  const json::value got = api().get("/api/v1/samplers/" + sampler).json();
  EXPECT_EQ(string_field(got, "sampler_id"), sampler);
  EXPECT_EQ(string_field(got, "base_model"), tiny_model);
}

}  // namespace
}  // namespace tinker::local::test
