#include "local/server/cli.hpp"

#include <gtest/gtest.h>

namespace tinker::local::front {
namespace {

CommandLine parse(std::vector<std::string_view> args) {
  return parse_command_line(args);
}

std::string error_of(std::vector<std::string_view> args) {
  try {
    parse(std::move(args));
  } catch (const CommandLineError& e) {
    return e.what();
  }
  return "no error";
}

TEST(CommandLineTest, DefaultsAreTheServerOptionDefaults) {
  const CommandLine command = parse({});
  const ServerOptions defaults;
  EXPECT_FALSE(command.help);
  EXPECT_FALSE(command.version);
  EXPECT_EQ(command.options.host, defaults.host);
  EXPECT_EQ(command.options.port, 0);
  EXPECT_TRUE(command.options.api_keys.empty());
  EXPECT_FALSE(command.options.null_model);
  EXPECT_FALSE(command.options.client_config.pjwt_auth_enabled);
  EXPECT_FALSE(command.options.client_config.sample_no_retries);
  EXPECT_TRUE(command.options.client_config.sample_enable_stuck_detection);
}

TEST(CommandLineTest, EveryFlag) {
  const CommandLine command = parse({"--host",
                                     "::1",
                                     "--port=8080",
                                     "--data-dir",
                                     "/tmp/d",
                                     "--api-key",
                                     "tml-a",
                                     "--api-key=tml-b",
                                     "--log-level",
                                     "debug",
                                     "--null-model",
                                     "--workers",
                                     "4",
                                     "--long-poll-ms",
                                     "250",
                                     "--session-expiry-s",
                                     "30",
                                     "--hf-hub-cache",
                                     "/tmp/hub",
                                     "--fault",
                                     "retrieve_future:status=429,prob=0.5",
                                     "--fault",
                                     "*:delay=10ms",
                                     "--fault-seed",
                                     "99",
                                     "--jwt",
                                     "--path-prefix",
                                     "/svc",
                                     "--max-request-body",
                                     "1024",
                                     "--max-header-bytes",
                                     "4096",
                                     "--header-timeout-ms",
                                     "250",
                                     "--max-connections",
                                     "16",
                                     "--archive-json",
                                     "--sample-no-retries",
                                     "--no-sample-stuck-detection"});
  const ServerOptions& o = command.options;
  EXPECT_EQ(o.host, "::1");
  EXPECT_EQ(o.port, 8080);
  EXPECT_EQ(o.data_dir, "/tmp/d");
  EXPECT_EQ(o.api_keys, (std::vector<std::string>{"tml-a", "tml-b"}));
  EXPECT_EQ(o.log_level, LogLevel::debug);
  EXPECT_TRUE(o.null_model);
  EXPECT_EQ(o.worker_threads, 4);
  EXPECT_EQ(o.long_poll_hold, std::chrono::milliseconds(250));
  EXPECT_EQ(o.session_expiry, std::chrono::seconds(30));
  EXPECT_EQ(o.hf_hub_cache, "/tmp/hub");
  ASSERT_EQ(o.faults.size(), 2u);
  EXPECT_EQ(o.faults[0].endpoint, "retrieve_future");
  EXPECT_EQ(o.faults[0].status, 429);
  EXPECT_EQ(o.faults[1].kind, FaultKind::delay);
  EXPECT_EQ(o.fault_seed, 99u);
  EXPECT_TRUE(o.client_config.pjwt_auth_enabled);
  EXPECT_EQ(o.path_prefix, "/svc");
  EXPECT_EQ(o.max_request_body, 1024u);
  EXPECT_EQ(o.max_header_bytes, 4096u);
  EXPECT_EQ(o.header_timeout, std::chrono::milliseconds(250));
  EXPECT_EQ(o.max_connections, 16u);
  EXPECT_TRUE(o.archive_json_form);
  EXPECT_TRUE(o.client_config.sample_no_retries);
  EXPECT_FALSE(o.client_config.sample_enable_stuck_detection);
}

TEST(CommandLineTest, HelpAndVersion) {
  EXPECT_TRUE(parse({"--help"}).help);
  EXPECT_TRUE(parse({"-h"}).help);
  EXPECT_TRUE(parse({"--version"}).version);
  const std::string usage = usage_text();
  for (const char* flag :
       {"--host", "--port", "--data-dir", "--api-key", "--log-level", "--null-model", "--workers", "--long-poll-ms",
        "--session-expiry-s", "--hf-hub-cache", "--fault", "--fault-seed", "--jwt", "--sample-no-retries",
        "--no-sample-stuck-detection", "--help", "--version", "retry_after=seconds:2"}) {
    EXPECT_NE(usage.find(flag), std::string::npos) << flag;
  }
}

TEST(CommandLineTest, ErrorsNameTheFlag) {
  EXPECT_NE(error_of({"--port", "70000"}).find("--port"), std::string::npos);
  EXPECT_NE(error_of({"--port", "abc"}).find("--port"), std::string::npos);
  EXPECT_NE(error_of({"--port"}).find("--port: missing value"), std::string::npos);
  EXPECT_NE(error_of({"--workers", "0"}).find("--workers"), std::string::npos);
  EXPECT_NE(error_of({"--log-level", "loud"}).find("--log-level"), std::string::npos);
  EXPECT_NE(error_of({"--fault", "x:explode"}).find("--fault"), std::string::npos);
  EXPECT_NE(error_of({"--frobnicate"}).find("--frobnicate"), std::string::npos);
  EXPECT_NE(error_of({"--null-model=yes"}).find("--null-model"), std::string::npos);
  EXPECT_NE(error_of({"--path-prefix", "svc/"}).find("--path-prefix"), std::string::npos);
  EXPECT_NE(error_of({"--api-key", ""}).find("--api-key"), std::string::npos);
}

}  // namespace
}  // namespace tinker::local::front
