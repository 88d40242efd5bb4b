// Null-model mode: results are well-formed and correctly sized without any computation, and
// futures complete at submission (the mode exists to benchmark clients).
#include "engine_test_support.hpp"

#include <cstdio>

namespace tinker::local::test {
namespace {

using NullModelTest = EngineFixture;

TEST_F(NullModelTest, ForwardBackwardHasOneLogprobPerTokenAndALossSum) {
  start();
  std::string model = new_model(new_session(alice));
  ForwardBackwardInput batch = cross_entropy_batch(3, 7);
  UntypedAPIFuture ticket = forward_backward(model, 1, false, batch);
  // Complete at submission: the first poll answers without waiting.
  auto started = std::chrono::steady_clock::now();
  RetrieveOutcome outcome = poll(ticket.request_id, true, true);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(15));
  ASSERT_EQ(outcome.content_type, "application/x-protobuf");
  auto output = from_protobuf<ForwardBackwardOutput>(outcome.body);
  ASSERT_EQ(output.loss_fn_outputs.size(), 3u);
  for (const auto& record : output.loss_fn_outputs) {
    const TensorData& logprobs = record.at("logprobs");
    EXPECT_EQ(logprobs.dtype(), DType::float32);
    EXPECT_EQ(logprobs.floats().size(), 7u);
  }
  // cross_entropy of the fixed logprob (-1) over the weighted tokens (6 of 7 per datum).
  EXPECT_DOUBLE_EQ(output.metrics.at("loss:sum"), 18.0);
  for (const auto& [key, value] : output.metrics) EXPECT_EQ(std::count(key.begin(), key.end(), ':'), 1) << key;
}

TEST_F(NullModelTest, CheckpointRoundTripAndOptimizerResultsAreWellFormed) {
  start();
  std::string model = new_model(new_session(alice));
  auto optim = result_json(optim_step(model, 1).request_id);
  EXPECT_EQ(text(optim["type"]), "optim_step");
  EXPECT_TRUE(optim["metrics"].as_object().empty());
  auto saved = result_json(engine->save_weights(SaveWeightsRequest(model, 2, "n"), alice).request_id);
  auto loaded =
      result_json(engine->load_weights(LoadWeightsRequest(model, 3, text(saved["path"]), true), alice).request_id);
  EXPECT_EQ(text(loaded["model_id"]), model);
}

// Not a timed test (speed goals live in benchmarks/): prints the engine-only rate of
// submit + retrieve pairs. Run with --gtest_also_run_disabled_tests.
TEST_F(NullModelTest, DISABLED_SubmitAndRetrieveRate) {
  options.long_poll_hold = std::chrono::milliseconds(0);
  start();
  std::string model = new_model(new_session(alice));
  ForwardBackwardInput batch = cross_entropy_batch(1, 8);
  constexpr int count = 20000;
  auto started = std::chrono::steady_clock::now();
  for (int i = 1; i <= count; ++i) {
    UntypedAPIFuture ticket = forward_backward(model, i, false, batch);
    poll(ticket.request_id, true, true);
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("%d forward_backward submit+retrieve pairs in %.3f s: %.0f pairs/s\n", count, seconds, count / seconds);
}

}  // namespace
}  // namespace tinker::local::test
