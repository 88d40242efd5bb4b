// `tinker checkpoint search|copy`, `tinker billing storage` and the console link of `checkpoint
// info` against tinker-local, in both output formats.
#include "integration/programs/cli/cli_support.hpp"

#include <tinker/console.hpp>

#include <gmock/gmock.h>

namespace tinker::test {
namespace {

using ::testing::HasSubstr;

TEST_F(CliTest, CheckpointSearchFiltersAndWalksPages) {
  sync::TrainingClient training = service().create_lora_training_client(std::string(tiny_model), 4);
  SaveStateOptions tagged(std::nullopt);
  tagged.user_metadata = std::map<std::string, std::string>{{"stage", "sft"}};
  const std::string sft = training.save_state("sft", tagged).get().path;
  training.save_state("plain").get();
  training.save_weights_for_sampler("eval").get();

  const CliResult found = cli({"-f", "json", "checkpoint", "search", "--metadata", "stage=sft"});
  ASSERT_EQ(found.code, cli::exit_ok) << found.err;
  const boost::json::value found_json = found.json();  // json() parses anew: keep the value alive
  const auto& checkpoints = found_json.at("checkpoints").as_array();
  ASSERT_EQ(checkpoints.size(), 1u);
  EXPECT_EQ(checkpoints[0].at("tinker_path").as_string(), sft);
  EXPECT_EQ(checkpoints[0].at("user_metadata").at("stage").as_string(), "sft");
  EXPECT_TRUE(found_json.at("next_cursor").is_null());

  const CliResult page = cli({"checkpoint", "search", "--type", "training", "--limit", "1"});
  ASSERT_EQ(page.code, cli::exit_ok) << page.err;
  EXPECT_EQ(page.lines().size(), 2u) << page.out;  // header and one row
  EXPECT_THAT(page.err, HasSubstr("--all"));
  const CliResult all = cli({"-f", "json", "checkpoint", "search", "--limit", "1", "--all"});
  ASSERT_EQ(all.code, cli::exit_ok) << all.err;
  EXPECT_EQ(all.json().at("checkpoints").as_array().size(), 3u);
  const CliResult stopped = cli({"checkpoint", "search", "--limit", "1", "--all", "--max-pages", "2"});
  EXPECT_EQ(stopped.code, cli::exit_failure);
  EXPECT_THAT(stopped.err, HasSubstr("max_pages (2)"));

  EXPECT_EQ(cli({"checkpoint", "search", "--limit", "0"}).code, cli::exit_usage);
  EXPECT_EQ(cli({"checkpoint", "search", "--metadata", "novalue"}).code, cli::exit_usage);
  EXPECT_EQ(cli({"checkpoint", "search", "--type", "other"}).code, cli::exit_usage);
}

TEST_F(CliTest, CheckpointCopyStorageAndConsoleLink) {
  const RunWithCheckpoints run = make_run({"a"});
  const CliResult copied = cli({"-f", "json", "checkpoint", "copy", run.sampler_path, "--ttl", "7200"});
  ASSERT_EQ(copied.code, cli::exit_ok) << copied.err;
  const std::string copy(copied.json().at("tinker_path").as_string());
  EXPECT_EQ(TinkerPath::parse(copy).name, "for-sampling");
  EXPECT_EQ(copied.json().at("console_url").as_string(), console::console_url(copy));
  EXPECT_EQ(cli({"checkpoint", "copy", run.sampler_path, "--ttl", "5"}).code, cli::exit_failure);

  const CliResult storage = cli({"-f", "json", "billing", "storage"});
  ASSERT_EQ(storage.code, cli::exit_ok) << storage.err;
  EXPECT_EQ(storage.json().at("data").as_array().at(0).at("checkpoint_count").as_int64(), 3);
  const CliResult table = cli({"billing", "storage", "--project", "default"});
  ASSERT_EQ(table.code, cli::exit_ok) << table.err;
  EXPECT_THAT(table.out, HasSubstr("per GB-month"));

  const CliResult info = cli({"checkpoint", "info", run.training_paths[0]});
  ASSERT_EQ(info.code, cli::exit_ok) << info.err;
  EXPECT_THAT(info.out, HasSubstr(console::console_url(run.training_paths[0])));
}

}  // namespace
}  // namespace tinker::test
