// RestClient's external-weights calls against a scripted (hostile or old) server
// (doc/rest.md#external-weights): file names that would escape the download directory are refused
// before anything is written; the start answer of the older shape (a bare URL per file) is
// uploaded without headers; the upload PUT carries the server's headers and no Tinker credential;
// the URLs request goes to the documented path.
#include "support/future_wait.hpp"
#include "support/temp_files.hpp"
#include "support/test_server.hpp"

#include <tinker/rest_client.hpp>
#include <tinker/service_client.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

namespace tinker {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using test::RecordedRequest;
using test::ScriptedResponse;
using test::ScriptedServer;

constexpr const char* urls_target =
    "/api/v1/training_runs/run:train:0/checkpoints/external_weights/exp/external_weights_urls";

class ExternalWeightsClient : public ::testing::Test {
 protected:
  // Answers the URLs request with `urls_json`, the start with `start_json`, file GETs with "data"
  // and everything else (client/config, PUTs, finish) with `{"tinker_path": ...}`.
  void serve(std::string urls_json, std::string start_json = "{}") {
    server_.set_handler([urls_json, start_json](const RecordedRequest& request) {
      if (request.target == urls_target) return ScriptedResponse(200, urls_json);
      if (request.target == "/api/v1/external_weights_upload_start") return ScriptedResponse(200, start_json);
      if (request.target.find("/files/") == 0) return ScriptedResponse(200, "data");
      return ScriptedResponse(200, R"({"tinker_path":"tinker://u/external_weights/adapter"})");
    });
    ClientOptions options(server_.base_url(), Secret("tml-external-test-key"));
    options.telemetry_enabled = false;
    options.retry.initial_delay = std::chrono::milliseconds(1);
    service_ = std::make_unique<ServiceClient>(io_.get_executor(), ServiceClientOptions(std::move(options)));
  }

  template <class T>
  T wait(std::future<T>& future) {
    return test::run_until_ready(io_, future);
  }

  // The failure code of `future` (success when it has a value).
  template <class T>
  boost::system::error_code failure_of(std::future<T>& future) {
    return test::failure_when_ready(io_, future);
  }

  std::string urls_with(const std::string& file) const {
    return R"({"urls":{"adapter_config.json":")" + server_.base_url() + R"(/files/a",")" + file + R"(":")" +
           server_.base_url() + R"(/files/b"},"expires":"2030-01-01T00:00:00Z"})";
  }

  std::size_t file_gets() const {
    std::size_t n = 0;
    for (const RecordedRequest& request : server_.requests()) n += request.target.find("/files/") == 0 ? 1 : 0;
    return n;
  }

  asio::io_context io_;
  ScriptedServer server_;
  std::unique_ptr<ServiceClient> service_;
  test::TempDir scratch_{"tinker-external-hostile"};
};

TEST_F(ExternalWeightsClient, DownloadsEveryFileIntoItsRelativePath) {
  serve(urls_with("sub/model.safetensors"));
  RestClient rest = service_->create_rest_client();
  auto done = rest.async_download_external_weights("tinker://run:train:0/external_weights/exp",
                                                   DownloadOptions(scratch_.path()), asio::use_future);
  const DownloadResult result = wait(done);
  EXPECT_EQ(result.files, (std::vector<std::string>{"adapter_config.json", "sub/model.safetensors"}));
  EXPECT_EQ(test::read_file(result.path / "sub" / "model.safetensors"), "data");
  for (const RecordedRequest& request : server_.requests()) {
    if (request.target.find("/files/") != 0) continue;
    EXPECT_FALSE(request.header("x-api-key").has_value()) << "a signed URL got the API key";
  }
}

TEST_F(ExternalWeightsClient, RefusesFileNamesThatLeaveTheDirectory) {
  for (const std::string hostile : {"../x", "/etc/passwd", "a/../../x", "a//b", "./x", "a\\\\..\\\\x"}) {
    SCOPED_TRACE(hostile);
    serve(urls_with(hostile));
    RestClient rest = service_->create_rest_client();
    diagnostics diag;
    auto done = rest.async_download_external_weights("tinker://run:train:0/external_weights/exp",
                                                     DownloadOptions(scratch_.path() / "out"), diag, asio::use_future);
    EXPECT_EQ(failure_of(done), errc::protocol_error);
    EXPECT_NE(diag.message.find("outside the download directory"), std::string::npos) << diag.message;
  }
  EXPECT_EQ(file_gets(), 0u) << "nothing is fetched once a name is refused";
  // Neither the output directory nor "../x" next to it: nothing was written at all.
  EXPECT_TRUE(fs::is_empty(scratch_.path())) << "nothing is left behind";
}

TEST_F(ExternalWeightsClient, RefusesAPathOfAnotherKindBeforeSending) {
  serve(urls_with("b"));
  RestClient rest = service_->create_rest_client();
  auto done = rest.async_get_external_weights_urls("tinker://run:train:0/sampler_weights/exp", asio::use_future);
  EXPECT_EQ(failure_of(done), errc::invalid_argument);
  EXPECT_EQ(server_.request_count(), 0u);
}

TEST_F(ExternalWeightsClient, UploadsTheOlderStartShapeAndSendsTheServersHeaders) {
  const std::string start = R"({"upload_id":"up-1","expires":"2030-01-01T00:00:00Z","urls":{)"
                            R"("adapter_config.json":")" +
                            server_.base_url() +
                            R"(/put/config",)"
                            R"("adapter_model.safetensors":{"url":")" +
                            server_.base_url() + R"(/put/model","headers":{"X-Goog-Meta":"m1"}}}})";
  serve(urls_with("b"), start);
  {
    std::ofstream(scratch_.path() / "adapter_config.json") << "{\"r\":4}";
    std::ofstream(scratch_.path() / "adapter_model.safetensors") << std::string(100'000, 'w');
  }
  RestClient rest = service_->create_rest_client();
  const ExternalWeightsUploadStartRequest request("base/model", LoraConfig(4));
  auto done =
      rest.async_upload_external_weights(scratch_.path(), request, ExternalWeightsUploadOptions(), asio::use_future);
  EXPECT_EQ(wait(done).tinker_path, "tinker://u/external_weights/adapter");
  std::vector<std::string> order;
  for (const RecordedRequest& r : server_.requests()) {
    if (r.target == "/api/v1/external_weights_upload_start") {
      EXPECT_EQ(r.method, "POST");
      EXPECT_EQ(r.body, R"({"base_model":"base/model","lora_config":{"rank":4,"train_unembed":true,)"
                        R"("train_mlp":true,"train_attn":true}})");
    }
    if (r.target == "/api/v1/external_weights_upload_finish") {
      EXPECT_EQ(r.method, "POST");
      EXPECT_EQ(r.body, R"({"upload_id":"up-1"})");
    }
    if (r.target.find("/put/") != 0) continue;
    order.push_back(r.target);
    EXPECT_EQ(r.method, "PUT");
    EXPECT_FALSE(r.header("x-api-key").has_value()) << "an upload URL got the API key";
    if (r.target == "/put/model") {
      EXPECT_EQ(r.header("x-goog-meta"), "m1");
      EXPECT_EQ(r.body.size(), 100'000u);
    } else {
      EXPECT_EQ(r.body, "{\"r\":4}");
    }
  }
  EXPECT_EQ(order, (std::vector<std::string>{"/put/config", "/put/model"}));
}

TEST_F(ExternalWeightsClient, AMissingLocalFileFailsBeforeAnyPut) {
  const std::string start = R"({"upload_id":"up-2","expires":"2030-01-01T00:00:00Z","urls":{)"
                            R"("adapter_config.json":")" +
                            server_.base_url() + R"(/put/config","adapter_model.safetensors":")" + server_.base_url() +
                            R"(/put/model"}})";
  serve(urls_with("b"), start);
  std::ofstream(scratch_.path() / "adapter_config.json") << "{}";
  RestClient rest = service_->create_rest_client();
  diagnostics diag;
  auto done = rest.async_upload_external_weights(scratch_.path(), ExternalWeightsUploadStartRequest("m", LoraConfig(4)),
                                                 ExternalWeightsUploadOptions(), diag, asio::use_future);
  EXPECT_EQ(failure_of(done), errc::invalid_argument);
  EXPECT_NE(diag.message.find("adapter_model.safetensors"), std::string::npos) << diag.message;
  for (const RecordedRequest& r : server_.requests()) {
    EXPECT_NE(r.method, "PUT");
    EXPECT_NE(r.target, "/api/v1/external_weights_upload_finish");
  }
}

}  // namespace
}  // namespace tinker
