// Thousands of samples in flight at once against tinker-local in null-model mode: all complete,
// and the pools keep the connections (two descriptors each, the server being in-process) bounded
// far below the usual limit of 1024 open files, queueing the rest.
#include "integration/sampling/sampling_support.hpp"

#include "http/client.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <filesystem>
#include <vector>

namespace tinker::test {
namespace {

namespace asio = boost::asio;

std::size_t open_descriptors() {
  std::size_t count = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    (void)entry;
    ++count;
  }
  return count;
}

class LoadRun {
 public:
  std::size_t descriptors_before = 0;
  std::size_t max_descriptors = 0;
  std::size_t max_queued_for_a_connection = 0;
  std::size_t max_sampling_open = 0;
  std::size_t max_futures_open = 0;
  std::vector<SampleTimes> samples;
};

asio::awaitable<void> sample_many(ServiceClient& service, std::size_t count, LoadRun& run) {
  SamplingClient sampler = co_await make_sampler(service);
  run.descriptors_before = open_descriptors();
  run.samples.resize(count);
  const asio::any_io_executor executor = co_await asio::this_coro::executor;
  for (std::size_t i = 0; i < count; ++i) {
    asio::co_spawn(executor, timed_sample(sampler, prompt_of(4), run.samples[i]), asio::detached);
  }
  http::HttpClient& http = service.holder()->http();
  asio::steady_timer tick(executor);
  for (;;) {
    const auto finished = std::count_if(run.samples.begin(), run.samples.end(),
                                        [](const SampleTimes& s) { return s.finished.has_value(); });
    run.max_descriptors = std::max(run.max_descriptors, open_descriptors());
    const std::size_t queued =
        http.stats(http::PoolKind::sampling).waiting + http.stats(http::PoolKind::futures).waiting;
    run.max_queued_for_a_connection = std::max(run.max_queued_for_a_connection, queued);
    run.max_sampling_open = std::max(run.max_sampling_open, http.stats(http::PoolKind::sampling).open);
    run.max_futures_open = std::max(run.max_futures_open, http.stats(http::PoolKind::futures).open);
    if (static_cast<std::size_t>(finished) == count) break;
    tick.expires_after(std::chrono::milliseconds(5));
    co_await tick.async_wait(asio::use_awaitable);
  }
}

class SamplingLoadTest : public LocalService {
 protected:
  local::ServerOptions server_options() const override {
    local::ServerOptions options = fast_server_options();
    options.null_model = true;
    return options;
  }
};

TEST_F(SamplingLoadTest, FourThousandConcurrentSamplesCompleteOnBoundedConnections) {
  constexpr std::size_t count = 4096;
  auto service = make_service_client();
  LoadRun result;
  run(sample_many(*service, count, result), std::chrono::seconds(120));

  std::size_t succeeded = 0;
  for (const SampleTimes& sample : result.samples) {
    if (!sample.error && sample.sequences == 1) ++succeeded;
  }
  EXPECT_EQ(succeeded, count);

  const PoolOptions pools = service->holder()->options().client.pools;
  const std::size_t client_connections = pools.session.max_connections + pools.training.max_connections +
                                         pools.sampling.max_connections + pools.futures.max_connections +
                                         pools.storage.max_connections;
  // Each loopback connection costs one descriptor here and one in the in-process server.
  EXPECT_LE(result.max_descriptors, result.descriptors_before + 2 * client_connections + 16);
  EXPECT_LT(result.max_descriptors, 1024u);
  EXPECT_LE(result.max_sampling_open, pools.sampling.max_connections);
  EXPECT_LE(result.max_futures_open, pools.futures.max_connections);
  EXPECT_GT(result.max_futures_open, 0u);
  EXPECT_GT(result.max_queued_for_a_connection, 0u) << "more requests than connections: the rest queue";
  service.reset();
}

}  // namespace
}  // namespace tinker::test
