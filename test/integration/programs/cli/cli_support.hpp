// The `tinker` CLI run in-process (tinker::cli::run) against in-process tinker-local, with the
// environment injected; runs and checkpoints are made with the blocking SDK first.
#pragma once

#include "integration/rest/rest_support.hpp"
#include "integration/sync/sync_support.hpp"
#include "programs/cli/cli.hpp"

#include <tinker/sync/service_client.hpp>

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace tinker::test {

class CliResult {
 public:
  int code = -1;
  std::string out;
  std::string err;

  /// Standard output parsed as JSON (fails the test when it is not).
  boost::json::value json() const {
    boost::system::error_code ec;
    boost::json::value value = boost::json::parse(out, ec);
    EXPECT_FALSE(ec) << "not JSON: " << out;
    return value;
  }
  /// Standard output split into lines.
  std::vector<std::string> lines() const {
    std::vector<std::string> result;
    std::istringstream stream(out);
    for (std::string line; std::getline(stream, line);) result.push_back(line);
    return result;
  }
};

/// `tinker <args>` in-process with `input` on its standard input and only `variables` in its
/// environment.
inline CliResult run_cli(std::vector<std::string> args, const std::string& input,
                         std::map<std::string, std::string> variables = {}, bool terminal = false,
                         std::function<bool()> interrupted = {}, bool error_is_terminal = false) {
  cli::CliEnvironment env([variables = std::move(variables)](std::string_view name) -> std::optional<std::string> {
    const auto it = variables.find(std::string(name));
    if (it == variables.end()) return std::nullopt;
    return it->second;
  });
  std::istringstream in(input);
  env.input = &in;
  env.input_is_terminal = terminal;
  env.interrupted = std::move(interrupted);
  env.error_is_terminal = error_is_terminal;
  std::ostringstream out;
  std::ostringstream err;
  CliResult result;
  result.code = cli::run(std::move(args), out, err, env);
  result.out = out.str();
  result.err = err.str();
  return result;
}

/// The cells of a table row (columns are separated by at least two spaces).
inline std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> result;
  std::size_t pos = 0;
  while (pos < line.size()) {
    const std::size_t gap = line.find("  ", pos);
    result.push_back(line.substr(pos, gap - pos));
    if (gap == std::string::npos) break;
    pos = line.find_first_not_of(' ', gap);
  }
  return result;
}

class CliTest : public SyncService {
 protected:
  local::ServerOptions server_options() const override {
    auto options = fast_server_options();
    options.trace_export_pending_polls = 0;  // the SDK's 5 s poll is tested elsewhere
    return options;
  }

  std::map<std::string, std::string> variables() const {
    return {{"TINKER_API_KEY", std::string(test_api_key)},
            {"TINKER_BASE_URL", server->base_url()},
            {"TINKER_LOG", "off"},
            {"TINKER_TELEMETRY", "0"}};
  }

  /// `tinker <args>` with `input` on its standard input (a terminal when `terminal`).
  CliResult cli(std::vector<std::string> args, const std::string& input = "", bool terminal = false,
                std::function<bool()> interrupted = {}) const {
    return run_cli(std::move(args), input, variables(), terminal, std::move(interrupted), error_is_terminal);
  }

  /// Whether the CLI may draw progress bars on its error stream.
  bool error_is_terminal = false;

  /// The blocking SDK session the test makes its runs with: opened on first use, closed before
  /// the server stops.
  sync::ServiceClient& service() {
    if (!service_) service_.emplace(service_options());
    return *service_;
  }

  /// A run on service() with training checkpoints `names` and one sampler checkpoint.
  RunWithCheckpoints make_run(const std::vector<std::string>& names) {
    sync::TrainingClient training = service().create_lora_training_client(std::string(tiny_model), 4);
    RunWithCheckpoints run;
    run.run_id = training.model_id();
    std::vector<Future<SaveWeightsResponse>> saves;
    for (const std::string& name : names) saves.push_back(training.save_state(name));
    for (auto& save : saves) run.training_paths.push_back(save.get().path);
    run.sampler_path = training.save_weights_for_sampler("for-sampling").get().path.value_or("");
    return run;
  }

  void TearDown() override {
    service_.reset();
    SyncService::TearDown();
  }

 private:
  std::optional<sync::ServiceClient> service_;
};

}  // namespace tinker::test
