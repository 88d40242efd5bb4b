// tinker::Future<T>: waits that are cancelled or time out leave the operation running; cancel()
// stops the poll; blocking get() with and without a timeout; progress.
#include "integration/support/local_service.hpp"
#include "integration/support/training_data.hpp"

#include <tinker/service_client.hpp>

#include <gtest/gtest.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <thread>
#include <vector>

namespace tinker::test {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;

class FutureTest : public LocalService {
 protected:
  // A forward_backward whose result the server holds back for `pause` (queue state paused).
  Future<ForwardBackwardOutput> slow_forward_backward(milliseconds pause) {
    service = make_service_client();
    auto created =
        service->async_create_lora_training_client(LoraTrainingOptions(std::string(tiny_model), 4), asio::use_future);
    training = run_until_ready(io, created);
    local::FaultRule hold("forward_backward", local::FaultKind::pause_queue);
    hold.delay = pause;
    hold.on_calls = {1};
    server->set_faults({hold});
    auto submitted = training.async_forward_backward(ForwardBackwardInput(tiny_batch(2, 4), loss_fn::cross_entropy),
                                                     asio::use_future);
    return run_until_ready(io, submitted);
  }

  std::unique_ptr<ServiceClient> service;
  TrainingClient training;
};

TEST_F(FutureTest, ACancelledWaitLeavesTheResultToBeAwaitedLater) {
  Future<ForwardBackwardOutput> future = slow_forward_backward(milliseconds(500));
  asio::cancellation_signal stop_waiting;
  auto first_wait = future.async_get(asio::bind_cancellation_slot(stop_waiting.slot(), asio::use_future));
  io.run_for(milliseconds(50));
  stop_waiting.emit(asio::cancellation_type::terminal);
  try {
    run_until_ready(io, first_wait);
    FAIL() << "a cancelled wait must complete with cancelled";
  } catch (const boost::system::system_error& e) {
    EXPECT_EQ(e.code(), errc::cancelled);
  }
  EXPECT_FALSE(future.status().ready);
  auto second_wait = future.async_get(asio::use_future);
  EXPECT_EQ(run_until_ready(io, second_wait).loss_fn_outputs.size(), 2u);
  EXPECT_TRUE(future.status().ready);
  EXPECT_GE(future.status().waited, milliseconds(400));
}

TEST_F(FutureTest, CancelStopsThePollAndFailsTheWaiters) {
  Future<ForwardBackwardOutput> future = slow_forward_backward(milliseconds(2000));
  auto wait = future.async_get(asio::use_future);
  io.run_for(milliseconds(50));
  future.cancel();
  const auto started = std::chrono::steady_clock::now();
  try {
    run_until_ready(io, wait);
    FAIL() << "waiters of a cancelled future must fail";
  } catch (const boost::system::system_error& e) {
    EXPECT_EQ(e.code(), errc::cancelled);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, milliseconds(1000));
}

// Shutdown cancels every background task the holder has registered: a pending training result
// and pending samples (one task each, linked into the holder's list) all fail at once.
TEST_F(FutureTest, ShuttingTheServiceDownCancelsEveryPendingTask) {
  Future<ForwardBackwardOutput> training_result = slow_forward_backward(milliseconds(3000));
  auto training_wait = training_result.async_get(asio::use_future);
  auto made =
      service->async_create_sampling_client(SamplingSource::from_base_model(std::string(tiny_model)), asio::use_future);
  SamplingClient sampler = run_until_ready(io, made);
  local::FaultRule slow_samples("asample", local::FaultKind::delay);
  slow_samples.delay = milliseconds(3000);
  slow_samples.probability = 1.0;
  server->set_faults({slow_samples});
  const ModelInput prompt = ModelInput::from_ints(std::vector<TokenId>{1, 2, 3});
  std::vector<std::future<Future<SampleResponse>>> samples;
  for (int i = 0; i < 3; ++i)
    samples.push_back(sampler.async_sample(prompt, 1, SamplingParams(4), SampleOptions(), asio::use_future));
  io.run_for(milliseconds(100));
  const auto started = std::chrono::steady_clock::now();
  service.reset();
  const auto expect_cancelled = [&](auto& pending) {
    try {
      run_until_ready(io, pending);
      ADD_FAILURE() << "a task pending at shutdown must fail";
    } catch (const boost::system::system_error& e) {
      EXPECT_EQ(e.code(), errc::cancelled) << e.what();
    }
  };
  expect_cancelled(training_wait);
  for (auto& sample : samples) expect_cancelled(sample);
  EXPECT_LT(std::chrono::steady_clock::now() - started, milliseconds(2000));
}

TEST_F(FutureTest, BlockingGetWithATimeoutThenWithout) {
  Future<ForwardBackwardOutput> future = slow_forward_backward(milliseconds(600));
  std::vector<QueueState> states;  // written on the io thread, read after it joined
  future.on_queue_state([&states](const QueueStateChange& change) { states.push_back(change.state); });
  auto guard = asio::make_work_guard(io);
  std::thread io_thread([this] { io.run(); });
  try {
    future.get(milliseconds(50));
    ADD_FAILURE() << "get(50 ms) must time out";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::timeout);
    EXPECT_FALSE(e.diag().request_id.empty());
  }
  EXPECT_EQ(future.get().loss_fn_outputs.size(), 2u);
  EXPECT_EQ(future.get(milliseconds(1)).loss_fn_outputs.size(), 2u);  // ready: no wait
  asio::post(io, [this] {
    service.reset();  // shut the client down on its io thread
  });
  guard.reset();
  io_thread.join();
  io.restart();
  EXPECT_NE(std::find(states.begin(), states.end(), QueueState::paused_capacity), states.end());
}

TEST_F(FutureTest, AnEmptyFutureThrowsInsteadOfCrashing) {
  const Future<OptimStepResponse> empty;
  EXPECT_FALSE(empty.valid());
  EXPECT_THROW(empty.get(), error);
  EXPECT_THROW(empty.status(), error);
}

}  // namespace
}  // namespace tinker::test
