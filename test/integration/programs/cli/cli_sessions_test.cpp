// `tinker session list|info|export-trace --url-only` and `tinker billing usage` against
// tinker-local.
#include "integration/programs/cli/cli_support.hpp"

#include <gmock/gmock.h>

#include <chrono>
#include <filesystem>
#include <fstream>

namespace tinker::test {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST_F(CliTest, SessionListInfoAndTraceUrl) {
  const RunWithCheckpoints run = make_run({"a"});
  const std::string session_id = service().session_id();

  const CliResult list = cli({"-f", "json", "session", "list"});
  ASSERT_EQ(list.code, cli::exit_ok) << list.err;
  bool found = false;
  const boost::json::value sessions = list.json();
  for (const auto& id : sessions.at("sessions").as_array()) found = found || id.as_string() == session_id;
  EXPECT_TRUE(found) << list.out;
  const CliResult table = cli({"session", "list", "--limit", "0"});
  ASSERT_EQ(table.code, cli::exit_ok) << table.err;
  EXPECT_EQ(table.lines().at(0), "Session ID");
  EXPECT_THAT(table.out, HasSubstr(session_id));

  const CliResult info = cli({"-f", "json", "session", "info", session_id});
  ASSERT_EQ(info.code, cli::exit_ok) << info.err;
  EXPECT_EQ(info.json().at("training_run_ids").as_array().at(0).as_string(), run.run_id);
  const CliResult info_table = cli({"session", "info", session_id});
  EXPECT_THAT(info_table.out, HasSubstr("training run  " + run.run_id));

  const CliResult url = cli({"session", "export-trace", session_id, "--url-only"});
  ASSERT_EQ(url.code, cli::exit_ok) << url.err;
  EXPECT_THAT(url.out, StartsWith(server->base_url()));
  const CliResult url_json = cli({"-f", "json", "session", "export-trace", session_id, "--url-only"});
  EXPECT_EQ(url_json.json().at("session_id").as_string(), session_id);

  const CliResult missing = cli({"session", "info", "no-such-session"});
  EXPECT_EQ(missing.code, cli::exit_failure);
  EXPECT_THAT(missing.err, HasSubstr("HTTP status 404"));
}

TEST_F(CliTest, BillingUsageAsTableJsonAndCsv) {
  make_run({"a"});
  const auto hour = std::chrono::floor<std::chrono::hours>(std::chrono::system_clock::now());
  const std::string start = format_timestamp(Timestamp(hour));
  const std::string end = format_timestamp(Timestamp(hour + std::chrono::hours(1)));

  const CliResult json = cli({"-f", "json", "billing", "usage", start, end});
  ASSERT_EQ(json.code, cli::exit_ok) << json.err;
  const boost::json::value document = json.json();
  const auto& data = document.at("data").as_array();
  ASSERT_FALSE(data.empty());
  bool checkpoint_event = false;
  for (const auto& entry : data) checkpoint_event |= entry.at("event_info").at("type").as_string() == "checkpoint";
  EXPECT_TRUE(checkpoint_event) << json.out;

  const CliResult table = cli({"billing", "usage", start, end});
  ASSERT_EQ(table.code, cli::exit_ok) << table.err;
  EXPECT_EQ(cells(table.lines().at(0)),
            (std::vector<std::string>{"Bucket Start", "Type", "Base Model", "Session", "Amount"}));
  EXPECT_THAT(table.out, HasSubstr("checkpoint"));

  const CliResult csv = cli({"billing", "usage", start, end, "--csv", "-"});
  ASSERT_EQ(csv.code, cli::exit_ok) << csv.err;
  EXPECT_THAT(csv.out, StartsWith("bucket_start,bucket_end,type,base_model,"));
  EXPECT_EQ(csv.lines().size(), data.size() + 1);

  const auto file =
      std::filesystem::temp_directory_path() / ("tinker-cli-usage-" + std::to_string(::getpid()) + ".csv");
  const CliResult to_file = cli({"-f", "json", "billing", "usage", start, end, "--csv", file.string()});
  ASSERT_EQ(to_file.code, cli::exit_ok) << to_file.err;
  std::ifstream in(file);
  std::string header;
  std::getline(in, header);
  EXPECT_THAT(header, StartsWith("bucket_start,"));
  std::filesystem::remove(file);

  // Unaligned start: the server's 400 with its request id.
  const CliResult unaligned = cli({"billing", "usage", start.substr(0, 14) + "05:00Z", end});
  EXPECT_EQ(unaligned.code, cli::exit_failure);
  EXPECT_THAT(unaligned.err, HasSubstr("HTTP status 400"));
}

}  // namespace
}  // namespace tinker::test
