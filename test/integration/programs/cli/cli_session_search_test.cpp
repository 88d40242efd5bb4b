// `tinker session search|finish|info` against tinker-local, in both output formats.
#include "integration/programs/cli/cli_support.hpp"

#include <gmock/gmock.h>

namespace tinker::test {
namespace {

using ::testing::HasSubstr;

TEST_F(CliTest, SessionSearchFinishAndInfoShowNameAndStatus) {
  (void)service().create_sampling_client(SamplingSource::from_base_model(std::string(tiny_model)));
  const std::string id = service().session_id();

  const CliResult active = cli({"-f", "json", "session", "search", "--status", "active"});
  ASSERT_EQ(active.code, cli::exit_ok) << active.err;
  const boost::json::value active_json = active.json();
  ASSERT_EQ(active_json.at("sessions").as_array().size(), 1u);
  EXPECT_EQ(active_json.at("sessions").as_array()[0].at("session_id").as_string(), id);

  const CliResult finished = cli({"session", "finish", id, "--reason", "interrupted", "--detail", "by hand"});
  ASSERT_EQ(finished.code, cli::exit_ok) << finished.err;
  EXPECT_THAT(finished.out, HasSubstr("Finished session " + id + " (interrupted)"));

  const CliResult table = cli({"session", "search", "--status", "client_finished", "--reason", "interrupted"});
  ASSERT_EQ(table.code, cli::exit_ok) << table.err;
  EXPECT_THAT(table.out, HasSubstr(id));
  EXPECT_THAT(table.out, HasSubstr("client_finished (interrupted): by hand"));

  const CliResult info = cli({"session", "info", id});
  ASSERT_EQ(info.code, cli::exit_ok) << info.err;
  EXPECT_THAT(info.out, HasSubstr("Status: client_finished (interrupted): by hand"));

  const CliResult bad = cli({"session", "search", "--reason", "success"});
  EXPECT_NE(bad.code, cli::exit_ok);
  EXPECT_THAT(bad.err, HasSubstr("--reason: needs --status client_finished"));
}

}  // namespace
}  // namespace tinker::test
