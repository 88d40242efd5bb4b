// The 429 contract (doc/sampling.md#backpressure-and-retries) against tinker-local: the backoff
// shared by every client with the same base URL and API key (and only by them), the short and long
// waits chosen by the prompt's estimated size, and the same seq_id re-sent after a 429. Waits are
// shortened through the holder's sample tuning; margins are at least 50 ms.
#include "integration/sampling/sampling_support.hpp"
#include "integration/support/training_data.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace tinker::test {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;

local::FaultRule too_many_requests_on_calls(std::vector<std::int64_t> calls) {
  local::FaultRule rule("asample", local::FaultKind::status);
  rule.status = 429;
  rule.on_calls = std::move(calls);
  return rule;
}

std::size_t count_with_status(const local::AuditReport& audit, std::string_view endpoint, int status) {
  const auto records = requests_to(audit, endpoint);
  return static_cast<std::size_t>(std::count_if(
      records.begin(), records.end(), [status](const local::RequestRecord& r) { return r.status == status; }));
}

class SamplingBackoffTest : public LocalService {
 protected:
  std::unique_ptr<ServiceClient> client_with_key(const std::string& key, const client::sampling::SampleTuning& tuning) {
    ClientOptions options = client_options();
    options.api_key = Secret(key);
    auto service = make_service_client(ServiceClientOptions(options));
    service->holder()->set_sample_tuning(tuning);
    return service;
  }
};

TEST_F(SamplingBackoffTest, A429StormPacesEveryClientWithTheKeyAndNoClientWithAnother) {
  constexpr int storm = 8;
  local::ServerOptions options = fast_server_options();
  std::vector<std::int64_t> calls;
  for (int i = 1; i <= storm; ++i) calls.push_back(i);
  options.faults.push_back(too_many_requests_on_calls(calls));
  start_server(options);

  // The protocol's 1 s wait, so the other key has a wide margin even on a loaded 2-core machine.
  constexpr int backoff_ms = 1000;
  const client::sampling::SampleTuning tuning = fast_tuning(milliseconds(backoff_ms), milliseconds(2'000));
  auto first = client_with_key(std::string(test_api_key), tuning);
  auto second = client_with_key(std::string(test_api_key), tuning);  // another ServiceClient, same key
  auto other = client_with_key("tml-another-key-for-the-storm", tuning);
  SamplingClient first_sampler = run(make_sampler(*first));
  SamplingClient second_sampler = run(make_sampler(*second));
  SamplingClient other_sampler = run(make_sampler(*other));

  // The storm: the first client's submissions all get 429.
  std::vector<SampleTimes> stormed(storm);
  for (auto& times : stormed) spawn_timed_sample(io, first_sampler, prompt_of(4), times);
  // The server answered the storm, and the client has read a 429 (the server logs its answers
  // before the client sees them, so the audit alone does not mean the backoff is in force).
  const auto& backoff = first->holder()->sample_dispatch().shared_backoff();
  run_until(io, [&] {
    return count_with_status(server->audit(), "/asample", 429) == storm &&
           backoff->active(std::chrono::steady_clock::now());
  });
  const auto storm_seen = std::chrono::steady_clock::now();

  SampleTimes same_key;
  SampleTimes other_key;
  spawn_timed_sample(io, second_sampler, prompt_of(4), same_key);
  spawn_timed_sample(io, other_sampler, prompt_of(4), other_key);
  run_until(io, [&] {
    const bool all =
        std::all_of(stormed.begin(), stormed.end(), [](const SampleTimes& s) { return s.finished.has_value(); });
    return all && same_key.finished && other_key.finished;
  });

  ASSERT_TRUE(other_key.accepted && same_key.accepted);
  EXPECT_FALSE(other_key.error) << other_key.message;
  EXPECT_FALSE(same_key.error) << same_key.message;
  // Another key is not slowed: accepted well inside the backoff (margin >= 50 ms counted
  // generously for a loaded machine).
  EXPECT_LT(ms_between(storm_seen, *other_key.accepted), backoff_ms - 400);
  // The same key shares the backoff: nothing before it ends (it began before storm_seen).
  EXPECT_GE(ms_between(storm_seen, *same_key.accepted), backoff_ms - 100 - 50);
  for (const SampleTimes& times : stormed) {
    EXPECT_FALSE(times.error) << times.message;
    ASSERT_TRUE(times.accepted);
    EXPECT_GE(ms_between(storm_seen, *times.accepted), backoff_ms - 100 - 50);
  }
  EXPECT_EQ(count_with_status(server->audit(), "/asample", 429), static_cast<std::size_t>(storm))
      << "only the storm's submissions were refused";
  EXPECT_EQ(first->holder()->sample_dispatch().shared_backoff(), second->holder()->sample_dispatch().shared_backoff());
  EXPECT_NE(first->holder()->sample_dispatch().shared_backoff(), other->holder()->sample_dispatch().shared_backoff());
}

TEST_F(SamplingBackoffTest, TheWaitIsShortForSmallPromptsAndLongAboveTheThreshold) {
  local::ServerOptions options = fast_server_options();
  options.faults.push_back(too_many_requests_on_calls({1, 3}));  // each prompt's first submission
  start_server(options);
  client::sampling::SampleTuning tuning =
      fast_tuning(milliseconds(200), milliseconds(1200));  // wide margins under load
  tuning.large_prompt_bytes = 100;                         // 10 tokens = 100 bytes: short; 11 tokens: long
  auto service = client_with_key(std::string(test_api_key), tuning);
  SamplingClient sampler = run(make_sampler(*service));

  SampleTimes small;
  const auto small_start = std::chrono::steady_clock::now();
  spawn_timed_sample(io, sampler, prompt_of(10), small);
  run_until(io, [&] { return small.finished.has_value(); });
  SampleTimes large;
  const auto large_start = std::chrono::steady_clock::now();
  spawn_timed_sample(io, sampler, prompt_of(11), large);
  run_until(io, [&] { return large.finished.has_value(); });

  ASSERT_TRUE(small.accepted && large.accepted) << small.message << " / " << large.message;
  EXPECT_GE(ms_between(small_start, *small.accepted), 200);
  EXPECT_LT(ms_between(small_start, *small.accepted), 1200 - 300);
  EXPECT_GE(ms_between(large_start, *large.accepted), 1200);
  EXPECT_EQ(count_with_status(server->audit(), "/asample", 429), 2u);
}

TEST_F(SamplingBackoffTest, ASampleRefusedByTheServersQueueLimitIsResentWithTheSameSeqId) {
  local::ServerOptions options = fast_server_options();
  options.sample_queue_limit = 1;
  local::FaultRule hold("asample", local::FaultKind::pause_queue);  // keeps the first sample pending
  hold.delay = milliseconds(500);
  hold.on_calls = {1};
  options.faults.push_back(hold);
  start_server(options);
  auto service = client_with_key(std::string(test_api_key), fast_tuning(milliseconds(150), milliseconds(1'000)));
  SamplingClient sampler = run(make_sampler(*service));

  SampleTimes pending;
  SampleTimes refused;
  spawn_timed_sample(io, sampler, prompt_of(4), pending);
  run_until(io, [&] { return pending.accepted.has_value(); });
  spawn_timed_sample(io, sampler, prompt_of(4), refused);
  run_until(io, [&] { return pending.finished && refused.finished; });
  EXPECT_FALSE(pending.error) << pending.message;
  EXPECT_FALSE(refused.error) << refused.message;

  const auto submissions = requests_to(server->audit(), "/asample");
  std::vector<local::RequestRecord> second;
  for (const auto& record : submissions) {
    if (record.seq_id != 0) second.push_back(record);
  }
  ASSERT_GE(second.size(), 2u) << "at least one 429, then the acceptance";
  for (std::size_t i = 0; i < second.size(); ++i) {
    EXPECT_EQ(second[i].seq_id, 1) << "the same seq_id is re-sent after a 429";
    EXPECT_EQ(second[i].status, i + 1 < second.size() ? 429 : 200);
    if (i > 0) {
      EXPECT_GE(second[i].arrived - second[i - 1].arrived, milliseconds(150 - 5));
    }
  }
}

// A sample whose queue is paused is reported once in the log, naming the sampler (the poll reads
// the sampler's id from the state the sample's task holds). Queue states come with the per-request
// polls only: the batched long-poll's answers carry none (doc/sampling.md#batched-result-polling).
TEST_F(SamplingBackoffTest, APausedSampleIsReportedWithTheSamplersId) {
  local::ServerOptions options = fast_server_options();
  options.client_config.sample_use_retrieve_futures = false;
  local::FaultRule hold("asample", local::FaultKind::pause_queue);
  hold.delay = milliseconds(300);
  hold.on_calls = {1};
  options.faults.push_back(hold);
  start_server(options);
  auto lines = std::make_shared<std::vector<std::string>>();
  ClientOptions with_warnings = client_options();
  with_warnings.log_level = LogLevel::warning;
  ServiceClientOptions service_options(with_warnings);
  service_options.log = [lines](LogLevel, std::string_view line) { lines->emplace_back(line); };
  auto service = make_service_client(service_options);
  SamplingClient sampler = run(make_sampler(*service));
  SampleTimes times;
  spawn_timed_sample(io, sampler, prompt_of(4), times);
  run_until(io, [&] { return times.finished.has_value(); });
  EXPECT_FALSE(times.error) << times.message;
  const std::string expected = "Sampling is paused for sampler " + sampler.sampling_session_id() + ".";
  EXPECT_TRUE(std::any_of(lines->begin(), lines->end(),
                          [&](const std::string& line) { return line.find(expected) != std::string::npos; }))
      << "no line has: " << expected;
}

TEST_F(SamplingBackoffTest, ClientsOnDifferentIoContextsWithOneKeyShareOneBackoff) {
  asio::io_context other_io;
  ServiceClientOptions options(client_options());
  ServiceClient elsewhere(other_io.get_executor(), options);
  auto here = make_service_client();
  ClientOptions other_key = client_options();
  other_key.api_key = Secret(std::string("tml-a-different-key"));
  auto different = make_service_client(ServiceClientOptions(other_key));
  std::shared_ptr<client::sampling::SampleBackoff> from_thread;
  std::thread worker([&] { from_thread = elsewhere.holder()->sample_dispatch().shared_backoff(); });
  const auto mine = here->holder()->sample_dispatch().shared_backoff();
  worker.join();
  EXPECT_EQ(mine, from_thread);
  EXPECT_NE(mine, different->holder()->sample_dispatch().shared_backoff());
}

}  // namespace
}  // namespace tinker::test
