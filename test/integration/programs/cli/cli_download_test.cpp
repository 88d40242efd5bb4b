// `tinker checkpoint download` and `tinker session export-trace` (to a file) against tinker-local:
// the extracted files, --force, the progress bar only on a terminal, errors leave nothing behind.
#include "integration/programs/cli/cli_support.hpp"
#include "support/temp_files.hpp"

#include <tinker/download.hpp>

#include <gmock/gmock.h>

#include <filesystem>

namespace tinker::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class CliDownload : public CliTest {
 protected:
  void SetUp() override { CliTest::SetUp(); }

  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(out_dir)) names.push_back(entry.path().filename().string());
    return names;
  }

  const TempDir scratch{"tinker-cli-download"};
  const fs::path out_dir = scratch.path();
};

TEST_F(CliDownload, DownloadsAndExtractsACheckpoint) {
  const RunWithCheckpoints run = make_run({"a"});
  const std::string path = run.training_paths[0];
  const fs::path target = out_dir / download_target_name(path);

  const CliResult json = cli({"-f", "json", "checkpoint", "download", path, "-o", out_dir.string()});
  ASSERT_EQ(json.code, cli::exit_ok) << json.err;
  EXPECT_EQ(json.err, "");  // not a terminal: no progress bar
  const boost::json::value value = json.json();
  EXPECT_EQ(value.at("checkpoint_path").as_string(), path);
  EXPECT_EQ(fs::path(std::string(value.at("destination").as_string())), target);
  EXPECT_GT(value.at("archive_bytes").as_int64(), 0);
  const auto& files = value.at("files").as_array();
  ASSERT_FALSE(files.empty());
  for (const auto& file : files) EXPECT_TRUE(fs::is_regular_file(target / std::string(file.as_string()))) << file;
  EXPECT_EQ(entries(), std::vector<std::string>{target.filename().string()});  // no part files left

  // An existing target needs --force.
  const CliResult again = cli({"checkpoint", "download", path, "-o", out_dir.string()});
  EXPECT_EQ(again.code, cli::exit_failure);
  EXPECT_EQ(again.err, "Error: " + target.string() + " already exists; pass --force to replace it\n");

  error_is_terminal = true;
  const CliResult forced = cli({"checkpoint", "download", path, "-o", out_dir.string(), "--force"});
  ASSERT_EQ(forced.code, cli::exit_ok) << forced.err;
  EXPECT_EQ(cells(forced.lines().at(0)), (std::vector<std::string>{"Property", "Value"}));
  EXPECT_THAT(forced.out, HasSubstr(target.string()));
  EXPECT_THAT(forced.err, StartsWith("\rDownloading  ["));
  EXPECT_THAT(forced.err, HasSubstr("100%"));
  EXPECT_EQ(forced.err.back(), '\n');
}

TEST_F(CliDownload, MissingCheckpointLeavesNothingBehind) {
  const RunWithCheckpoints run = make_run({"a"});
  const std::string missing = "tinker://" + run.run_id + "/weights/missing";
  const CliResult result = cli({"checkpoint", "download", missing, "-o", out_dir.string()});
  EXPECT_EQ(result.code, cli::exit_failure);
  EXPECT_THAT(result.err, StartsWith("Error: not found"));
  EXPECT_THAT(result.err, HasSubstr("request id "));
  EXPECT_TRUE(entries().empty());
}

TEST_F(CliDownload, ExportsASessionTraceToAFile) {
  make_run({"a"});
  const std::string session_id = service().session_id();
  const fs::path file = out_dir / "trace.pftrace";
  const CliResult result = cli({"-f", "json", "session", "export-trace", session_id, "-o", file.string()});
  ASSERT_EQ(result.code, cli::exit_ok) << result.err;
  const boost::json::value value = result.json();
  EXPECT_EQ(value.at("output").as_string(), file.string());
  ASSERT_TRUE(fs::is_regular_file(file));
  EXPECT_GT(fs::file_size(file), 0u);
  EXPECT_EQ(static_cast<std::uintmax_t>(value.at("size_bytes").as_int64()), fs::file_size(file));
  EXPECT_EQ(entries(), std::vector<std::string>{"trace.pftrace"});

  const CliResult into_missing_dir =
      cli({"session", "export-trace", session_id, "-o", (out_dir / "no-such-dir" / "t.pftrace").string()});
  EXPECT_EQ(into_missing_dir.code, cli::exit_failure);
  EXPECT_THAT(into_missing_dir.err, HasSubstr("no such directory"));
}

}  // namespace
}  // namespace tinker::test
