// Errors (doc/protocol.md#errors): error bodies {"detail"} that name the field, 413, 404, unknown
// fields ignored, Content-Length on every 4xx.
#include "unit/programs/local/support/expectations.hpp"
#include "unit/programs/local/support/local_server.hpp"

#include <boost/json/parse.hpp>

namespace tinker::local::test {
namespace {

namespace json = boost::json;

using HttpApiErrors = LocalServerTest;

json::object create_model_body() {
  return json::parse(R"({"model_seq_id": 0, "base_model": "tinker-local/tiny-lm",
                         "lora_config": {"rank": 4, "train_unembed": true, "train_mlp": true, "train_attn": true},
                         "type": "create_model"})")
      .as_object();
}

TEST_F(HttpApiErrors, MissingFieldIsNamed) {
  const std::string session = api().create_session();
  json::object body = create_model_body();
  body["session_id"] = session;
  body.erase("base_model");
  EXPECT_TRUE(is_client_error(api().post("/api/v1/create_model", body), "base_model"));

  json::object no_session = create_model_body();
  EXPECT_TRUE(is_client_error(api().post("/api/v1/create_model", no_session), "session_id"));

  EXPECT_TRUE(is_client_error(api().post("/api/v1/session_heartbeat", json::object{{"type", "session_heartbeat"}}),
                              "session_id"));
  EXPECT_TRUE(is_client_error(api().post("/api/v1/retrieve_future", json::object{{"allow_metadata_only", true}}),
                              "request_id"));
}

TEST_F(HttpApiErrors, WrongTypeIsNamed) {
  const std::string session = api().create_session();
  json::object body = create_model_body();
  body["session_id"] = session;
  body["model_seq_id"] = "zero";
  EXPECT_TRUE(is_client_error(api().post("/api/v1/create_model", body), "model_seq_id"));

  json::object rank = create_model_body();
  rank["session_id"] = session;
  rank["lora_config"].as_object()["rank"] = "big";
  EXPECT_TRUE(is_client_error(api().post("/api/v1/create_model", rank), "rank"));
}

TEST_F(HttpApiErrors, NestedFieldErrorsNameTheField) {
  const std::string session = api().create_session();
  const std::string model = api().create_model(session);
  json::object optim = optim_step_body(model, 1, 1e-3);
  optim["adam_params"].as_object()["learning_rate"] = "fast";
  EXPECT_TRUE(is_client_error(api().post("/api/v1/optim_step", optim), "learning_rate"));

  json::array data;
  data.emplace_back(cross_entropy_datum({5, 6, 7, 8}));
  json::object fwd = forward_backward_body(model, 1, data);
  fwd.erase("model_id");
  EXPECT_TRUE(is_client_error(api().post("/api/v1/forward_backward", fwd), "model_id"));

  json::object no_loss = forward_backward_body(model, 1, data);
  no_loss["forward_backward_input"].as_object().erase("loss_fn");
  EXPECT_TRUE(is_client_error(api().post("/api/v1/forward_backward", no_loss), "loss_fn"));

  json::object bad_tokens = forward_backward_body(model, 1, data);
  bad_tokens["forward_backward_input"].as_object()["data"].as_array()[0].as_object()["model_input"] =
      json::parse(R"({"chunks": [{"tokens": ["a"], "type": "encoded_text"}]})");
  EXPECT_TRUE(is_client_error(api().post("/api/v1/forward_backward", bad_tokens), "tokens"));
}

TEST_F(HttpApiErrors, BodyThatIsNotJsonIs4xx) {
  const RawResponse response = api().post_raw("/api/v1/create_session", "{not json", json_type);
  EXPECT_TRUE(is_client_error(response));
}

TEST_F(HttpApiErrors, UnknownFieldsAndNullsInMetadataAreAccepted) {
  const json::value body = json::parse(R"({"tags": [], "user_metadata": {"note": null, "n": 1},
      "sdk_version": "0.25.0", "type": "create_session", "some_future_field": {"x": [1, 2]}})");
  const RawResponse response = api().post("/api/v1/create_session", body);
  EXPECT_EQ(response.status, 200) << response.describe();
}

TEST_F(HttpApiErrors, IntegerLiteralsAreAcceptedForFloatFields) {
  const std::string session = api().create_session();
  const std::string model = api().create_model(session);
  json::object optim = optim_step_body(model, 1, 1e-3);
  // The Python SDK writes defaults such as 1 and 0 as JSON integers; float fields accept them.
  optim["adam_params"].as_object()["learning_rate"] = 1;
  optim["adam_params"].as_object()["weight_decay"] = 0;
  optim["adam_params"].as_object()["grad_clip_norm"] = 0;
  const RawResponse response = api().post("/api/v1/optim_step", optim);
  ASSERT_EQ(response.status, 200) << response.describe();
  (void)api().await_json(string_field(response.json(), "request_id"));
}

TEST_F(HttpApiErrors, OversizeBodyIs413) {
  options.max_request_body = 4096;
  const std::string body = R"({"tags": [], "user_metadata": {"pad": ")" + std::string(10000, 'x') +
                           R"("}, "sdk_version": "0.25.0", "type": "create_session"})";
  const RawExchange result =
      api().http().exchange("POST", "/api/v1/create_session", api().auth({{"Content-Type", "application/json"}}), body);
  ASSERT_FALSE(result.error) << result.error.message();
  EXPECT_TRUE(is_error(result.response, 413));
  // A body under the limit is still fine afterwards.
  EXPECT_EQ(api().get("/api/v1/healthz").status, 200);
}

TEST_F(HttpApiErrors, UnknownPathIs404) {
  EXPECT_TRUE(is_error(api().get("/api/v1/no_such_endpoint"), 404));
  EXPECT_TRUE(is_error(api().post("/api/v1/no_such_endpoint", json::object{}), 404));
  EXPECT_TRUE(is_error(api().get("/somewhere/else"), 404));
}

TEST_F(HttpApiErrors, UnknownIdsAre404) {
  EXPECT_TRUE(
      is_error(api().post("/api/v1/get_info", json::object{{"model_id", "nope:train:0"}, {"type", "get_info"}}), 404));
  EXPECT_TRUE(is_error(api().post("/api/v1/retrieve_future",
                                  json::object{{"request_id", "req-does-not-exist"}, {"allow_metadata_only", false}}),
                       404));
  EXPECT_TRUE(is_error(api().post("/api/v1/session_heartbeat",
                                  json::object{{"session_id", "no-such-session"}, {"type", "session_heartbeat"}}),
                       404));
  EXPECT_TRUE(is_error(api().get("/api/v1/training_runs/nope:train:0?access_scope=owned"), 404));
  EXPECT_TRUE(is_error(api().get("/api/v1/samplers/nope:sample:0"), 404));
  EXPECT_TRUE(is_error(api().get("/api/v1/sessions/no-such-session"), 404));
}

TEST_F(HttpApiErrors, EveryErrorCarriesContentLength) {
  // A 400 without Content-Length looks like a proxy fault to the Python SDK.
  const RawResponse response = api().post_raw("/api/v1/create_session", "[]", json_type);
  ASSERT_GE(response.status, 400);
  ASSERT_TRUE(response.header("Content-Length").has_value()) << response.describe();
  EXPECT_NE(*response.header("Content-Length"), "0");
}

}  // namespace
}  // namespace tinker::local::test
