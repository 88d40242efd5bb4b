// Answers that cannot be read (doc/reliability.md#bad-bodies): a malformed body on a poll or a
// GET is asked for again, a submit whose answer is unreadable is sent again with the same
// idempotency key (the server's seq_id keeps it applied once), and a bare 400 is a proxy's
// connection fault; only a run of them fails the operation, naming what came.
#include "integration/support/local_service.hpp"
#include "integration/support/training_data.hpp"

#include <tinker/tinker.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tinker::test {
namespace {

namespace asio = boost::asio;
using ::testing::HasSubstr;

class StepsRun {
 public:
  std::string model_id;
  std::vector<double> losses;
};

asio::awaitable<StepsRun> train(ServiceClient& service, int steps) {
  LoraTrainingOptions options(std::string(tiny_model), 4);
  options.seed = 5;
  TrainingClient training = co_await service.async_create_lora_training_client(options, use_awaitable);
  StepsRun run;
  run.model_id = training.model_id();
  for (int step = 0; step < steps; ++step) {
    const std::vector<Datum> batch = tiny_batch(3, 10, static_cast<std::uint32_t>(step));
    auto gradients =
        co_await training.async_forward_backward(ForwardBackwardInput(batch, loss_fn::cross_entropy), use_awaitable);
    auto update = co_await training.async_optim_step(AdamParams(1e-3), use_awaitable);
    const ForwardBackwardOutput output = co_await gradients.async_get(use_awaitable);
    co_await update.async_get(use_awaitable);
    run.losses.push_back(mean_nll(batch, output));
  }
  co_return run;
}

class BadBodiesTest : public LocalService {
 protected:
  StepsRun run_steps(int steps) {
    auto service = make_service_client();
    return run(train(*service, steps), std::chrono::minutes(5));
  }
  void expect_applied_once(const StepsRun& result, std::size_t operations) {
    const local::ModelAudit model = audit_of(server->audit(), result.model_id);
    EXPECT_TRUE(model.exactly_once_in_order) << ::testing::PrintToString(model.problems);
    EXPECT_EQ(model.applied_seq_ids.size(), operations);
  }
};

TEST_F(BadBodiesTest, TenPercentMalformedPollsChangeNothing) {
  const StepsRun clean = run_steps(20);
  local::FaultRule malformed("retrieve_future", local::FaultKind::malformed_json);
  malformed.probability = 0.1;
  server->set_faults({malformed});
  const StepsRun faulty = run_steps(20);
  EXPECT_EQ(faulty.losses, clean.losses);
  expect_applied_once(faulty, 40);
  const auto polls = requests_to(server->audit(), "/retrieve_future");
  const auto spoiled = std::count_if(polls.begin(), polls.end(), [](const auto& r) { return !r.fault.empty(); });
  EXPECT_GT(spoiled, 0);
}

TEST_F(BadBodiesTest, AnUnreadableSubmitAnswerIsSentAgainAndAppliedOnce) {
  local::FaultRule malformed("forward_backward", local::FaultKind::malformed_json);
  malformed.on_calls = {1};
  local::FaultRule bare("optim_step", local::FaultKind::status);
  bare.status = 400;  // no body: a proxy's connection fault
  bare.on_calls = {1};
  server->set_faults({malformed, bare});
  const StepsRun result = run_steps(2);
  expect_applied_once(result, 4);
  // Both first attempts reached the server and were sent again with the same key.
  for (const std::string_view endpoint : {"/forward_backward", "/optim_step"}) {
    const auto submits = requests_to(server->audit(), endpoint);
    ASSERT_GE(submits.size(), 2u) << endpoint;
    EXPECT_FALSE(submits[0].fault.empty()) << endpoint;
    EXPECT_EQ(submits[0].idempotency_key, submits[1].idempotency_key) << endpoint;
  }
}

TEST_F(BadBodiesTest, AMalformedGetIsAskedForAgain) {
  const StepsRun trained = run_steps(1);
  local::FaultRule malformed("training_runs", local::FaultKind::malformed_json);
  malformed.on_calls = {1};
  server->set_faults({malformed});
  auto service = make_service_client();
  auto rest = service->create_rest_client();
  auto listed = rest.async_list_training_runs(ListTrainingRunsOptions(), asio::use_future);
  const TrainingRunsResponse runs = run_until_ready(io, listed);
  EXPECT_FALSE(runs.training_runs.empty());
  EXPECT_EQ(requests_to(server->audit(), "/training_runs").size(), 2u);
}

TEST_F(BadBodiesTest, OnlyARunOfUnreadablePollsFailsTheOperationNamingIt) {
  auto service = make_service_client();
  LoraTrainingOptions options(std::string(tiny_model), 4);
  TrainingClient training = run(service->async_create_lora_training_client(options, use_awaitable));
  local::FaultRule malformed("retrieve_future", local::FaultKind::malformed_json);
  malformed.probability = 1.0;
  server->set_faults({malformed});
  auto submitted = training.async_optim_step(AdamParams(1e-3), asio::use_future);
  Future<OptimStepResponse> future = run_until_ready(io, submitted);
  diagnostics diag;
  auto result = future.async_get(diag, asio::use_future);
  EXPECT_THROW(run_until_ready(io, result), boost::system::system_error);
  EXPECT_THAT(diag.message, HasSubstr("neither a result nor a status"));
  EXPECT_THAT(diag.message, HasSubstr("6 such answers in a row"));
  const auto polls = requests_to(server->audit(), "/retrieve_future");  // the model's creation polled too
  EXPECT_EQ(std::count_if(polls.begin(), polls.end(), [](const auto& r) { return !r.fault.empty(); }), 6);
}

}  // namespace
}  // namespace tinker::test
