// Comparing two runs of the resume tests: their metrics without the wall-clock keys, and the
// weights of their final sampler checkpoints through the logprobs they give a fixed prompt.
#pragma once

#include <tinker/sampling_client.hpp>
#include <tinker/service_client.hpp>
#include <tinker/train/run_dir.hpp>

#include <boost/asio/awaitable.hpp>

#include <string>
#include <vector>

namespace tinker::test::resume {

/// The metrics of `run_dir` without the `time/...` keys (which differ from run to run).
inline std::vector<train::StepMetrics> metrics_without_time(const train::RunDirectory& run_dir) {
  std::vector<train::StepMetrics> metrics = run_dir.read_metrics();
  for (train::StepMetrics& step : metrics) {
    std::erase_if(step.values, [](const auto& entry) { return entry.first.rfind("time/", 0) == 0; });
  }
  return metrics;
}

/// The logprobs the sampler weights at `sampler_path` give a fixed prompt: equal for equal
/// weights (tinker-local is deterministic), different after any different update.
inline boost::asio::awaitable<PromptLogprobs> logprobs_of(ServiceClient& service, std::string sampler_path) {
  const SamplingSource source = SamplingSource::from_model_path(std::move(sampler_path));
  const SamplingClient sampler = co_await service.async_create_sampling_client(source, tinker::use_awaitable);
  const std::vector<TokenId> prompt_tokens{9, 81, 301, 44, 7, 150, 12, 610, 33};
  const ModelInput prompt = ModelInput::from_ints(prompt_tokens);
  auto pending = co_await sampler.async_compute_logprobs(prompt, tinker::use_awaitable);
  const PromptLogprobs logprobs = co_await pending.async_get(tinker::use_awaitable);
  co_return logprobs;
}

/// The model id in a `tinker://<model id>/weights/<name>` path.
inline std::string model_of_path(const std::string& tinker_path) {
  const std::string scheme = "tinker://";
  const std::string rest = tinker_path.substr(scheme.size());
  return rest.substr(0, rest.find('/'));
}

}  // namespace tinker::test::resume
