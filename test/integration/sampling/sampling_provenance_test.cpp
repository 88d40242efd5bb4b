// Sequence ids, Datum provenance and record_stability_info through the public async API against tinker-local
// (doc/training.md#provenance, doc/sampling.md#creating-a-sampler).
#include "integration/sampling/sampling_support.hpp"
#include "integration/support/training_data.hpp"

#include <tinker/rest_client.hpp>
#include <tinker/training_client.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tinker::test {
namespace {

namespace asio = boost::asio;

// A prompt of `prompt_length` tokens and what the sampler continued it with.
class Sampled {
 public:
  std::vector<TokenId> prompt;
  SampledSequence sequence;
};

asio::awaitable<Sampled> sample_one(SamplingClient sampler, std::size_t prompt_length) {
  Sampled out;
  for (std::size_t i = 0; i < prompt_length; ++i) out.prompt.push_back(static_cast<TokenId>(40 + 3 * i));
  const SamplingParams params(5, 1.0);
  const SampleOptions options;
  Future<SampleResponse> future =
      co_await sampler.async_sample(ModelInput::from_ints(out.prompt), 1, params, options, use_awaitable);
  SampleResponse response = co_await future.async_get(use_awaitable);
  out.sequence = std::move(response.sequences.at(0));
  co_return out;
}

// The next-token datum of prompt + sampled tokens, with spans saying where each position came from.
Datum datum_with_provenance(const Sampled& s) {
  std::vector<TokenId> all = s.prompt;
  all.insert(all.end(), s.sequence.tokens.begin(), s.sequence.tokens.end());
  std::vector<TokenId> inputs(all.begin(), all.end() - 1);
  std::vector<std::int64_t> targets(all.begin() + 1, all.end());
  LossFnInputs loss_inputs;
  loss_inputs.emplace("weights", TensorData(std::vector<float>(targets.size(), 1.0f)));
  loss_inputs.emplace("target_tokens", TensorData(std::move(targets)));
  const Datum plain(ModelInput::from_ints(std::move(inputs)), std::move(loss_inputs));
  const std::string& id = *s.sequence.sequence_id;
  const auto n = static_cast<std::int64_t>(s.prompt.size());
  const auto m = static_cast<std::int64_t>(s.sequence.tokens.size());
  std::vector<ProvenanceSpan> input_spans{PromptProvenanceSpan(id, 0, n), SampledProvenanceSpan(id, 0, m - 1)};
  std::vector<ProvenanceSpan> loss_spans{PromptProvenanceSpan(id, 1, n - 1), SampledProvenanceSpan(id, 0, m)};
  return plain.with_provenance(std::move(input_spans), std::move(loss_spans));
}

asio::awaitable<TrainingClient> tiny_trainer(ServiceClient& service) {
  const LoraTrainingOptions lora(std::string(tiny_model), 4);
  co_return co_await service.async_create_lora_training_client(lora, use_awaitable);
}

asio::awaitable<std::tuple<boost::system::error_code, std::string>> train_on(TrainingClient training,
                                                                             std::vector<Datum> data) {
  const ForwardBackwardInput input(std::move(data), loss_fn::cross_entropy);
  diagnostics diag;
  auto [ec, future] = co_await training.async_forward_backward(input, diag, no_throw);
  if (ec) co_return std::make_tuple(ec, diag.message);
  auto [result_ec, output] = co_await future.async_get(diag, no_throw);
  co_return std::make_tuple(result_ec, result_ec ? diag.message : std::string());
}

using SamplingProvenanceTest = LocalService;

TEST_F(SamplingProvenanceTest, SampledSequencesTrainWithTheirProvenanceAsJson) {
  auto service = make_service_client();
  SamplingClient sampler = run(make_sampler(*service));
  TrainingClient training = run(tiny_trainer(*service));
  const Sampled first = run(sample_one(sampler, 6));
  const Sampled second = run(sample_one(sampler, 4));
  ASSERT_TRUE(first.sequence.sequence_id && second.sequence.sequence_id);
  EXPECT_NE(*first.sequence.sequence_id, *second.sequence.sequence_id);

  auto [ec, message] = run(train_on(training, {datum_with_provenance(first), datum_with_provenance(second)}));
  EXPECT_FALSE(ec) << message;
  // The protobuf form cannot carry spans: the batch went as JSON.
  const auto posts = requests_to(server->audit(), "/forward_backward");
  ASSERT_FALSE(posts.empty());
  EXPECT_EQ(posts.back().content_type, "application/json");
}

TEST_F(SamplingProvenanceTest, TheServerRefusesSpansOfAnotherSessionOrPastTheSequence) {
  auto other_service = make_service_client();
  SamplingClient other_sampler = run(make_sampler(*other_service));
  const Sampled foreign = run(sample_one(other_sampler, 5));

  auto service = make_service_client();
  SamplingClient sampler = run(make_sampler(*service));
  TrainingClient training = run(tiny_trainer(*service));
  const Sampled own = run(sample_one(sampler, 5));

  auto [foreign_ec, foreign_message] =
      run(train_on(training, {datum_with_provenance(own), datum_with_provenance(foreign)}));
  EXPECT_EQ(foreign_ec, make_error_code(errc::bad_request)) << foreign_message;
  EXPECT_NE(foreign_message.find("data[1].model_input_spans[0].sequence_id"), std::string::npos) << foreign_message;

  Datum too_far = datum_with_provenance(own);
  // Same coverage, but the sampled run claims positions the sequence does not have.
  std::get<SampledProvenanceSpan>((*too_far.model_input_spans)[1]).offset = 3;
  auto [far_ec, far_message] = run(train_on(training, {too_far}));
  EXPECT_EQ(far_ec, make_error_code(errc::bad_request)) << far_message;
  EXPECT_NE(far_message.find("data[0].model_input_spans[1]"), std::string::npos) << far_message;
}

TEST_F(SamplingProvenanceTest, SpansThatDoNotCoverTheirFieldAreRefusedBeforeAnythingIsSent) {
  auto service = make_service_client();
  SamplingClient sampler = run(make_sampler(*service));
  TrainingClient training = run(tiny_trainer(*service));
  const Sampled own = run(sample_one(sampler, 5));
  Datum short_cover = datum_with_provenance(own);
  std::get<PromptProvenanceSpan>((*short_cover.loss_fn_input_spans)[0]).length -= 1;
  const std::size_t posts_before = requests_to(server->audit(), "/forward_backward").size();
  auto [ec, message] = run(train_on(training, {datum_with_provenance(own), short_cover}));
  EXPECT_EQ(ec, make_error_code(errc::invalid_argument));
  EXPECT_NE(message.find("data[1].loss_fn_input_spans"), std::string::npos) << message;
  EXPECT_EQ(requests_to(server->audit(), "/forward_backward").size(), posts_before);

  Datum empty_span = datum_with_provenance(own);
  (*empty_span.model_input_spans)[0] = PromptProvenanceSpan(*own.sequence.sequence_id, 0, 0);
  auto [empty_ec, empty_message] = run(train_on(training, {empty_span}));
  EXPECT_EQ(empty_ec, make_error_code(errc::invalid_argument));
  EXPECT_NE(empty_message.find("data[0].model_input_spans[0]: length must be at least 1"), std::string::npos)
      << empty_message;
}

asio::awaitable<std::vector<AuditLogEntry>> stability_entries(ServiceClient& service) {
  RestClient rest = service.create_rest_client();
  const AuditLogOptions options;
  AuditLogResponse log = co_await rest.async_get_audit_log(options, use_awaitable);
  std::vector<AuditLogEntry> found;
  for (AuditLogEntry& entry : log.entries) {
    if (entry.event == "sample.stability_info") found.push_back(std::move(entry));
  }
  co_return found;
}

asio::awaitable<SamplingClient> recording_sampler(ServiceClient& service, bool record) {
  SamplingClientOptions options;
  options.record_stability_info = record;
  const SamplingSource source = SamplingSource::from_base_model(std::string(tiny_model));
  co_return co_await service.async_create_sampling_client(source, options, use_awaitable);
}

TEST_F(SamplingProvenanceTest, RecordStabilityInfoIsSentOnlyWhenAskedAndRecorded) {
  auto service = make_service_client();
  SamplingClient plain = run(recording_sampler(*service, false));
  run(sample_one(plain, 3));
  EXPECT_TRUE(run(stability_entries(*service)).empty());

  SamplingClient recording = run(recording_sampler(*service, true));
  run(sample_one(recording, 3));
  const std::vector<AuditLogEntry> entries = run(stability_entries(*service));
  ASSERT_EQ(entries.size(), 1u);
  ASSERT_TRUE(entries[0].purpose.has_value());
  EXPECT_NE(entries[0].purpose->find(recording.sampling_session_id()), std::string::npos) << *entries[0].purpose;
  EXPECT_NE(entries[0].purpose->find("logprobs=5 non_finite=0"), std::string::npos) << *entries[0].purpose;
}

asio::awaitable<SamplingClient> trainer_sampler(TrainingClient training, bool ephemeral) {
  SamplingClientOptions options;
  options.record_stability_info = true;
  if (ephemeral) {
    co_return co_await training.async_save_weights_and_get_sampling_client(options, use_awaitable);
  }
  const std::optional<std::int64_t> no_ttl;
  Future<SaveWeightsForSamplerResponse> saving =
      co_await training.async_save_weights_for_sampler("stable", no_ttl, use_awaitable);
  SaveWeightsForSamplerResponse saved = co_await saving.async_get(use_awaitable);
  std::string path = saved.path.value_or("");
  co_return co_await training.async_create_sampling_client(std::move(path), options, use_awaitable);
}

TEST_F(SamplingProvenanceTest, TrainingClientSamplersTakeTheOptionToo) {
  auto service = make_service_client();
  TrainingClient training = run(tiny_trainer(*service));
  SamplingClient ephemeral = run(trainer_sampler(training, true));
  SamplingClient saved = run(trainer_sampler(training, false));
  run(sample_one(ephemeral, 3));
  run(sample_one(saved, 3));
  EXPECT_EQ(run(stability_entries(*service)).size(), 2u);
}

}  // namespace
}  // namespace tinker::test
