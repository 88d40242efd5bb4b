// RestClient::async_download_checkpoint against in-process tinker-local
// (doc/rest.md#checkpoint-downloads): the extracted files equal the server's archive byte for byte,
// a download cut mid-body resumes with Range, no resume left is a size error, malicious archives
// are refused, an existing target needs `force`, progress is monotone, and the signed URL never
// sees a credential.
#include "http/client.hpp"
#include "integration/download/download_support.hpp"
#include "integration/rest/rest_support.hpp"
#include "support/tar_builder.hpp"
#include "support/temp_files.hpp"

#include <tinker/download.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace tinker::test {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;

class DownloadCheckpoint : public RestService {
 protected:
  void SetUp() override {
    RestService::SetUp();
    service = make_fast_service();
    made = run(make_run(*service, {"packed"}));
    path = made.training_paths.at(0);
  }
  void TearDown() override {
    service.reset();
    RestService::TearDown();
  }

  // The archive as the server serves it, fetched with the SDK's ordinary (string body) client.
  std::string server_archive() {
    RestClient rest = service->create_rest_client();
    auto url = rest.async_get_checkpoint_archive_url_from_tinker_path(path, asio::use_future);
    const std::string location = run_until_ready(io, url).url;
    http::HttpClient client(io.get_executor(), client_options());
    diagnostics diag;
    auto got =
        client.async_send(http::Request(http::Method::get, location, http::PoolKind::storage), diag, asio::use_future);
    return run_until_ready(io, got).body;
  }

  // Downloads `path` with `options`; returns the error (success: fills *result).
  boost::system::error_code download(DownloadOptions options, DownloadResult* result = nullptr,
                                     diagnostics* diag_out = nullptr) {
    RestClient rest = service->create_rest_client();
    diagnostics diag;
    auto done = rest.async_download_checkpoint(path, std::move(options), diag, asio::use_future);
    try {
      DownloadResult value = run_until_ready(io, done);
      if (result != nullptr) *result = std::move(value);
    } catch (const boost::system::system_error& e) {
      if (diag_out != nullptr) *diag_out = diag;
      return e.code();
    }
    return {};
  }

  std::vector<local::RequestRecord> archive_downloads() const { return requests_to(server->audit(), ".tar"); }

  void expect_files_match(const fs::path& target, const std::string& tar) {
    const auto expected = tar_files(tar);
    ASSERT_EQ(expected.size(), 3u);  // adapter_config.json, adapter_model.safetensors, checkpoint_complete
    std::vector<std::string> names;
    for (const auto& [name, bytes] : expected) {
      names.push_back(name);
      EXPECT_EQ(read_file(target / name), bytes) << name;
    }
    std::vector<std::string> on_disk = entries_of(target);
    EXPECT_EQ(on_disk, names);
  }

  const TempDir scratch{"tinker-download-test"};
  const fs::path out_dir = scratch.path();
  std::unique_ptr<ServiceClient> service;
  RunWithCheckpoints made;
  std::string path;
};

TEST_F(DownloadCheckpoint, ExtractsTheServersFilesByteForByteWithoutCredentials) {
  const std::string tar = server_archive();
  std::vector<DownloadProgress> progress;
  DownloadOptions options(out_dir);
  options.on_progress = [&progress](const DownloadProgress& p) { progress.push_back(p); };
  DownloadResult result;
  ASSERT_FALSE(download(options, &result));

  const fs::path target = out_dir / download_target_name(path);
  EXPECT_EQ(result.path, target);
  EXPECT_EQ(result.archive_bytes, tar.size());
  EXPECT_EQ(result.resumes, 0);
  const std::vector<std::string> files{"adapter_config.json", "adapter_model.safetensors", "checkpoint_complete"};
  EXPECT_EQ(result.files, files);
  expect_files_match(target, tar);
  const std::vector<std::string> left{target.filename().string()};
  EXPECT_EQ(entries_of(out_dir), left) << "no part file or staging directory may stay behind";

  ASSERT_FALSE(progress.empty());
  for (std::size_t i = 1; i < progress.size(); ++i) EXPECT_GE(progress[i].bytes_done, progress[i - 1].bytes_done);
  EXPECT_EQ(progress.back().bytes_done, tar.size());
  EXPECT_EQ(progress.back().bytes_total, std::optional<std::uint64_t>(tar.size()));

  const auto archive_calls = requests_to(server->audit(), "/archive");
  ASSERT_FALSE(archive_calls.empty());
  EXPECT_TRUE(archive_calls.back().credentials) << "the archive endpoint is authenticated";
  const auto downloads = archive_downloads();
  ASSERT_EQ(downloads.size(), 2u);  // server_archive() and the download
  EXPECT_FALSE(downloads[1].credentials) << "the API key must never reach the signed URL";
  EXPECT_TRUE(downloads[1].range.empty());
}

TEST_F(DownloadCheckpoint, ACutDownloadResumesWithRange) {
  const std::string tar = server_archive();
  local::FaultRule cut("_downloads", local::FaultKind::reset_mid_body);
  cut.on_calls = {1};
  local::FaultRule truncate("_downloads", local::FaultKind::truncated_body);
  truncate.on_calls = {2};
  server->set_faults({cut, truncate});
  std::vector<DownloadProgress> progress;
  DownloadOptions options(out_dir);
  options.on_progress = [&progress](const DownloadProgress& p) { progress.push_back(p); };
  DownloadResult result;
  ASSERT_FALSE(download(options, &result));

  EXPECT_EQ(result.resumes, 2);
  expect_files_match(result.path, tar);
  const auto downloads = archive_downloads();
  ASSERT_EQ(downloads.size(), 4u);  // server_archive(), the cut one, the truncated resume, the last resume
  EXPECT_TRUE(downloads[1].range.empty());
  ASSERT_EQ(downloads[2].range.rfind("bytes=", 0), 0u);
  EXPECT_NE(downloads[2].range, "bytes=0-");
  EXPECT_EQ(downloads[2].status, 206);
  EXPECT_EQ(downloads[3].status, 206);
  EXPECT_NE(downloads[3].range, downloads[2].range);
  for (const auto& request : downloads) EXPECT_FALSE(request.credentials);
  for (std::size_t i = 1; i < progress.size(); ++i) EXPECT_GE(progress[i].bytes_done, progress[i - 1].bytes_done);
  EXPECT_EQ(progress.back().bytes_done, tar.size());
  EXPECT_EQ(progress.back().resumes, 2);
}

TEST_F(DownloadCheckpoint, ATruncatedBodyWithNoResumeLeftIsASizeErrorAndLeavesNothing) {
  const std::string tar = server_archive();
  local::FaultRule truncate("_downloads", local::FaultKind::truncated_body);
  truncate.on_calls = {1};
  server->set_faults({truncate});
  DownloadOptions options(out_dir);
  options.max_resumes = 0;
  diagnostics diag;
  EXPECT_EQ(download(options, nullptr, &diag), errc::request_failed);
  EXPECT_NE(diag.message.find(" of " + std::to_string(tar.size()) + " bytes"), std::string::npos) << diag.message;
  EXPECT_TRUE(entries_of(out_dir).empty());
}

TEST_F(DownloadCheckpoint, MaliciousArchivesAreRefusedAndLeaveNothing) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"/tmp/absolute", TarBuilder().add("adapter_config.json", "{}").add("/tmp/absolute", "x").finish()},
      {"../escape", TarBuilder().add("../escape", "x").finish()},
      {"link", TarBuilder().add("link", "", '2', "/etc/passwd").finish()},
      {"hard", TarBuilder().add("a", "x").add("hard", "", '1', "/etc/passwd").finish()},
  };
  for (const auto& [entry, tar] : cases) {
    server->replace_checkpoint_archive(path, tar);
    diagnostics diag;
    EXPECT_EQ(download(DownloadOptions(out_dir), nullptr, &diag), errc::invalid_argument) << entry;
    EXPECT_NE(diag.message.find("'" + entry + "'"), std::string::npos) << diag.message;
    EXPECT_TRUE(entries_of(out_dir).empty()) << entry;
  }
  EXPECT_FALSE(fs::exists("/tmp/absolute"));
}

TEST_F(DownloadCheckpoint, AnExistingTargetNeedsForce) {
  const std::string tar = server_archive();
  const fs::path target = out_dir / download_target_name(path);
  fs::create_directories(target);
  std::ofstream(target / "mine.txt") << "keep me";
  const std::size_t downloads_before = archive_downloads().size();

  diagnostics diag;
  EXPECT_EQ(download(DownloadOptions(out_dir), nullptr, &diag), errc::conflict);
  EXPECT_NE(diag.message.find(target.string()), std::string::npos) << diag.message;
  EXPECT_EQ(read_file(target / "mine.txt"), "keep me");
  EXPECT_EQ(archive_downloads().size(), downloads_before) << "nothing is downloaded for a refused target";

  DownloadOptions force(out_dir);
  force.force = true;
  ASSERT_FALSE(download(force));
  EXPECT_FALSE(fs::exists(target / "mine.txt"));
  expect_files_match(target, tar);
  const std::vector<std::string> left{target.filename().string()};
  EXPECT_EQ(entries_of(out_dir), left);
}

TEST_F(DownloadCheckpoint, ARejectedUrlGetsOneFreshUrlAndTransientStatusesAreRetried) {
  const std::string tar = server_archive();
  local::FaultRule expired("_downloads", local::FaultKind::status);
  expired.status = 403;
  expired.on_calls = {1};
  local::FaultRule busy("_downloads", local::FaultKind::status);
  busy.status = 503;
  busy.on_calls = {2};
  server->set_faults({expired, busy});
  const std::size_t archive_calls_before = requests_to(server->audit(), "/archive").size();
  DownloadResult result;
  ASSERT_FALSE(download(DownloadOptions(out_dir), &result));
  expect_files_match(result.path, tar);
  EXPECT_EQ(requests_to(server->audit(), "/archive").size(), archive_calls_before + 2);
  EXPECT_EQ(archive_downloads().size(), 4u);  // server_archive(), 403, 503, 200
}

TEST_F(DownloadCheckpoint, KeepArchiveOnlyKeepsTheTar) {
  const std::string tar = server_archive();
  DownloadOptions options(out_dir);
  options.keep_archive_only = true;
  DownloadResult result;
  ASSERT_FALSE(download(options, &result));
  EXPECT_EQ(result.path, out_dir / (download_target_name(path) + ".tar"));
  EXPECT_EQ(read_file(result.path), tar);
  EXPECT_TRUE(result.files.empty());
  const std::vector<std::string> left{result.path.filename().string()};
  EXPECT_EQ(entries_of(out_dir), left);
}

TEST_F(DownloadCheckpoint, ABadPathIsInvalidArgument) {
  EXPECT_EQ(download_target_name("tinker://run-1/weights/step-5"), "run-1_weights_step-5");
  EXPECT_THROW(download_target_name("run-1/weights/x"), error);
  path = "tinker://run-1/bogus/x";
  EXPECT_EQ(download(DownloadOptions(out_dir)), errc::invalid_argument);
  EXPECT_TRUE(entries_of(out_dir).empty());
}

}  // namespace
}  // namespace tinker::test
