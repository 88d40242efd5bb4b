// The command lines of `tinker chat` and `tinker sample`: flags into sampling parameters, and the
// combinations refused with a usage error (exit 2) before anything is started or sent.
#include "programs/cli/cli.hpp"
#include "programs/cli/sampling_setup.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

namespace tinker::cli {
namespace {

using ::testing::HasSubstr;

class Outcome {
 public:
  int code = -1;
  std::string out;
  std::string err;
};

// `tinker <args>` with no environment and empty input: a usage error returns before the command
// would start a tinker-local or read anything.
Outcome run_tinker(std::vector<std::string> args) {
  CliEnvironment env([](std::string_view) { return std::optional<std::string>(); });
  std::istringstream in;
  env.input = &in;
  std::ostringstream out;
  std::ostringstream err;
  Outcome outcome;
  outcome.code = run(std::move(args), out, err, env);
  outcome.out = out.str();
  outcome.err = err.str();
  return outcome;
}

SamplerOptions parse_sampler_flags(std::vector<std::string> args) {
  CLI::App app;
  SamplerOptions options;
  add_sampler_options(app, options);
  std::reverse(args.begin(), args.end());
  app.parse(args);
  check_sampler_options(options);
  return options;
}

TEST(ChatOptions, FlagsBecomeTheSamplingParameters) {
  const SamplerOptions options =
      parse_sampler_flags({"--model", "Qwen/Qwen3.5-4B", "--max-tokens", "64", "--temperature", "0.7", "--top-p", "0.9",
                           "--top-k", "40", "--seed", "7", "--renderer", "qwen3_5_disable_thinking"});
  EXPECT_EQ(options.model, "Qwen/Qwen3.5-4B");
  EXPECT_EQ(options.renderer, "qwen3_5_disable_thinking");
  EXPECT_FALSE(options.local);
  const SamplingParams params = options.sampling_params(StopCondition(std::vector<TokenId>{7, 9}));
  EXPECT_EQ(params.max_tokens, 64);
  EXPECT_DOUBLE_EQ(params.temperature, 0.7);
  EXPECT_DOUBLE_EQ(params.top_p, 0.9);
  EXPECT_EQ(params.top_k, 40);
  EXPECT_EQ(params.seed, 7u);
  EXPECT_EQ(params.stop, StopCondition(std::vector<TokenId>{7, 9}));
}

TEST(ChatOptions, DefaultsSampleAWholeReplyAtTheModelsTemperature) {
  const SamplerOptions options =
      parse_sampler_flags({"--checkpoint", "tinker://run-1:train:0/sampler_weights/final", "--local"});
  EXPECT_TRUE(options.local);
  const SamplingParams params = options.sampling_params(std::nullopt);
  EXPECT_EQ(params.max_tokens, 1024);
  EXPECT_DOUBLE_EQ(params.temperature, 1.0);
  EXPECT_DOUBLE_EQ(params.top_p, 1.0);
  EXPECT_EQ(params.top_k, -1);
  EXPECT_FALSE(params.seed);
  EXPECT_FALSE(params.stop);
}

TEST(ChatOptions, WhatToSampleFromMustBeNamedOnce) {
  for (const std::string command : {"chat", "sample"}) {
    std::vector<std::string> neither{command};
    std::vector<std::string> both{command, "--model", "m", "--checkpoint", "tinker://r:train:0/sampler_weights/s"};
    if (command == "sample") {
      neither.push_back("hi");
      both.push_back("hi");
    }
    for (const auto& args : {neither, both}) {
      const Outcome outcome = run_tinker(args);
      EXPECT_EQ(outcome.code, exit_usage) << command;
      EXPECT_THAT(outcome.err, HasSubstr("give exactly one of --model NAME and --checkpoint")) << command;
    }
  }
}

TEST(ChatOptions, OnlySamplerCheckpointsCanBeSampled) {
  const Outcome training = run_tinker({"chat", "--checkpoint", "tinker://run-1:train:0/weights/step-10"});
  EXPECT_EQ(training.code, exit_usage);
  EXPECT_THAT(training.err, HasSubstr("holds training weights; sampling needs sampler weights"));
  const Outcome malformed = run_tinker({"chat", "--checkpoint", "run-1/sampler_weights/final"});
  EXPECT_EQ(malformed.code, exit_usage);
  EXPECT_THAT(malformed.err, HasSubstr("--checkpoint: "));
}

TEST(ChatOptions, SamplingFlagsOutOfRangeAreUsageErrors) {
  const std::vector<std::vector<std::string>> refused{
      {"--max-tokens", "0"}, {"--temperature", "-1"}, {"--top-p", "0"},     {"--top-p", "1.5"},
      {"--top-k", "0"},      {"--top-k", "-2"},       {"--seed", "banana"}, {"--max-tokens", "many"},
  };
  for (const auto& flags : refused) {
    std::vector<std::string> args{"chat", "--model", "m"};
    args.insert(args.end(), flags.begin(), flags.end());
    EXPECT_EQ(run_tinker(args).code, exit_usage) << flags[0] << " " << flags[1];
  }
}

TEST(ChatOptions, SampleNeedsAPromptAndRawTakesNoChatFormat) {
  EXPECT_EQ(run_tinker({"sample", "--model", "m"}).code, exit_usage);
  EXPECT_EQ(run_tinker({"sample", "--model", "m", "-n", "0", "hi"}).code, exit_usage);
  const Outcome renderer = run_tinker({"sample", "--model", "m", "--raw", "--renderer", "qwen3", "hi"});
  EXPECT_EQ(renderer.code, exit_usage);
  EXPECT_THAT(renderer.err, HasSubstr("--raw uses no chat format"));
  EXPECT_EQ(run_tinker({"sample", "--model", "m", "--raw", "--system", "be nice", "hi"}).code, exit_usage);
}

TEST(ChatOptions, TheJsonFormTakesItsSystemPromptFromTheConversation) {
  for (const char* json : {"--json", "-f"}) {
    std::vector<std::string> args{"chat", "--model", "m", "--system", "Be brief.", json};
    if (std::string(json) == "-f") args.push_back("json");
    const Outcome outcome = run_tinker(args);
    EXPECT_EQ(outcome.code, exit_usage) << json;
    EXPECT_THAT(outcome.err, HasSubstr("--system is for the interactive chat")) << json;
  }
}

TEST(ChatOptions, HelpListsEveryFlag) {
  const Outcome chat = run_tinker({"chat", "--help"});
  EXPECT_EQ(chat.code, exit_ok);
  for (const char* flag : {"--model", "--checkpoint", "--renderer", "--local", "--max-tokens", "--temperature",
                           "--top-p", "--top-k", "--seed", "--system", "--tools", "--json"}) {
    EXPECT_THAT(chat.out, HasSubstr(flag));
  }
  const Outcome sample = run_tinker({"sample", "--help"});
  EXPECT_EQ(sample.code, exit_ok);
  for (const char* flag : {"PROMPT", "--num-samples", "--raw", "--system", "--seed"}) {
    EXPECT_THAT(sample.out, HasSubstr(flag));
  }
}

}  // namespace
}  // namespace tinker::cli
