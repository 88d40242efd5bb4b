// SamplingClient's dispatch limits seen on the wire (count, and bytes with overdraft), sample
// resubmission (a lost result is sampled again under a new seq_id; no progress for the progress
// timeout fails the waiting sample; the server flags sample_no_retries and
// sample_enable_stuck_detection turn each off), and compute_logprobs against a forward pass.
#include "integration/sampling/sampling_support.hpp"
#include "integration/support/training_data.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <vector>

namespace tinker::test {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;

// Every asample held by the server for `delay`: its queue paused (pause_queue) or the request
// itself unanswered (delay).
local::FaultRule held_asample(local::FaultKind kind, milliseconds delay) {
  local::FaultRule rule("asample", kind);
  rule.delay = delay;
  rule.probability = 1.0;
  return rule;
}

// The first retrieve_future of the server answers 410: the result is lost.
local::FaultRule first_result_lost() {
  local::FaultRule lost("retrieve_future", local::FaultKind::status);
  lost.status = 410;
  lost.on_calls = {1};
  return lost;
}

std::vector<std::chrono::system_clock::time_point> arrivals(const local::AuditReport& audit) {
  std::vector<std::chrono::system_clock::time_point> times;
  for (const auto& record : requests_to(audit, "/asample")) times.push_back(record.arrived);
  std::sort(times.begin(), times.end());
  return times;
}

class SamplingLimitsTest : public LocalService {
 protected:
  // Runs `count` samples of `tokens`-token prompts at once with each submission held 150 ms by
  // the server, and returns the submissions' arrival times.
  std::vector<std::chrono::system_clock::time_point> held_submissions(const client::sampling::SampleTuning& tuning,
                                                                      std::size_t count, std::size_t tokens) {
    local::ServerOptions options = fast_server_options();
    options.faults.push_back(held_asample(local::FaultKind::delay, milliseconds(150)));
    start_server(options);
    auto service = make_service_client();
    service->holder()->set_sample_tuning(tuning);
    SamplingClient sampler = run(make_sampler(*service));
    std::vector<SampleTimes> samples(count);
    for (auto& times : samples) spawn_timed_sample(io, sampler, prompt_of(tokens), times);
    run_until(io, [&] {
      return std::all_of(samples.begin(), samples.end(), [](const SampleTimes& s) { return s.finished.has_value(); });
    });
    for (const auto& times : samples) EXPECT_FALSE(times.error) << times.message;
    EXPECT_EQ(service->holder()->sample_dispatch().in_flight(), 0);
    return arrivals(server->audit());
  }

  // One sample of a 4-token prompt against a server started with `options` (short retry waits;
  // `progress_timeout` replaces the default when given). `started`: when the sample was spawned.
  SampleTimes sample_once(const local::ServerOptions& options,
                          std::optional<milliseconds> progress_timeout = std::nullopt, SteadyTime* started = nullptr) {
    start_server(options);
    auto service = make_service_client();
    client::sampling::SampleTuning tuning = fast_tuning(milliseconds(100), milliseconds(100));
    if (progress_timeout) tuning.progress_timeout = *progress_timeout;
    service->holder()->set_sample_tuning(tuning);
    SamplingClient sampler = run(make_sampler(*service));
    SampleTimes times;
    if (started != nullptr) *started = std::chrono::steady_clock::now();
    spawn_timed_sample(io, sampler, prompt_of(4), times);
    run_until(io, [&] { return times.finished.has_value(); });
    return times;
  }

  // The seq_ids of the asample requests the server received, in arrival order.
  std::vector<std::int64_t> asample_seq_ids() {
    std::vector<std::int64_t> seq_ids;
    for (const auto& record : requests_to(server->audit(), "/asample")) seq_ids.push_back(record.seq_id.value_or(-1));
    return seq_ids;
  }

  // One sample against a server that applies `stuck` with a 400 ms progress timeout: it fails
  // with the timeout after 400 ms, long before the server would have answered.
  void expect_no_progress_failure(const local::FaultRule& stuck) {
    local::ServerOptions options = fast_server_options();
    options.faults.push_back(stuck);
    SteadyTime start;
    const SampleTimes times = sample_once(options, milliseconds(400), &start);
    ASSERT_TRUE(times.error);
    EXPECT_EQ(*times.error, make_error_code(errc::timeout));
    EXPECT_NE(times.message.find("No progress made in 0.4s"), std::string::npos) << times.message;
    EXPECT_GE(ms_between(start, *times.finished), 400);
    EXPECT_LT(ms_between(start, *times.finished), 3'000);
  }
};

TEST_F(SamplingLimitsTest, TheDispatchCountBoundsSubmissionsInFlight) {
  client::sampling::SampleTuning tuning;
  tuning.dispatch_count = 3;
  const auto times = held_submissions(tuning, 9, 4);
  ASSERT_EQ(times.size(), 9u);
  EXPECT_LT(times[2] - times[0], milliseconds(100)) << "three go at once";
  for (std::size_t i = 0; i + 3 < times.size(); ++i) {
    EXPECT_GE(times[i + 3] - times[i], milliseconds(150 - 50)) << "the fourth waits for the first to finish";
  }
}

TEST_F(SamplingLimitsTest, TheDispatchBytesOverdrawByOneSubmission) {
  client::sampling::SampleTuning tuning;
  tuning.dispatch_bytes = 100;  // a 10-token prompt is estimated at 100 bytes: two fit (overdraft)
  const auto times = held_submissions(tuning, 6, 10);
  ASSERT_EQ(times.size(), 6u);
  EXPECT_LT(times[1] - times[0], milliseconds(100));
  for (std::size_t i = 0; i + 2 < times.size(); ++i) EXPECT_GE(times[i + 2] - times[i], milliseconds(150 - 50));
}

TEST_F(SamplingLimitsTest, ALostResultIsSampledAgainUnderANewSeqId) {
  local::ServerOptions options = fast_server_options();
  options.faults.push_back(first_result_lost());
  const SampleTimes times = sample_once(options);
  EXPECT_FALSE(times.error) << times.message;
  EXPECT_EQ(times.sequences, 1u);
  EXPECT_EQ(asample_seq_ids(), (std::vector<std::int64_t>{0, 1}));
}

// The server flag sample_no_retries (doc/protocol.md#sample-resubmission): sample() sends once,
// without sample resubmission, so the same lost result fails the sample instead of being sampled again.
TEST_F(SamplingLimitsTest, WithTheServerFlagSampleNoRetriesALostResultFailsTheSample) {
  local::ServerOptions options = fast_server_options();
  options.client_config.sample_no_retries = true;
  options.faults.push_back(first_result_lost());
  const SampleTimes times = sample_once(options);
  ASSERT_TRUE(times.error);
  EXPECT_EQ(asample_seq_ids(), (std::vector<std::int64_t>{0}));
}

// The server flag sample_enable_stuck_detection false (doc/protocol.md#sample-resubmission): no
// progress timeout, so a sample whose queue stays paused for longer than that timeout finishes once
// it resumes.
TEST_F(SamplingLimitsTest, WithStuckDetectionOffASampleOutlastsTheProgressTimeout) {
  local::ServerOptions options = fast_server_options();
  options.client_config.sample_enable_stuck_detection = false;
  options.faults.push_back(held_asample(local::FaultKind::pause_queue, milliseconds(900)));
  SteadyTime start;
  const SampleTimes times = sample_once(options, milliseconds(300), &start);
  EXPECT_FALSE(times.error) << times.message;
  EXPECT_EQ(times.sequences, 1u);
  ASSERT_TRUE(times.finished);
  EXPECT_GE(ms_between(start, *times.finished), 900);
}

TEST_F(SamplingLimitsTest, NoProgressForTheProgressTimeoutFailsTheWaitingSample) {
  expect_no_progress_failure(held_asample(local::FaultKind::pause_queue, milliseconds(5'000)));
}

// The submit itself hangs (the server holds the asample request): the stuck detector cancels it
// inside the sample's task and the call fails with the same error.
TEST_F(SamplingLimitsTest, NoProgressForTheProgressTimeoutFailsAHangingSubmit) {
  expect_no_progress_failure(held_asample(local::FaultKind::delay, milliseconds(5'000)));
}

asio::awaitable<std::tuple<PromptLogprobs, std::vector<float>>> logprobs_both_ways(ServiceClient& service) {
  const LoraTrainingOptions options(std::string(tiny_model), 8);
  TrainingClient training = co_await service.async_create_lora_training_client(options, use_awaitable);
  const std::vector<Datum> batch = tiny_batch(1, 12);
  SamplingClient sampler = co_await training.async_save_weights_and_get_sampling_client(use_awaitable);
  std::vector<TokenId> sequence(batch[0].model_input.to_ints());
  sequence.push_back(static_cast<TokenId>(batch[0].loss_fn_inputs.at("target_tokens").to_dense_ints().back()));
  auto computing = co_await sampler.async_compute_logprobs(ModelInput::from_ints(sequence), use_awaitable);
  PromptLogprobs computed = co_await computing.async_get(use_awaitable);
  const ForwardBackwardInput input(batch, loss_fn::cross_entropy);
  auto forwarding = co_await training.async_forward(input, use_awaitable);
  std::vector<float> forward = all_logprobs(co_await forwarding.async_get(use_awaitable));
  co_return std::make_tuple(std::move(computed), std::move(forward));
}

TEST_F(SamplingLimitsTest, ComputeLogprobsEqualsTheLogprobsOfAForwardOnTheSameTokens) {
  auto service = make_service_client();
  const auto [computed, forward] = run(logprobs_both_ways(*service));
  ASSERT_EQ(computed.size(), forward.size() + 1);
  EXPECT_FALSE(computed[0]) << "nothing predicts the first token";
  for (std::size_t i = 0; i < forward.size(); ++i) {
    ASSERT_TRUE(computed[i + 1]);
    EXPECT_NEAR(*computed[i + 1], forward[i], 1e-4) << "token " << i + 1;
  }
}

}  // namespace
}  // namespace tinker::test
