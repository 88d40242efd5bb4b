// Null-model mode (ServerOptions::null_model): every op completes at once with well-formed,
// correctly sized results, still in seq_id order.
#include "unit/programs/local/support/expectations.hpp"
#include "unit/programs/local/support/local_server.hpp"
#include "unit/programs/local/support/training_steps.hpp"

#include <boost/json/parse.hpp>

namespace tinker::local::test {
namespace {

namespace json = boost::json;

class HttpApiNullModel : public LocalServerTest {
 protected:
  HttpApiNullModel() { options.null_model = true; }
  void SetUp() override {
    session = api().create_session();
    model = std::make_unique<TrainingModel>(api(), api().create_model(session));
  }
  std::string session;
  std::unique_ptr<TrainingModel> model;
};

TEST_F(HttpApiNullModel, ForwardBackwardResultsAreCorrectlySized) {
  const std::vector<Tokens> batch{{1, 2, 3, 4, 5, 6}, {7, 8}, {9, 10, 11}};
  const json::value output = model->forward_backward(batch);
  EXPECT_EQ(string_field(output, "loss_fn_output_type"), "ArrayRecord");
  const auto logprobs = json_logprobs(output);
  ASSERT_EQ(logprobs.size(), 3u);
  for (std::size_t i = 0; i < batch.size(); ++i) {
    EXPECT_EQ(logprobs[i].size(), batch[i].size() - 1);
    for (double v : logprobs[i]) {
      EXPECT_TRUE(std::isfinite(v) && v <= 0.0) << v;
    }
  }
  EXPECT_TRUE(metrics_well_formed(field(output, "metrics")));
  EXPECT_TRUE(field(output, "metrics").as_object().contains("loss:sum"));

  const auto proto = model->forward_logprobs(batch);
  ASSERT_EQ(proto.size(), 3u);
  for (std::size_t i = 0; i < batch.size(); ++i) {
    EXPECT_EQ(proto[i].size(), batch[i].size() - 1);
  }
}

TEST_F(HttpApiNullModel, OptimAndCheckpointsComplete) {
  const json::value optim = model->optim_step(1e-3);
  EXPECT_FALSE(optim.as_object().contains("error"));
  EXPECT_EQ(model->save("null-ckpt"), "tinker://" + model->id() + "/weights/null-ckpt");
  EXPECT_EQ(model->save_for_sampler("null-s"), "tinker://" + model->id() + "/sampler_weights/null-s");
  EXPECT_EQ(model->save_for_sampler_ephemeral(1), session + ":sample:1");
}

TEST_F(HttpApiNullModel, SampleResultsAreCorrectlySized) {
  const std::string sampler = create_sampling_session(api(), session, 0, std::string(tiny_model), std::nullopt);
  const Tokens prompt{3, 4, 5, 6};
  json::object body = sample_body(sampler, 0, prompt, 3, 5, 1.0, 1);
  body["prompt_logprobs"] = true;
  body["topk_prompt_logprobs"] = 2;
  const json::value result = api().call("/api/v1/asample", body);
  const json::array& sequences = items(result, "sequences");
  ASSERT_EQ(sequences.size(), 3u);
  for (const json::value& s : sequences) {
    const auto tokens = integers(field(s, "tokens"));
    if (string_field(s, "stop_reason") == "length") {
      EXPECT_EQ(tokens.size(), 5u);
    } else {
      EXPECT_LE(tokens.size(), 5u);
    }
    EXPECT_EQ(numbers(field(s, "logprobs")).size(), tokens.size());
  }
  EXPECT_EQ(items(result, "prompt_logprobs").size(), prompt.size());
  EXPECT_EQ(items(result, "topk_prompt_logprobs").size(), prompt.size());

  const std::string request_id = api().submit("/api/v1/asample", sample_body(sampler, 1, prompt, 2, 7, 1.0, 1));
  const RawResponse proto = api().await_response(request_id, protobuf_type);
  tinker_public::SampleResponse decoded;
  ASSERT_TRUE(decoded.ParseFromString(proto.body)) << proto.describe();
  ASSERT_EQ(decoded.sequences_size(), 2);
  for (const auto& s : decoded.sequences()) {
    EXPECT_EQ(floats_from_le(s.logprobs()).size(), int32s_from_le(s.tokens()).size());
  }
}

TEST_F(HttpApiNullModel, OrderingIsStillAudited) {
  const std::string third = api().submit("/api/v1/optim_step", optim_step_body(model->id(), 3, 1e-3));
  json::array data;
  data.emplace_back(cross_entropy_datum({1, 2, 3}));
  const std::string second = api().submit("/api/v1/forward_backward", forward_backward_body(model->id(), 2, data));
  const std::string first = api().submit("/api/v1/optim_step", optim_step_body(model->id(), 1, 1e-3));
  for (const std::string& id : {first, second, third}) {
    EXPECT_NO_THROW(api().await_json(id));
  }
  const AuditReport report = api().server().audit();
  EXPECT_TRUE(report.ok());
  bool seen = false;
  for (const ModelAudit& m : report.models) {
    if (m.model_id != model->id()) continue;
    seen = true;
    EXPECT_EQ(m.applied_seq_ids, (std::vector<std::int64_t>{1, 2, 3}));
  }
  EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace tinker::local::test
