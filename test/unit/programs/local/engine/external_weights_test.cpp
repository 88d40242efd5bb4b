// tinker-local's external weights over the real tiny model (doc/local.md#external-weights): the
// export writes the archive's PEFT files and survives a restart; the files are handed out as
// downloads; an upload is checked (token, every file, rank, tensors, layers) before anything is
// registered, and a finished upload is an external checkpoint whose files are the uploaded bytes.
#include "model_engine_test_support.hpp"

namespace tinker::local::test {
namespace {

class ExternalWeightsEngine : public ModelEngineFixture {
 protected:
  // A trained model exported as `name`; returns its tinker path.
  std::string export_model(const std::string& model, std::int64_t& seq, const std::string& name) {
    SaveWeightsExternalRequest request(model, seq++, name);
    auto answer = result_json(engine->save_weights_external(request, alice).request_id);
    EXPECT_EQ(text(answer["type"]), "save_weights_external") << answer;
    EXPECT_GT(answer.at("size_bytes").as_int64(), 0) << answer;
    return text(answer["path"]);
  }

  // The bytes of each file of an external checkpoint, through its download tokens.
  std::map<std::string, std::string> files_of(const std::string& run, const std::string& name) {
    const ExternalWeightsLocation location = engine->external_weights_urls(run, "external_weights/" + name, alice);
    std::map<std::string, std::string> files;
    for (const auto& [file, token] : location.tokens) {
      const std::optional<Download> download = engine->download(token);
      EXPECT_TRUE(download.has_value()) << file;
      if (download) files[file] = *download->data;
    }
    return files;
  }

  ExternalUploadStart start_upload(std::int64_t rank) {
    return engine->external_upload_start(ExternalWeightsUploadStartRequest("tinker-local/tiny-lm", LoraConfig(rank)),
                                         alice);
  }
};

TEST_F(ExternalWeightsEngine, ExportsThePeftFilesListedAsAnExternalCheckpoint) {
  start_model();
  const std::string model = new_model(new_session(alice));
  std::int64_t seq = train_steps(model, 1, 2);
  const std::string path = export_model(model, seq, "hf");
  EXPECT_EQ(path, "tinker://" + model + "/external_weights/hf");
  const auto files = files_of(model, "hf");
  ASSERT_EQ(files.size(), 2u);
  EXPECT_NE(files.at("adapter_config.json").find("\"r\":4"), std::string::npos) << files.at("adapter_config.json");
  EXPECT_EQ(files.at("adapter_model.safetensors").size() > 8, true);

  const CheckpointsListResponse list = engine->list_run_checkpoints(model, alice);
  ASSERT_EQ(list.checkpoints.size(), 1u);
  EXPECT_EQ(list.checkpoints[0].checkpoint_type, CheckpointType::external);
  EXPECT_FALSE(engine->get_training_run(model, "owned", alice).last_sampler_checkpoint.has_value());
  // Another user cannot see it; the same name is not exported twice.
  EXPECT_EQ(http_status_of([&] { engine->external_weights_urls(model, "external_weights/hf", bob); }), 404);
  auto again =
      result_json(engine->save_weights_external(SaveWeightsExternalRequest(model, seq++, "hf"), alice).request_id);
  EXPECT_EQ(text(again["category"]), "user") << again;

  start_model();  // a restart rescans external checkpoints too
  EXPECT_EQ(files_of(model, "hf"), files);
  engine->delete_checkpoint(model, "external_weights/hf", alice);
  EXPECT_EQ(http_status_of([&] { engine->external_weights_urls(model, "external_weights/hf", alice); }), 404);
}

TEST_F(ExternalWeightsEngine, RefusesRecipientsAndTtlsOutOfRangeBeforeATicket) {
  start_model();
  const std::string model = new_model(new_session(alice));
  SaveWeightsExternalRequest encrypted(model, 1, "x");
  encrypted.age_encryption_recipients = std::vector<std::string>{"age1xyz"};
  EXPECT_EQ(http_status_of([&] { engine->save_weights_external(encrypted, alice); }), 400);
  EXPECT_EQ(
      http_status_of([&] { engine->save_weights_external(SaveWeightsExternalRequest(model, 1, "x", 60), alice); }),
      400);
  EXPECT_EQ(http_status_of([&] { engine->external_weights_urls(model, "weights/x", alice); }), 400);
  // seq_id 1 was not taken: it still works.
  std::int64_t seq = 1;
  EXPECT_EQ(export_model(model, seq, "x"), "tinker://" + model + "/external_weights/x");
}

TEST_F(ExternalWeightsEngine, AnUploadOfTheExportedFilesBecomesAnExternalCheckpoint) {
  start_model();
  const std::string model = new_model(new_session(alice));
  std::int64_t seq = train_steps(model, 1, 2);
  export_model(model, seq, "hf");
  const auto files = files_of(model, "hf");

  const ExternalUploadStart upload = start_upload(4);
  EXPECT_EQ(upload.files, (std::vector<std::string>{"adapter_config.json", "adapter_model.safetensors"}));
  EXPECT_EQ(http_status_of([&] {
              engine->external_upload_put(upload.upload_id, "adapter_config.json", "", files.at("adapter_config.json"));
            }),
            403);
  EXPECT_EQ(
      http_status_of([&] { engine->external_upload_put(upload.upload_id, "adapter_config.json", "wrong", "{}"); }),
      403);
  EXPECT_EQ(http_status_of([&] { engine->external_upload_put(upload.upload_id, "other.bin", upload.secret, "x"); }),
            404);
  engine->external_upload_put(upload.upload_id, "adapter_config.json", upload.secret, files.at("adapter_config.json"));
  const ExternalWeightsUploadFinishRequest finish(upload.upload_id);
  EXPECT_EQ(http_status_of([&] { engine->external_upload_finish(finish, alice); }), 400);  // a file is missing
  engine->external_upload_put(upload.upload_id, "adapter_model.safetensors", upload.secret,
                              files.at("adapter_model.safetensors"));
  EXPECT_EQ(http_status_of([&] { engine->external_upload_finish(finish, bob); }), 404);
  const std::string path = engine->external_upload_finish(finish, alice).tinker_path;
  EXPECT_EQ(path, "tinker://" + upload.upload_id + "/external_weights/adapter");
  EXPECT_EQ(engine->external_upload_finish(finish, alice).tinker_path, path);  // a repeated finish
  EXPECT_EQ(files_of(upload.upload_id, "adapter"), files);
  EXPECT_EQ(engine->weights_info(WeightsInfoRequest(path), alice).lora_rank, 4);
}

TEST_F(ExternalWeightsEngine, AnUploadThatDoesNotFitIsRefusedNamingTheFileAndRegistersNothing) {
  start_model();
  const std::string model = new_model(new_session(alice));
  std::int64_t seq = train_steps(model, 1, 1);
  export_model(model, seq, "hf");
  const auto files = files_of(model, "hf");
  const std::size_t before = engine->list_user_checkpoints(100, 0, alice).checkpoints.size();

  auto finish_message = [&](const ExternalUploadStart& upload, const std::string& config, const std::string& weights) {
    engine->external_upload_put(upload.upload_id, "adapter_config.json", upload.secret, config);
    engine->external_upload_put(upload.upload_id, "adapter_model.safetensors", upload.secret, weights);
    try {
      engine->external_upload_finish(ExternalWeightsUploadFinishRequest(upload.upload_id), alice);
    } catch (const HttpError& e) {
      EXPECT_EQ(e.status(), 400);
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  // Another rank than the one started with.
  EXPECT_NE(finish_message(start_upload(8), files.at("adapter_config.json"), files.at("adapter_model.safetensors"))
                .find("adapter_config.json: r is 4"),
            std::string::npos);
  // Weights that are not safetensors.
  const std::string garbage =
      finish_message(start_upload(4), files.at("adapter_config.json"), "not a safetensors file");
  EXPECT_NE(garbage.find("adapter_model.safetensors"), std::string::npos) << garbage;
  EXPECT_EQ(garbage.find(dir.path().string()), std::string::npos) << "the scratch directory leaked: " << garbage;
  // A config that says rank 8 over rank-4 tensors: the shapes do not fit.
  std::string rank8 = files.at("adapter_config.json");
  rank8.replace(rank8.find("\"r\":4"), 5, "\"r\":8");
  const std::string shapes = finish_message(start_upload(8), rank8, files.at("adapter_model.safetensors"));
  EXPECT_NE(shapes.find("shape"), std::string::npos) << shapes;
  // Without the unembedding adapter the LoRA config's train_unembed is not met.
  ExternalWeightsUploadStartRequest no_unembed("tinker-local/tiny-lm", LoraConfig(4));
  no_unembed.lora_config.train_unembed = false;
  const ExternalUploadStart fewer = engine->external_upload_start(no_unembed, alice);
  const std::string layers =
      finish_message(fewer, files.at("adapter_config.json"), files.at("adapter_model.safetensors"));
  EXPECT_NE(layers.find("train_unembed"), std::string::npos) << layers;

  EXPECT_EQ(engine->list_user_checkpoints(100, 0, alice).checkpoints.size(), before);
  EXPECT_EQ(http_status_of([&] {
              engine->external_upload_start(ExternalWeightsUploadStartRequest("no/such-model", LoraConfig(4)), alice);
            }),
            400);
  EXPECT_EQ(http_status_of([&] { start_upload(0); }), 400);
}

}  // namespace
}  // namespace tinker::local::test
