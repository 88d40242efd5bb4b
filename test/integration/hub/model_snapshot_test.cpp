// download_model_snapshot (tinker/hub_download.hpp) against tinker-local's Hub emulation: a model
// repo pushed through the upload API comes down with its blobs named as the Hub names them (LFS
// files by their SHA-256, from the listing's ?blobs=true), is not fetched again, and a body cut
// off by a fault is continued with a Range the server answers 206.
#include "integration/support/local_service.hpp"
#include "support/temp_files.hpp"

#include <tinker/error.hpp>
#include <tinker/hub_download.hpp>
#include <tinker/hub_upload.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace tinker::test {
namespace {

namespace fs = std::filesystem;

EnvLookup no_variables() {
  return [](std::string_view) { return std::optional<std::string>(); };
}

std::string weights(std::size_t size) {
  std::string bytes(size, '\0');
  for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>((i * 2654435761u) >> 13);
  return bytes;
}

class ModelSnapshot : public LocalService {
 protected:
  HubOptions hub() const {
    HubOptions options;
    options.endpoint = server->base_url();
    options.token = Secret(std::string(test_api_key));
    options.cache_dir = cache.path();
    return options;
  }

  // A private model repo with a config, a 96 KiB weights file (LFS) and a file in a folder.
  std::string push_model() {
    const std::string repo = hub_create_repo(hub(), hub_whoami(hub()) + "/tiny", true, false);
    std::ofstream(files.path() / "config.json") << "{\"model_type\": \"llama\"}";
    std::ofstream(files.path() / "model.safetensors", std::ios::binary) << weights(96 * 1024);
    std::ofstream(files.path() / "params.json") << "{\"dim\": 8}";
    HubCommitRequest request;
    request.repo_id = repo;
    request.summary = "model";
    request.files.emplace_back("config.json", files.path() / "config.json");
    request.files.emplace_back("model.safetensors", files.path() / "model.safetensors");
    request.files.emplace_back("original/params.json", files.path() / "params.json");
    hub_commit(hub(), request);
    return repo;
  }

  std::vector<local::RequestRecord> file_requests() const {
    std::vector<local::RequestRecord> found;
    for (local::RequestRecord& record : server->audit().requests) {
      if (record.path.find("/resolve/") != std::string::npos) found.push_back(std::move(record));
    }
    return found;
  }

  TempDir cache{"tinker-model-snapshot"};
  TempDir files{"tinker-model-files"};
};

TEST_F(ModelSnapshot, APushedModelComesDownOnceWithTheHubsBlobNames) {
  const std::string repo = push_model();
  const fs::path snapshot = download_model_snapshot(repo, "main", hub(), {}, {}, no_variables());
  EXPECT_EQ(snapshot.filename().string(), hub_repo_info(hub(), repo).sha);
  EXPECT_EQ(read_file(snapshot / "model.safetensors"), read_file(files.path() / "model.safetensors"));
  EXPECT_EQ(read_file(snapshot / "original/params.json"), read_file(files.path() / "params.json"));
  EXPECT_TRUE(fs::exists(snapshot / ".gitattributes"));  // the repo's first commit, no pattern given
  // The weights' blob is named by their SHA-256, as huggingface_hub names an LFS file's.
  EXPECT_EQ(fs::read_symlink(snapshot / "model.safetensors").filename().string().size(), 64u);
  EXPECT_EQ(fs::read_symlink(snapshot / "config.json").filename().string().size(), 40u);

  const std::size_t fetched = file_requests().size();
  EXPECT_EQ(fetched, 4u);
  EXPECT_EQ(download_model_snapshot(repo, "main", hub(), {"*.json", "*.safetensors"}, {}, no_variables()), snapshot);
  EXPECT_EQ(file_requests().size(), fetched);
}

TEST_F(ModelSnapshot, ABodyCutOffIsContinuedWithARange) {
  const std::string repo = push_model();
  local::FaultRule cut("model.safetensors", local::FaultKind::truncated_body);
  cut.probability = 1.0;  // every attempt, resumptions included
  server->set_faults({cut});
  EXPECT_THROW(download_model_snapshot(repo, "main", hub(), {"*.safetensors"}, {}, no_variables()), error);
  const auto cut_off = file_requests();
  ASSERT_FALSE(cut_off.empty());
  EXPECT_EQ(cut_off.back().fault, "truncated_body");

  server->set_faults({});
  const fs::path snapshot = download_model_snapshot(repo, "main", hub(), {"*.safetensors"}, {}, no_variables());
  EXPECT_EQ(read_file(snapshot / "model.safetensors"), read_file(files.path() / "model.safetensors"));
  const local::RequestRecord last = file_requests().back();
  EXPECT_EQ(last.status, 206);
  EXPECT_TRUE(last.range.starts_with("bytes=")) << last.range;
  EXPECT_NE(last.range, "bytes=0-");
}

}  // namespace
}  // namespace tinker::test
