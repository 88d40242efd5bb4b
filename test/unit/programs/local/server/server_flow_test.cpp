// One training flow through the front end as the Python SDK 0.25 drives it: JSON and protobuf
// (zstd) bodies, long-polled futures with protobuf results, checkpoint archive redirect and a
// ranged download, the legacy forward endpoint, sampling with backpressure, and the audit.
#include "unit/programs/local/support/expectations.hpp"

#include <tinker/codec.hpp>
#include <tinker/local/server.hpp>

#include "tinker_public.pb.h"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

namespace tinker::local {
namespace {

namespace json = boost::json;
using test::HeaderList;
using test::RawHttpClient;
using test::RawResponse;

const HeaderList kJsonHeaders{{"X-API-Key", "tml-flow-test"}, {"Content-Type", "application/json"}};

template <class T>
std::string packed(const std::vector<T>& values) {
  std::string bytes(values.size() * sizeof(T), '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

std::string forward_backward_proto(const std::string& model_id, int seq_id) {
  tinker_public::ForwardBackwardRequest request;
  request.set_model_id(model_id);
  request.set_seq_id(seq_id);
  request.set_loss_fn("cross_entropy");
  tinker_public::Datum* datum = request.add_data();
  datum->add_model_input()->mutable_encoded_text()->set_tokens(packed<std::int32_t>({5, 6, 7}));
  tinker_public::Tensor targets;
  targets.set_dense(packed<std::int64_t>({6, 7, 8}));
  targets.set_dtype(tinker_public::DTYPE_INT64);
  targets.add_shape(3);
  tinker_public::Tensor weights;
  weights.set_dense(packed<float>({1.0f, 1.0f, 1.0f}));
  weights.set_dtype(tinker_public::DTYPE_FLOAT32);
  weights.add_shape(3);
  (*datum->mutable_loss_fn_inputs())["target_tokens"] = targets;
  (*datum->mutable_loss_fn_inputs())["weights"] = weights;
  return request.SerializeAsString();
}

class ServerFlowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions options;
    options.null_model = true;
    options.hf_hub_cache = std::filesystem::temp_directory_path() / "tinker-local-test-hub";
    options.log_level = LogLevel::off;
    options.long_poll_hold = std::chrono::milliseconds(200);
    server_ = std::make_unique<Server>(std::move(options));
    server_->start();
  }

  json::object post(RawHttpClient& c, const std::string& path, const std::string& body) {
    const RawResponse response = c.request("POST", path, kJsonHeaders, body);
    EXPECT_EQ(response.status, 200) << path << ": " << response.body;
    return json::parse(response.body).as_object();
  }

  // Polls until the future is no longer pending; returns the final response.
  RawResponse retrieve(RawHttpClient& c, const std::string& request_id, bool protobuf = false) {
    HeaderList headers = kJsonHeaders;
    if (protobuf) headers.emplace_back("Accept", "application/x-protobuf");
    const std::string body = R"({"request_id":")" + request_id + R"(","allow_metadata_only":false})";
    for (int i = 0; i < 100; ++i) {
      RawResponse response = c.request("POST", "/api/v1/retrieve_future", headers, body);
      if (response.status != 200 || response.header("Content-Type") != "application/json") return response;
      const json::value value = json::parse(response.body);
      if (!value.is_object() || !value.as_object().contains("type") || value.at("type") != "try_again") {
        return response;
      }
    }
    ADD_FAILURE() << "future " << request_id << " never completed";
    return RawResponse();
  }

  std::unique_ptr<Server> server_;
};

TEST_F(ServerFlowTest, TrainSaveDownloadAndAudit) {
  RawHttpClient c(server_->port());
  const json::object session = post(c, "/api/v1/create_session",
                                    R"({"tags":[],"user_metadata":{},"sdk_version":"0.25.0","type":"create_session"})");
  const std::string session_id(session.at("session_id").as_string());
  const std::string model_id = session_id + ":train:0";

  const json::object create = post(
      c, "/api/v1/create_model",
      R"({"session_id":")" + session_id +
          R"(","model_seq_id":0,"base_model":"tinker-local/tiny-lm","lora_config":{"rank":4},"type":"create_model"})");
  const RawResponse created = retrieve(c, std::string(create.at("request_id").as_string()));
  ASSERT_EQ(created.status, 200);
  EXPECT_EQ(json::parse(created.body).at("model_id").as_string(), model_id);

  // forward_backward as 0.25 sends it: protobuf, here zstd-compressed.
  const std::string proto = forward_backward_proto(model_id, 1);
  const RawResponse fwdbwd_ticket = c.request(
      "POST", "/api/v1/forward_backward",
      {{"X-API-Key", "tml-flow-test"}, {"Content-Type", "application/x-protobuf"}, {"Content-Encoding", "zstd"}},
      zstd_compress(proto));
  ASSERT_EQ(fwdbwd_ticket.status, 200) << fwdbwd_ticket.body;
  const std::string fwdbwd_id(json::parse(fwdbwd_ticket.body).at("request_id").as_string());
  const json::object optim = post(
      c, "/api/v1/optim_step",
      R"({"adam_params":{"learning_rate":0.001,"beta1":0.9,"beta2":0.95,"eps":1e-12,"weight_decay":0.0,"grad_clip_norm":0.0},"model_id":")" +
          model_id + R"(","seq_id":2,"type":"optim_step"})");

  const RawResponse output = retrieve(c, fwdbwd_id, /*protobuf=*/true);
  ASSERT_EQ(output.status, 200);
  EXPECT_EQ(output.header("Content-Type"), "application/x-protobuf");
  tinker_public::ForwardBackwardOutput decoded;
  ASSERT_TRUE(decoded.ParseFromString(output.body));
  ASSERT_EQ(decoded.loss_fn_outputs_size(), 1);
  EXPECT_EQ(decoded.loss_fn_outputs(0).num_datums(), 1);
  EXPECT_EQ(retrieve(c, std::string(optim.at("request_id").as_string())).status, 200);

  // The legacy JSON forward endpoint runs forward-only with its own seq_id.
  const json::object forward = post(
      c, "/api/v1/forward",
      R"({"forward_input":{"data":[{"model_input":{"chunks":[{"tokens":[1,2],"type":"encoded_text"}]},"loss_fn_inputs":{"target_tokens":{"data":[2,3],"dtype":"int64","shape":[2]}}}],"loss_fn":"cross_entropy"},"model_id":")" +
          model_id + R"(","seq_id":3})");
  EXPECT_EQ(retrieve(c, std::string(forward.at("request_id").as_string()), true).status, 200);

  const json::object save =
      post(c, "/api/v1/save_weights",
           R"({"model_id":")" + model_id + R"(","path":"step-1","seq_id":4,"overwrite":false,"type":"save_weights"})");
  const RawResponse saved = retrieve(c, std::string(save.at("request_id").as_string()));
  EXPECT_EQ(json::parse(saved.body).at("path").as_string(), "tinker://" + model_id + "/weights/step-1");

  // Archive: a raw 302 to an unauthenticated download, which honours one byte range.
  const RawResponse redirect =
      c.request("GET", "/api/v1/training_runs/" + model_id + "/checkpoints/weights/step-1/archive", kJsonHeaders);
  ASSERT_EQ(redirect.status, 302) << redirect.body;
  const std::string location = redirect.header("Location").value_or("");
  const std::string downloads = server_->base_url() + "/_downloads/";
  ASSERT_EQ(location.rfind(downloads, 0), 0u) << location;
  EXPECT_TRUE(redirect.header("Expires").value_or("").ends_with(" GMT"));
  const std::string target = "/_downloads/" + location.substr(downloads.size());
  const RawResponse tar = c.request("GET", target);
  ASSERT_EQ(tar.status, 200);
  EXPECT_EQ(tar.header("Content-Type"), "application/x-tar");
  EXPECT_EQ(tar.header("Content-Length"), std::to_string(tar.body.size()));
  ASSERT_GT(tar.body.size(), 512u);
  const RawResponse part = c.request("GET", target, {{"Range", "bytes=100-199"}});
  EXPECT_EQ(part.status, 206);
  EXPECT_EQ(part.header("Content-Range"), "bytes 100-199/" + std::to_string(tar.body.size()));
  EXPECT_EQ(part.body, tar.body.substr(100, 100));
  const RawResponse beyond = c.request("GET", target, {{"Range", "bytes=99999999-"}});
  EXPECT_EQ(beyond.status, 416);
  EXPECT_EQ(c.request("GET", "/_downloads/unknown.tar").status, 404);

  const AuditReport audit = server_->audit();
  ASSERT_EQ(audit.models.size(), 1u);
  EXPECT_EQ(audit.models[0].model_id, model_id);
  EXPECT_EQ(audit.models[0].applied_seq_ids, (std::vector<std::int64_t>{1, 2, 3, 4}));
  EXPECT_TRUE(audit.ok());
  const auto fwdbwd_record = std::find_if(audit.requests.begin(), audit.requests.end(),
                                          [](const RequestRecord& r) { return r.path == "/api/v1/forward_backward"; });
  ASSERT_NE(fwdbwd_record, audit.requests.end());
  EXPECT_EQ(fwdbwd_record->seq_id, 1);
  EXPECT_EQ(fwdbwd_record->model_id, model_id);
  EXPECT_EQ(fwdbwd_record->request_id, fwdbwd_id);
  EXPECT_EQ(fwdbwd_record->content_encoding, "zstd");
  for (std::size_t i = 0; i < audit.requests.size(); ++i)
    EXPECT_EQ(audit.requests[i].index, static_cast<std::int64_t>(i));
}

TEST_F(ServerFlowTest, SamplingWithBackpressureHeaderAndProtobufResult) {
  RawHttpClient c(server_->port());
  const json::object session = post(c, "/api/v1/create_session",
                                    R"({"tags":[],"user_metadata":{},"sdk_version":"0.25.0","type":"create_session"})");
  const std::string session_id(session.at("session_id").as_string());
  const json::object sampler = post(
      c, "/api/v1/create_sampling_session",
      R"({"session_id":")" + session_id +
          R"(","sampling_session_seq_id":0,"base_model":"tinker-local/tiny-lm","type":"create_sampling_session"})");
  const std::string sampler_id(sampler.at("sampling_session_id").as_string());
  EXPECT_EQ(sampler_id, session_id + ":sample:0");
  HeaderList headers = kJsonHeaders;
  headers.emplace_back("X-Tinker-Sampling-Backpressure", "1");
  const RawResponse ticket = c.request(
      "POST", "/api/v1/asample", headers,
      R"({"num_samples":2,"prompt":{"chunks":[{"tokens":[11,12,13],"type":"encoded_text"}]},"sampling_params":{"max_tokens":6,"seed":1,"temperature":0.7,"top_k":-1,"top_p":1.0},"sampling_session_id":")" +
          sampler_id + R"(","seq_id":0,"prompt_logprobs":false,"topk_prompt_logprobs":0,"type":"sample"})");
  ASSERT_EQ(ticket.status, 200) << ticket.body;
  const RawResponse result = retrieve(c, std::string(json::parse(ticket.body).at("request_id").as_string()), true);
  ASSERT_EQ(result.status, 200);
  EXPECT_EQ(result.header("Content-Type"), "application/x-protobuf");
  tinker_public::SampleResponse samples;
  ASSERT_TRUE(samples.ParseFromString(result.body));
  EXPECT_EQ(samples.sequences_size(), 2);

  // Protobuf bodies are refused where only JSON is spoken.
  const RawResponse refused =
      c.request("POST", "/api/v1/asample", {{"X-API-Key", "tml-flow-test"}, {"Content-Type", "application/x-protobuf"}},
                "\x0a\x01x");
  EXPECT_EQ(refused.status, 415);
  // A corrupt zstd body is a 400.
  const RawResponse unknown = c.request(
      "POST", "/api/v1/forward_backward",
      {{"X-API-Key", "tml-flow-test"}, {"Content-Type", "application/x-protobuf"}, {"Content-Encoding", "zstd"}},
      "not zstd");
  EXPECT_EQ(unknown.status, 400);
}

TEST_F(ServerFlowTest, PauseQueueFaultsReportTheQueueStateWhilePaused) {
  FaultRule pause("create_model", FaultKind::pause_queue);
  pause.delay = std::chrono::milliseconds(600);
  pause.queue_state = "paused_rate_limit";
  pause.on_calls = {1};
  std::vector<FaultRule> rules{pause};
  server_->set_faults(std::move(rules));
  RawHttpClient c(server_->port());
  const json::object session = post(c, "/api/v1/create_session",
                                    R"({"tags":[],"user_metadata":{},"sdk_version":"0.25.0","type":"create_session"})");
  const std::string session_id(session.at("session_id").as_string());
  const json::object create =
      post(c, "/api/v1/create_model",
           R"({"session_id":")" + session_id +
               R"(","model_seq_id":0,"base_model":"tinker-local/tiny-lm","type":"create_model"})");
  const std::string request_id(create.at("request_id").as_string());
  const json::object first =
      post(c, "/api/v1/retrieve_future", R"({"request_id":")" + request_id + R"(","allow_metadata_only":true})");
  EXPECT_EQ(first.at("type"), "try_again");
  EXPECT_EQ(first.at("queue_state"), "paused_rate_limit");
  EXPECT_EQ(retrieve(c, request_id).status, 200);
  const AuditReport audit = server_->audit();
  ASSERT_GE(audit.requests.size(), 2u);
  EXPECT_EQ(audit.requests[1].path, "/api/v1/create_model");
  EXPECT_EQ(audit.requests[1].fault, "pause_queue");
  EXPECT_EQ(audit.requests[1].request_id, request_id);
}

}  // namespace
}  // namespace tinker::local
