// The sampling throttles: the process-wide backoff registry (one state per base URL and key,
// created once under contention), the backoff waits chosen by prompt size, the dispatch count,
// throttled count and byte limits, the prompt estimate, and sample resubmission's delays and stuck
// detection.
#include "client/sampling/dispatch.hpp"
#include "client/sampling/retry.hpp"

#include <tinker/sampling_client.hpp>

#include <gtest/gtest.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <barrier>
#include <cmath>
#include <optional>
#include <set>
#include <thread>
#include <vector>

namespace tinker::client::sampling {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;
using Clock = SampleBackoff::Clock;

TEST(SampleBackoffRegistry, ManyThreadsAskingAtOnceGetOneStatePerKey) {
  constexpr int threads = 32;
  std::barrier start(threads);
  std::vector<std::shared_ptr<SampleBackoff>> same(threads);
  std::vector<std::shared_ptr<SampleBackoff>> other(threads);
  std::vector<std::thread> workers;
  const std::size_t before = sample_backoff_registry_size();
  for (int i = 0; i < threads; ++i) {
    workers.emplace_back([&, i] {
      start.arrive_and_wait();
      same[i] = shared_sample_backoff("http://registry-test:1", "tml-registry-key-a");
      other[i] = shared_sample_backoff("http://registry-test:1", "tml-registry-key-b");
    });
  }
  for (auto& worker : workers) worker.join();
  for (int i = 0; i < threads; ++i) {
    EXPECT_EQ(same[i], same[0]);
    EXPECT_EQ(other[i], other[0]);
  }
  EXPECT_NE(same[0], other[0]) << "another key never shares the backoff";
  EXPECT_NE(same[0], shared_sample_backoff("http://registry-test:2", "tml-registry-key-a"))
      << "another base URL never shares the backoff";
  EXPECT_EQ(sample_backoff_registry_size(), before + 3);
}

TEST(SampleBackoff, RecentMeansDuringTheBackoffAndTheWindowAfterIt) {
  SampleBackoff backoff;
  const auto now = Clock::now();
  EXPECT_FALSE(backoff.until());
  EXPECT_FALSE(backoff.recent(now, milliseconds(10'000)));
  backoff.extend_to(now + milliseconds(1'000));
  EXPECT_TRUE(backoff.active(now));
  EXPECT_TRUE(backoff.recent(now, milliseconds(10'000)));
  EXPECT_FALSE(backoff.active(now + milliseconds(1'000)));
  EXPECT_TRUE(backoff.recent(now + milliseconds(10'999), milliseconds(10'000)));
  EXPECT_FALSE(backoff.recent(now + milliseconds(11'000), milliseconds(10'000)));
  backoff.extend_to(now + milliseconds(500));  // never shortened
  EXPECT_EQ(backoff.until(), now + milliseconds(1'000));
}

std::shared_ptr<SampleBackoff> fresh_backoff() {
  return std::make_shared<SampleBackoff>();
}

TEST(SampleDispatch, BacksOffOneSecondUpTo128KiBOfPromptAndFiveSecondsAbove) {
  asio::io_context io;
  SampleDispatch dispatch(io.get_executor(), SampleTuning(), 10 << 20, fresh_backoff());
  auto before = Clock::now();
  dispatch.note_backpressure(131'072);
  auto after = Clock::now();
  ASSERT_TRUE(dispatch.backoff().until());
  EXPECT_GE(*dispatch.backoff().until(), before + milliseconds(1'000));
  EXPECT_LE(*dispatch.backoff().until(), after + milliseconds(1'000));

  SampleDispatch large(io.get_executor(), SampleTuning(), 10 << 20, fresh_backoff());
  before = Clock::now();
  large.note_backpressure(131'073);
  after = Clock::now();
  EXPECT_GE(*large.backoff().until(), before + milliseconds(5'000));
  EXPECT_LE(*large.backoff().until(), after + milliseconds(5'000));
}

// Takes a permit and holds it until `release` fires.
asio::awaitable<void> hold_permit(SampleDispatch& dispatch, std::int64_t bytes,
                                  std::shared_ptr<asio::steady_timer> release, int& granted) {
  DispatchPermit permit = co_await dispatch.acquire(bytes);
  ++granted;
  auto [ec] = co_await release->async_wait(asio::as_tuple(asio::use_awaitable));
  (void)ec;
}

class Holders {
 public:
  Holders(asio::io_context& io, SampleDispatch& dispatch, int count, std::int64_t bytes)
      : release(std::make_shared<asio::steady_timer>(io, asio::steady_timer::time_point::max())) {
    for (int i = 0; i < count; ++i) asio::co_spawn(io, hold_permit(dispatch, bytes, release, granted), asio::detached);
  }
  std::shared_ptr<asio::steady_timer> release;
  int granted = 0;
};

TEST(SampleDispatch, TheCountLimitAdmitsExactlyThatManySubmissions) {
  asio::io_context io;
  SampleTuning tuning;
  tuning.dispatch_count = 3;
  SampleDispatch dispatch(io.get_executor(), tuning, 10 << 20, fresh_backoff());
  Holders holders(io, dispatch, 5, 10);
  io.run_for(milliseconds(20));
  EXPECT_EQ(holders.granted, 3);
  EXPECT_EQ(dispatch.in_flight(), 3);
  holders.release->expires_at(asio::steady_timer::time_point::min());  // wakes holders now and later
  io.run_for(milliseconds(20));
  EXPECT_EQ(holders.granted, 5);
  EXPECT_EQ(dispatch.max_in_flight(), 3);
  EXPECT_EQ(dispatch.in_flight(), 0);
  EXPECT_EQ(dispatch.bytes().remaining(), 10 << 20) << "every byte is given back";
}

TEST(SampleDispatch, TheDefaultCountLimitIs400) {
  asio::io_context io;
  SampleDispatch dispatch(io.get_executor(), SampleTuning(), 10 << 20, fresh_backoff());
  Holders holders(io, dispatch, 401, 1);
  io.run_for(milliseconds(50));
  EXPECT_EQ(holders.granted, 400);
  holders.release->expires_at(asio::steady_timer::time_point::min());  // wakes holders now and later
  io.run_for(milliseconds(50));
  EXPECT_EQ(holders.granted, 401);
}

TEST(SampleDispatch, BytesOverdraw_ASubmissionWaitsOnlyWhileTheBudgetIsNegative) {
  asio::io_context io;
  SampleDispatch dispatch(io.get_executor(), SampleTuning(), 100, fresh_backoff());
  Holders holders(io, dispatch, 4, 100);
  io.run_for(milliseconds(20));
  EXPECT_EQ(holders.granted, 2) << "100 bytes left: one more of 100 still fits (overdraft), the third waits";
  EXPECT_EQ(dispatch.bytes().remaining(), -100);
  holders.release->expires_at(asio::steady_timer::time_point::min());  // wakes holders now and later
  io.run_for(milliseconds(20));
  EXPECT_EQ(holders.granted, 4);
}

TEST(SampleDispatch, WhileBackoffIsRecentTheThrottledCountAppliesAndBytesWeighTwentyTimes) {
  asio::io_context io;
  auto backoff = fresh_backoff();
  SampleDispatch dispatch(io.get_executor(), SampleTuning(), 10'000, backoff);
  backoff->extend_to(Clock::now() - milliseconds(9'000));  // ended 9 s ago: still recent
  Holders holders(io, dispatch, 12, 10);
  io.run_for(milliseconds(20));
  EXPECT_EQ(holders.granted, 10) << "the throttled limit is 10";
  EXPECT_EQ(dispatch.bytes().remaining(), 10'000 - 10 * 10 * 20);
  EXPECT_EQ(dispatch.max_throttled_in_flight(), 10);
  holders.release->expires_at(asio::steady_timer::time_point::min());  // wakes holders now and later
  io.run_for(milliseconds(20));
  EXPECT_EQ(holders.granted, 12);
  EXPECT_EQ(dispatch.bytes().remaining(), 10'000);
}

TEST(SampleDispatch, LongAfterTheBackoffNeitherThrottleApplies) {
  asio::io_context io;
  auto backoff = fresh_backoff();
  SampleDispatch dispatch(io.get_executor(), SampleTuning(), 10'000, backoff);
  backoff->extend_to(Clock::now() - milliseconds(10'001));
  Holders holders(io, dispatch, 12, 10);
  io.run_for(milliseconds(20));
  EXPECT_EQ(holders.granted, 12);
  EXPECT_EQ(dispatch.bytes().remaining(), 10'000 - 12 * 10);
  holders.release->expires_at(asio::steady_timer::time_point::min());  // wakes holders now and later
  io.run_for(milliseconds(20));
}

asio::awaitable<void> wait_backoff(SampleDispatch& dispatch, std::optional<Clock::time_point>& woke) {
  co_await dispatch.wait_out_backoff();
  woke = Clock::now();
}

TEST(SampleDispatch, WaitingOutTheBackoffFollowsAnExtensionByAnotherClient) {
  asio::io_context io;
  auto backoff = fresh_backoff();
  SampleDispatch first(io.get_executor(), SampleTuning(), 100, backoff);
  SampleDispatch second(io.get_executor(), SampleTuning(), 100, backoff);  // another holder, same key
  const auto start = Clock::now();
  backoff->extend_to(start + milliseconds(60));
  std::optional<Clock::time_point> woke;
  asio::co_spawn(io, wait_backoff(first, woke), asio::detached);
  io.run_for(milliseconds(30));
  backoff->extend_to(start + milliseconds(150));  // as if `second` saw a 429 meanwhile
  io.run_for(milliseconds(300));
  ASSERT_TRUE(woke);
  EXPECT_GE(*woke, start + milliseconds(150));
}

TEST(PromptEstimate, TextTokensCountTenBytesAndOtherChunksTheirRawSize) {
  ModelInput prompt = ModelInput::from_ints({1, 2, 3});
  EXPECT_EQ(estimate_prompt_bytes(prompt), 30);
}

TEST(SampleRetryHandler, RetriesTransientFailuresAndLostResultsButNotFailedFutures) {
  EXPECT_TRUE(SampleRetryHandler::should_retry(make_error_code(errc::gone)));
  EXPECT_TRUE(SampleRetryHandler::should_retry(make_error_code(errc::server_error)));
  EXPECT_TRUE(SampleRetryHandler::should_retry(make_error_code(errc::rate_limited)));
  EXPECT_TRUE(SampleRetryHandler::should_retry(make_error_code(errc::connection_failed)));
  EXPECT_TRUE(SampleRetryHandler::should_retry(make_error_code(errc::timeout)));
  EXPECT_FALSE(SampleRetryHandler::should_retry(make_error_code(errc::request_failed)));
  EXPECT_FALSE(SampleRetryHandler::should_retry(make_error_code(errc::cancelled)));
  EXPECT_FALSE(SampleRetryHandler::should_retry(make_error_code(errc::bad_request)));
}

TEST(SampleRetryHandler, DelaysDoubleFromHalfASecondUpToTenWithSymmetricJitter) {
  asio::io_context io;
  double unit = 0.5;
  SampleRetryHandler handler(io.get_executor(), 2000, std::nullopt, SampleRetryHandler::Delays(),
                             [&unit] { return unit; });
  EXPECT_EQ(handler.retry_delay(1), milliseconds(500));
  EXPECT_EQ(handler.retry_delay(2), milliseconds(1'000));
  EXPECT_EQ(handler.retry_delay(5), milliseconds(8'000));
  EXPECT_EQ(handler.retry_delay(6), milliseconds(10'000));
  EXPECT_EQ(handler.retry_delay(100), milliseconds(10'000));
  unit = 0.0;
  EXPECT_EQ(handler.retry_delay(1), milliseconds(375));
  unit = 0.999999;
  EXPECT_EQ(handler.retry_delay(1), milliseconds(624));
  EXPECT_EQ(handler.retry_delay(6), milliseconds(10'000)) << "clamped to the maximum";
}

static_assert(!std::is_aggregate_v<SamplingRetryConfig>);
static_assert(!std::is_aggregate_v<TelemetryInfo>);

// The message of the invalid_argument `config.validate()` throws, or "" when it is valid.
std::string validation_message(const SamplingRetryConfig& config) {
  try {
    config.validate();
    return "";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::invalid_argument);
    return e.diag().message;
  }
}

TEST(SamplingRetryConfig, TheDefaultsAreValidAndEachBadFieldIsNamedWithItsValue) {
  SamplingRetryConfig config;
  EXPECT_EQ(validation_message(config), "");
  EXPECT_EQ(config.progress_timeout, std::chrono::hours(2));
  EXPECT_EQ(config.retry_delay_base, milliseconds(500));
  EXPECT_EQ(config.retry_delay_max, milliseconds(10'000));
  EXPECT_EQ(config.jitter_factor, 0.25);
  config.max_connections = -3;
  EXPECT_EQ(validation_message(config), "SamplingRetryConfig::max_connections: must be positive, got -3");
  config = SamplingRetryConfig();
  config.progress_timeout = milliseconds(-1);
  EXPECT_EQ(validation_message(config), "SamplingRetryConfig::progress_timeout: must be positive, got -1 ms");
  config = SamplingRetryConfig();
  config.retry_delay_base = milliseconds(20'000);
  EXPECT_EQ(validation_message(config),
            "SamplingRetryConfig::retry_delay_max: must be at least retry_delay_base (20000 ms), got 10000 ms");
  config = SamplingRetryConfig();
  config.jitter_factor = std::nan("");
  EXPECT_NE(validation_message(config).find("SamplingRetryConfig::jitter_factor: must be in [0, 1]"),
            std::string::npos);
  config = SamplingRetryConfig();
  config.jitter_factor = 1.0;
  config.retry_delay_base = milliseconds(0);
  config.retry_delay_max = milliseconds(0);
  config.max_connections = 1;
  EXPECT_EQ(validation_message(config), "") << "the bounds themselves are valid";
}

TEST(SampleRetryHandler, DelaysFollowTheClientsRetrySettings) {
  asio::io_context io;
  double unit = 0.0;
  SampleRetryHandler::Delays delays;
  delays.base = milliseconds(100);
  delays.max = milliseconds(300);
  delays.jitter_factor = 0.5;
  SampleRetryHandler handler(io.get_executor(), 2000, std::nullopt, delays, [&unit] { return unit; });
  EXPECT_TRUE(handler.retries_enabled());
  EXPECT_EQ(handler.retry_delay(1), milliseconds(50)) << "100 ms minus half of it";
  unit = 0.5;
  EXPECT_EQ(handler.retry_delay(2), milliseconds(200));
  EXPECT_EQ(handler.retry_delay(3), milliseconds(300)) << "capped at the maximum";
  delays.enabled = false;
  delays.jitter_factor = 0.0;
  SampleRetryHandler single(io.get_executor(), 2000, std::nullopt, delays, [] { return 0.0; });
  EXPECT_FALSE(single.retries_enabled());
  EXPECT_EQ(single.retry_delay(1), milliseconds(100)) << "no jitter";
}

// An operation that never finishes by itself, under the handler's watch as the sample task runs
// its submit and poll: `out` is whether the watch marked it stuck once its wait was cancelled.
asio::awaitable<void> watched(std::shared_ptr<SampleRetryHandler> handler, std::optional<bool>& out) {
  RetrySlot slot = co_await handler->enter();
  const asio::any_io_executor executor = co_await asio::this_coro::executor;
  asio::cancellation_signal signal;
  SampleRetryHandler::Watch watch;
  handler->watch(watch, signal);
  asio::steady_timer never(executor, asio::steady_timer::time_point::max());
  auto [ec] =
      co_await never.async_wait(asio::bind_cancellation_slot(signal.slot(), asio::as_tuple(asio::use_awaitable)));
  (void)ec;
  out = watch.stuck();
}

TEST(SampleRetryHandler, AnOperationWithoutProgressForTheTimeoutIsCancelled) {
  asio::io_context io;
  auto handler = std::make_shared<SampleRetryHandler>(io.get_executor(), 2000, milliseconds(80),
                                                      SampleRetryHandler::Delays(), nullptr);
  std::optional<bool> out;
  const auto start = Clock::now();
  asio::co_spawn(io, watched(handler, out), asio::detached);
  io.run_for(milliseconds(1'000));
  ASSERT_TRUE(out) << "the watchdog cancelled the wait";
  EXPECT_TRUE(*out) << "stuck";
  EXPECT_GE(Clock::now() - start, milliseconds(80));
  EXPECT_TRUE(handler->stuck());
  EXPECT_EQ(handler->in_flight(), 0);
  diagnostics diag;
  EXPECT_EQ(handler->stuck_error(diag), make_error_code(errc::timeout));
  EXPECT_EQ(diag.message, "No progress made in 0.08s. Requests appear to be stuck.");
}

asio::awaitable<void> hold_slot(std::shared_ptr<SampleRetryHandler> handler,
                                std::shared_ptr<asio::steady_timer> release, int& entered) {
  RetrySlot slot = co_await handler->enter();
  ++entered;
  auto [ec] = co_await release->async_wait(asio::as_tuple(asio::use_awaitable));
  (void)ec;
}

TEST(SampleRetryHandler, TheConcurrencyLimitBoundsOperationsInFlight) {
  asio::io_context io;
  auto handler =
      std::make_shared<SampleRetryHandler>(io.get_executor(), 2, std::nullopt, SampleRetryHandler::Delays(), nullptr);
  auto release = std::make_shared<asio::steady_timer>(io, asio::steady_timer::time_point::max());
  int entered = 0;
  for (int i = 0; i < 3; ++i) asio::co_spawn(io, hold_slot(handler, release, entered), asio::detached);
  io.run_for(milliseconds(20));
  EXPECT_EQ(entered, 2);
  EXPECT_EQ(handler->in_flight(), 2);
  release->expires_at(asio::steady_timer::time_point::min());
  io.run_for(milliseconds(20));
  EXPECT_EQ(entered, 3);
  EXPECT_EQ(handler->in_flight(), 0);
}

}  // namespace
}  // namespace tinker::client::sampling
