// Sampling from the real tiny model through the engine: determinism per seed and per
// (sampler, seq_id), trained vs base weights, concurrent samples on the workers.
#include "model_engine_test_support.hpp"

namespace tinker::local::test {
namespace {

// The result without its sequence ids, which every sampled sequence has of its own.
SampleResponse without_ids(SampleResponse response) {
  for (SampledSequence& sequence : response.sequences) sequence.sequence_id.reset();
  return response;
}

class ModelSamplingTest : public ModelEngineFixture {
 protected:
  SampleResponse sample(const std::string& sampler, std::int64_t seq, std::optional<std::uint64_t> seed,
                        double temperature = 1.0, bool prompt_logprobs = false) {
    SamplingParams params(8, temperature);
    params.seed = seed;
    SampleRequest request(sampler, seq, ModelInput::from_ints(std::vector<TokenId>{40, 41, 42, 43}), params, 2);
    request.prompt_logprobs = prompt_logprobs;
    RetrieveOutcome outcome = result(engine->sample(request, alice, true).request_id, true);
    EXPECT_EQ(outcome.content_type, "application/x-protobuf") << outcome.body;
    return from_protobuf<SampleResponse>(outcome.body);
  }
  std::string base_sampler(const std::string& session, std::int64_t seq) {
    return engine
        ->create_sampling_session(
            CreateSamplingSessionRequest(session, seq, std::string("tinker-local/tiny-lm"), std::nullopt), alice)
        .sampling_session_id;
  }
};

TEST_F(ModelSamplingTest, SameSeedSameOutputDifferentSeedsDiffer) {
  start_model();
  std::string sampler = base_sampler(new_session(alice), 0);
  SampleResponse a = sample(sampler, 0, 7);
  SampleResponse b = sample(sampler, 1, 7);
  SampleResponse c = sample(sampler, 2, 8);
  ASSERT_EQ(a.sequences.size(), 2u);
  EXPECT_EQ(a.sequences[0].tokens.size(), 8u);
  EXPECT_EQ(without_ids(a), without_ids(b));
  EXPECT_NE(without_ids(a).sequences, without_ids(c).sequences);
  // Without a seed, the seed comes from (sampler, seq_id); resending a seq_id is the same request.
  SampleResponse unseeded = sample(sampler, 3, std::nullopt);
  EXPECT_EQ(
      result(engine->sample(SampleRequest(sampler, 3, ModelInput(), SamplingParams()), alice, true).request_id, true)
          .body,
      to_protobuf(unseeded));
  EXPECT_NE(without_ids(sample(sampler, 4, std::nullopt)).sequences, without_ids(unseeded).sequences);
  // Temperature 0 is argmax: every sample and every seed gives the same tokens.
  SampleResponse greedy = sample(sampler, 5, 1, 0.0);
  EXPECT_EQ(greedy.sequences[0].tokens, greedy.sequences[1].tokens);
  EXPECT_EQ(sample(sampler, 6, 2, 0.0).sequences[0].tokens, greedy.sequences[0].tokens);
}

TEST_F(ModelSamplingTest, TrainedWeightsDifferFromTheBaseAndSnapshotsAreFrozen) {
  start_model();
  std::string session = new_session(alice);
  std::string model = new_model(session);
  std::string base = base_sampler(session, 0);
  std::int64_t seq = train_steps(model, 1, 5);
  SaveWeightsForSamplerRequest save(model, seq++, std::nullopt);
  save.sampling_session_seq_id = 1;
  std::string trained =
      text(result_json(engine->save_weights_for_sampler(save, alice).request_id)["sampling_session_id"]);

  SampleResponse from_base = sample(base, 0, 3, 1.0, true);
  SampleResponse from_trained = sample(trained, 0, 3, 1.0, true);
  ASSERT_TRUE(from_base.prompt_logprobs && from_trained.prompt_logprobs);
  EXPECT_NE(*from_base.prompt_logprobs, *from_trained.prompt_logprobs);

  // Training on after the snapshot does not change what the sampler serves.
  train_steps(model, seq, 3);
  EXPECT_EQ(without_ids(sample(trained, 1, 3, 1.0, true)), without_ids(from_trained));
}

TEST_F(ModelSamplingTest, ConcurrentSamplesAllComplete) {
  start_model();
  std::string sampler = base_sampler(new_session(alice), 0);
  std::vector<std::string> tickets;
  for (int i = 0; i < 16; ++i) {
    SamplingParams params(6, 1.0);
    params.seed = static_cast<std::uint64_t>(i % 4);
    SampleRequest request(sampler, i, ModelInput::from_ints(std::vector<TokenId>{1, 2, 3}), params, 1);
    tickets.push_back(engine->sample(request, alice, false).request_id);
  }
  std::vector<SampleResponse> responses;
  for (const auto& id : tickets) {
    RetrieveOutcome outcome = result(id, true);
    ASSERT_EQ(outcome.content_type, "application/x-protobuf") << outcome.body;
    responses.push_back(without_ids(from_protobuf<SampleResponse>(outcome.body)));
  }
  for (std::size_t i = 4; i < responses.size(); ++i) EXPECT_EQ(responses[i], responses[i % 4]);
}

}  // namespace
}  // namespace tinker::local::test
