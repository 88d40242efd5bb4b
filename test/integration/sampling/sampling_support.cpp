#include "integration/sampling/sampling_support.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

namespace tinker::test {

namespace asio = boost::asio;

asio::awaitable<SamplingClient> make_sampler(ServiceClient& service) {
  const SamplingSource source = SamplingSource::from_base_model(std::string(tiny_model));
  co_return co_await service.async_create_sampling_client(source, use_awaitable);
}

ModelInput prompt_of(std::size_t tokens) {
  std::vector<TokenId> ids;
  for (std::size_t i = 0; i < tokens; ++i) ids.push_back(static_cast<TokenId>(5 + i % 900));
  return ModelInput::from_ints(ids);
}

asio::awaitable<void> timed_sample(SamplingClient sampler, ModelInput prompt, SampleTimes& out) {
  try {
    const SamplingParams params(2, 1.0);
    const SampleOptions options;
    Future<SampleResponse> future = co_await sampler.async_sample(std::move(prompt), 1, params, options, use_awaitable);
    out.accepted = std::chrono::steady_clock::now();
    const SampleResponse response = co_await future.async_get(use_awaitable);
    out.sequences = response.sequences.size();
  } catch (const error& e) {
    out.error = e.code();
    out.message = e.what();
  }
  out.finished = std::chrono::steady_clock::now();
}

void spawn_timed_sample(asio::io_context& io, SamplingClient sampler, ModelInput prompt, SampleTimes& out) {
  asio::co_spawn(io, timed_sample(std::move(sampler), std::move(prompt), out), asio::detached);
}

client::sampling::SampleTuning fast_tuning(std::chrono::milliseconds short_wait, std::chrono::milliseconds long_wait) {
  client::sampling::SampleTuning tuning;
  tuning.backoff_short = short_wait;
  tuning.backoff_long = long_wait;
  tuning.retry_delay_base = std::chrono::milliseconds(10);
  tuning.retry_delay_max = std::chrono::milliseconds(50);
  return tuning;
}

}  // namespace tinker::test
