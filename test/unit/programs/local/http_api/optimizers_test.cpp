// Optimizers on the wire (doc/local.md#dimuon, doc/training.md#optimizers): optimizer_config on
// create_model and load_weights, optim_step as the 0.25 adam_params or as optim_params, a
// mismatch refused with 400 {"detail"} before anything is applied, and the optimizer kept by
// training checkpoints saved with their optimizer state.
#include "unit/programs/local/support/expectations.hpp"
#include "unit/programs/local/support/local_server.hpp"
#include "unit/programs/local/support/training_steps.hpp"

#include <boost/json/parse.hpp>

namespace tinker::local::test {
namespace {

namespace json = boost::json;

json::object dimuon_config() {
  json::object config;
  config["type"] = "dimuon";
  config["version"] = 1;
  return config;
}

json::object dimuon_params(double learning_rate) {
  json::object params;
  params["type"] = "dimuon";
  params["learning_rate"] = learning_rate;
  return params;
}

class HttpApiOptimizers : public LocalServerTest {
 protected:
  void SetUp() override { session = api().create_session(); }

  // create_model with `optimizer_config` (none: the 0.25 body); returns the create future's answer.
  RawResponse create(std::int64_t model_seq_id, std::optional<json::object> optimizer_config) {
    json::object lora;
    lora["rank"] = 4;
    lora["seed"] = 0;
    json::object body;
    body["session_id"] = session;
    body["model_seq_id"] = model_seq_id;
    body["base_model"] = tiny_model;
    body["lora_config"] = std::move(lora);
    if (optimizer_config) body["optimizer_config"] = std::move(*optimizer_config);
    body["type"] = "create_model";
    return api().await_response(api().submit("/api/v1/create_model", body));
  }

  std::string model_id(std::int64_t model_seq_id) const { return session + ":train:" + std::to_string(model_seq_id); }

  // optim_step with `key` ("adam_params" or "optim_params") holding `params`: the submit's answer.
  RawResponse optim_step(const std::string& model, std::int64_t seq_id, std::string_view key, json::object params) {
    json::object body;
    body[key] = std::move(params);
    body["model_id"] = model;
    body["seq_id"] = seq_id;
    body["type"] = "optim_step";
    return api().post("/api/v1/optim_step", body);
  }

  json::object load_body(const std::string& path, bool optimizer) {
    json::object body;
    body["path"] = path;
    body["optimizer"] = optimizer;
    body["type"] = "load_weights";
    return body;
  }

  std::string session;
  const std::vector<Tokens> batch{{41, 42, 43, 44, 45, 46}, {51, 52, 53, 54}};
};

TEST_F(HttpApiOptimizers, DimuonModelStepsWithDimuonParamsAndRefusesAdamsWithoutApplying) {
  const RawResponse created = create(0, dimuon_config());
  ASSERT_EQ(created.status, 200) << created.describe();
  TrainingModel model(api(), model_id(0));
  const auto before = model.forward_logprobs(batch);  // seq 1
  (void)model.forward_backward(batch);                // seq 2

  // AdamW's parameters, in either form: 400 naming both optimizers; the seq_id is not taken.
  for (const char* key : {"adam_params", "optim_params"}) {
    const RawResponse refused = optim_step(model.id(), 3, key, adam_params(1e-3));
    EXPECT_EQ(refused.status, 400) << refused.describe();
    const std::string detail = string_field(refused.json(), "detail");
    EXPECT_NE(detail.find("adamw"), std::string::npos) << detail;
    EXPECT_NE(detail.find("dimuon"), std::string::npos) << detail;
  }
  EXPECT_EQ(model.forward_logprobs(batch), before);  // seq 3: nothing was applied

  const std::string step = api().submit("/api/v1/optim_step", [&] {
    json::object body;
    body["optim_params"] = dimuon_params(0.02);
    body["model_id"] = model.id();
    body["seq_id"] = model.next_seq();  // 4
    body["type"] = "optim_step";
    return body;
  }());
  const json::value result = api().await_json(step);
  EXPECT_GT(number(field(field(result, "metrics"), "grad_norm:mean")), 0.0);
  EXPECT_NE(model.forward_logprobs(batch), before);  // seq 5
}

TEST_F(HttpApiOptimizers, DefaultModelTakesBothFormsOfAdamAndRefusesDimuon) {
  ASSERT_EQ(create(0, std::nullopt).status, 200);
  TrainingModel model(api(), model_id(0));
  (void)model.forward_backward(batch);  // seq 1
  const RawResponse dimuon = optim_step(model.id(), 2, "optim_params", dimuon_params(0.02));
  EXPECT_EQ(dimuon.status, 400) << dimuon.describe();
  EXPECT_NE(string_field(dimuon.json(), "detail").find("dimuon"), std::string::npos);

  // optim_params without a type is AdamW; the refused step took no seq_id, so this one is seq 2.
  json::object step;
  step["optim_params"] = adam_params(1e-3);
  step["model_id"] = model.id();
  step["seq_id"] = 2;
  step["type"] = "optim_step";
  const json::value result = api().call("/api/v1/optim_step", step);
  EXPECT_GT(number(field(field(result, "metrics"), "grad_norm:mean")), 0.0);
  // And the 0.25 form, as the Python SDK 0.25 sends it.
  (void)model.next_seq();
  (void)model.forward_backward(batch);  // seq 3
  step.erase("optim_params");
  step["adam_params"] = adam_params(1e-3);
  step["seq_id"] = 4;
  (void)api().call("/api/v1/optim_step", step);
}

TEST_F(HttpApiOptimizers, NeitherOrBothStepFormsAre400) {
  ASSERT_EQ(create(0, std::nullopt).status, 200);
  json::object both;
  both["adam_params"] = adam_params(1e-3);
  both["optim_params"] = adam_params(1e-3);
  both["model_id"] = model_id(0);
  both["seq_id"] = 1;
  both["type"] = "optim_step";
  const RawResponse two = api().post("/api/v1/optim_step", both);
  EXPECT_EQ(two.status, 400) << two.describe();
  EXPECT_NE(string_field(two.json(), "detail").find("mutually exclusive"), std::string::npos);
  json::object none;
  none["model_id"] = model_id(0);
  none["seq_id"] = 1;
  const RawResponse zero = api().post("/api/v1/optim_step", none);
  EXPECT_EQ(zero.status, 400) << zero.describe();
  // An unknown optimizer's step does not decode: 422 naming the field.
  json::object lion;
  lion["type"] = "lion";
  lion["learning_rate"] = 1;
  const RawResponse unknown = optim_step(model_id(0), 1, "optim_params", lion);
  EXPECT_EQ(unknown.status, 422) << unknown.describe();
  EXPECT_NE(unknown.body.find("optim_params.type"), std::string::npos) << unknown.body;
}

TEST_F(HttpApiOptimizers, UnknownOptimizerFailsTheCreation) {
  json::object lion;
  lion["type"] = "lion";
  const RawResponse created = create(0, lion);
  ASSERT_EQ(created.status, 200) << created.describe();
  const json::value failure = created.json();
  EXPECT_EQ(string_field(failure, "category"), "user");
  EXPECT_NE(string_field(failure, "error").find("optimizer_config.type"), std::string::npos) << created.body;
}

TEST_F(HttpApiOptimizers, FullStateCheckpointKeepsDimuon) {
  ASSERT_EQ(create(0, dimuon_config()).status, 200);
  TrainingModel dimuon(api(), model_id(0));
  (void)dimuon.forward_backward(batch);
  json::object step;
  step["optim_params"] = dimuon_params(0.02);
  step["model_id"] = dimuon.id();
  step["seq_id"] = dimuon.next_seq();
  step["type"] = "optim_step";
  (void)api().call("/api/v1/optim_step", step);
  const std::string path = dimuon.save("dimuon-1");

  // weights_info says so.
  json::object info_body;
  info_body["tinker_path"] = path;
  const RawResponse info = api().post("/api/v1/weights_info", info_body);
  ASSERT_EQ(info.status, 200) << info.describe();
  EXPECT_EQ(string_field(field(info.json(), "optimizer_config"), "type"), "dimuon");

  // Create-via-load with the optimizer state: the new model is a Dimuon model.
  json::object via_load = load_body(path, true);
  via_load["session_id"] = session;
  via_load["model_seq_id"] = 1;
  const json::value loaded = api().call("/api/v1/load_weights", via_load);
  EXPECT_EQ(string_field(field(loaded, "optimizer_config"), "type"), "dimuon");
  TrainingModel resumed(api(), model_id(1));
  (void)resumed.forward_backward(batch);
  EXPECT_EQ(optim_step(resumed.id(), 2, "adam_params", adam_params(1e-3)).status, 400);
  EXPECT_EQ(optim_step(resumed.id(), 2, "optim_params", dimuon_params(0.02)).status, 200);

  // Into a model created with AdamW, the optimizer state does not fit: the load fails naming both.
  ASSERT_EQ(create(2, std::nullopt).status, 200);
  json::object into_adam = load_body(path, true);
  into_adam["model_id"] = model_id(2);
  into_adam["seq_id"] = 1;
  const json::value failure = api().await_failure(api().submit("/api/v1/load_weights", into_adam));
  const std::string message = string_field(failure, "error");
  EXPECT_NE(message.find("dimuon"), std::string::npos) << message;
  EXPECT_NE(message.find("adamw"), std::string::npos) << message;
  // Weights only: fine.
  into_adam["optimizer"] = false;
  into_adam["seq_id"] = 2;
  (void)api().call("/api/v1/load_weights", into_adam);

  // Create-via-load choosing AdamW explicitly while loading Dimuon state: refused too.
  json::object explicit_adam = load_body(path, true);
  explicit_adam["session_id"] = session;
  explicit_adam["model_seq_id"] = 3;
  json::object adamw;
  adamw["type"] = "adamw";
  explicit_adam["optimizer_config"] = adamw;
  const json::value explicit_failure = api().await_failure(api().submit("/api/v1/load_weights", explicit_adam));
  EXPECT_NE(string_field(explicit_failure, "error").find("dimuon"), std::string::npos);
}

}  // namespace
}  // namespace tinker::local::test
