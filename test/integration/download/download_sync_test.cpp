// sync::RestClient::download_checkpoint / try_download_checkpoint: the blocking forms, with the
// progress callback on the client's io thread and errors as tinker::error / Result.
#include "integration/sync/sync_support.hpp"
#include "support/temp_files.hpp"

#include <tinker/download.hpp>
#include <tinker/sync/rest_client.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

namespace tinker::test {
namespace {

namespace fs = std::filesystem;

class SyncDownload : public SyncService {};

TEST_F(SyncDownload, DownloadsWithProgressAndReportsAConflict) {
  const TempDir scratch("tinker-sync-download");
  const fs::path out_dir = scratch.path();
  sync::ServiceClient service = make_sync_service();
  sync::TrainingClient training = service.create_lora_training_client(std::string(tiny_model), 4);
  const std::string path = training.save_state("blocking").get().path;
  sync::RestClient rest = service.create_rest_client();

  std::uint64_t last_done = 0;
  std::thread::id progress_thread;
  DownloadOptions options(out_dir);
  options.on_progress = [&](const DownloadProgress& p) {
    last_done = p.bytes_done;
    progress_thread = std::this_thread::get_id();
  };
  const DownloadResult result = rest.download_checkpoint(path, options);
  EXPECT_EQ(result.path, out_dir / download_target_name(path));
  EXPECT_TRUE(fs::exists(result.path / "adapter_model.safetensors"));
  EXPECT_EQ(last_done, result.archive_bytes);
  EXPECT_NE(progress_thread, std::this_thread::get_id()) << "progress runs on the client's io thread";

  const sync::Result<DownloadResult> again = rest.try_download_checkpoint(path, DownloadOptions(out_dir));
  ASSERT_TRUE(again.has_error());
  EXPECT_EQ(again.error().code, errc::conflict);
}

}  // namespace
}  // namespace tinker::test
