// Base model names with a ":peft:<context length>" suffix against tinker-local
// (doc/service.md#model-names): the suffixed name trains and samples, is kept as given in every
// answer, and its tokenizer and renderer resolve as the plain name's.
#include "integration/sync/sync_support.hpp"

#include <tinker/model_name.hpp>
#include <tinker/renderers.hpp>
#include <tinker/tokenizer.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tinker::test {
namespace {

const std::string suffixed_model = std::string(tiny_model) + ":peft:2048";

using SuffixedModel = SyncService;

TEST_F(SuffixedModel, TrainsSamplesAndKeepsItsFullName) {
  sync::ServiceClient service = make_sync_service();
  LoraTrainingOptions lora(suffixed_model, 4);
  lora.seed = 1;
  sync::TrainingClient training = service.create_lora_training_client(lora);
  const GetInfoResponse info = training.get_info();
  EXPECT_EQ(info.model_data.model_name.value_or(info.model_name.value_or("")), suffixed_model);

  std::vector<double> losses;
  for (int step = 0; step < 6; ++step) {
    losses.push_back(training.forward_backward(tiny_cross_entropy_input()).get().metrics.at("loss:sum"));
    training.optim_step(AdamParams(1e-3)).get();
  }
  EXPECT_LT(losses.back(), losses.front());

  // The tokenizer is the plain model's, found through the suffixed name.
  const std::shared_ptr<const Tokenizer> tokenizer = training.get_tokenizer();
  ASSERT_NE(tokenizer, nullptr);
  sync::ServiceClient plain_service = make_sync_service();
  const auto plain_tokenizer =
      plain_service.create_sampling_client(SamplingSource::from_base_model(std::string(tiny_model))).get_tokenizer();
  EXPECT_EQ(tokenizer->encode("hello world"), plain_tokenizer->encode("hello world"));
  EXPECT_EQ(renderers::recommended_renderer(suffixed_model), renderers::recommended_renderer(tiny_model));

  // Sampler weights: the checkpoint and the sampler report the suffixed name.
  const std::string path = training.save_weights_for_sampler("suffixed").get().path.value_or("");
  sync::RestClient rest = service.create_rest_client();
  EXPECT_EQ(rest.get_weights_info(path).base_model, suffixed_model);
  sync::SamplingClient from_checkpoint = service.create_sampling_client(SamplingSource::from_model_path(path));
  EXPECT_EQ(from_checkpoint.get_base_model(), suffixed_model);
  const SampleResponse sampled = from_checkpoint.sample(ModelInput::from_ints({7, 8, 9}), 1, SamplingParams(4)).get();
  EXPECT_EQ(sampled.sequences.at(0).tokens.size(), 4u);

  bool listed = false;
  for (const TrainingRun& run : rest.list_training_runs().training_runs) {
    listed = listed || (run.training_run_id == training.model_id() && run.base_model == suffixed_model);
  }
  EXPECT_TRUE(listed);
}

TEST_F(SuffixedModel, SamplesFromTheBaseModelUnderTheSuffixedName) {
  sync::ServiceClient service = make_sync_service();
  sync::SamplingClient sampler = service.create_sampling_client(SamplingSource::from_base_model(suffixed_model));
  EXPECT_EQ(sampler.get_base_model(), suffixed_model);
  EXPECT_NE(sampler.get_tokenizer(), nullptr);
  SamplingParams params(3);
  params.seed = 5;
  const SampleResponse suffixed = sampler.sample(ModelInput::from_ints({1, 2, 3}), 1, params).get();
  sync::SamplingClient plain = service.create_sampling_client(SamplingSource::from_base_model(std::string(tiny_model)));
  const SampleResponse same = plain.sample(ModelInput::from_ints({1, 2, 3}), 1, params).get();
  EXPECT_EQ(suffixed.sequences.at(0).tokens, same.sequences.at(0).tokens);  // the same frozen weights

  // An unknown model stays unknown, suffix or not.
  const auto unknown = service.try_create_sampling_client(SamplingSource::from_base_model("no-such/model:peft:2048"));
  ASSERT_TRUE(unknown.has_error());
  EXPECT_EQ(unknown.error().code, make_error_code(errc::not_found));
}

}  // namespace
}  // namespace tinker::test
