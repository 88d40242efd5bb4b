// `tinker checkpoint download` of an external_weights/ path (its files, not an archive) and
// `tinker checkpoint upload DIR` (the directory back as an external checkpoint) against tinker-local.
#include "integration/programs/cli/cli_support.hpp"
#include "support/temp_files.hpp"

#include <tinker/download.hpp>

#include <gmock/gmock.h>

#include <filesystem>

namespace tinker::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class CliExternalWeights : public CliTest {
 protected:
  std::string export_weights() {
    sync::TrainingClient training = service().create_lora_training_client(std::string(tiny_model), 4);
    return training.save_weights_external("cli-export").get().path;
  }
  const TempDir scratch{"tinker-cli-external"};
};

TEST_F(CliExternalWeights, DownloadsTheFilesAndUploadsThemBack) {
  const std::string path = export_weights();
  const fs::path target = scratch.path() / download_target_name(path);
  const CliResult download = cli({"-f", "json", "checkpoint", "download", path, "-o", scratch.path().string()});
  ASSERT_EQ(download.code, cli::exit_ok) << download.err;
  const boost::json::value value = download.json();
  EXPECT_EQ(fs::path(std::string(value.at("destination").as_string())), target);
  EXPECT_EQ(value.at("files").as_array().size(), 2u);
  EXPECT_TRUE(fs::is_regular_file(target / "adapter_model.safetensors"));
  EXPECT_TRUE(fs::is_regular_file(target / "adapter_config.json"));

  const CliResult upload = cli(
      {"-f", "json", "checkpoint", "upload", target.string(), "--base-model", std::string(tiny_model), "--rank", "4"});
  ASSERT_EQ(upload.code, cli::exit_ok) << upload.err;
  const std::string uploaded(upload.json().at("tinker_path").as_string());
  EXPECT_EQ(TinkerPath::parse(uploaded).type, CheckpointType::external);

  const CliResult table =
      cli({"checkpoint", "upload", target.string(), "--base-model", std::string(tiny_model), "--rank", "4"});
  ASSERT_EQ(table.code, cli::exit_ok) << table.err;
  EXPECT_THAT(table.out, HasSubstr("/external_weights/adapter"));
  EXPECT_THAT(table.err, HasSubstr("Uploading adapter_model.safetensors"));
}

TEST_F(CliExternalWeights, AnUploadOfAnotherRankIsAnErrorNamingTheFile) {
  const std::string path = export_weights();
  const CliResult download = cli({"checkpoint", "download", path, "-o", scratch.path().string()});
  ASSERT_EQ(download.code, cli::exit_ok) << download.err;
  const fs::path target = scratch.path() / download_target_name(path);
  const CliResult upload =
      cli({"checkpoint", "upload", target.string(), "--base-model", std::string(tiny_model), "--rank", "8"});
  EXPECT_EQ(upload.code, cli::exit_failure);
  EXPECT_THAT(upload.err, HasSubstr("adapter_config.json: r is 4"));
}

}  // namespace
}  // namespace tinker::test
