// The batched long-poll of sampling results (doc/sampling.md#batched-result-polling) against tinker-local, through
// the public async API: the same results with the server flag on and off, one retrieve_future per sample instead of
// a poll loop each, a failed completion failing only its sample, and a client destroyed with samples in flight.
#include "integration/sampling/sampling_support.hpp"
#include "integration/support/training_data.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include <memory>
#include <set>
#include <string>
#include <vector>

namespace tinker::test {
namespace {

namespace asio = boost::asio;

constexpr int samples_in_flight = 24;

// One sample's outcome, filled by sample_into.
class SampleSlot {
 public:
  bool done = false;
  std::optional<SampleResponse> response;
  boost::system::error_code error;
  std::string message;
};

asio::awaitable<void> sample_into(SamplingClient sampler, ModelInput prompt, SamplingParams params, SampleSlot& out) {
  try {
    const SampleOptions options;
    Future<SampleResponse> future = co_await sampler.async_sample(std::move(prompt), 2, params, options, use_awaitable);
    out.response = co_await future.async_get(use_awaitable);
  } catch (const error& e) {
    out.error = e.code();
    out.message = e.what();
  }
  out.done = true;
}

SamplingParams seeded_params(int i) {
  SamplingParams params(4, 1.0);
  params.seed = static_cast<std::uint64_t>(1000 + i);
  return params;
}

bool all_done(const std::vector<SampleSlot>& slots) {
  return std::all_of(slots.begin(), slots.end(), [](const SampleSlot& s) { return s.done; });
}

class SamplingBatchedTest : public LocalService {
 protected:
  local::ServerOptions options_with_flag(std::optional<bool> flag) const {
    local::ServerOptions options = fast_server_options();
    options.client_config.sample_use_retrieve_futures = flag;
    return options;
  }

  // Samples `samples_in_flight` seeded prompts at once on a fresh client; the results in order.
  std::vector<SampleSlot> sample_all(std::vector<SamplingParams> params) {
    auto service = make_service_client();
    SamplingClient sampler = run(make_sampler(*service));
    std::vector<SampleSlot> slots(params.size());
    for (std::size_t i = 0; i < params.size(); ++i) {
      asio::co_spawn(io, sample_into(sampler, prompt_of(3 + i % 5), params[i], slots[i]), asio::detached);
    }
    run_until(io, [&] { return all_done(slots); });
    return slots;
  }

  std::vector<SamplingParams> seeded(int count) const {
    std::vector<SamplingParams> params;
    for (int i = 0; i < count; ++i) params.push_back(seeded_params(i));
    return params;
  }
};

TEST_F(SamplingBatchedTest, FlagOnAndOffGiveTheSameResultsAndOnePollPerSampleWhenOn) {
  start_server(options_with_flag(false));
  const std::vector<SampleSlot> off = sample_all(seeded(samples_in_flight));
  const local::AuditReport off_audit = server->audit();
  EXPECT_TRUE(requests_to(off_audit, "/retrieve_futures").empty());
  const std::size_t off_polls = requests_to(off_audit, "/retrieve_future").size();

  start_server(options_with_flag(true));
  const std::vector<SampleSlot> on = sample_all(seeded(samples_in_flight));
  const local::AuditReport on_audit = server->audit();

  ASSERT_EQ(on.size(), off.size());
  std::set<std::string> sequence_ids;
  for (std::size_t i = 0; i < on.size(); ++i) {
    ASSERT_FALSE(on[i].error) << on[i].message;
    ASSERT_FALSE(off[i].error) << off[i].message;
    ASSERT_EQ(on[i].response->sequences.size(), 2u);
    for (std::size_t j = 0; j < 2; ++j) {
      const SampledSequence& a = on[i].response->sequences[j];
      const SampledSequence& b = off[i].response->sequences[j];
      EXPECT_EQ(a.tokens, b.tokens) << "sample " << i;
      EXPECT_EQ(a.logprobs, b.logprobs) << "sample " << i;
      EXPECT_EQ(a.stop_reason, b.stop_reason);
      ASSERT_TRUE(a.sequence_id.has_value());
      sequence_ids.insert(*a.sequence_id);
    }
  }
  EXPECT_EQ(sequence_ids.size(), on.size() * 2) << "sequence ids are unique within the session";

  // With the flag each sample fetches its result once, after the poller saw it complete.
  const auto fetches = requests_to(on_audit, "/retrieve_future");
  EXPECT_EQ(fetches.size(), on.size());
  for (const local::RequestRecord& fetch : fetches) EXPECT_EQ(fetch.status, 200);
  const auto batched = requests_to(on_audit, "/retrieve_futures");
  EXPECT_GE(batched.size(), 1u);
  EXPECT_LE(batched.size(), on.size());
  EXPECT_GE(off_polls, off.size());
}

TEST_F(SamplingBatchedTest, AServerWithoutTheFlagIsPolledPerRequest) {
  start_server(options_with_flag(std::nullopt));  // a 0.25-era server names no flag
  const std::vector<SampleSlot> slots = sample_all(seeded(4));
  for (const SampleSlot& slot : slots) EXPECT_FALSE(slot.error) << slot.message;
  EXPECT_TRUE(requests_to(server->audit(), "/retrieve_futures").empty());
}

TEST_F(SamplingBatchedTest, AFailedCompletionFailsThatSampleOnly) {
  start_server(options_with_flag(true));
  std::vector<SamplingParams> params = seeded(6);
  // Accepted, then failed by the model: prompt + max_tokens past the tiny model's context.
  params[3].max_tokens = 1'000'000;
  const std::vector<SampleSlot> slots = sample_all(params);
  for (std::size_t i = 0; i < slots.size(); ++i) {
    if (i == 3) {
      EXPECT_EQ(slots[i].error, make_error_code(errc::request_failed)) << slots[i].message;
      EXPECT_NE(slots[i].message.find("max_tokens"), std::string::npos) << slots[i].message;
    } else {
      EXPECT_FALSE(slots[i].error) << i << ": " << slots[i].message;
    }
  }
  EXPECT_EQ(requests_to(server->audit(), "/retrieve_future").size(), slots.size());
}

TEST_F(SamplingBatchedTest, ADroppedSamplerFinishesItsSamplesThenThePollerStops) {
  start_server(options_with_flag(true));
  auto service = make_service_client();
  std::vector<SampleSlot> slots(samples_in_flight);
  {
    SamplingClient sampler = run(make_sampler(*service));
    for (int i = 0; i < samples_in_flight; ++i) {
      asio::co_spawn(io, sample_into(sampler, prompt_of(4), seeded_params(i), slots[i]), asio::detached);
    }
  }  // only the samples hold the client now
  run_until(io, [&] { return all_done(slots); });
  for (const SampleSlot& slot : slots) EXPECT_FALSE(slot.error) << slot.message;
  // Nothing is in flight: no further long-poll is sent.
  const std::size_t polls = requests_to(server->audit(), "/retrieve_futures").size();
  io.run_for(std::chrono::milliseconds(300));
  EXPECT_EQ(requests_to(server->audit(), "/retrieve_futures").size(), polls);
}

TEST_F(SamplingBatchedTest, AClientDestroyedWithSamplesInFlightEndsThemCleanly) {
  start_server(options_with_flag(true));
  auto service = make_service_client();
  std::vector<SampleSlot> slots(samples_in_flight);
  {
    SamplingClient sampler = run(make_sampler(*service));
    for (int i = 0; i < samples_in_flight; ++i) {
      asio::co_spawn(io, sample_into(sampler, prompt_of(4), seeded_params(i), slots[i]), asio::detached);
    }
  }                 // the test's handle is gone; the samples hold the client
  io.poll();        // the samples are submitted, some perhaps finished
  service.reset();  // shutdown cancels the samples and the poller
  run_until(io, [&] { return all_done(slots); });
  for (const SampleSlot& slot : slots) {
    if (slot.error) {
      EXPECT_EQ(slot.error, make_error_code(errc::cancelled)) << slot.message;
    }
  }
  // Nothing is left running: the io_context runs out of work.
  io.run_for(std::chrono::milliseconds(50));
}

TEST_F(SamplingBatchedTest, StopUnsetKeepsTheEndOfSequenceStopAndAnEmptyListDisablesIt) {
  // First learn what the tiny model says at temperature 0, with every stop disabled.
  start_server(options_with_flag(true));
  SamplingParams greedy(8, 0.0);
  greedy.stop = StopCondition(std::vector<TokenId>{});
  const std::vector<SampleSlot> free_run = sample_all({greedy});
  ASSERT_FALSE(free_run[0].error) << free_run[0].message;
  const std::vector<TokenId> tokens = free_run[0].response->sequences[0].tokens;
  ASSERT_EQ(tokens.size(), 8u);
  EXPECT_EQ(free_run[0].response->sequences[0].stop_reason, StopReason::length);

  // Then serve the same model with its third token as end-of-sequence.
  local::ServerOptions options = options_with_flag(true);
  for (local::CatalogueEntry& entry : options.catalogue) {
    if (entry.name == tiny_model) entry.eos_token_id = tokens[2];
  }
  start_server(options);
  SamplingParams unset(8, 0.0);
  std::vector<SampleSlot> stopped = sample_all({unset});
  stopped.push_back(std::move(sample_all({greedy}).front()));  // index 0 of each: the same prompt
  ASSERT_FALSE(stopped[0].error) << stopped[0].message;
  ASSERT_FALSE(stopped[1].error) << stopped[1].message;
  const auto eos_at = std::find(tokens.begin(), tokens.end(), tokens[2]);
  const std::vector<TokenId> until_eos(tokens.begin(), eos_at + 1);
  EXPECT_EQ(stopped[0].response->sequences[0].tokens, until_eos);
  EXPECT_EQ(stopped[0].response->sequences[0].stop_reason, StopReason::stop);
  EXPECT_EQ(stopped[1].response->sequences[0].tokens, tokens) << "[] disables the end-of-sequence stop";
  EXPECT_EQ(stopped[1].response->sequences[0].stop_reason, StopReason::length);
}

}  // namespace
}  // namespace tinker::test
