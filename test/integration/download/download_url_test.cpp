// RestClient::async_download_url (and its blocking form's error path) against in-process
// tinker-local: a checkpoint's signed archive URL lands byte for byte in the named file with no
// part file left, an existing file needs `force`, a directory or a missing parent directory is
// invalid_argument before anything is sent, and a URL the server rejects leaves no file behind.
#include "integration/download/download_support.hpp"
#include "integration/rest/rest_support.hpp"
#include "support/temp_files.hpp"

#include <tinker/download.hpp>
#include <tinker/rest_client.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace tinker::test {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;

class DownloadUrl : public RestService {
 protected:
  void SetUp() override {
    RestService::SetUp();
    service = make_fast_service();
    const RunWithCheckpoints made = run(make_run(*service, {"packed"}));
    RestClient rest = service->create_rest_client();
    auto url = rest.async_get_checkpoint_archive_url_from_tinker_path(made.training_paths.at(0), asio::use_future);
    archive_url = run_until_ready(io, url).url;
  }
  void TearDown() override {
    service.reset();
    RestService::TearDown();
  }

  // Downloads `url` to `file`; returns the error (success: fills *result).
  boost::system::error_code download(const std::string& url, const fs::path& file, UrlDownloadOptions options,
                                     DownloadResult* result = nullptr) {
    RestClient rest = service->create_rest_client();
    diagnostics diag;
    auto done = rest.async_download_url(url, file, std::move(options), diag, asio::use_future);
    try {
      DownloadResult value = run_until_ready(io, done);
      if (result != nullptr) *result = std::move(value);
    } catch (const boost::system::system_error& e) {
      return e.code();
    }
    return {};
  }

  std::size_t archive_requests() const { return requests_to(server->audit(), ".tar").size(); }

  const TempDir scratch{"tinker-download-url-test"};
  const fs::path out_dir = scratch.path();
  std::unique_ptr<ServiceClient> service;
  std::string archive_url;
};

TEST_F(DownloadUrl, WritesTheServedBytesToTheFileAndLeavesNoPartFile) {
  std::vector<DownloadProgress> progress;
  UrlDownloadOptions options;
  options.on_progress = [&progress](const DownloadProgress& p) { progress.push_back(p); };
  const fs::path file = out_dir / "checkpoint.tar";
  DownloadResult result;
  ASSERT_FALSE(download(archive_url, file, options, &result));

  EXPECT_EQ(result.path, file);
  EXPECT_EQ(result.archive_bytes, fs::file_size(file));
  EXPECT_GT(result.archive_bytes, 0u);
  EXPECT_EQ(result.resumes, 0);
  EXPECT_TRUE(result.files.empty());
  EXPECT_EQ(read_file(file).substr(257, 5), "ustar");  // a tar archive, as the server built it
  EXPECT_EQ(entries_of(out_dir), std::vector<std::string>{"checkpoint.tar"});
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back().bytes_done, result.archive_bytes);
  for (std::size_t i = 1; i < progress.size(); ++i) EXPECT_GE(progress[i].bytes_done, progress[i - 1].bytes_done);
}

TEST_F(DownloadUrl, AnExistingFileIsAConflictUnlessForced) {
  const fs::path file = out_dir / "checkpoint.tar";
  std::ofstream(file) << "older";
  const std::size_t before = archive_requests();
  EXPECT_EQ(download(archive_url, file, {}), make_error_code(errc::conflict));
  EXPECT_EQ(read_file(file), "older");
  EXPECT_EQ(archive_requests(), before);

  UrlDownloadOptions force;
  force.force = true;
  ASSERT_FALSE(download(archive_url, file, force));
  EXPECT_NE(read_file(file), "older");
  EXPECT_EQ(entries_of(out_dir), std::vector<std::string>{"checkpoint.tar"});
}

TEST_F(DownloadUrl, ADirectoryOrAMissingDirectoryIsInvalidBeforeAnyRequest) {
  const std::size_t before = archive_requests();
  EXPECT_EQ(download(archive_url, out_dir, {}), make_error_code(errc::invalid_argument));
  EXPECT_EQ(download(archive_url, out_dir / "no-such-dir" / "x.tar", {}), make_error_code(errc::invalid_argument));
  EXPECT_EQ(download("", out_dir / "x.tar", {}), make_error_code(errc::invalid_argument));
  UrlDownloadOptions negative;
  negative.max_resumes = -1;
  EXPECT_EQ(download(archive_url, out_dir / "x.tar", negative), make_error_code(errc::invalid_argument));
  EXPECT_EQ(archive_requests(), before);
  EXPECT_TRUE(entries_of(out_dir).empty());
}

TEST_F(DownloadUrl, ARejectedUrlFailsAndLeavesNoFile) {
  const std::string tampered = archive_url + "-forged";  // the server knows no such download token
  EXPECT_TRUE(download(tampered, out_dir / "checkpoint.tar", {}));
  EXPECT_TRUE(entries_of(out_dir).empty());
}

}  // namespace
}  // namespace tinker::test
