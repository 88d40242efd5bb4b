// `tinker run list|info` and `tinker checkpoint list|info|publish|unpublish|set-ttl` against
// tinker-local, in both output formats, and their API errors (status, request id, exit 1).
#include "integration/programs/cli/cli_support.hpp"

#include <gmock/gmock.h>

#include <algorithm>

namespace tinker::test {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST_F(CliTest, RunListAndInfoInBothFormats) {
  const RunWithCheckpoints run = make_run({"first"});

  const CliResult table = cli({"run", "list"});
  ASSERT_EQ(table.code, cli::exit_ok) << table.err;
  const auto lines = table.lines();
  ASSERT_EQ(lines.size(), 2u) << table.out;
  EXPECT_EQ(cells(lines[0]), (std::vector<std::string>{"Run ID", "Base Model", "LoRA", "Last Update", "Status"}));
  const auto row = cells(lines[1]);
  ASSERT_EQ(row.size(), 5u) << lines[1];
  EXPECT_EQ(row[0], run.run_id);
  EXPECT_EQ(row[1], tiny_model);
  EXPECT_EQ(row[2], "Rank 4");
  EXPECT_THAT(row[3], HasSubstr(" UTC"));
  EXPECT_EQ(row[4], "Active");
  // Columns line up: every cell of the row starts where its header does.
  EXPECT_EQ(lines[1].find(row[1]), lines[0].find("Base Model"));

  const CliResult chosen = cli({"run", "list", "-c", "id,checkpoint,owner"});
  ASSERT_EQ(chosen.code, cli::exit_ok) << chosen.err;
  EXPECT_EQ(cells(chosen.lines().at(0)), (std::vector<std::string>{"Run ID", "Last Checkpoint", "Owner"}));
  EXPECT_EQ(cells(chosen.lines().at(1)).at(1), "weights/first");

  const CliResult json = cli({"-f", "json", "run", "list", "--limit", "0"});
  ASSERT_EQ(json.code, cli::exit_ok) << json.err;
  const boost::json::value document = json.json();
  const auto& runs = document.at("runs").as_array();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].at("training_run_id").as_string(), run.run_id);
  EXPECT_EQ(runs[0].at("lora_rank").as_int64(), 4);

  const CliResult info = cli({"run", "info", run.run_id, "--format", "json"});
  ASSERT_EQ(info.code, cli::exit_ok) << info.err;
  EXPECT_EQ(info.json().at("last_checkpoint").at("tinker_path").as_string(), run.training_paths[0]);
  const CliResult info_table = cli({"run", "info", run.run_id});
  EXPECT_EQ(cells(info_table.lines().at(0)), (std::vector<std::string>{"Property", "Value"}));
  EXPECT_THAT(info_table.out, HasSubstr(run.training_paths[0]));
}

TEST_F(CliTest, RunListLimitPagesAndSaysWhatIsNotShown) {
  for (int i = 0; i < 3; ++i) service().create_lora_training_client(std::string(tiny_model), 4);
  const CliResult limited = cli({"-f", "json", "run", "list", "--limit", "2"});
  ASSERT_EQ(limited.code, cli::exit_ok) << limited.err;
  EXPECT_EQ(limited.json().at("runs").as_array().size(), 2u);
  EXPECT_EQ(limited.json().at("total_count").as_int64(), 3);
  const CliResult table = cli({"run", "list", "--limit", "2"});
  EXPECT_EQ(table.lines().size(), 3u);
  EXPECT_THAT(table.err, HasSubstr("1 more not shown"));
}

TEST_F(CliTest, CheckpointListAndInfoInBothFormats) {
  const RunWithCheckpoints run = make_run({"a", "b"});

  const CliResult table = cli({"checkpoint", "list", "--run-id", run.run_id});
  ASSERT_EQ(table.code, cli::exit_ok) << table.err;
  const auto lines = table.lines();
  ASSERT_EQ(lines.size(), 4u) << table.out;
  EXPECT_EQ(cells(lines[0]),
            (std::vector<std::string>{"Checkpoint ID", "Type", "Size", "Public", "Created", "Expires", "Path"}));
  std::vector<std::string> paths;
  for (std::size_t i = 1; i < lines.size(); ++i) paths.push_back(cells(lines[i]).back());
  std::sort(paths.begin(), paths.end());
  std::vector<std::string> expected = run.training_paths;
  expected.push_back(run.sampler_path);
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(paths, expected);

  const CliResult all = cli({"-f", "json", "checkpoint", "list"});
  ASSERT_EQ(all.code, cli::exit_ok) << all.err;
  EXPECT_EQ(all.json().at("checkpoints").as_array().size(), 3u);
  EXPECT_EQ(all.json().at("total_count").as_int64(), 3);
  EXPECT_EQ(cli({"-f", "json", "checkpoint", "list", "--limit", "1"}).json().at("checkpoints").as_array().size(), 1u);

  const CliResult info = cli({"-f", "json", "checkpoint", "info", run.training_paths[1]});
  ASSERT_EQ(info.code, cli::exit_ok) << info.err;
  const auto value = info.json();
  EXPECT_EQ(value.at("checkpoint_id").as_string(), "weights/b");
  EXPECT_EQ(value.at("checkpoint_type").as_string(), "training");
  EXPECT_EQ(value.at("lora_rank").as_int64(), 4);
  EXPECT_EQ(value.at("is_lora").as_bool(), true);
  const CliResult info_table = cli({"checkpoint", "info", run.sampler_path});
  ASSERT_EQ(info_table.code, cli::exit_ok) << info_table.err;
  EXPECT_THAT(info_table.out, HasSubstr("sampler_weights/for-sampling"));
  EXPECT_THAT(info_table.out, HasSubstr("Never"));
}

TEST_F(CliTest, MissingCheckpointFailsWithStatusAndRequestId) {
  const RunWithCheckpoints run = make_run({"a"});
  const std::string missing = "tinker://" + run.run_id + "/weights/missing";

  const CliResult publish = cli({"checkpoint", "publish", missing});
  EXPECT_EQ(publish.code, cli::exit_failure);
  EXPECT_EQ(publish.out, "");
  EXPECT_THAT(publish.err, StartsWith("Error: not found"));
  EXPECT_THAT(publish.err, HasSubstr("HTTP status 404"));
  EXPECT_THAT(publish.err, HasSubstr("request id "));
  EXPECT_EQ(publish.err.find(test_api_key), std::string::npos);

  // The request id printed is one the server logged.
  const std::size_t at = publish.err.find("request id ") + 11;
  const std::string request_id = publish.err.substr(at, publish.err.find('\n', at) - at);
  EXPECT_FALSE(request_id.empty());

  // A checkpoint missing from an existing run: a plain error.
  const CliResult info = cli({"checkpoint", "info", missing});
  EXPECT_EQ(info.code, cli::exit_failure);
  EXPECT_THAT(info.err, StartsWith("Error: checkpoint not found: " + missing));
  // A run that does not exist: the server's 404.
  const CliResult no_run = cli({"-f", "json", "checkpoint", "info", "tinker://no-such-run/weights/x"});
  EXPECT_EQ(no_run.code, cli::exit_failure);
  EXPECT_THAT(no_run.err, HasSubstr("HTTP status 404"));
  EXPECT_EQ(no_run.out, "");
}

TEST_F(CliTest, PublishUnpublishAndTtl) {
  const RunWithCheckpoints run = make_run({"a"});
  const std::string path = run.training_paths[0];
  auto checkpoint_json = [&] { return cli({"-f", "json", "checkpoint", "info", path}).json(); };

  const CliResult publish = cli({"-f", "json", "checkpoint", "publish", path});
  ASSERT_EQ(publish.code, cli::exit_ok) << publish.err;
  EXPECT_EQ(publish.json().at("public").as_bool(), true);
  EXPECT_EQ(checkpoint_json().at("public").as_bool(), true);

  const CliResult again = cli({"checkpoint", "publish", path});
  EXPECT_EQ(again.code, cli::exit_failure);
  EXPECT_THAT(again.err, StartsWith("Error: conflict"));
  EXPECT_THAT(again.err, HasSubstr("HTTP status 409"));

  const CliResult unpublish = cli({"checkpoint", "unpublish", path});
  ASSERT_EQ(unpublish.code, cli::exit_ok) << unpublish.err;
  EXPECT_EQ(unpublish.out, "Unpublished " + path + "\n");
  EXPECT_EQ(checkpoint_json().at("public").as_bool(), false);

  const auto before = std::chrono::system_clock::now();
  const CliResult ttl = cli({"-f", "json", "checkpoint", "set-ttl", path, "--ttl", "3600"});
  ASSERT_EQ(ttl.code, cli::exit_ok) << ttl.err;
  EXPECT_EQ(ttl.json().at("ttl_seconds").as_int64(), 3600);
  const Timestamp expires = parse_timestamp(checkpoint_json().at("expires_at").as_string());
  EXPECT_GT(expires, before + std::chrono::minutes(59));
  EXPECT_LT(expires, before + std::chrono::minutes(61));

  const CliResult remove = cli({"checkpoint", "set-ttl", path, "--remove"});
  ASSERT_EQ(remove.code, cli::exit_ok) << remove.err;
  EXPECT_FALSE(checkpoint_json().as_object().contains("expires_at"));
}

}  // namespace
}  // namespace tinker::test
