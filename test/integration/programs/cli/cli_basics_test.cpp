// The `tinker` CLI's own behaviour: version, help, usage errors (exit 2, before any request),
// configuration errors, Ctrl-C (exit 130).
#include "integration/programs/cli/cli_support.hpp"

#include <tinker/version.hpp>

#include <gmock/gmock.h>

namespace tinker::test {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST_F(CliTest, VersionInBothFormats) {
  const CliResult table = cli({"version"});
  EXPECT_EQ(table.code, cli::exit_ok);
  EXPECT_EQ(table.out, std::string("tinker ") + sdk_version + "\n");
  EXPECT_EQ(table.err, "");

  const CliResult json = cli({"--format", "json", "version"});
  ASSERT_EQ(json.code, cli::exit_ok);
  EXPECT_EQ(json.json().at("version").as_string(), sdk_version);
  // -f may also follow the subcommand.
  EXPECT_EQ(cli({"version", "-f", "json"}).json().at("version").as_string(), sdk_version);
}

TEST_F(CliTest, HelpExitsZero) {
  const CliResult help = cli({"--help"});
  EXPECT_EQ(help.code, cli::exit_ok);
  EXPECT_THAT(help.out, HasSubstr("checkpoint"));
  const CliResult sub = cli({"checkpoint", "delete", "--help"});
  EXPECT_EQ(sub.code, cli::exit_ok);
  EXPECT_THAT(sub.out, HasSubstr("--run-id"));
  EXPECT_THAT(sub.out, HasSubstr("--yes"));
}

TEST_F(CliTest, UsageErrorsExitTwoBeforeAnyRequest) {
  const std::size_t requests_before = server->audit().requests.size();
  const std::vector<std::vector<std::string>> bad = {
      {},
      {"frobnicate"},
      {"--format", "xml", "version"},
      {"checkpoint"},
      {"checkpoint", "info"},
      {"checkpoint", "info", "not-a-path"},
      {"checkpoint", "publish", "tinker://run/bogus_kind/x"},
      {"checkpoint", "set-ttl", "tinker://run/weights/x"},
      {"checkpoint", "set-ttl", "tinker://run/weights/x", "--ttl", "0"},
      {"checkpoint", "set-ttl", "tinker://run/weights/x", "--ttl", "5", "--remove"},
      {"checkpoint", "delete", "-y"},
      {"checkpoint", "delete", "tinker://run/weights/x", "--run-id", "run", "-y"},
      {"checkpoint", "delete", "--type", "sampler", "-y"},
      {"checkpoint", "delete", "--run-id", "run", "--type", "everything", "-y"},
      {"checkpoint", "delete", "--run-id", "run", "--before", "yesterday", "-y"},
      {"checkpoint", "list", "--limit", "-3"},
      {"run", "list", "--columns", "id,bogus"},
      {"run", "info"},
      {"billing", "usage", "2026-01-02"},
      {"billing", "usage", "2026-01-02T00:00:00Z", "2026-01-01"},
  };
  for (const auto& args : bad) {
    const CliResult result = cli(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(result.code, cli::exit_usage) << joined << "\n" << result.err;
    EXPECT_THAT(result.err, StartsWith("Error: ")) << joined;
    EXPECT_EQ(result.out, "") << joined;
  }
  EXPECT_EQ(server->audit().requests.size(), requests_before);
}

TEST_F(CliTest, DeleteWithoutYesOnAPipeIsRefusedBeforeAnyRequest) {
  const std::size_t requests_before = server->audit().requests.size();
  const CliResult result = cli({"checkpoint", "delete", "tinker://run/weights/x"}, "y\n", /*terminal=*/false);
  EXPECT_EQ(result.code, cli::exit_usage);
  EXPECT_THAT(result.err, HasSubstr("--yes"));
  EXPECT_EQ(server->audit().requests.size(), requests_before);
}

TEST_F(CliTest, MissingApiKeyIsAClearErrorAndNoKeyIsEverPrinted) {
  std::map<std::string, std::string> vars = variables();
  cli::CliEnvironment env([](std::string_view name) -> std::optional<std::string> {
    if (name == "TINKER_LOG") return std::string("off");
    return std::nullopt;
  });
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(cli::run({"run", "list"}, out, err, env), cli::exit_failure);
  EXPECT_THAT(err.str(), StartsWith("Error: "));
  EXPECT_THAT(err.str(), HasSubstr("TINKER_API_KEY"));

  // A refused key: the error names the status, never the key.
  const std::string wrong_key = "not-a-tinker-key-0123456789";
  cli::CliEnvironment wrong([&](std::string_view name) -> std::optional<std::string> {
    if (name == "TINKER_API_KEY") return wrong_key;
    if (name == "TINKER_BASE_URL") return vars.at("TINKER_BASE_URL");
    return std::nullopt;
  });
  std::ostringstream out2;
  std::ostringstream err2;
  EXPECT_EQ(cli::run({"run", "list"}, out2, err2, wrong), cli::exit_failure);
  EXPECT_THAT(err2.str(), StartsWith("Error: "));
  EXPECT_EQ(err2.str().find(wrong_key), std::string::npos) << err2.str();
}

TEST_F(CliTest, CtrlCExits130) {
  const CliResult result = cli({"run", "list"}, "", false, [] { return true; });
  EXPECT_EQ(result.code, cli::exit_interrupted) << result.err;
}

}  // namespace
}  // namespace tinker::test

namespace tinker::test {
namespace {

// A trace export that stays "pending": the SDK polls it every 5 s until Ctrl-C.
class CliPendingTrace : public CliTest {
 protected:
  local::ServerOptions server_options() const override {
    auto options = CliTest::server_options();
    options.trace_export_pending_polls = 1000;
    return options;
  }
};

TEST_F(CliPendingTrace, CtrlCCancelsARunningCommand) {
  make_run({"a"});
  const auto start = std::chrono::steady_clock::now();
  const auto interrupt_at = start + std::chrono::milliseconds(200);
  const CliResult result = cli({"session", "export-trace", service().session_id(), "--url-only"}, "", false,
                               [interrupt_at] { return std::chrono::steady_clock::now() >= interrupt_at; });
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(result.code, cli::exit_interrupted) << result.err;
  EXPECT_EQ(result.out, "");
  EXPECT_LT(elapsed, std::chrono::seconds(3));  // not the 5 s poll interval
}

}  // namespace
}  // namespace tinker::test
