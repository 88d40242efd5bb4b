// The checkpoint archive URL (doc/rest.md#checkpoint-downloads) against in-process tinker-local:
// the raw 302 with Location and Expires (never followed), the 200 JSON form, and the 503 "still
// building" wait.
#include "integration/rest/rest_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>

namespace tinker::test {
namespace {

namespace asio = boost::asio;
using std::chrono::minutes;
using std::chrono::seconds;

// The URL must be a download of this server, valid for about 15 minutes from now.
void expect_download_url(const CheckpointArchiveUrlResponse& answer, const std::string& base_url,
                         std::chrono::system_clock::time_point asked) {
  EXPECT_EQ(answer.url.rfind(base_url + "/_downloads/", 0), 0u) << answer.url;
  EXPECT_GE(answer.expires, asked + minutes(15) - seconds(2));  // HTTP-dates have whole seconds
  EXPECT_LE(answer.expires, std::chrono::system_clock::now() + minutes(15) + seconds(1));
}

class RestArchive : public RestService {};

TEST_F(RestArchive, TheRedirectIsReadNotFollowedInBothForms) {
  auto service = make_fast_service();
  const RunWithCheckpoints made = run(make_run(*service, {"packed"}));
  RestClient rest = service->create_rest_client();

  const auto asked = std::chrono::system_clock::now();
  auto by_id = rest.async_get_checkpoint_archive_url(made.run_id, "weights/packed", asio::use_future);
  expect_download_url(run_until_ready(io, by_id), server->base_url(), asked);
  auto by_path = rest.async_get_checkpoint_archive_url_from_tinker_path(made.sampler_path, asio::use_future);
  expect_download_url(run_until_ready(io, by_path), server->base_url(), asked);

  const auto archive_requests = requests_to(server->audit(), "/archive");
  ASSERT_EQ(archive_requests.size(), 2u);
  EXPECT_EQ(archive_requests[0].status, 302);
  EXPECT_EQ(archive_requests[0].path, "/api/v1/training_runs/" + made.run_id + "/checkpoints/weights/packed/archive");
  EXPECT_TRUE(requests_to(server->audit(), ".tar").empty()) << "the redirect must not be followed";
}

TEST_F(RestArchive, AnUnknownCheckpointIsNotFound) {
  auto service = make_fast_service();
  const RunWithCheckpoints made = run(make_run(*service, {}));
  RestClient rest = service->create_rest_client();
  diagnostics diag;
  auto missing = rest.async_get_checkpoint_archive_url(made.run_id, "weights/none", diag, asio::use_future);
  EXPECT_EQ(failure_of(io, missing), errc::not_found);
  EXPECT_EQ(diag.http_status, 404);
}

class RestArchiveJson : public RestService {
 protected:
  local::ServerOptions server_options() const override {
    auto options = fast_server_options();
    options.archive_json_form = true;
    return options;
  }
};

TEST_F(RestArchiveJson, The200JsonFormGivesTheSameAnswer) {
  auto service = make_fast_service();
  const RunWithCheckpoints made = run(make_run(*service, {"packed"}));
  RestClient rest = service->create_rest_client();
  const auto asked = std::chrono::system_clock::now();
  auto answer = rest.async_get_checkpoint_archive_url_from_tinker_path(made.training_paths[0], asio::use_future);
  expect_download_url(run_until_ready(io, answer), server->base_url(), asked);
  const auto archive_requests = requests_to(server->audit(), "/archive");
  ASSERT_EQ(archive_requests.size(), 1u);
  EXPECT_EQ(archive_requests[0].status, 200);
}

class RestArchiveBuilding : public RestService {
 protected:
  local::ServerOptions server_options() const override {
    auto options = fast_server_options();
    options.archive_building_polls = 3;
    return options;
  }

  // Transport retries off, so every 503 reaches the "still building" loop; the warnings are collected.
  std::unique_ptr<ServiceClient> make_waiting_service(int attempts, std::chrono::seconds call_budget) {
    ClientOptions client = client_options();
    client.retry.max_retries = 0;
    client.retry.call_budget = call_budget;
    client.log_level = LogLevel::warning;
    ServiceClientOptions options(std::move(client));
    options.log = [this](LogLevel, std::string_view line) {
      const std::lock_guard<std::mutex> lock(log_mutex);
      log_lines.emplace_back(line);
    };
    auto service = make_fast_service(std::move(options));
    detail::ClientHolder::Timing timing = service->holder()->timing();
    timing.archive_build_attempts = attempts;
    service->holder()->set_timing(timing);
    return service;
  }

  std::mutex log_mutex;
  std::vector<std::string> log_lines;
};

TEST_F(RestArchiveBuilding, A503MeansStillBuildingAndIsWaitedFor) {
  auto service = make_waiting_service(6, seconds(300));
  const RunWithCheckpoints made = run(make_run(*service, {"big"}));
  RestClient rest = service->create_rest_client();
  const auto asked = std::chrono::system_clock::now();
  auto answer = rest.async_get_checkpoint_archive_url(made.run_id, "weights/big", asio::use_future);
  expect_download_url(run_until_ready(io, answer), server->base_url(), asked);

  const auto archive_requests = requests_to(server->audit(), "/archive");
  ASSERT_EQ(archive_requests.size(), 4u) << "three 503 answers, then the redirect";
  EXPECT_EQ(archive_requests[2].status, 503);
  EXPECT_EQ(archive_requests[3].status, 302);
  const std::lock_guard<std::mutex> lock(log_mutex);
  const auto warning = std::find_if(log_lines.begin(), log_lines.end(), [](const std::string& line) {
    return line.find("still being built") != std::string::npos;
  });
  EXPECT_NE(warning, log_lines.end()) << "a warning when the wait starts";
}

TEST_F(RestArchiveBuilding, AfterTheLastAttemptThe503IsTheAnswer) {
  // Two attempts of the inner loop and no call-retry budget: the third 503 is never asked for.
  auto service = make_waiting_service(2, seconds(0));
  const RunWithCheckpoints made = run(make_run(*service, {"big"}));
  RestClient rest = service->create_rest_client();
  diagnostics diag;
  auto answer = rest.async_get_checkpoint_archive_url(made.run_id, "weights/big", diag, asio::use_future);
  EXPECT_EQ(failure_of(io, answer), errc::server_error);
  EXPECT_EQ(diag.http_status, 503);
  EXPECT_EQ(requests_to(server->audit(), "/archive").size(), 2u);
}

}  // namespace
}  // namespace tinker::test
