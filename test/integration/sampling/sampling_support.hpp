// Helpers of the SamplingClient load tests: samplers on the tiny model, one sample awaited to
// its end, and clock readings of when each step happened.
#pragma once

#include "client/session/holder.hpp"
#include "integration/support/local_service.hpp"

#include <tinker/service_client.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace tinker::test {

using SteadyTime = std::chrono::steady_clock::time_point;

/// A sampler on the tiny base model.
boost::asio::awaitable<SamplingClient> make_sampler(ServiceClient& service);

/// A prompt of `tokens` text tokens (the client estimates 10 bytes per text token).
ModelInput prompt_of(std::size_t tokens);

/// When a sample was accepted (async_sample completed) and when its result arrived, or the
/// error it ended with.
class SampleTimes {
 public:
  std::optional<SteadyTime> accepted;
  std::optional<SteadyTime> finished;
  std::optional<boost::system::error_code> error;
  std::string message;
  std::size_t sequences = 0;
};

/// Samples `prompt` once (1 sample, 2 tokens) and records the times in `out`; never throws.
boost::asio::awaitable<void> timed_sample(SamplingClient sampler, ModelInput prompt, SampleTimes& out);

/// Spawns timed_sample on `service`'s io thread (detached).
void spawn_timed_sample(boost::asio::io_context& io, SamplingClient sampler, ModelInput prompt, SampleTimes& out);

/// Sample tuning with short test waits: backoff `short_wait`/`long_wait`, retry delays of 10 ms.
client::sampling::SampleTuning fast_tuning(std::chrono::milliseconds short_wait, std::chrono::milliseconds long_wait);

/// Runs `io` until `done()` or `timeout` (then fails the test).
template <class Done>
void run_until(boost::asio::io_context& io, Done done, std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "timed out";
      return;
    }
    io.run_one_for(std::chrono::milliseconds(5));
  }
}

/// Milliseconds from `from` to `to`.
inline std::int64_t ms_between(SteadyTime from, SteadyTime to) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(to - from).count();
}

}  // namespace tinker::test
