// doc/training.md#operations, doc/local.md#the-model: forward_backward as JSON, protobuf and
// protobuf+zstd; legacy forward; optim_step; results as JSON and as protobuf.
#include "unit/programs/local/support/expectations.hpp"
#include "unit/programs/local/support/local_server.hpp"

#include <boost/json/parse.hpp>

#include <cmath>

namespace tinker::local::test {
namespace {

namespace json = boost::json;

class HttpApiTraining : public LocalServerTest {
 protected:
  void SetUp() override {
    session = api().create_session();
    model = api().create_model(session);
  }

  json::array json_data(const std::vector<Tokens>& sequences) {
    json::array data;
    for (const Tokens& s : sequences) data.emplace_back(cross_entropy_datum(s));
    return data;
  }

  std::string submit_json(std::int64_t seq, const std::vector<Tokens>& sequences,
                          std::string_view target = "/api/v1/forward_backward",
                          std::string_view input_key = "forward_backward_input") {
    return api().submit(target, forward_backward_body(model, seq, json_data(sequences), "cross_entropy", input_key));
  }

  std::string submit_proto(std::int32_t seq, const std::vector<Tokens>& sequences, bool forward_only, bool zstd) {
    std::string body = proto_forward_backward(model, seq, sequences, forward_only).SerializeAsString();
    HeaderList extra;
    if (zstd) {
      body = zstd_compress(body);
      extra.emplace_back("Content-Encoding", "zstd");
    }
    return api().submit_raw("/api/v1/forward_backward", body, protobuf_type, extra);
  }

  std::vector<std::vector<double>> logprobs_of(const std::string& request_id) {
    return json_logprobs(api().await_json(request_id));
  }

  std::string session;
  std::string model;
  const std::vector<Tokens> batch{{11, 12, 13, 14, 15}, {21, 22, 23}};
};

TEST_F(HttpApiTraining, ForwardBackwardJsonResultHasTheSpecShape) {
  const RawResponse result = api().await_response(submit_json(1, batch));
  ASSERT_EQ(result.status, 200) << result.describe();
  ASSERT_TRUE(is_json_answer(result));
  const json::value output = result.json();
  EXPECT_EQ(string_field(output, "loss_fn_output_type"), "ArrayRecord");
  const json::array& records = items(output, "loss_fn_outputs");
  ASSERT_EQ(records.size(), 2u);
  double sum_of_logprobs = 0;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const json::value& logprobs = field(records[i], "logprobs");
    EXPECT_EQ(string_field(logprobs, "dtype"), "float32");
    const std::vector<double> values = numbers(field(logprobs, "data"));
    ASSERT_EQ(values.size(), batch[i].size() - 1);
    if (const json::value* shape = logprobs.as_object().if_contains("shape")) {
      EXPECT_EQ(integers(*shape), std::vector<std::int64_t>{static_cast<std::int64_t>(values.size())});
    }
    for (double v : values) {
      EXPECT_LE(v, 0.0);
      EXPECT_TRUE(std::isfinite(v));
      sum_of_logprobs += v;
    }
  }
  const json::value& metrics = field(output, "metrics");
  EXPECT_TRUE(metrics_well_formed(metrics));
  // cross_entropy with all weights 1: loss = -sum(logprobs).
  EXPECT_NEAR(number(field(metrics, "loss:sum")), -sum_of_logprobs, 1e-3 * std::max(1.0, -sum_of_logprobs));
}

TEST_F(HttpApiTraining, ProtobufAndZstdRequestsGiveTheSameResultAsJson) {
  // No optim_step between them: the weights are the same for all three.
  const auto from_json = logprobs_of(submit_json(1, batch));
  const auto from_proto = logprobs_of(submit_proto(2, batch, false, false));
  const auto from_zstd = logprobs_of(submit_proto(3, batch, false, true));
  EXPECT_EQ(from_json, from_proto);
  EXPECT_EQ(from_json, from_zstd);
}

TEST_F(HttpApiTraining, BadZstdBodyIsAClientError) {
  const std::string body = proto_forward_backward(model, 1, batch).SerializeAsString();
  const RawResponse response =
      api().post_raw("/api/v1/forward_backward", body, protobuf_type, {{"Content-Encoding", "zstd"}});
  EXPECT_TRUE(is_client_error(response));
}

TEST_F(HttpApiTraining, GarbageProtobufIsAClientError) {
  const RawResponse response = api().post_raw("/api/v1/forward_backward", "\xff\xff\xff\x07garbage", protobuf_type);
  EXPECT_TRUE(is_client_error(response));
}

TEST_F(HttpApiTraining, ProtobufResultWhenAcceptAsksForIt) {
  const std::string request_id = submit_json(1, batch);
  const RawResponse proto = api().await_response(request_id, protobuf_type);
  ASSERT_EQ(proto.status, 200) << proto.describe();
  ASSERT_NE(proto.header("Content-Type").value_or("").find("application/x-protobuf"), std::string::npos)
      << proto.describe();
  tinker_public::ForwardBackwardOutput output;
  ASSERT_TRUE(output.ParseFromString(proto.body));
  ASSERT_EQ(output.loss_fn_outputs_size(), 1);  // one ArrayRecord for all datums
  const tinker_public::ArrayRecord& record = output.loss_fn_outputs(0);
  EXPECT_EQ(record.num_datums(), 2);
  ASSERT_TRUE(record.fields().contains("logprobs"));
  const tinker_public::BatchedTensor& logprobs = record.fields().at("logprobs");
  EXPECT_EQ(logprobs.dtype(), tinker_public::DTYPE_FLOAT32);
  EXPECT_EQ(logprobs.trailing_shape_size(), 0);
  EXPECT_EQ(int64s_from_le(logprobs.offsets()), (std::vector<std::int64_t>{0, 16, 24}));  // byte offsets
  const std::vector<std::vector<float>> values = batched_floats(logprobs, record.num_datums());
  ASSERT_TRUE(output.metrics().contains("loss:sum"));
  for (const auto& [key, value] : output.metrics()) {
    EXPECT_NE(key.find(':'), std::string::npos) << key;
  }

  // The same completed result, polled again with JSON, carries the same numbers.
  const RawResponse as_json = api().await_response(request_id, json_type);
  ASSERT_TRUE(is_json_answer(as_json));
  const auto json_values = json_logprobs(as_json.json());
  ASSERT_EQ(json_values.size(), values.size());
  for (std::size_t d = 0; d < values.size(); ++d) {
    ASSERT_EQ(json_values[d].size(), values[d].size());
    for (std::size_t i = 0; i < values[d].size(); ++i) {
      EXPECT_EQ(static_cast<float>(json_values[d][i]), values[d][i]);
    }
  }
  EXPECT_NEAR(number(field(field(as_json.json(), "metrics"), "loss:sum")), output.metrics().at("loss:sum"), 1e-6);
}

TEST_F(HttpApiTraining, AcceptListingProtobufFirstOrSecondGetsProtobuf) {
  const std::string request_id = submit_json(1, batch);
  (void)api().await_response(request_id);
  for (const char* accept : {"application/x-protobuf, application/json", "application/json, application/x-protobuf"}) {
    const RawResponse response = api().poll(request_id, false, accept);
    EXPECT_NE(response.header("Content-Type").value_or("").find("application/x-protobuf"), std::string::npos)
        << accept << "\n"
        << response.describe();
  }
  const RawResponse plain = api().poll(request_id, false, "*/*");
  EXPECT_TRUE(is_json_answer(plain));
}

TEST_F(HttpApiTraining, NonBulkResultsStayJsonEvenWhenProtobufIsAccepted) {
  const std::string request_id = api().submit("/api/v1/optim_step", optim_step_body(model, 1, 1e-3));
  const RawResponse response = api().await_response(request_id, protobuf_type);
  EXPECT_TRUE(is_json_answer(response));
}

TEST_F(HttpApiTraining, OptimStepAppliesAccumulatedGradients) {
  const auto before = logprobs_of(submit_json(1, batch));
  const RawResponse step = api().await_response(api().submit("/api/v1/optim_step", optim_step_body(model, 2, 1e-3)));
  ASSERT_EQ(step.status, 200) << step.describe();
  ASSERT_TRUE(is_json_answer(step));
  const json::value result = step.json();
  EXPECT_FALSE(result.as_object().contains("error")) << step.body;
  if (const json::value* metrics = result.as_object().if_contains("metrics"); metrics && !metrics->is_null()) {
    EXPECT_TRUE(metrics_well_formed(*metrics));
    if (const json::value* norm = metrics->as_object().if_contains("grad_norm:mean")) {
      EXPECT_GT(number(*norm), 0.0);
    }
  }
  const auto after = logprobs_of(submit_json(3, batch));
  EXPECT_NE(before, after);
  // Training on the batch makes its targets more likely.
  double sum_before = 0, sum_after = 0;
  for (const auto& d : before)
    for (double v : d) sum_before += v;
  for (const auto& d : after)
    for (double v : d) sum_after += v;
  EXPECT_GT(sum_after, sum_before);
}

TEST_F(HttpApiTraining, LegacyForwardComputesWithoutAccumulatingGradients) {
  const RawResponse result = api().await_response(submit_json(1, batch, "/api/v1/forward", "forward_input"));
  ASSERT_EQ(result.status, 200) << result.describe();
  const auto first = json_logprobs(result.json());
  ASSERT_EQ(first.size(), 2u);
  EXPECT_TRUE(metrics_well_formed(field(result.json(), "metrics")));
  // Nothing accumulated, so an optim_step changes nothing (Adam of a zero gradient is zero).
  (void)api().call("/api/v1/optim_step", optim_step_body(model, 2, 1e-3));
  EXPECT_EQ(logprobs_of(submit_json(3, batch, "/api/v1/forward", "forward_input")), first);
}

TEST_F(HttpApiTraining, ProtobufForwardOnlyDoesNotAccumulate) {
  const auto first = logprobs_of(submit_proto(1, batch, true, false));
  (void)api().call("/api/v1/optim_step", optim_step_body(model, 2, 1e-3));
  EXPECT_EQ(logprobs_of(submit_proto(3, batch, true, false)), first);
}

TEST_F(HttpApiTraining, MismatchedLossInputFailsTheFutureNamingTheKey) {
  json::object datum = cross_entropy_datum({5, 6, 7, 8});
  datum["loss_fn_inputs"].as_object()["weights"] = float32_tensor({1.0, 1.0});  // N is 3
  json::array data;
  data.emplace_back(std::move(datum));
  const RawResponse submit = api().post("/api/v1/forward_backward", forward_backward_body(model, 1, data));
  ASSERT_EQ(submit.status, 200) << submit.describe();
  const json::value failure = api().await_failure(string_field(submit.json(), "request_id"));
  EXPECT_EQ(string_field(failure, "category"), "user");
  EXPECT_NE(string_field(failure, "error").find("weights"), std::string::npos) << to_text(failure);
  // The failed op still consumed its seq_id: the next one runs.
  EXPECT_NO_THROW(logprobs_of(submit_json(2, batch)));
}

TEST_F(HttpApiTraining, TokenOutsideTheVocabularyFailsWithCategoryUser) {
  const std::int64_t too_big = tiny_vocab_size() + 10;
  const json::value failure = api().await_failure(submit_json(1, {{5, too_big, 7}}));
  EXPECT_EQ(string_field(failure, "category"), "user");
}

TEST_F(HttpApiTraining, UnknownLossFunctionIsAUserError) {
  const RawResponse submit =
      api().post("/api/v1/forward_backward", forward_backward_body(model, 1, json_data(batch), "no_such_loss"));
  if (submit.status != 200) {
    EXPECT_TRUE(is_client_error(submit, "loss_fn"));
    return;
  }
  const json::value failure = api().await_failure(string_field(submit.json(), "request_id"));
  EXPECT_EQ(string_field(failure, "category"), "user");
}

TEST_F(HttpApiTraining, EveryLossFunctionRunsWithItsInputs) {
  std::int64_t seq = 1;
  for (const char* loss : {"importance_sampling", "ppo", "cispo", "dro"}) {
    json::object datum = cross_entropy_datum({31, 32, 33, 34});
    json::object& inputs = datum["loss_fn_inputs"].as_object();
    inputs.erase("weights");
    inputs["logprobs"] = float32_tensor({-2.0, -1.5, -3.0});
    inputs["advantages"] = float32_tensor({1.0, -0.5, 0.25});
    json::array data;
    data.emplace_back(std::move(datum));
    json::object body = forward_backward_body(model, seq++, data, loss);
    if (std::string_view(loss) == "dro") body["forward_backward_input"].as_object()["loss_fn_config"] = {{"beta", 0.1}};
    const json::value output = api().call("/api/v1/forward_backward", body);
    const auto logprobs = json_logprobs(output);
    ASSERT_EQ(logprobs.size(), 1u) << loss;
    EXPECT_EQ(logprobs[0].size(), 3u) << loss;
    EXPECT_TRUE(std::isfinite(number(field(field(output, "metrics"), "loss:sum")))) << loss;
  }
}

}  // namespace
}  // namespace tinker::local::test
