// `tinker checkpoint delete`: by paths, by run with --type/--before/--after filters, the
// confirmation prompt, partial failures, and more checkpoints than concurrent workers.
#include "integration/programs/cli/cli_support.hpp"

#include <tinker/sync/rest_client.hpp>

#include <gmock/gmock.h>

#include <algorithm>

namespace tinker::test {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::vector<std::string> remaining_paths(sync::ServiceClient& service, const std::string& run_id) {
  std::vector<std::string> paths;
  for (const Checkpoint& c : service.create_rest_client().list_checkpoints(run_id).checkpoints) {
    paths.push_back(c.tinker_path);
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

TEST_F(CliTest, DeleteByRunWithFilters) {
  const RunWithCheckpoints run = make_run({"a", "b", "c"});
  std::map<std::string, Timestamp> times;
  for (const Checkpoint& c : service().create_rest_client().list_checkpoints(run.run_id).checkpoints) {
    times[c.tinker_path] = c.time;
  }
  const Timestamp t_a = times.at(run.training_paths[0]);
  const Timestamp t_b = times.at(run.training_paths[1]);
  const Timestamp t_c = times.at(run.training_paths[2]);
  ASSERT_LT(t_a, t_b);
  ASSERT_LT(t_b, t_c);

  // --type sampler: only the sampler checkpoint.
  const CliResult sampler =
      cli({"-f", "json", "checkpoint", "delete", "--run-id", run.run_id, "--type", "sampler", "-y"});
  ASSERT_EQ(sampler.code, cli::exit_ok) << sampler.err;
  EXPECT_EQ(sampler.json().at("deleted_count").as_int64(), 1);
  EXPECT_TRUE(sampler.json().at("failed").as_array().empty());
  EXPECT_EQ(remaining_paths(service(), run.run_id), run.training_paths);

  // --before b: only a (strictly earlier); --after b: only c.
  const CliResult before = cli({"-f", "json", "checkpoint", "delete", "--run-id", run.run_id, "--type", "weights",
                                "--before", format_timestamp(t_b), "--yes"});
  ASSERT_EQ(before.code, cli::exit_ok) << before.err;
  EXPECT_EQ(before.json().at("deleted_count").as_int64(), 1);
  EXPECT_EQ(remaining_paths(service(), run.run_id),
            (std::vector<std::string>{run.training_paths[1], run.training_paths[2]}));
  const CliResult after = cli({"checkpoint", "delete", "--run-id", run.run_id, "--after", format_timestamp(t_b), "-y"});
  ASSERT_EQ(after.code, cli::exit_ok) << after.err;
  EXPECT_EQ(after.out, "Deleted 1 checkpoint\n");
  EXPECT_EQ(remaining_paths(service(), run.run_id), std::vector<std::string>{run.training_paths[1]});

  // A filter matching nothing deletes nothing.
  const CliResult none =
      cli({"-f", "json", "checkpoint", "delete", "--run-id", run.run_id, "--before", "2001-01-01", "-y"});
  ASSERT_EQ(none.code, cli::exit_ok) << none.err;
  EXPECT_EQ(none.json().at("deleted_count").as_int64(), 0);
  EXPECT_EQ(remaining_paths(service(), run.run_id).size(), 1u);
}

TEST_F(CliTest, DeleteByPathsReportsEachFailure) {
  const RunWithCheckpoints run = make_run({"a", "b"});
  const std::string missing = "tinker://" + run.run_id + "/weights/missing";
  const CliResult result =
      cli({"-f", "json", "checkpoint", "delete", run.training_paths[0], missing, run.sampler_path, "-y"});
  EXPECT_EQ(result.code, cli::exit_failure);
  const auto value = result.json();
  EXPECT_EQ(value.at("deleted_count").as_int64(), 2);
  const auto& failed = value.at("failed").as_array();
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].at("tinker_path").as_string(), missing);
  EXPECT_THAT(std::string(failed[0].at("error").as_string()), HasSubstr("request id"));
  EXPECT_THAT(result.err, StartsWith("Error: 1 of 3 deletions failed"));
  EXPECT_EQ(remaining_paths(service(), run.run_id), std::vector<std::string>{run.training_paths[1]});
}

TEST_F(CliTest, DeleteAsksForConfirmationOnATerminal) {
  const RunWithCheckpoints run = make_run({"a"});

  const CliResult declined = cli({"checkpoint", "delete", run.training_paths[0]}, "n\n", /*terminal=*/true);
  EXPECT_EQ(declined.code, cli::exit_ok) << declined.err;
  EXPECT_THAT(declined.err, HasSubstr(run.training_paths[0]));
  EXPECT_THAT(declined.err, HasSubstr("[y/N]"));
  EXPECT_THAT(declined.err, HasSubstr("nothing was deleted"));
  EXPECT_EQ(remaining_paths(service(), run.run_id).size(), 2u);

  const CliResult no_answer = cli({"checkpoint", "delete", run.training_paths[0]}, "", /*terminal=*/true);
  EXPECT_EQ(no_answer.code, cli::exit_failure);
  EXPECT_EQ(remaining_paths(service(), run.run_id).size(), 2u);

  const CliResult accepted = cli({"checkpoint", "delete", run.training_paths[0]}, "yes\n", /*terminal=*/true);
  EXPECT_EQ(accepted.code, cli::exit_ok) << accepted.err;
  EXPECT_EQ(accepted.out, "Deleted 1 checkpoint\n");
  EXPECT_EQ(remaining_paths(service(), run.run_id), std::vector<std::string>{run.sampler_path});
}

TEST_F(CliTest, DeleteMoreCheckpointsThanWorkers) {
  std::vector<std::string> names;
  for (int i = 0; i < 40; ++i) names.push_back("step-" + std::to_string(i));
  const RunWithCheckpoints run = make_run(names);
  const CliResult result = cli({"-f", "json", "checkpoint", "delete", "--run-id", run.run_id, "-y"});
  ASSERT_EQ(result.code, cli::exit_ok) << result.err;
  EXPECT_EQ(result.json().at("deleted_count").as_int64(), 41);
  EXPECT_TRUE(remaining_paths(service(), run.run_id).empty());
  // At most 32 deletions were in flight at once: the server saw them all.
  std::size_t deletes = 0;
  for (const auto& request : server->audit().requests) deletes += request.method == "DELETE" ? 1 : 0;
  EXPECT_EQ(deletes, 41u);
}

}  // namespace
}  // namespace tinker::test
