// Sampling in null-model mode: sampling sessions (idempotency, 409, 404), result shapes,
// duplicate seq_ids, backpressure, ephemeral and named sampler weights, samplers/{id}.
#include "engine_test_support.hpp"

#include <cmath>

namespace tinker::local::test {
namespace {

class SamplingTest : public EngineFixture {
 protected:
  std::string base_sampler(const std::string& session, std::int64_t seq = 0) {
    return engine
        ->create_sampling_session(
            CreateSamplingSessionRequest(session, seq, std::string("tinker-local/tiny-lm"), std::nullopt), alice)
        .sampling_session_id;
  }
  static SampleRequest request(const std::string& sampler, std::int64_t seq, std::int64_t max_tokens = 6,
                               std::int64_t num_samples = 2) {
    SamplingParams params(max_tokens, 0.7);
    params.seed = 1;
    return SampleRequest(sampler, seq, ModelInput::from_ints(std::vector<TokenId>{11, 12, 13}), params, num_samples);
  }
};

TEST_F(SamplingTest, SamplingSessionsAreIdempotentPerSeqId) {
  start();
  std::string session = new_session(alice);
  std::string id = base_sampler(session, 4);
  EXPECT_EQ(id, session + ":sample:4");
  EXPECT_EQ(base_sampler(session, 4), id);
  EXPECT_EQ(http_status_of([&] {
              engine->create_sampling_session(
                  CreateSamplingSessionRequest(session, 4, std::string("Qwen/Qwen3-8B"), std::nullopt), alice);
            }),
            409);
  EXPECT_EQ(http_status_of([&] {
              engine->create_sampling_session(
                  CreateSamplingSessionRequest(session, 5, std::string("no/model"), std::nullopt), alice);
            }),
            404);
  EXPECT_EQ(http_status_of([&] {
              engine->create_sampling_session(
                  CreateSamplingSessionRequest(session, 6, std::nullopt, std::string("tinker://x:train:0/weights/y")),
                  alice);
            }),
            404);
  EXPECT_EQ(http_status_of([&] {
              engine->create_sampling_session(
                  CreateSamplingSessionRequest(session, 7, std::nullopt, std::string("not-a-path")), alice);
            }),
            400);
  EXPECT_EQ(http_status_of([&] {
              engine->create_sampling_session(CreateSamplingSessionRequest(session, 8, std::nullopt, std::nullopt),
                                              alice);
            }),
            400);
  GetSamplerResponse sampler = engine->get_sampler(id, alice);
  EXPECT_EQ(sampler.base_model, "tinker-local/tiny-lm");
  EXPECT_FALSE(sampler.model_path.has_value());
  EXPECT_EQ(http_status_of([&] { engine->get_sampler(id, bob); }), 404);
}

TEST_F(SamplingTest, NullModelSamplesHaveTheRequestedShape) {
  start();
  std::string sampler = base_sampler(new_session(alice));
  SampleRequest with_logprobs = request(sampler, 0, 6, 3);
  with_logprobs.prompt_logprobs = true;
  with_logprobs.topk_prompt_logprobs = 2;
  UntypedAPIFuture ticket = engine->sample(with_logprobs, alice, true);
  EXPECT_FALSE(ticket.model_id.has_value());
  RetrieveOutcome proto = result(ticket.request_id, true);
  ASSERT_EQ(proto.content_type, "application/x-protobuf");
  auto response = from_protobuf<SampleResponse>(proto.body);
  ASSERT_EQ(response.sequences.size(), 3u);
  for (const auto& sequence : response.sequences) {
    EXPECT_EQ(sequence.tokens.size(), 6u);
    ASSERT_TRUE(sequence.logprobs.has_value());
    EXPECT_EQ(sequence.logprobs->size(), 6u);
    EXPECT_EQ(sequence.stop_reason, StopReason::length);
  }
  ASSERT_TRUE(response.prompt_logprobs.has_value());
  ASSERT_EQ(response.prompt_logprobs->size(), 3u);
  EXPECT_FALSE((*response.prompt_logprobs)[0].has_value());
  EXPECT_TRUE((*response.prompt_logprobs)[1].has_value());
  ASSERT_TRUE(response.topk_prompt_logprobs.has_value());
  ASSERT_EQ(response.topk_prompt_logprobs->size(), 3u);
  EXPECT_FALSE((*response.topk_prompt_logprobs)[0].has_value());
  EXPECT_EQ((*response.topk_prompt_logprobs)[2]->size(), 2u);

  // Without max_tokens the configured default applies; the JSON form carries "type":"sample".
  SampleRequest defaulted = request(sampler, 1, 0, 1);
  defaulted.sampling_params.max_tokens.reset();
  auto json = result_json(engine->sample(defaulted, alice, false).request_id);
  EXPECT_EQ(text(json["type"]), "sample");
  EXPECT_EQ(json["sequences"].as_array()[0].as_object()["tokens"].as_array().size(),
            static_cast<std::size_t>(options.default_max_tokens));
}

TEST_F(SamplingTest, DuplicateSeqIdReturnsTheSameTicketAndBadInputFailsAsUserError) {
  start();
  std::string sampler = base_sampler(new_session(alice));
  UntypedAPIFuture first = engine->sample(request(sampler, 5), alice, true);
  EXPECT_EQ(engine->sample(request(sampler, 5), alice, true), first);
  EXPECT_NE(engine->sample(request(sampler, 6), alice, true), first);
  EXPECT_EQ(http_status_of([&] { engine->sample(request(sampler, -1), alice, true); }), 400);
  SampleRequest no_seq = request(sampler, 0);
  no_seq.seq_id.reset();
  EXPECT_EQ(http_status_of([&] { engine->sample(no_seq, alice, true); }), 400);
  EXPECT_EQ(http_status_of([&] { engine->sample(request("nope:sample:0", 0), alice, true); }), 404);
  EXPECT_EQ(text(result_json(engine->sample(request(sampler, 7, 4, 0), alice, true).request_id)["category"]), "user");
}

TEST_F(SamplingTest, BackpressureRefusesSamplesBeyondTheQueueLimit) {
  options.sample_queue_limit = 2;
  start();
  engine->set_queue_pause_hook([](std::string_view endpoint) -> std::optional<QueuePause> {
    if (endpoint != "asample") return std::nullopt;
    return QueuePause{"paused_capacity", std::chrono::milliseconds(300)};
  });
  std::string sampler = base_sampler(new_session(alice));
  UntypedAPIFuture a = engine->sample(request(sampler, 0), alice, true);
  UntypedAPIFuture b = engine->sample(request(sampler, 1), alice, true);
  EXPECT_EQ(http_status_of([&] { engine->sample(request(sampler, 2), alice, true); }), 429);
  // The resend of a ticketed seq_id is not new work; without the header nothing is refused.
  EXPECT_EQ(engine->sample(request(sampler, 1), alice, true), b);
  UntypedAPIFuture c = engine->sample(request(sampler, 2), alice, false);
  EXPECT_NE(poll(a.request_id).body.find("paused_capacity"), std::string::npos);
  for (const auto* ticket : {&a, &b, &c}) EXPECT_EQ(text(result_json(ticket->request_id)["type"]), "sample");
  EXPECT_NO_THROW(engine->sample(request(sampler, 3), alice, true));
}

TEST_F(SamplingTest, EphemeralSamplerFromTrainingClient) {
  start();
  std::string session = new_session(alice);
  std::string model = new_model(session);
  SaveWeightsForSamplerRequest save(model, 1, std::nullopt);
  save.sampling_session_seq_id = 1;
  UntypedAPIFuture ticket = engine->save_weights_for_sampler(save, alice);
  auto body = result_json(ticket.request_id);
  EXPECT_EQ(text(body["type"]), "save_weights_for_sampler");
  EXPECT_EQ(text(body["sampling_session_id"]), session + ":sample:1");
  EXPECT_FALSE(body.contains("path"));
  EXPECT_TRUE(engine->list_run_checkpoints(model, alice).checkpoints.empty());
  // A call re-send (same seq_id, new sampling_session_seq_id) gets the same ticket.
  save.sampling_session_seq_id = 2;
  EXPECT_EQ(engine->save_weights_for_sampler(save, alice), ticket);

  std::string sampler = text(body["sampling_session_id"]);
  EXPECT_EQ(text(result_json(engine->sample(request(sampler, 0), alice, true).request_id)["type"]), "sample");
  EXPECT_EQ(engine->get_sampler(sampler, alice).base_model, "tinker-local/tiny-lm");
  EXPECT_EQ(engine->get_session(session, alice).sampler_ids, std::vector<std::string>{sampler});
  // The id is taken: a create_sampling_session with the same seq id is a conflict.
  EXPECT_EQ(http_status_of([&] { base_sampler(session, 1); }), 409);
}

TEST_F(SamplingTest, NamedSamplerCheckpointCanBeSampledByPathAndByOthersWhenPublic) {
  start();
  std::string session = new_session(alice);
  std::string model = new_model(session);
  auto saved =
      result_json(engine->save_weights_for_sampler(SaveWeightsForSamplerRequest(model, 1, "final"), alice).request_id);
  std::string path = text(saved["path"]);
  auto created = engine->create_sampling_session(CreateSamplingSessionRequest(session, 0, std::nullopt, path), alice);
  EXPECT_EQ(engine->get_sampler(created.sampling_session_id, alice).model_path, path);
  EXPECT_EQ(http_status_of([&] {
              engine->create_sampling_session(
                  CreateSamplingSessionRequest(session, 1, std::string("Qwen/Qwen3-8B"), path), alice);
            }),
            400);

  SampleRequest by_path = request("", 0);
  by_path.sampling_session_id.reset();
  by_path.model_path = path;
  EXPECT_EQ(text(result_json(engine->sample(by_path, alice, false).request_id)["type"]), "sample");
  EXPECT_EQ(http_status_of([&] { engine->sample(by_path, bob, false); }), 404);
  engine->publish_checkpoint(model, "sampler_weights/final", alice);
  auto bob_ticket = engine->sample(by_path, bob, false);
  EXPECT_EQ(text(result_json(bob_ticket.request_id, &bob)["type"]), "sample");
}

}  // namespace
}  // namespace tinker::local::test
