// save_state / load_state / create-from-state, sampler weights and the tokenizer, against
// in-process tinker-local.
#include "integration/support/local_service.hpp"
#include "integration/support/training_data.hpp"

#include <tinker/service_client.hpp>
#include <tinker/tokenizer.hpp>

#include <gtest/gtest.h>

#include <boost/asio/use_future.hpp>

namespace tinker::test {
namespace {

namespace asio = boost::asio;

asio::awaitable<void> train_steps(TrainingClient& training, const std::vector<Datum>& batch, int steps) {
  for (int i = 0; i < steps; ++i) {
    const ForwardBackwardInput input(batch, loss_fn::cross_entropy);
    const AdamParams adam(5e-3);
    auto gradients = co_await training.async_forward_backward(input, use_awaitable);
    auto update = co_await training.async_optim_step(adam, use_awaitable);
    co_await gradients.async_get(use_awaitable);
    co_await update.async_get(use_awaitable);
  }
}

asio::awaitable<std::vector<float>> logprobs_of(TrainingClient& training, const std::vector<Datum>& batch) {
  const ForwardBackwardInput input(batch, loss_fn::cross_entropy);
  auto future = co_await training.async_forward(input, use_awaitable);
  co_return all_logprobs(co_await future.async_get(use_awaitable));
}

class RestoreRun {
 public:
  std::string path;
  std::vector<float> original;
  std::vector<float> restored;
  std::vector<float> original_after_step;
  std::vector<float> restored_after_step;
};

asio::awaitable<RestoreRun> save_and_restore(ServiceClient& service, bool with_optimizer) {
  const LoraTrainingOptions options(std::string(tiny_model), 8);
  TrainingClient training = co_await service.async_create_lora_training_client(options, use_awaitable);
  const std::vector<Datum> batch = tiny_batch(3, 8);
  co_await train_steps(training, batch, 3);
  const SaveStateOptions save_options;
  auto saving = co_await training.async_save_state("step-3", save_options, use_awaitable);
  RestoreRun run;
  run.path = (co_await saving.async_get(use_awaitable)).path;
  run.original = co_await logprobs_of(training, batch);

  const FromStateOptions from_state;
  TrainingClient restored;
  if (with_optimizer) {
    restored =
        co_await service.async_create_training_client_from_state_with_optimizer(run.path, from_state, use_awaitable);
  } else {
    restored = co_await service.async_create_training_client_from_state(run.path, from_state, use_awaitable);
  }
  run.restored = co_await logprobs_of(restored, batch);
  co_await train_steps(training, batch, 1);
  co_await train_steps(restored, batch, 1);
  run.original_after_step = co_await logprobs_of(training, batch);
  run.restored_after_step = co_await logprobs_of(restored, batch);
  co_return run;
}

class CheckpointTest : public LocalService {};

TEST_F(CheckpointTest, SaveStateThenANewClientFromStateGivesIdenticalLogprobs) {
  auto service = make_service_client();
  const RestoreRun result = run(save_and_restore(*service, false));
  EXPECT_EQ(result.path.rfind("tinker://", 0), 0u) << result.path;
  EXPECT_NE(result.path.find("/weights/step-3"), std::string::npos) << result.path;
  EXPECT_EQ(result.restored, result.original);
}

TEST_F(CheckpointTest, WithOptimizerStateTheNextStepIsIdenticalToo) {
  auto service = make_service_client();
  const RestoreRun result = run(save_and_restore(*service, true));
  EXPECT_EQ(result.restored, result.original);
  EXPECT_EQ(result.restored_after_step, result.original_after_step);
}

class CreateViaLoadTest : public LocalService {
 protected:
  local::ServerOptions server_options() const override {
    auto options = fast_server_options();
    options.client_config.create_model_via_load_weights = true;
    return options;
  }
};

TEST_F(CreateViaLoadTest, TheServerFlagUsesOneLoadWeightsToCreateTheModel) {
  auto service = make_service_client();
  const RestoreRun result = run(save_and_restore(*service, true));
  EXPECT_EQ(result.restored, result.original);
  EXPECT_EQ(result.restored_after_step, result.original_after_step);
  EXPECT_TRUE(requests_to(server->audit(), "/weights_info").empty());
}

TEST_F(CheckpointTest, ARetriedSaveThatHadSucceededIsNotAnError) {
  auto service = make_service_client();
  const LoraTrainingOptions options(std::string(tiny_model), 8);
  auto created = service->async_create_lora_training_client(options, asio::use_future);
  TrainingClient training = run_until_ready(io, created);
  // The first save is applied, but its answer is cut: the client must resubmit the same seq_id.
  local::FaultRule cut("save_weights", local::FaultKind::reset_mid_body);
  cut.on_calls = {1};
  server->set_faults({cut});
  auto saving = training.async_save_state("kept", SaveStateOptions(), asio::use_future);
  auto saved = run_until_ready(io, saving).async_get(asio::use_future);
  EXPECT_NE(run_until_ready(io, saved).path.find("/weights/kept"), std::string::npos);
  const auto submits = requests_to(server->audit(), "/save_weights");
  EXPECT_EQ(submits.size(), 2u);
  EXPECT_TRUE(audit_of(server->audit(), training.model_id()).exactly_once_in_order);
}

class SamplingRun {
 public:
  std::vector<float> forward_logprobs;
  PromptLogprobs computed;
  SampleResponse first;
  SampleResponse second;
  SampleResponse ephemeral;
  std::string decoded;
  std::string text;
};

asio::awaitable<SamplingRun> sample_trained_weights(ServiceClient& service) {
  const LoraTrainingOptions options(std::string(tiny_model), 8);
  TrainingClient training = co_await service.async_create_lora_training_client(options, use_awaitable);
  std::shared_ptr<const Tokenizer> tokenizer = co_await training.async_get_tokenizer(use_awaitable);
  SamplingRun run;
  run.text = "We the People of the United States";
  const std::vector<TokenId> tokens = tokenizer->encode(run.text);
  run.decoded = tokenizer->decode(tokens);

  const std::vector<Datum> batch = tiny_batch(2, 8);
  co_await train_steps(training, batch, 2);
  auto saving = co_await training.async_save_weights_for_sampler("sampler-1", std::nullopt, use_awaitable);
  const SaveWeightsForSamplerResponse saved = co_await saving.async_get(use_awaitable);
  const SamplingSource source = SamplingSource::from_model_path(saved.path.value_or(""));
  SamplingClient sampler = co_await service.async_create_sampling_client(source, use_awaitable);

  // compute_logprobs of a sequence equals the forward pass's logprobs of the same tokens.
  std::vector<TokenId> sequence(batch[0].model_input.to_ints());
  sequence.push_back(static_cast<TokenId>(batch[0].loss_fn_inputs.at("target_tokens").to_dense_ints().back()));
  auto computing = co_await sampler.async_compute_logprobs(ModelInput::from_ints(sequence), use_awaitable);
  run.computed = co_await computing.async_get(use_awaitable);
  const std::vector<Datum> first_datum{batch[0]};
  const ForwardBackwardInput forward_input(first_datum, loss_fn::cross_entropy);
  auto forwarding = co_await training.async_forward(forward_input, use_awaitable);
  run.forward_logprobs = all_logprobs(co_await forwarding.async_get(use_awaitable));

  SamplingParams params(8, 1.0);
  params.seed = 42;
  const ModelInput prompt = ModelInput::from_ints(tokens);
  auto first = co_await sampler.async_sample(prompt, 2, params, SampleOptions(), use_awaitable);
  auto second = co_await sampler.async_sample(prompt, 2, params, SampleOptions(), use_awaitable);
  run.first = co_await first.async_get(use_awaitable);
  run.second = co_await second.async_get(use_awaitable);

  SamplingClient ephemeral = co_await training.async_save_weights_and_get_sampling_client(use_awaitable);
  auto third = co_await ephemeral.async_sample(prompt, 1, params, SampleOptions(), use_awaitable);
  run.ephemeral = co_await third.async_get(use_awaitable);
  co_return run;
}

TEST_F(CheckpointTest, SamplerWeightsSampleDeterministicallyAndComputeLogprobsMatchesForward) {
  auto service = make_service_client();
  const SamplingRun result = run(sample_trained_weights(*service));
  EXPECT_EQ(result.decoded, result.text);
  ASSERT_EQ(result.first.sequences.size(), 2u);
  EXPECT_EQ(result.first.sequences[0].tokens.size(), 8u);
  // Every sequence has its own sequence_id; the rest must be equal.
  SampleResponse first_without_ids = result.first;
  SampleResponse second_without_ids = result.second;
  for (SampledSequence& s : first_without_ids.sequences) s.sequence_id.reset();
  for (SampledSequence& s : second_without_ids.sequences) s.sequence_id.reset();
  EXPECT_EQ(first_without_ids, second_without_ids) << "the same seed must give the same samples";
  ASSERT_EQ(result.ephemeral.sequences.size(), 1u);

  ASSERT_EQ(result.computed.size(), result.forward_logprobs.size() + 1);
  EXPECT_FALSE(result.computed[0].has_value());
  for (std::size_t i = 0; i < result.forward_logprobs.size(); ++i) {
    ASSERT_TRUE(result.computed[i + 1].has_value());
    EXPECT_NEAR(*result.computed[i + 1], result.forward_logprobs[i], 1e-4) << "token " << i + 1;
  }
}

TEST_F(CheckpointTest, ABadCheckpointPathIsAnErrorNamingIt) {
  auto service = make_service_client();
  diagnostics diag;
  auto created =
      service->async_create_training_client_from_state("not-a-path", false, FromStateOptions(), diag, asio::use_future);
  EXPECT_THROW(run_until_ready(io, created), boost::system::system_error);
  EXPECT_NE(diag.message.find("not-a-path"), std::string::npos) << diag.message;
}

}  // namespace
}  // namespace tinker::test
