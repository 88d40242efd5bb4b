// The blocking facade drives a real training run: pipelined steps from a plain thread, checkpoints,
// sampler weights, custom losses and tokenizers, against the in-process tinker-local.
#include "integration/sync/sync_support.hpp"

#include <tinker/tokenizer.hpp>

#include <gtest/gtest.h>

#include <exception>
#include <thread>

namespace tinker::test {
namespace {

using SyncTraining = SyncService;

TEST_F(SyncTraining, PipelinedStepsFromAPlainThreadLowerTheLoss) {
  std::vector<double> losses;
  std::string model_id;
  std::exception_ptr failure;
  // A plain std::thread, as in a script's main(): no io_context anywhere in sight.
  std::thread script([&] {
    try {
      sync::ServiceClient service = make_sync_service();
      // A fixed LoRA seed makes the run deterministic (an omitted seed is random, and at a large
      // learning rate some initialisations oscillate).
      LoraTrainingOptions lora(std::string(tiny_model), 8);
      lora.seed = 1;
      sync::TrainingClient training = service.create_lora_training_client(lora);
      model_id = training.model_id();
      for (int step = 0; step < 10; ++step) {
        // Both are submitted (and accepted) before either result is awaited.
        Future<ForwardBackwardOutput> fb = training.forward_backward(tiny_cross_entropy_input());
        Future<OptimStepResponse> optim = training.optim_step(AdamParams(1e-3));
        losses.push_back(fb.get().metrics.at("loss:sum"));
        optim.get();
      }
    } catch (...) {
      failure = std::current_exception();
    }
  });
  script.join();
  if (failure) std::rethrow_exception(failure);

  ASSERT_EQ(losses.size(), 10u);
  std::string trajectory;
  for (double loss : losses) trajectory += std::to_string(loss) + " ";
  EXPECT_LT(losses.back(), 0.5 * losses.front()) << "losses: " << trajectory;

  // The server applied fb, optim, fb, optim, ... as seq 1..20, each exactly once.
  local::AuditReport audit = server->audit();
  ASSERT_TRUE(audit.ok());
  const local::ModelAudit* model = nullptr;
  for (const auto& m : audit.models)
    if (m.model_id == model_id) model = &m;
  ASSERT_NE(model, nullptr);
  ASSERT_EQ(model->applied_seq_ids.size(), 20u);
  EXPECT_TRUE(model->exactly_once_in_order);
  for (std::size_t i = 0; i < model->operations.size(); ++i) {
    EXPECT_EQ(model->operations[i], i % 2 == 0 ? "forward_backward" : "optim_step") << "seq " << i + 1;
  }
}

TEST_F(SyncTraining, CheckpointsSamplerWeightsAndRestCallsRoundTrip) {
  sync::ServiceClient service = make_sync_service();
  sync::TrainingClient training = service.create_lora_training_client(std::string(tiny_model), 4);
  EXPECT_FALSE(service.session_id().empty());
  training.forward_backward(tiny_cross_entropy_input()).get();
  training.optim_step(AdamParams(1e-2)).get();

  const std::string state_path = training.save_state("step1").get().path;
  EXPECT_EQ(state_path, "tinker://" + training.model_id() + "/weights/step1");
  training.load_state(state_path).get();
  training.load_state_with_optimizer(state_path).get();

  sync::RestClient rest = service.create_rest_client();
  WeightsInfoResponse info = rest.get_weights_info(state_path);
  EXPECT_EQ(info.base_model, tiny_model);

  sync::TrainingClient restored = service.create_training_client_from_state(state_path);
  sync::TrainingClient restored_with_optimizer = service.create_training_client_from_state_with_optimizer(state_path);
  EXPECT_NE(restored.model_id(), training.model_id());
  EXPECT_NE(restored_with_optimizer.model_id(), restored.model_id());
  // Same weights: the same forward pass gives the same logprobs.
  ForwardBackwardOutput original = training.forward(tiny_cross_entropy_input()).get();
  ForwardBackwardOutput reloaded = restored.forward(tiny_cross_entropy_input()).get();
  EXPECT_EQ(original.loss_fn_outputs, reloaded.loss_fn_outputs);

  const std::string sampler_path = training.save_weights_for_sampler("sampler1").get().path.value();
  EXPECT_EQ(sampler_path, "tinker://" + training.model_id() + "/sampler_weights/sampler1");
  sync::SamplingClient named = training.create_sampling_client(sampler_path);
  sync::SamplingClient ephemeral = training.save_weights_and_get_sampling_client();
  SamplingParams params;
  params.max_tokens = 5;
  params.seed = 7;
  const ModelInput prompt = ModelInput::from_ints({1, 2, 3, 4});
  SampleResponse from_named = named.sample(prompt, 2, params).get();
  SampleResponse from_ephemeral = ephemeral.sample(prompt, 2, params).get();
  ASSERT_EQ(from_named.sequences.size(), 2u);
  EXPECT_EQ(from_named.sequences[0].tokens.size(), 5u);
  // Same weights, same seed: the same sequences but for their own sequence ids.
  for (SampledSequence& s : from_named.sequences) s.sequence_id.reset();
  for (SampledSequence& s : from_ephemeral.sequences) s.sequence_id.reset();
  EXPECT_EQ(from_named.sequences, from_ephemeral.sequences);

  GetSamplerResponse sampler = rest.get_sampler(ephemeral.sampling_session_id());
  EXPECT_EQ(sampler.base_model, tiny_model);

  PromptLogprobs logprobs = named.compute_logprobs(prompt).get();
  ASSERT_EQ(logprobs.size(), 4u);
  EXPECT_FALSE(logprobs[0].has_value());
  EXPECT_TRUE(logprobs[3].has_value());
}

TEST_F(SyncTraining, CustomLossMergesItsMetrics) {
  sync::ServiceClient service = make_sync_service();
  sync::TrainingClient training = service.create_lora_training_client(std::string(tiny_model), 4);
  std::vector<Datum> data;
  for (const Datum& datum : tiny_batch()) {
    LossFnInputs inputs;
    inputs.emplace("target_tokens", datum.loss_fn_inputs.at("target_tokens"));
    data.emplace_back(datum.model_input, std::move(inputs));
  }
  // loss = -sum(logprobs): the gradient is -1 everywhere.
  CustomLossFunction loss = [](const std::vector<Datum>&, const std::vector<std::vector<float>>& logprobs) {
    double total = 0.0;
    std::vector<std::vector<float>> gradients;
    for (const auto& per_datum : logprobs) {
      for (float value : per_datum) total -= value;
      gradients.emplace_back(per_datum.size(), -1.0f);
    }
    Metrics metrics;
    metrics["custom_loss"] = total;
    return CustomLossOutput(total, std::move(gradients), std::move(metrics));
  };
  ForwardBackwardOutput output = training.forward_backward_custom(data, loss).get();
  ASSERT_TRUE(output.metrics.count("custom_loss"));
  EXPECT_GT(output.metrics.at("custom_loss"), 0.0);
  EXPECT_EQ(output.loss_fn_outputs.size(), data.size());
}

TEST_F(SyncTraining, InfoAndTheTokenizerComeFromTheServer) {
  sync::ServiceClient service = make_sync_service();
  GetServerCapabilitiesResponse capabilities = service.get_server_capabilities();
  EXPECT_FALSE(capabilities.supported_models.empty());

  sync::TrainingClient training = service.create_lora_training_client(std::string(tiny_model), 4);
  GetInfoResponse info = training.get_info();
  EXPECT_EQ(info.model_id, training.model_id());
  EXPECT_EQ(info.model_data.tokenizer_id, server->tokenizer_id());

  std::shared_ptr<const Tokenizer> tokenizer = training.get_tokenizer();
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_GT(tokenizer->vocab_size(), 0);

  // A sampler finds the same tokenizer by its base model's name (it has no tokenizer id).
  sync::SamplingClient sampler =
      service.create_sampling_client(SamplingSource::from_base_model(std::string(tiny_model)));
  std::shared_ptr<const Tokenizer> sampler_tokenizer = sampler.get_tokenizer();
  ASSERT_NE(sampler_tokenizer, nullptr);
  EXPECT_EQ(sampler_tokenizer->vocab_size(), tokenizer->vocab_size());
  EXPECT_EQ(sampler_tokenizer->encode("Liberty"), tokenizer->encode("Liberty"));

  // The stand-ins named like real models have no tokenizer under their own name: the error says
  // where it looked.
  sync::SamplingClient stand_in = service.create_sampling_client(SamplingSource::from_base_model("Qwen/Qwen3-8B"));
  try {
    stand_in.get_tokenizer();
    ADD_FAILURE() << "no tokenizer is installed for Qwen/Qwen3-8B";
  } catch (const error& e) {
    EXPECT_NE(std::string(e.what()).find("Qwen/Qwen3-8B"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tinker::test
