// The blocking facade over the post-0.25 sampling features (doc/sampling.md): the batched long-poll with the server
// flag on and off, record_stability_info, sequence ids and training on them with provenance spans.
#include "integration/support/training_data.hpp"
#include "integration/sync/sync_support.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace tinker::test {
namespace {

constexpr int sync_samples = 8;

class SyncSamplingBatched : public SyncService {
 protected:
  void restart_with_flag(std::optional<bool> flag) {
    local::ServerOptions options = fast_server_options();
    options.client_config.sample_use_retrieve_futures = flag;
    start_server(options);
  }

  // Submits every sample before waiting for any (the blocking sample() returns once accepted).
  std::vector<SampleResponse> sample_batch(const sync::SamplingClient& sampler) const {
    std::vector<Future<SampleResponse>> futures;
    for (int i = 0; i < sync_samples; ++i) {
      SamplingParams params(3, 1.0);
      params.seed = static_cast<std::uint64_t>(50 + i);
      futures.push_back(sampler.sample(ModelInput::from_ints({7, 8, 9, 10 + i}), 1, params));
    }
    std::vector<SampleResponse> responses;
    for (const auto& future : futures) responses.push_back(future.get());
    return responses;
  }
};

TEST_F(SyncSamplingBatched, TheFlagChangesThePollingNotTheResults) {
  restart_with_flag(false);
  std::vector<SampleResponse> off;
  {
    sync::ServiceClient service = make_sync_service();
    off = sample_batch(service.create_sampling_client(SamplingSource::from_base_model(std::string(tiny_model))));
  }
  EXPECT_TRUE(requests_to(server->audit(), "/retrieve_futures").empty());

  restart_with_flag(true);
  std::vector<SampleResponse> on;
  {
    sync::ServiceClient service = make_sync_service();
    on = sample_batch(service.create_sampling_client(SamplingSource::from_base_model(std::string(tiny_model))));
  }
  ASSERT_EQ(on.size(), off.size());
  for (std::size_t i = 0; i < on.size(); ++i) {
    EXPECT_EQ(on[i].sequences.at(0).tokens, off[i].sequences.at(0).tokens) << i;
    EXPECT_TRUE(on[i].sequences.at(0).sequence_id.has_value());
  }
  const local::AuditReport audit = server->audit();
  EXPECT_EQ(requests_to(audit, "/retrieve_future").size(), on.size());
  EXPECT_GE(requests_to(audit, "/retrieve_futures").size(), 1u);
}

TEST_F(SyncSamplingBatched, StabilityInfoAndProvenanceThroughTheBlockingClients) {
  sync::ServiceClient service = make_sync_service();
  SamplingClientOptions options;
  options.record_stability_info = true;
  sync::SamplingClient sampler =
      service.create_sampling_client(SamplingSource::from_base_model(std::string(tiny_model)), options);
  const std::vector<TokenId> prompt{11, 12, 13, 14};
  const SampleResponse sampled = sampler.sample(ModelInput::from_ints(prompt), 1, SamplingParams(4, 1.0)).get();
  const SampledSequence& sequence = sampled.sequences.at(0);
  ASSERT_TRUE(sequence.sequence_id.has_value());

  sync::RestClient rest = service.create_rest_client();
  const AuditLogResponse log = rest.get_audit_log();
  const auto recorded = std::count_if(log.entries.begin(), log.entries.end(),
                                      [](const AuditLogEntry& e) { return e.event == "sample.stability_info"; });
  EXPECT_EQ(recorded, 1);

  std::vector<TokenId> all = prompt;
  all.insert(all.end(), sequence.tokens.begin(), sequence.tokens.end());
  Datum datum = next_token_datum(all);
  const std::string& id = *sequence.sequence_id;
  datum = datum.with_provenance(
      {PromptProvenanceSpan(id, 0, 4), SampledProvenanceSpan(id, 0, 3)},
      std::vector<ProvenanceSpan>{PromptProvenanceSpan(id, 1, 3), SampledProvenanceSpan(id, 0, 4)});
  sync::TrainingClient training = service.create_lora_training_client(std::string(tiny_model), 4);
  const ForwardBackwardOutput output =
      training.forward_backward(ForwardBackwardInput({datum}, loss_fn::cross_entropy)).get();
  EXPECT_EQ(output.loss_fn_outputs.size(), 1u);

  datum.model_input_spans->pop_back();  // no longer covers model_input
  try {
    training.forward_backward(ForwardBackwardInput({datum}, loss_fn::cross_entropy));
    FAIL() << "spans that do not cover model_input were sent";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
    EXPECT_NE(std::string(e.what()).find("data[0].model_input_spans"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tinker::test
