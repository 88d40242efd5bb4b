// Checkpoint archives: the simulated build (503), the download token and its expiry, and the tar
// contents as the system tar reads them.
#include "archive_test_support.hpp"

namespace tinker::local::test {
namespace {

using ArchiveTest = EngineFixture;

TEST_F(ArchiveTest, BuildingAnswers503ThenATokenServingAPeftTar) {
  options.archive_building_polls = 2;
  start();
  std::string model = new_model(new_session(alice), 0, "Qwen/Qwen3-8B");
  result(engine->save_weights_for_sampler(SaveWeightsForSamplerRequest(model, 1, "final"), alice).request_id);
  const std::string id = "sampler_weights/final";
  EXPECT_EQ(http_status_of([&] { engine->checkpoint_archive(model, id, alice); }), 503);
  EXPECT_EQ(http_status_of([&] { engine->checkpoint_archive(model, id, alice); }), 503);
  EXPECT_EQ(http_status_of([&] { engine->checkpoint_archive(model, id, bob); }), 404);
  ArchiveLocation location = engine->checkpoint_archive(model, id, alice);
  EXPECT_EQ(location.token.size(), 36u);  // 32 hex digits + ".tar"
  EXPECT_EQ(location.expires - engine->clock().now() > std::chrono::minutes(14), true);
  EXPECT_EQ(engine->checkpoint_archive(model, id, alice).token, location.token);  // reused while valid

  auto file = engine->download(location.token);
  ASSERT_TRUE(file.has_value());
  EXPECT_EQ(file->content_type, "application/x-tar");
  TarContents tar(*file->data, dir.path());
  EXPECT_EQ(tar.names(),
            (std::vector<std::string>{"adapter_config.json", "adapter_model.safetensors", "checkpoint_complete"}));
  EXPECT_TRUE(tar.file("checkpoint_complete").empty());
  auto config = boost::json::parse(tar.file("adapter_config.json")).as_object();
  EXPECT_EQ(text(config["base_model_name_or_path"]), "Qwen/Qwen3-8B");
  EXPECT_EQ(config["r"].as_int64(), 4);
  EXPECT_EQ(text(config["peft_type"]), "LORA");
  EXPECT_TRUE(config["lora_alpha"].is_number());
  EXPECT_FALSE(config["target_modules"].as_array().empty());
  EXPECT_GE(tar.file("adapter_model.safetensors").size(), 8u);

  engine->clock().advance(std::chrono::minutes(16));
  EXPECT_FALSE(engine->download(location.token).has_value());
  EXPECT_NE(engine->checkpoint_archive(model, id, alice).token, location.token);
  EXPECT_EQ(http_status_of([&] { engine->checkpoint_archive(model, "weights/none", alice); }), 404);
  EXPECT_EQ(http_status_of([&] { engine->checkpoint_archive(model, "final", alice); }), 400);
}

TEST_F(ArchiveTest, PublicCheckpointsCanBeArchivedByOthers) {
  start();
  std::string model = new_model(new_session(alice));
  result(engine->save_weights(SaveWeightsRequest(model, 1, "pub"), alice).request_id);
  EXPECT_EQ(http_status_of([&] { engine->checkpoint_archive(model, "weights/pub", bob); }), 404);
  engine->publish_checkpoint(model, "weights/pub", alice);
  EXPECT_FALSE(engine->checkpoint_archive(model, "weights/pub", bob).token.empty());
}

}  // namespace
}  // namespace tinker::local::test
