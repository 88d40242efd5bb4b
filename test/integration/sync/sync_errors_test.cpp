// Errors of the blocking facade carry their diagnostics, in the throwing and the try_ forms.
#include "integration/sync/sync_support.hpp"

#include <gtest/gtest.h>

namespace tinker::test {
namespace {

using SyncErrors = SyncService;

constexpr const char* unknown_model = "no-such-org/no-such-model";

TEST_F(SyncErrors, UnknownBaseModelNamesTheModelAndCarriesTheRequestId) {
  sync::ServiceClient service = make_sync_service();

  sync::Result<sync::TrainingClient> created =
      service.try_create_lora_training_client(LoraTrainingOptions(unknown_model, 4));
  ASSERT_TRUE(created.has_error());
  const sync::Failure failure = created.error();
  EXPECT_EQ(failure.code, errc::request_failed);
  EXPECT_EQ(failure.diag.category, RequestErrorCategory::user);
  EXPECT_FALSE(failure.diag.request_id.empty());
  EXPECT_NE(failure.diag.message.find(unknown_model), std::string::npos) << failure.diag.message;
  EXPECT_NE(failure.message().find(unknown_model), std::string::npos) << failure.message();
  // An operation that failed is not an HTTP failure (its poll answered 200), and the message
  // says what the server does serve.
  EXPECT_EQ(failure.diag.http_status, 0);
  EXPECT_EQ(failure.message().find("HTTP"), std::string::npos) << failure.message();
  const std::size_t served = failure.diag.message.find("this server serves ");
  ASSERT_NE(served, std::string::npos) << failure.diag.message;
  EXPECT_NE(failure.diag.message.find(tiny_model, served), std::string::npos) << failure.diag.message;

  // The throwing form throws the same error.
  try {
    service.create_lora_training_client(unknown_model, 4);
    FAIL() << "no exception";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::request_failed);
    EXPECT_FALSE(e.diag().request_id.empty());
    EXPECT_NE(std::string(e.what()).find(unknown_model), std::string::npos) << e.what();
    EXPECT_NE(e.diag().request_id, failure.diag.request_id);  // a second create_model
  }

  // Result::value() throws it too.
  try {
    (void)created.value();
    FAIL() << "no exception";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::request_failed);
    EXPECT_EQ(e.diag(), failure.diag);
  }
}

TEST_F(SyncErrors, TryFormsReturnValuesAndFailedFuturesKeepTheirDiagnostics) {
  sync::ServiceClient service = make_sync_service();
  sync::Result<sync::TrainingClient> created =
      service.try_create_lora_training_client(LoraTrainingOptions(std::string(tiny_model), 4));
  ASSERT_TRUE(created.has_value()) << created.error().message();
  const sync::TrainingClient training = *created;

  sync::Result<GetInfoResponse> info = training.try_get_info();
  ASSERT_TRUE(info.has_value()) << info.error().message();
  EXPECT_EQ(info->model_id, training.model_id());

  // A datum whose targets do not match its input: accepted, then failed by the server.
  Datum bad = next_token_datum({1, 2, 3, 4});
  bad.loss_fn_inputs.at("target_tokens") = TensorData(std::vector<std::int64_t>{2, 3});
  sync::Result<Future<ForwardBackwardOutput>> submitted =
      training.try_forward_backward(ForwardBackwardInput({bad}, loss_fn::cross_entropy));
  ASSERT_TRUE(submitted.has_value()) << submitted.error().message();
  sync::Result<ForwardBackwardOutput> result = sync::try_get(*submitted);
  ASSERT_TRUE(result.has_error());
  EXPECT_EQ(result.error().code, errc::request_failed);
  EXPECT_EQ(result.error().diag.category, RequestErrorCategory::user);
  EXPECT_FALSE(result.error().diag.request_id.empty());
  EXPECT_NE(result.error().diag.message.find("target_tokens"), std::string::npos) << result.error().diag.message;

  sync::Result<OptimStepResponse> step = sync::try_get(training.optim_step(AdamParams(1e-3)));
  EXPECT_TRUE(step.has_value()) << step.error().message();
}

TEST_F(SyncErrors, EmptyHandlesFailWithInvalidArgument) {
  sync::TrainingClient training;
  EXPECT_FALSE(training.valid());
  sync::Result<GetInfoResponse> info = training.try_get_info();
  ASSERT_TRUE(info.has_error());
  EXPECT_EQ(info.error().code, errc::invalid_argument);
  EXPECT_THROW(training.model_id(), error);
  EXPECT_THROW(training.forward_backward(tiny_cross_entropy_input()), error);

  sync::SamplingClient sampler;
  EXPECT_THROW(sampler.compute_logprobs(ModelInput::from_ints({1, 2})), error);
  sync::RestClient rest;
  EXPECT_THROW(rest.get_sampler("x"), error);

  sync::ServiceClient service = make_sync_service();
  sync::ServiceClient moved = std::move(service);
  EXPECT_THROW(service.get_server_capabilities(), error);  // NOLINT(bugprone-use-after-move): on purpose
  EXPECT_FALSE(moved.get_server_capabilities().supported_models.empty());
}

TEST_F(SyncErrors, BadOptionsThrowAtConstruction) {
  ServiceClientOptions options = service_options();
  options.client.api_key = Secret("not-a-tinker-key");
  try {
    sync::ServiceClient service(options);
    FAIL() << "no exception";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::invalid_configuration);
    EXPECT_EQ(std::string(e.what()).find("not-a-tinker-key"), std::string::npos) << "the key leaked: " << e.what();
  }
}

TEST_F(SyncErrors, UnknownCheckpointIsAnErrorWithAStatus) {
  sync::ServiceClient service = make_sync_service();
  sync::RestClient rest = service.create_rest_client();
  sync::Result<WeightsInfoResponse> info = rest.try_get_weights_info("tinker://nobody:train:0/weights/none");
  ASSERT_TRUE(info.has_error());
  EXPECT_NE(info.error().diag.http_status, 0) << info.error().message();
  EXPECT_THROW(service.create_training_client_from_state("tinker://nobody:train:0/weights/none"), error);
}

}  // namespace
}  // namespace tinker::test
