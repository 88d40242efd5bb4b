// Optimizers through the public API (doc/training.md#optimizers) against in-process tinker-local:
// a Dimuon training client trains, mismatched parameters are refused before sending, a full-state
// resume keeps Dimuon (both creation paths), and a server of the 0.25 protocol gets adam_params
// and cannot be asked for Dimuon. Async and blocking.
#include "integration/support/local_service.hpp"
#include "integration/support/training_data.hpp"
#include "integration/sync/sync_support.hpp"

#include <tinker/codec.hpp>
#include <tinker/service_client.hpp>

#include <gtest/gtest.h>

#include <variant>

namespace tinker::test {
namespace {

namespace asio = boost::asio;

LoraTrainingOptions dimuon_options() {
  LoraTrainingOptions options(std::string(tiny_model), 8);
  options.seed = 1;
  options.optimizer = DimuonOptimizerConfig();
  return options;
}

asio::awaitable<double> loss_of(TrainingClient& training, const std::vector<Datum>& batch) {
  const ForwardBackwardInput input(batch, loss_fn::cross_entropy);
  auto future = co_await training.async_forward(input, use_awaitable);
  co_return (co_await future.async_get(use_awaitable)).metrics.at("loss:sum");
}

asio::awaitable<void> dimuon_steps(TrainingClient& training, const std::vector<Datum>& batch, int steps) {
  for (int i = 0; i < steps; ++i) {
    const ForwardBackwardInput input(batch, loss_fn::cross_entropy);
    const DimuonParams params(1e-3);
    auto gradients = co_await training.async_forward_backward(input, use_awaitable);
    auto update = co_await training.async_optim_step(params, use_awaitable);
    co_await gradients.async_get(use_awaitable);
    co_await update.async_get(use_awaitable);
  }
}

class OptimizerTest : public LocalService {};

TEST_F(OptimizerTest, DimuonClientTrainsAndSendsOptimParams) {
  auto service = make_service_client();
  const std::vector<Datum> batch = tiny_batch(3, 12);
  auto body = [&]() -> asio::awaitable<std::pair<double, double>> {
    TrainingClient training = co_await service->async_create_lora_training_client(dimuon_options(), use_awaitable);
    EXPECT_TRUE(std::holds_alternative<DimuonOptimizerConfig>(training.optimizer()));
    const double before = co_await loss_of(training, batch);  // seq 1
    co_await dimuon_steps(training, batch, 15);               // seq 2..31
    // The body of one more step is the optim_params form (its size tells it from adam_params).
    auto gradients =
        co_await training.async_forward_backward(ForwardBackwardInput(batch, loss_fn::cross_entropy), use_awaitable);
    const DimuonParams params(1e-3);
    auto update = co_await training.async_optim_step(params, use_awaitable);
    co_await gradients.async_get(use_awaitable);
    co_await update.async_get(use_awaitable);
    EXPECT_EQ(update.status().body_bytes,
              to_json(OptimStepRequest(training.model_id(), 33, OptimParams(params))).size());
    co_return std::make_pair(before, co_await loss_of(training, batch));
  };
  const auto [before, after] = run(body());
  EXPECT_LT(after, 0.7 * before) << before << " -> " << after;
}

TEST_F(OptimizerTest, MismatchedParamsAreRefusedBeforeSending) {
  auto service = make_service_client();
  auto body = [&]() -> asio::awaitable<void> {
    TrainingClient dimuon = co_await service->async_create_lora_training_client(dimuon_options(), use_awaitable);
    const RequestCounters before = service->counters();
    const AdamParams adam(1e-3);
    auto [ec, ignored] = co_await dimuon.async_optim_step(adam, no_throw);
    EXPECT_EQ(ec, errc::invalid_argument);
    EXPECT_EQ(service->counters().requests, before.requests);  // nothing sent
    diagnostics diag;
    auto [ec2, ignored2] = co_await dimuon.async_optim_step(adam, diag, no_throw);
    EXPECT_NE(diag.message.find("adamw"), std::string::npos) << diag.message;
    EXPECT_NE(diag.message.find("dimuon"), std::string::npos) << diag.message;
    // Invalid DimuonParams: refused naming the field.
    DimuonParams bad(1e-3);
    bad.beta1 = 1.5;
    auto [ec3, ignored3] = co_await dimuon.async_optim_step(bad, diag, no_throw);
    EXPECT_EQ(ec3, errc::invalid_argument);
    EXPECT_NE(diag.message.find("dimuon_params.beta1"), std::string::npos) << diag.message;
    // The refused steps took no seq_id: the client goes on.
    co_await dimuon_steps(dimuon, tiny_batch(2, 8), 1);

    LoraTrainingOptions adam_options(std::string(tiny_model), 8);
    TrainingClient adamw = co_await service->async_create_lora_training_client(adam_options, use_awaitable);
    EXPECT_TRUE(std::holds_alternative<AdamOptimizerConfig>(adamw.optimizer()));
    const DimuonParams params(1e-3);
    auto [ec4, ignored4] = co_await adamw.async_optim_step(params, diag, no_throw);
    EXPECT_EQ(ec4, errc::invalid_argument);
    EXPECT_NE(diag.message.find("dimuon"), std::string::npos) << diag.message;
  };
  run(body());
}

// Saves a Dimuon model with its optimizer state, resumes it without naming the optimizer, and
// checks the resumed client is Dimuon and steps exactly as the original does.
asio::awaitable<void> full_state_resume_keeps_dimuon(ServiceClient& service) {
  const std::vector<Datum> batch = tiny_batch(3, 10);
  TrainingClient original = co_await service.async_create_lora_training_client(dimuon_options(), use_awaitable);
  co_await dimuon_steps(original, batch, 3);
  auto saving = co_await original.async_save_state("dimuon-3", SaveStateOptions(), use_awaitable);
  const std::string path = (co_await saving.async_get(use_awaitable)).path;

  TrainingClient resumed =
      co_await service.async_create_training_client_from_state_with_optimizer(path, FromStateOptions(), use_awaitable);
  EXPECT_TRUE(std::holds_alternative<DimuonOptimizerConfig>(resumed.optimizer()));
  co_await dimuon_steps(original, batch, 1);
  co_await dimuon_steps(resumed, batch, 1);  // the momentum came along: the same step
  EXPECT_EQ(co_await loss_of(resumed, batch), co_await loss_of(original, batch));

  // Weights only: a fresh AdamW optimizer.
  TrainingClient weights_only =
      co_await service.async_create_training_client_from_state(path, FromStateOptions(), use_awaitable);
  EXPECT_TRUE(std::holds_alternative<AdamOptimizerConfig>(weights_only.optimizer()));

  // Choosing AdamW for a full-state resume of Dimuon state: refused by the server, naming both.
  FromStateOptions adam;
  adam.optimizer = AdamOptimizerConfig();
  diagnostics diag;
  auto [ec, ignored] = co_await service.async_create_training_client_from_state(path, true, adam, diag, no_throw);
  EXPECT_TRUE(ec) << "resumed Dimuon state into AdamW";
  EXPECT_NE(diag.message.find("dimuon"), std::string::npos) << diag.message;
  EXPECT_NE(diag.message.find("adamw"), std::string::npos) << diag.message;
}

TEST_F(OptimizerTest, FullStateResumeKeepsDimuon) {
  auto service = make_service_client();
  run(full_state_resume_keeps_dimuon(*service));
}

class OptimizerViaLoadTest : public LocalService {
 protected:
  local::ServerOptions server_options() const override {
    local::ServerOptions options = fast_server_options();
    options.client_config.create_model_via_load_weights = true;
    return options;
  }
};

TEST_F(OptimizerViaLoadTest, FullStateResumeKeepsDimuon) {
  auto service = make_service_client();
  run(full_state_resume_keeps_dimuon(*service));
}

// A server of the 0.25 protocol: its client/config does not name sample_use_retrieve_futures.
class OldServerOptimizerTest : public LocalService {
 protected:
  local::ServerOptions server_options() const override {
    local::ServerOptions options = fast_server_options();
    options.client_config.sample_use_retrieve_futures = std::nullopt;
    return options;
  }
};

TEST_F(OldServerOptimizerTest, AdamStepsGoAsAdamParamsAndDimuonIsRefused) {
  auto service = make_service_client();
  auto body = [&]() -> asio::awaitable<void> {
    LoraTrainingOptions options(std::string(tiny_model), 8);
    TrainingClient training = co_await service->async_create_lora_training_client(options, use_awaitable);
    const std::vector<Datum> batch = tiny_batch(2, 8);
    auto gradients =
        co_await training.async_forward_backward(ForwardBackwardInput(batch, loss_fn::cross_entropy), use_awaitable);
    const AdamParams adam(1e-3);
    auto update = co_await training.async_optim_step(adam, use_awaitable);
    co_await gradients.async_get(use_awaitable);
    co_await update.async_get(use_awaitable);
    EXPECT_EQ(update.status().body_bytes, to_json(OptimStepRequest(training.model_id(), 2, adam)).size());

    diagnostics diag;
    auto [ec, ignored] = co_await service->async_create_lora_training_client(dimuon_options(), diag, no_throw);
    EXPECT_EQ(ec, errc::invalid_argument);
    EXPECT_NE(diag.message.find("0.25"), std::string::npos) << diag.message;
  };
  run(body());
}

// The blocking facade: the same calls from a plain thread.
class SyncOptimizerTest : public SyncService {};

TEST_F(SyncOptimizerTest, DimuonThroughTheBlockingFacade) {
  sync::ServiceClient service = make_sync_service();
  sync::TrainingClient training = service.create_lora_training_client(dimuon_options());
  EXPECT_TRUE(std::holds_alternative<DimuonOptimizerConfig>(training.optimizer()));
  const double before = training.forward(tiny_cross_entropy_input()).get().metrics.at("loss:sum");
  for (int step = 0; step < 10; ++step) {
    Future<ForwardBackwardOutput> fb = training.forward_backward(tiny_cross_entropy_input());
    Future<OptimStepResponse> optim = training.optim_step(DimuonParams(1e-3));
    fb.get();
    optim.get();
  }
  const double after = training.forward(tiny_cross_entropy_input()).get().metrics.at("loss:sum");
  EXPECT_LT(after, before);

  const auto refused = training.try_optim_step(AdamParams(1e-3));
  ASSERT_TRUE(refused.has_error());
  EXPECT_EQ(refused.error().code, errc::invalid_argument);
  EXPECT_NE(refused.error().diag.message.find("dimuon"), std::string::npos) << refused.error().message();

  const std::string path = training.save_state("sync-dimuon").get().path;
  sync::TrainingClient resumed = service.create_training_client_from_state_with_optimizer(path);
  EXPECT_TRUE(std::holds_alternative<DimuonOptimizerConfig>(resumed.optimizer()));
  resumed.optim_step(DimuonParams(1e-3)).get();
}

}  // namespace
}  // namespace tinker::test
