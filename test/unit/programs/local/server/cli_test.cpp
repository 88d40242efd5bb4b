#include "programs/local/server/cli.hpp"

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
                                     "--training-delay-ms",
                                     "50",
                                     "--sampling-delay-ms=70",
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
  EXPECT_EQ(o.training_delay, std::chrono::milliseconds(50));
  EXPECT_EQ(o.sampling_delay, std::chrono::milliseconds(70));
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
  for (const char* flag : {"--host",
                           "--port",
                           "--path-prefix",
                           "--data-dir",
                           "--hf-hub-cache",
                           "--api-key",
                           "--jwt",
                           "--sample-no-retries",
                           "--no-sample-stuck-detection",
                           "--log-level",
                           "--null-model",
                           "--workers",
                           "--long-poll-ms",
                           "--training-delay-ms",
                           "--sampling-delay-ms",
                           "--session-expiry-s",
                           "--max-request-body",
                           "--max-header-bytes",
                           "--header-timeout-ms",
                           "--max-connections",
                           "--archive-json",
                           "--fault",
                           "--fault-seed",
                           "--help",
                           "--version",
                           "retry_after=seconds:2"}) {
    EXPECT_NE(usage.find(flag), std::string::npos) << flag;
  }
}

TEST(CommandLineTest, HelpShowsTheDefaults) {
  const std::string usage = usage_text();
  for (const char* value : {"127.0.0.1", "5000", "300", "268435456", "65536", "10000", "warning"}) {
    EXPECT_NE(usage.find(value), std::string::npos) << value;
  }
}

TEST(CommandLineTest, IntegersAreDecimal) {
  EXPECT_EQ(parse({"--port", "010"}).options.port, 10);  // not octal
  EXPECT_EQ(parse({"--fault-seed", "18446744073709551615"}).options.fault_seed, 18446744073709551615u);
  EXPECT_NE(error_of({"--fault-seed", "18446744073709551616"}).find("--fault-seed"), std::string::npos);
  EXPECT_NE(error_of({"--workers", "+2"}).find("--workers"), std::string::npos);
  EXPECT_NE(error_of({"--workers", "0x10"}).find("--workers"), std::string::npos);
}

TEST(CommandLineTest, EachOptionTakesOneValueAndTheLastOneWins) {
  EXPECT_EQ(parse({"--port", "1", "--port=2"}).options.port, 2);
  EXPECT_EQ(parse({"--log-level", "warn"}).options.log_level, LogLevel::warning);
  EXPECT_NE(error_of({"--api-key", "tml-a", "tml-b"}).find("tml-b"), std::string::npos);
  EXPECT_NE(error_of({"--fault", "*:delay=1ms", "*:delay=2ms"}).find("*:delay=2ms"), std::string::npos);
  EXPECT_NE(error_of({"--port", "abc", "--port", "2"}).find("--port"), std::string::npos);  // every value is checked
}

TEST(CommandLineTest, FlagsTakeNoValue) {
  EXPECT_NE(error_of({"--jwt=yes"}).find("jwt"), std::string::npos);
  // "--no-x=false" must not turn x back on.
  EXPECT_NE(error_of({"--no-sample-stuck-detection=false"}).find("no-sample-stuck-detection"), std::string::npos);
  EXPECT_NE(error_of({"--help=x"}).find("help"), std::string::npos);
}

TEST(CommandLineTest, ErrorsNameTheFlag) {
  EXPECT_NE(error_of({"--port", "70000"}).find("--port"), std::string::npos);
  EXPECT_NE(error_of({"--port", "abc"}).find("--port"), std::string::npos);
  const std::string missing = error_of({"--port"});
  EXPECT_NE(missing.find("--port"), std::string::npos) << missing;
  EXPECT_NE(missing.find("missing"), std::string::npos) << missing;
  EXPECT_NE(error_of({"--workers", "0"}).find("--workers"), std::string::npos);
  EXPECT_NE(error_of({"--training-delay-ms", "-1"}).find("--training-delay-ms"), std::string::npos);
  EXPECT_NE(error_of({"--log-level", "loud"}).find("--log-level"), std::string::npos);
  EXPECT_NE(error_of({"--fault", "x:explode"}).find("--fault"), std::string::npos);
  EXPECT_NE(error_of({"--frobnicate"}).find("--frobnicate"), std::string::npos);
  EXPECT_NE(error_of({"--null-model=yes"}).find("null-model"), std::string::npos);  // CLI11 names it without "--"
  EXPECT_NE(error_of({"--path-prefix", "svc/"}).find("--path-prefix"), std::string::npos);
  EXPECT_NE(error_of({"--api-key", ""}).find("--api-key"), std::string::npos);
}

TEST(CommandLineTest, AdaptersAreCollected) {
  const CommandLine command =
      parse({"--adapter", "tuned=/tmp/a:b/peft:tinker-local/tiny-lm", "--adapter=other=rel:Qwen/Qwen3-8B"});
  ASSERT_EQ(command.options.adapters.size(), 2u);
  EXPECT_EQ(command.options.adapters[0].name, "tuned");
  EXPECT_EQ(command.options.adapters[0].directory, "/tmp/a:b/peft");  // split at the last ':'
  EXPECT_EQ(command.options.adapters[0].base_model, "tinker-local/tiny-lm");
  EXPECT_EQ(command.options.adapters[1].name, "other");
  EXPECT_EQ(command.options.adapters[1].directory, "rel");
  EXPECT_EQ(command.options.adapters[1].base_model, "Qwen/Qwen3-8B");
  for (const char* bad : {"tuned", "=dir:base", "tuned=dir", "tuned=dir:", "tuned=:base"}) {
    EXPECT_NE(error_of({"--adapter", bad}).find("--adapter"), std::string::npos) << bad;
  }
}

TEST(CommandLineTest, ModelDirNamesTheDirectoryItCannotRead) {
  const std::string message = error_of({"--model-dir", "local/m=/nonexistent/model-dir"});
  EXPECT_NE(message.find("--model-dir local/m=/nonexistent/model-dir"), std::string::npos) << message;
  EXPECT_NE(message.find("/nonexistent/model-dir/config.json"), std::string::npos) << message;
  EXPECT_NE(error_of({"--model-dir", "no-equals-sign"}).find("NAME=DIR"), std::string::npos);
}

TEST(CommandLineTest, ExportModelSubcommand) {
  const CommandLine command = parse(
      {"export-model", "tinker-local/tiny-lm", "-o", "/tmp/out", "--dtype", "bf16", "--hf-hub-cache", "/tmp/hub"});
  ASSERT_TRUE(command.export_model.has_value());
  EXPECT_EQ(command.export_model->model, "tinker-local/tiny-lm");
  EXPECT_EQ(command.export_model->output_dir, "/tmp/out");
  EXPECT_EQ(command.export_model->dtype, safetensors::Dtype::bf16);
  EXPECT_EQ(command.options.hf_hub_cache, "/tmp/hub");  // a server option after the subcommand
  EXPECT_EQ(parse({"export-model", "m", "--output=/tmp/o"}).export_model->dtype, safetensors::Dtype::f32);
  EXPECT_FALSE(parse({}).export_model.has_value());
  EXPECT_NE(error_of({"export-model", "m"}).find("-o DIR"), std::string::npos);
  EXPECT_NE(error_of({"export-model", "m", "-o", "x", "--dtype", "f64"}).find("--dtype"), std::string::npos);
  EXPECT_NE(usage_text().find("export-model"), std::string::npos);
}

}  // namespace
}  // namespace tinker::local::front
