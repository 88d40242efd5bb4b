// A blocking call made on the facade's own io thread — from a posted handler, a Future
// continuation, a queue-state callback or a custom loss — throws tinker::error
// (invalid_argument) instead of deadlocking.
#include "integration/sync/sync_support.hpp"

#include <boost/asio/post.hpp>

#include <gtest/gtest.h>

namespace tinker::test {
namespace {

using SyncIoThread = SyncService;

// What a blocking call made inside a callback did: threw tinker::error with this code, or
// returned (a value-less outcome means it did not throw, which is the failure under test).
using CallOutcome = std::optional<boost::system::error_code>;

template <class Call>
CallOutcome outcome_of(Call&& call) {
  try {
    call();
    return std::nullopt;
  } catch (const error& e) {
    return e.code();
  }
}

TEST_F(SyncIoThread, BlockingCallInAPostedHandlerThrows) {
  sync::ServiceClient service = make_sync_service();
  sync::TrainingClient training = service.create_lora_training_client(std::string(tiny_model), 4);
  std::promise<CallOutcome> outcome;
  std::promise<sync::Result<GetInfoResponse>> try_outcome;
  boost::asio::post(service.executor(), [&] {
    outcome.set_value(outcome_of([&] { training.get_info(); }));
    try_outcome.set_value(training.try_get_info());
  });
  auto outcome_future = outcome.get_future();
  ASSERT_TRUE(ready_within(outcome_future)) << "the blocking call deadlocked the io thread";
  CallOutcome code = outcome_future.get();
  ASSERT_TRUE(code.has_value()) << "get_info returned on the io thread";
  EXPECT_EQ(*code, errc::invalid_argument);

  auto try_future = try_outcome.get_future();
  ASSERT_TRUE(ready_within(try_future));
  sync::Result<GetInfoResponse> result = try_future.get();
  ASSERT_TRUE(result.has_error());
  EXPECT_EQ(result.error().code, errc::invalid_argument);
  EXPECT_NE(result.error().message().find("io thread"), std::string::npos) << result.error().message();

  // The facade still works from this thread afterwards.
  EXPECT_EQ(training.get_info().model_id, training.model_id());
}

TEST_F(SyncIoThread, BlockingCallInAFutureContinuationThrows) {
  sync::ServiceClient service = make_sync_service();
  sync::TrainingClient training = service.create_lora_training_client(std::string(tiny_model), 4);
  Future<ForwardBackwardOutput> fb = training.forward_backward(tiny_cross_entropy_input());
  std::promise<CallOutcome> outcome;
  fb.async_get([&](boost::system::error_code, ForwardBackwardOutput) {
    outcome.set_value(outcome_of([&] { training.optim_step(AdamParams(1e-3)); }));
  });
  auto outcome_future = outcome.get_future();
  ASSERT_TRUE(ready_within(outcome_future)) << "the blocking call deadlocked the io thread";
  CallOutcome code = outcome_future.get();
  ASSERT_TRUE(code.has_value()) << "optim_step returned on the io thread";
  EXPECT_EQ(*code, errc::invalid_argument);
  // The refused call took no seq_id: the next one still runs.
  EXPECT_NO_THROW(training.optim_step(AdamParams(1e-3)).get());
}

TEST_F(SyncIoThread, BlockingCallInAQueueStateCallbackThrows) {
  // forward_backward futures report a paused queue for a while before they run.
  local::FaultRule pause("forward_backward", local::FaultKind::pause_queue);
  pause.delay = std::chrono::milliseconds(1500);
  pause.on_calls = {1};
  server->set_faults({pause});

  sync::ServiceClient service = make_sync_service();
  sync::TrainingClient training = service.create_lora_training_client(std::string(tiny_model), 4);
  Future<ForwardBackwardOutput> fb = training.forward_backward(tiny_cross_entropy_input());
  auto outcome = std::make_shared<std::promise<CallOutcome>>();
  auto reported = std::make_shared<std::atomic<bool>>(false);
  fb.on_queue_state([outcome, reported, training](const QueueStateChange& change) {
    if (change.state == QueueState::active || reported->exchange(true)) return;
    outcome->set_value(outcome_of([&] { training.get_info(); }));
  });
  auto outcome_future = outcome->get_future();
  ASSERT_TRUE(ready_within(outcome_future)) << "no paused queue state was reported, or the call deadlocked";
  CallOutcome code = outcome_future.get();
  ASSERT_TRUE(code.has_value()) << "get_info returned on the io thread";
  EXPECT_EQ(*code, errc::invalid_argument);
  EXPECT_EQ(fb.get().loss_fn_outputs.size(), tiny_batch().size());
}

TEST_F(SyncIoThread, BlockingCallInACustomLossThrows) {
  sync::ServiceClient service = make_sync_service();
  sync::TrainingClient training = service.create_lora_training_client(std::string(tiny_model), 4);
  std::vector<Datum> data;
  for (const Datum& datum : tiny_batch()) {
    LossFnInputs inputs;
    inputs.emplace("target_tokens", datum.loss_fn_inputs.at("target_tokens"));
    data.emplace_back(datum.model_input, std::move(inputs));
  }
  CallOutcome inside;
  CustomLossFunction loss = [&](const std::vector<Datum>&, const std::vector<std::vector<float>>& logprobs) {
    inside = outcome_of([&] { training.get_info(); });
    std::vector<std::vector<float>> gradients;
    for (const auto& per_datum : logprobs) gradients.emplace_back(per_datum.size(), 0.0f);
    return CustomLossOutput(0.0, std::move(gradients));
  };
  training.forward_backward_custom(data, loss).get();
  ASSERT_TRUE(inside.has_value()) << "get_info returned inside the custom loss";
  EXPECT_EQ(*inside, errc::invalid_argument);
}

}  // namespace
}  // namespace tinker::test
