// The engine over the real tiny model: training changes logprobs, user errors fail the future,
// save/load (also across a restart, with and without optimizer state) is bit-identical, and the
// archive holds the adapter tensors.
#include "archive_test_support.hpp"
#include "model_engine_test_support.hpp"

namespace tinker::local::test {
namespace {

using ModelCheckpointsTest = ModelEngineFixture;

TEST_F(ModelCheckpointsTest, TrainingLowersTheLossAndInvalidDataIsAUserError) {
  start_model();
  std::string model = new_model(new_session(alice));
  double first = forward(model, 1).metrics.at("loss:sum");
  std::int64_t seq = train_steps(model, 2, 8);
  double later = forward(model, seq++).metrics.at("loss:sum");
  EXPECT_LT(later, first);

  ForwardBackwardInput bad = cross_entropy_batch(2, 5);
  bad.data[1].loss_fn_inputs["weights"] = TensorData(std::vector<float>{1.0f});
  auto failure = result_json(forward_backward(model, seq++, false, bad).request_id);
  EXPECT_EQ(text(failure["category"]), "user");
  EXPECT_NE(text(failure["error"]).find("weights"), std::string::npos) << failure;
  // The failed op took its turn; the model goes on.
  EXPECT_EQ(forward(model, seq++).loss_fn_outputs.size(), 2u);
  const ModelAudit* audit = audit_of(model);
  ASSERT_NE(audit, nullptr);
  EXPECT_TRUE(audit->exactly_once_in_order);
  EXPECT_EQ(static_cast<std::int64_t>(audit->applied_seq_ids.size()), seq - 1);
}

TEST_F(ModelCheckpointsTest, SaveThenLoadGivesBitIdenticalLogprobs) {
  start_model();
  std::string model = new_model(new_session(alice));
  std::int64_t seq = train_steps(model, 1, 3);
  std::string path =
      text(result_json(engine->save_weights(SaveWeightsRequest(model, seq++, "s3"), alice).request_id)["path"]);
  auto saved = bits(forward(model, seq++));
  seq = train_steps(model, seq, 2);
  EXPECT_NE(bits(forward(model, seq++)), saved);
  result(engine->load_weights(LoadWeightsRequest(model, seq++, path, false), alice).request_id);
  EXPECT_EQ(bits(forward(model, seq++)), saved);
}

TEST_F(ModelCheckpointsTest, RestartThenLoadIsBitIdenticalAndOptimizerStateResumesTraining) {
  start_model();
  std::string model = new_model(new_session(alice));
  std::int64_t seq = train_steps(model, 1, 3);
  std::string path =
      text(result_json(engine->save_weights(SaveWeightsRequest(model, seq++, "resume"), alice).request_id)["path"]);
  auto saved = bits(forward(model, seq++));
  seq = train_steps(model, seq, 1);
  auto continued = bits(forward(model, seq++));  // one more step from the saved state

  start_model();  // a new engine over the same data directory
  std::string session = new_session(alice);
  LoadWeightsRequest request;
  request.session_id = session;
  request.model_seq_id = 0;
  request.path = path;
  request.optimizer = true;
  std::string restored = text(result_json(engine->load_weights(request, alice).request_id)["model_id"]);
  EXPECT_EQ(bits(forward(restored, 1)), saved);
  train_steps(restored, 2, 1);
  EXPECT_EQ(bits(forward(restored, 4)), continued);

  // Without the optimizer state the same step starts Adam afresh and lands elsewhere.
  std::string fresh = new_model(session, 1);
  result(engine->load_weights(LoadWeightsRequest(fresh, 1, path, false), alice).request_id);
  EXPECT_EQ(bits(forward(fresh, 2)), saved);
  train_steps(fresh, 3, 1);
  EXPECT_NE(bits(forward(fresh, 5)), continued);
}

TEST_F(ModelCheckpointsTest, ArchiveHoldsTheAdapterTensors) {
  start_model();
  std::string model = new_model(new_session(alice));
  result(engine->save_weights(SaveWeightsRequest(model, 1, "a"), alice).request_id);
  ArchiveLocation location = engine->checkpoint_archive(model, "weights/a", alice);
  TarContents tar(*engine->download(location.token)->data, dir.path());
  auto config = boost::json::parse(tar.file("adapter_config.json")).as_object();
  EXPECT_EQ(config["r"].as_int64(), 4);
  std::string safetensors = tar.file("adapter_model.safetensors");
  ASSERT_GE(safetensors.size(), 8u);
  std::uint64_t header_length = 0;
  std::memcpy(&header_length, safetensors.data(), 8);
  ASSERT_LE(8 + header_length, safetensors.size());
  auto header = boost::json::parse(safetensors.substr(8, header_length)).as_object();
  EXPECT_TRUE(header.contains("base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight")) << header;
  EXPECT_TRUE(header.contains("base_model.model.model.unembed_tokens.lora_B.weight")) << header;
  for (const auto& module : config["target_modules"].as_array()) {
    bool found = false;
    for (const auto& [name, tensor] : header) {
      found = found || name.find("." + text(module) + ".lora_A") != std::string_view::npos;
    }
    EXPECT_TRUE(found) << module;
  }
}

}  // namespace
}  // namespace tinker::local::test
