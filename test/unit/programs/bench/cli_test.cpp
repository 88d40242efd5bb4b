// tinker-bench's command line (src/programs/bench/cli.hpp): sizes into settings, and the flag combinations refused with
// a usage error before anything starts.
#include "programs/bench/cli.hpp"
#include "programs/bench/bench.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace tinker::bench {
namespace {

class Parsed {
 public:
  std::optional<int> code;
  Invocation invocation;
  std::string err;
};

Parsed parse(std::vector<std::string> args) {
  Parsed parsed;
  std::ostringstream out;
  std::ostringstream err;
  parsed.code = parse_invocation(std::move(args), parsed.invocation, out, err);
  parsed.err = err.str();
  return parsed;
}

TEST(BenchCli, SizesAndTargetFlagsOnEitherSideOfTheScenario) {
  const Parsed parsed = parse({"--local", "sample", "--requests", "7", "--in-flight", "3", "--null-model", "--json"});
  ASSERT_FALSE(parsed.code) << parsed.err;
  EXPECT_EQ(parsed.invocation.scenarios, std::vector<Scenario>{Scenario::sample});
  EXPECT_EQ(parsed.invocation.sample.requests, 7);
  EXPECT_EQ(parsed.invocation.sample.in_flight, 3);
  EXPECT_EQ(parsed.invocation.sample.max_tokens, 16) << "the default";
  EXPECT_TRUE(parsed.invocation.target.local);
  EXPECT_TRUE(parsed.invocation.target.null_model);
  EXPECT_EQ(parsed.invocation.format, OutputFormat::json);
}

TEST(BenchCli, AllRunsEveryScenario) {
  const Parsed parsed = parse({"all", "--local", "--csv"});
  ASSERT_FALSE(parsed.code);
  EXPECT_EQ(parsed.invocation.scenarios.size(), 5u);
  EXPECT_EQ(parsed.invocation.format, OutputFormat::csv);
}

TEST(BenchCli, CheckpointWithoutDownload) {
  const Parsed parsed = parse({"checkpoint", "--local", "--no-download"});
  ASSERT_FALSE(parsed.code);
  EXPECT_FALSE(parsed.invocation.checkpoint.download);
}

TEST(BenchCli, FlagsThatDoNotGoTogetherAreUsageErrors) {
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"sample", "--null-model"},
                                             {"sample", "--compare-raw"},
                                             {"sample", "--local", "--base-url", "http://127.0.0.1:1"},
                                             {"train", "--loss", "hinge"},
                                             {"sample", "--json", "--csv"},
                                             {"sample", "--requests", "0"},
                                             {"rl", "--prompt-tokens", "1"},
                                             {"sample", "train"},
                                             {}}) {
    const Parsed parsed = parse(args);
    EXPECT_EQ(parsed.code, exit_usage) << (args.empty() ? std::string("(no arguments)") : args[0]);
    EXPECT_NE(parsed.err.find("Error: "), std::string::npos);
  }
}

}  // namespace
}  // namespace tinker::bench
